// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the remote-write tests send: WriteRequests built by hand, snappy-compressed as senders do, POSTed over HTTP.
#include "prometheus/remote.pb.h"

#include <httplib.h>
#include <snappy.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fleetscope::testing {

struct PushedSeries
{
    std::vector<std::pair<std::string, std::string>> labels; // __name__ among them
    std::vector<std::pair<int64_t, double>> samples; // (Unix ms, value)
};

// dcgm-exporter's labels for one GPU's field (the node label as before 4.8.3, Hostname, unless given).
inline PushedSeries dcgmSeries(const std::string &field, const std::string &hostname, int gpu, int64_t timeMs,
    double value, std::vector<std::pair<std::string, std::string>> extra = {},
    const std::string &nodeLabel = "Hostname")
{
    PushedSeries s;
    s.labels = { { nodeLabel, hostname }, { "UUID", "GPU-" + hostname + "-" + std::to_string(gpu) },
        { "__name__", field }, { "gpu", std::to_string(gpu) }, { "modelName", "NVIDIA H100 80GB HBM3" } };
    for (auto &l : extra) {
        s.labels.push_back(std::move(l));
    }
    s.samples = { { timeMs, value } };
    return s;
}

inline std::string protobufOf(const std::vector<PushedSeries> &series)
{
    prometheus::WriteRequest request;
    for (const auto &s : series) {
        auto *ts = request.add_timeseries();
        for (const auto &[name, value] : s.labels) {
            auto *l = ts->add_labels();
            l->set_name(name);
            l->set_value(value);
        }
        for (const auto &[t, v] : s.samples) {
            auto *sample = ts->add_samples();
            sample->set_timestamp(t);
            sample->set_value(v);
        }
    }
    return request.SerializeAsString();
}

inline std::string snappyOf(const std::string &bytes)
{
    std::string out;
    snappy::Compress(bytes.data(), bytes.size(), &out);
    return out;
}

inline std::string writeBody(const std::vector<PushedSeries> &series)
{
    return snappyOf(protobufOf(series));
}

struct PushReply
{
    int status = 0; // 0: no answer
    std::string body;
};

// How a push reaches a receiver that asks for TLS and a token: the CA its certificate is checked with (empty: plain
// HTTP), and the bearer token sent (empty: none).
struct PushDoor
{
    std::string caFile;
    std::string token;
};

// POSTs body to /api/v1/write as a remote write 1.0 sender does (headers overridable).
inline PushReply push(int port, const std::string &body, httplib::Headers headers = {}, const PushDoor &door = {})
{
    if (headers.empty()) {
        headers = { { "Content-Encoding", "snappy" }, { "X-Prometheus-Remote-Write-Version", "0.1.0" } };
    }
    if (!door.token.empty()) {
        headers.emplace("Authorization", "Bearer " + door.token);
    }
    std::unique_ptr<httplib::ClientImpl> client;
    if (door.caFile.empty()) {
        client = std::make_unique<httplib::ClientImpl>("127.0.0.1", port);
    } else {
        auto tls = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
        tls->set_ca_cert_path(door.caFile.c_str());
        tls->enable_server_certificate_verification(true);
        client = std::move(tls);
    }
    client->set_read_timeout(10, 0);
    client->set_write_timeout(10, 0);
    const auto result = client->Post("/api/v1/write", headers, body, "application/x-protobuf");
    if (!result) {
        return {};
    }
    return { result->status, result->body };
}

} // namespace fleetscope::testing
