// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace google::protobuf {
class Arena;
}
namespace prometheus {
class WriteRequest;
}

namespace fleetscope::backend {

// What one remote-write request may hold. A request over any of them is refused whole (400, or 413 for the body),
// before anything of it is used: a sender that means well never comes near them (vmagent sends blocks of at most
// 8 MB, Prometheus a few thousand samples), and a crafted one gets no further.
struct RemoteWriteLimits
{
    size_t maxBodyBytes = size_t { 32 } << 20U; // compressed, as received
    size_t maxDecodedBytes = size_t { 64 } << 20U; // after snappy, before protobuf
    size_t maxSeries = 4'000'000;
    size_t maxLabelsPerSeries = 64; // dcgm-exporter's series have about 20 with Kubernetes' labels
    size_t maxLabelBytes = 4096; // a name or a value
    size_t maxSamplesPerSeries = 100'000;
};

// The request's headers that say what its body is.
struct RemoteWriteHeaders
{
    std::string_view contentEncoding; // must be "snappy"
    std::string_view contentType; // application/x-protobuf, or empty
    std::string_view version; // X-Prometheus-Remote-Write-Version: 0.1.x, or empty
};

// Why a request is refused, and what to answer.
struct RemoteWriteRefusal
{
    int status = 0; // 400 malformed, 413 too large, 415 another protocol (remote write 2.0)
    std::string reason;
};

// Checks a request's headers and body and decodes it (snappy block format, then protobuf) into a WriteRequest
// allocated on arena. Returns the request, or null with the refusal: headers of another protocol or version,
// snappy that does not decode or decodes to more than the limit, protobuf that does not parse (truncated, garbage,
// strings that are not UTF-8), or a series over the limits above. scratch holds the decoded bytes between calls.
prometheus::WriteRequest *decodeRemoteWrite(const RemoteWriteHeaders &headers, std::string_view body,
    const RemoteWriteLimits &limits, google::protobuf::Arena *arena, std::string *scratch, RemoteWriteRefusal *refusal);

} // namespace fleetscope::backend
