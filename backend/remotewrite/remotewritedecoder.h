// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::backend {

// What one remote-write request may hold. A request over any of them is refused whole (400, or 413 for the body),
// before anything of it is used: a sender that means well never comes near them (vmagent sends blocks of at most
// 8 MB, Prometheus a few thousand samples), and a crafted one gets no further.
struct RemoteWriteLimits
{
    size_t maxBodyBytes = size_t { 32 } << 20U; // compressed, as received
    size_t maxDecodedBytes = size_t { 64 } << 20U; // after snappy
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

// Checks a request's headers and body size and undoes its snappy block compression into *scratch (the decoded length,
// the block's header, is checked against the limit before anything is allocated). False with the refusal: headers of
// another protocol or version, a body over the limit, snappy that does not decode.
bool unpackRemoteWrite(const RemoteWriteHeaders &headers, std::string_view body, const RemoteWriteLimits &limits,
    std::string *scratch, RemoteWriteRefusal *refusal);

// Reads a WriteRequest's protobuf wire format in place, series by series (the field numbers of
// proto/prometheus/remote.proto: WriteRequest.timeseries 1; TimeSeries.labels 1, samples 2; Label.name 1, value 2;
// Sample.value 1, timestamp 2; every other field skipped as protobuf skips unknown ones). Nothing is copied and
// nothing allocated but the two reused vectors: at a million GPUs the receiver reads eight million series a window,
// and the generated parser's allocations per string cost four times the rest of the work (docs/PERFORMANCE.md).
// Every length is checked against the bytes left and the limits; labels must be UTF-8, as protobuf's strings.
class WriteRequestReader
{
public:
    struct Label
    {
        std::string_view name;
        std::string_view value;
    };
    struct Sample
    {
        double value = 0;
        int64_t timestampMs = 0;
    };

    WriteRequestReader(std::string_view bytes, const RemoteWriteLimits &limits);

    // The next series into labels() and samples(): false at the end of the request, or on malformed bytes or a
    // series over the limits (then error() says which).
    bool next();
    const std::vector<Label> &labels() const { return m_labels; }
    const std::vector<Sample> &samples() const { return m_samples; }
    const std::string &error() const { return m_error; }
    size_t seriesRead() const { return m_series; }

private:
    bool fail(std::string error);
    bool readSeries(const uint8_t *p, const uint8_t *end);

    const uint8_t *m_at;
    const uint8_t *m_end;
    const RemoteWriteLimits &m_limits;
    std::vector<Label> m_labels;
    std::vector<Sample> m_samples;
    std::string m_error;
    size_t m_series = 0;
};

} // namespace fleetscope::backend
