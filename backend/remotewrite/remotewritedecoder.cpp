// SPDX-License-Identifier: Apache-2.0
#include "remotewrite/remotewritedecoder.h"

#include "prometheus/remote.pb.h"

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <snappy.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

prometheus::WriteRequest *refuse(RemoteWriteRefusal *refusal, int status, std::string reason)
{
    refusal->status = status;
    refusal->reason = std::move(reason);
    return nullptr;
}

bool startsWith(std::string_view text, std::string_view prefix)
{
    return text.substr(0, prefix.size()) == prefix;
}

} // namespace

prometheus::WriteRequest *decodeRemoteWrite(const RemoteWriteHeaders &headers, std::string_view body,
    const RemoteWriteLimits &limits, google::protobuf::Arena *arena, std::string *scratch, RemoteWriteRefusal *refusal)
{
    // Remote write 2.0 names its message in the content type; a 1.0 receiver answers 415 so that the sender falls
    // back (the 2.0 specification's rule).
    if (!headers.contentType.empty() && !startsWith(headers.contentType, "application/x-protobuf")) {
        return refuse(refusal, 415, fmt::format("Content-Type '{}' is not application/x-protobuf",
                                        headers.contentType.substr(0, 100)));
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
        return refuse(refusal, 413, fmt::format("the body has {} bytes, more than {}", body.size(), limits.maxBodyBytes));
    }
    // The decoded length is the block's header: checked before anything is allocated for it.
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
    auto *request = google::protobuf::Arena::CreateMessage<prometheus::WriteRequest>(arena);
    google::protobuf::io::CodedInputStream stream(
        reinterpret_cast<const uint8_t *>(scratch->data()), static_cast<int>(scratch->size()));
    // Messages nest three deep here; the default limit (100) stays.
    if (!request->ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
        return refuse(refusal, 400, "the body is not a remote write WriteRequest (protobuf does not parse)");
    }
    if (static_cast<size_t>(request->timeseries_size()) > limits.maxSeries) {
        return refuse(refusal, 400,
            fmt::format("{} series in one request, more than {}", request->timeseries_size(), limits.maxSeries));
    }
    for (int i = 0; i < request->timeseries_size(); ++i) {
        const auto &series = request->timeseries(i);
        if (static_cast<size_t>(series.labels_size()) > limits.maxLabelsPerSeries) {
            return refuse(refusal, 400,
                fmt::format("series {} has {} labels, more than {}", i, series.labels_size(),
                    limits.maxLabelsPerSeries));
        }
        if (static_cast<size_t>(series.samples_size()) > limits.maxSamplesPerSeries) {
            return refuse(refusal, 400,
                fmt::format("series {} has {} samples, more than {}", i, series.samples_size(),
                    limits.maxSamplesPerSeries));
        }
        for (const auto &label : series.labels()) {
            if (label.name().empty() || label.name().size() > limits.maxLabelBytes
                || label.value().size() > limits.maxLabelBytes) {
                return refuse(refusal, 400,
                    fmt::format("series {} has a label with a {}-byte name and a {}-byte value (names 1 to {} bytes, "
                                "values at most {})",
                        i, label.name().size(), label.value().size(), limits.maxLabelBytes, limits.maxLabelBytes));
            }
        }
    }
    return request;
}

} // namespace fleetscope::backend
