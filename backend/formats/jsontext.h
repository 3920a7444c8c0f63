// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace fleetscope::backend {

// Appends text as a JSON string literal: quotes and backslashes escaped, control characters as \uXXXX, UTF-8 as it is.
inline void appendJsonString(std::string *out, std::string_view text)
{
    out->push_back('"');
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out->push_back('\\');
            out->push_back(c);
        } else if (static_cast<unsigned char>(c) < 0x20) {
            fmt::format_to(std::back_inserter(*out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
            out->push_back(c);
        }
    }
    out->push_back('"');
}

} // namespace fleetscope::backend
