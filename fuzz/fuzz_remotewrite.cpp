// SPDX-License-Identifier: Apache-2.0
// The remote-write receiver's reading of a request body. The first byte, modulo 3, picks what the rest is:
//   0: a snappy body, unpacked (headers of a well-behaved Prometheus sender) and read series by series;
//   1: an already decompressed WriteRequest, straight into the in-place wire reader;
//   2: a snappy body handed to a receiver that has not started, as its HTTP handler does while it learns the fleet
//      (unpack, read, the labels mapped by every dcgm-exporter generation's names).
#include "fuzz/fuzzinput.h"
#include "remotewrite/remotewritedecoder.h"
#include "remotewrite/remotewritesource.h"

#include <cmath>
#include <cstring>
#include <string>

namespace {

using namespace fleetscope;
using namespace fleetscope::backend;

// Small enough that the fuzzer reaches every limit; the decoded size also bounds the work per input.
RemoteWriteLimits fuzzLimits()
{
    RemoteWriteLimits limits;
    limits.maxBodyBytes = 1U << 20U;
    limits.maxDecodedBytes = 1U << 20U;
    limits.maxSeries = 256;
    limits.maxLabelsPerSeries = 16;
    limits.maxLabelBytes = 256;
    limits.maxSamplesPerSeries = 256;
    return limits;
}

// Reads every series and touches every byte the reader points at, so that a view past its buffer is seen by ASan.
void readAll(std::string_view bytes, const RemoteWriteLimits &limits)
{
    WriteRequestReader reader(bytes, limits);
    size_t sum = 0;
    while (reader.next()) {
        if (reader.labels().size() > limits.maxLabelsPerSeries || reader.samples().size() > limits.maxSamplesPerSeries
            || reader.seriesRead() > limits.maxSeries) {
            __builtin_trap(); // a series over the limits was let through
        }
        for (const auto &label : reader.labels()) {
            if (label.name.empty() || label.name.size() > limits.maxLabelBytes
                || label.value.size() > limits.maxLabelBytes) {
                __builtin_trap();
            }
            for (const char c : label.name) {
                sum += static_cast<unsigned char>(c);
            }
            for (const char c : label.value) {
                sum += static_cast<unsigned char>(c);
            }
        }
        for (const auto &sample : reader.samples()) {
            sum += std::isnan(sample.value) ? 1 : 0;
            sum += static_cast<size_t>(sample.timestampMs);
        }
    }
    if (reader.error().empty() && reader.seriesRead() > limits.maxSeries) {
        __builtin_trap();
    }
    fuzz::sink = sum;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const std::string_view body(reinterpret_cast<const char *>(data) + 1, size - 1);
    static const RemoteWriteLimits limits = fuzzLimits();
    static const RemoteWriteHeaders headers { "snappy", "application/x-protobuf", "0.1.0" };
    switch (data[0] % 3) {
    case 0: {
        std::string scratch;
        RemoteWriteRefusal refusal;
        if (unpackRemoteWrite(headers, body, limits, &scratch, &refusal)) {
            if (scratch.size() > limits.maxDecodedBytes) {
                __builtin_trap();
            }
            readAll(scratch, limits);
        } else if (refusal.status != 400 && refusal.status != 413) {
            __builtin_trap(); // these headers are right: only the body can be refused
        }
        break;
    }
    case 1: {
        // A copy of exactly the body's size, so that reading one byte past it is caught.
        const std::string bytes(body);
        readAll(bytes, limits);
        break;
    }
    default: {
        RemoteWriteSource source([](const std::string &) {});
        std::string reason;
        const int status = source.take(headers, body, 1'700'000'000'000, &reason);
        if (status != 204 && status != 400 && status != 413) {
            __builtin_trap();
        }
        break;
    }
    }
    return 0;
}
