// SPDX-License-Identifier: Apache-2.0
#include "remotewrite/remotewritedecoder.h"

#include <snappy.h>

#include <cstring>

#include <fmt/format.h>

namespace fleetscope::backend {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "a sample's double is read as the wire's little-endian bytes");

namespace {

bool refuse(RemoteWriteRefusal *refusal, int status, std::string reason)
{
    refusal->status = status;
    refusal->reason = std::move(reason);
    return false;
}

bool startsWith(std::string_view text, std::string_view prefix)
{
    return text.substr(0, prefix.size()) == prefix;
}

// Protobuf's wire types.
enum WireType : uint32_t { Varint = 0, Fixed64 = 1, LengthDelimited = 2, Fixed32 = 5 };

// A base-128 varint of at most 10 bytes; false when it runs past end or is longer.
bool readVarint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end) {
            return false;
        }
        const uint8_t byte = *(*p)++;
        value |= static_cast<uint64_t>(byte & 0x7fU) << static_cast<unsigned>(shift);
        if ((byte & 0x80U) == 0) {
            *out = value;
            return true;
        }
    }
    return false;
}

// A length-delimited field's bytes: [*p, *p + length), checked against end.
bool readLength(const uint8_t **p, const uint8_t *end, const uint8_t **begin, size_t *length)
{
    uint64_t n = 0;
    if (!readVarint(p, end, &n) || n > static_cast<uint64_t>(end - *p)) {
        return false;
    }
    *begin = *p;
    *length = static_cast<size_t>(n);
    *p += n;
    return true;
}

// Skips a field of another number, as protobuf does; groups (wire types 3 and 4, long deprecated) are refused.
bool skipField(const uint8_t **p, const uint8_t *end, uint32_t wireType)
{
    uint64_t ignored = 0;
    const uint8_t *begin = nullptr;
    size_t length = 0;
    switch (wireType) {
    case Varint:
        return readVarint(p, end, &ignored);
    case Fixed64:
        if (end - *p < 8) {
            return false;
        }
        *p += 8;
        return true;
    case LengthDelimited:
        return readLength(p, end, &begin, &length);
    case Fixed32:
        if (end - *p < 4) {
            return false;
        }
        *p += 4;
        return true;
    default:
        return false;
    }
}

bool readTag(const uint8_t **p, const uint8_t *end, uint32_t *field, uint32_t *wireType)
{
    uint64_t tag = 0;
    if (!readVarint(p, end, &tag) || tag > 0xffffffffU) {
        return false;
    }
    *field = static_cast<uint32_t>(tag >> 3U);
    *wireType = static_cast<uint32_t>(tag & 7U);
    return *field != 0;
}

// UTF-8 as protobuf checks its strings: well-formed sequences, no surrogates, nothing over U+10FFFF, shortest forms.
bool isUtf8(std::string_view text)
{
    const auto *p = reinterpret_cast<const uint8_t *>(text.data());
    const uint8_t *end = p + text.size();
    while (p < end) {
        // Eight ASCII bytes at a time: label names and values are nearly always ASCII.
        if (end - p >= 8) {
            uint64_t word = 0;
            std::memcpy(&word, p, 8);
            if ((word & 0x8080808080808080ULL) == 0) {
                p += 8;
                continue;
            }
        }
        const uint8_t c = *p;
        if (c < 0x80) {
            ++p;
            continue;
        }
        int extra = 0;
        uint32_t code = 0;
        uint32_t min = 0;
        if ((c & 0xe0U) == 0xc0U) {
            extra = 1;
            code = c & 0x1fU;
            min = 0x80;
        } else if ((c & 0xf0U) == 0xe0U) {
            extra = 2;
            code = c & 0x0fU;
            min = 0x800;
        } else if ((c & 0xf8U) == 0xf0U) {
            extra = 3;
            code = c & 0x07U;
            min = 0x10000;
        } else {
            return false;
        }
        if (end - p <= extra) {
            return false;
        }
        for (int i = 1; i <= extra; ++i) {
            if ((p[i] & 0xc0U) != 0x80U) {
                return false;
            }
            code = (code << 6U) | (p[i] & 0x3fU);
        }
        if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
            return false;
        }
        p += extra + 1;
    }
    return true;
}

} // namespace

bool unpackRemoteWrite(const RemoteWriteHeaders &headers, std::string_view body, const RemoteWriteLimits &limits,
    std::string *scratch, RemoteWriteRefusal *refusal)
{
    // Remote write 2.0 names its message in the content type; a 1.0 receiver answers 415 so that the sender falls
    // back (the 2.0 specification's rule).
    if (!headers.contentType.empty() && !startsWith(headers.contentType, "application/x-protobuf")) {
        return refuse(refusal, 415,
            fmt::format("Content-Type '{}' is not application/x-protobuf", headers.contentType.substr(0, 100)));
    }
    if (headers.contentType.find("proto=") != std::string_view::npos
        && headers.contentType.find("proto=prometheus.WriteRequest") == std::string_view::npos) {
        return refuse(refusal, 415,
            fmt::format("Content-Type '{}': only remote write 1.0 (prometheus.WriteRequest) is accepted",
                headers.contentType.substr(0, 100)));
    }
    if (!headers.version.empty() && !startsWith(headers.version, "0.1.")) {
        return refuse(refusal, 400,
            fmt::format("X-Prometheus-Remote-Write-Version '{}': only 0.1.x (remote write 1.0) is accepted",
                headers.version.substr(0, 40)));
    }
    if (headers.contentEncoding != "snappy") {
        return refuse(refusal, 400,
            fmt::format("Content-Encoding '{}': remote write bodies are snappy-compressed (Content-Encoding: snappy)",
                headers.contentEncoding.substr(0, 40)));
    }
    if (body.size() > limits.maxBodyBytes) {
        return refuse(
            refusal, 413, fmt::format("the body has {} bytes, more than {}", body.size(), limits.maxBodyBytes));
    }
    size_t decodedBytes = 0;
    if (!snappy::GetUncompressedLength(body.data(), body.size(), &decodedBytes)) {
        return refuse(refusal, 400, "the body is not snappy block-compressed data");
    }
    if (decodedBytes > limits.maxDecodedBytes) {
        return refuse(refusal, 400,
            fmt::format("the body decompresses to {} bytes, more than {}", decodedBytes, limits.maxDecodedBytes));
    }
    scratch->resize(decodedBytes);
    if (!snappy::RawUncompress(body.data(), body.size(), scratch->data())) {
        return refuse(refusal, 400, "the body's snappy data is corrupt");
    }
    return true;
}

WriteRequestReader::WriteRequestReader(std::string_view bytes, const RemoteWriteLimits &limits)
    : m_at(reinterpret_cast<const uint8_t *>(bytes.data()))
    , m_end(m_at + bytes.size())
    , m_limits(limits)
{ }

bool WriteRequestReader::fail(std::string error)
{
    m_error = std::move(error);
    m_at = m_end;
    return false;
}

bool WriteRequestReader::next()
{
    while (m_at < m_end) {
        uint32_t field = 0;
        uint32_t wireType = 0;
        if (!readTag(&m_at, m_end, &field, &wireType)) {
            return fail("the body is not a remote write WriteRequest (protobuf: a bad field tag)");
        }
        if (field != 1 || wireType != LengthDelimited) {
            if (!skipField(&m_at, m_end, wireType)) {
                return fail("the body is not a remote write WriteRequest (protobuf: a field runs past the end)");
            }
            continue;
        }
        const uint8_t *begin = nullptr;
        size_t length = 0;
        if (!readLength(&m_at, m_end, &begin, &length)) {
            return fail("the body is not a remote write WriteRequest (protobuf: a series runs past the end)");
        }
        if (++m_series > m_limits.maxSeries) {
            return fail(fmt::format("more than {} series in one request", m_limits.maxSeries));
        }
        return readSeries(begin, begin + length);
    }
    return false;
}

bool WriteRequestReader::readSeries(const uint8_t *p, const uint8_t *end)
{
    m_labels.clear();
    m_samples.clear();
    const size_t series = m_series - 1;
    while (p < end) {
        uint32_t field = 0;
        uint32_t wireType = 0;
        if (!readTag(&p, end, &field, &wireType)) {
            return fail(fmt::format("series {}: protobuf: a bad field tag", series));
        }
        if ((field != 1 && field != 2) || wireType != LengthDelimited) {
            if (!skipField(&p, end, wireType)) {
                return fail(fmt::format("series {}: protobuf: a field runs past the end", series));
            }
            continue;
        }
        const uint8_t *begin = nullptr;
        size_t length = 0;
        if (!readLength(&p, end, &begin, &length)) {
            return fail(fmt::format("series {}: protobuf: a {} runs past the end", series, field == 1 ? "label" : "sample"));
        }
        const uint8_t *q = begin;
        const uint8_t *stop = begin + length;
        if (field == 1) {
            if (m_labels.size() >= m_limits.maxLabelsPerSeries) {
                return fail(fmt::format("series {} has more than {} labels", series, m_limits.maxLabelsPerSeries));
            }
            Label label;
            while (q < stop) {
                uint32_t f = 0;
                uint32_t w = 0;
                if (!readTag(&q, stop, &f, &w)) {
                    return fail(fmt::format("series {}: protobuf: a bad label tag", series));
                }
                if ((f == 1 || f == 2) && w == LengthDelimited) {
                    const uint8_t *text = nullptr;
                    size_t n = 0;
                    if (!readLength(&q, stop, &text, &n)) {
                        return fail(fmt::format("series {}: protobuf: a label runs past the end", series));
                    }
                    (f == 1 ? label.name : label.value) = std::string_view(reinterpret_cast<const char *>(text), n);
                } else if (!skipField(&q, stop, w)) {
                    return fail(fmt::format("series {}: protobuf: a label field runs past the end", series));
                }
            }
            if (label.name.empty() || label.name.size() > m_limits.maxLabelBytes
                || label.value.size() > m_limits.maxLabelBytes) {
                return fail(fmt::format("series {} has a label with a {}-byte name and a {}-byte value (names 1 to {} "
                                        "bytes, values at most {})",
                    series, label.name.size(), label.value.size(), m_limits.maxLabelBytes, m_limits.maxLabelBytes));
            }
            if (!isUtf8(label.name) || !isUtf8(label.value)) {
                return fail(fmt::format("series {}: a label is not UTF-8 (protobuf strings are)", series));
            }
            m_labels.push_back(label);
            continue;
        }
        if (m_samples.size() >= m_limits.maxSamplesPerSeries) {
            return fail(fmt::format("series {} has more than {} samples", series, m_limits.maxSamplesPerSeries));
        }
        Sample sample;
        while (q < stop) {
            uint32_t f = 0;
            uint32_t w = 0;
            if (!readTag(&q, stop, &f, &w)) {
                return fail(fmt::format("series {}: protobuf: a bad sample tag", series));
            }
            if (f == 1 && w == Fixed64) {
                if (stop - q < 8) {
                    return fail(fmt::format("series {}: protobuf: a sample's value runs past the end", series));
                }
                uint64_t bits = 0;
                std::memcpy(&bits, q, 8); // little-endian on the wire and on every machine we build for
                std::memcpy(&sample.value, &bits, 8);
                q += 8;
            } else if (f == 2 && w == Varint) {
                uint64_t t = 0;
                if (!readVarint(&q, stop, &t)) {
                    return fail(fmt::format("series {}: protobuf: a sample's timestamp runs past the end", series));
                }
                sample.timestampMs = static_cast<int64_t>(t);
            } else if (!skipField(&q, stop, w)) {
                return fail(fmt::format("series {}: protobuf: a sample field runs past the end", series));
            }
        }
        m_samples.push_back(sample);
    }
    return true;
}

} // namespace fleetscope::backend
