// SPDX-License-Identifier: Apache-2.0
#pragma once

// How the fuzz targets cut one input into several messages: each is a 16-bit little-endian length and that many
// bytes; a length past the end takes what is left. The seeds (wireseeds.cpp) are written the same way.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::fuzz {

// Where a target stores what it read from the decoded data, so that the reads are not optimised away.
inline volatile size_t sink = 0;

inline std::vector<std::string_view> splitParts(const uint8_t *data, size_t size, size_t maxParts)
{
    std::vector<std::string_view> parts;
    const auto *text = reinterpret_cast<const char *>(data);
    size_t at = 0;
    while (at + 2 <= size && parts.size() < maxParts) {
        const size_t length = data[at] | (size_t { data[at + 1] } << 8U);
        at += 2;
        const size_t taken = std::min(length, size - at);
        parts.emplace_back(text + at, taken);
        at += taken;
    }
    return parts;
}

inline void appendPart(std::string *out, const std::string &part)
{
    out->push_back(static_cast<char>(part.size() & 0xffU));
    out->push_back(static_cast<char>((part.size() >> 8U) & 0xffU));
    out->append(part);
}

} // namespace fleetscope::fuzz
