// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Prometheus source's fixtures: a fleet of four hosts of 8 GPUs in dcgm-exporter's series (the names of 3.x and
// 4.x before 4.8.3), answered by a FakePrometheus (tests/backend/testing/fakeprometheus.h), and a source started on it.
#include "core/metriccatalog.h"
#include "prometheus/prometheussource.h"
#include "tests/backend/testing/fakeprometheus.h"

#include <QByteArray>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fleetscope::backend::testing {

// The fake's series name their node Hostname, as dcgm-exporter before 4.8.3 does, with the names of 3.x and 4.x: the
// source chooses this profile, and asks its queries.
inline const MetricMap hostnameProfile = MetricMap::profile(MetricMap::Profile::Gen3x482);

// The test fleet: four hosts whose names sort naturally as node-1, node-2, node-3, node-10, 8 GPUs each.
inline const std::vector<std::string> hosts = { "node-10", "node-2", "node-3", "node-1" };
inline const std::vector<std::string> hostsInOrder = { "node-1", "node-2", "node-3", "node-10" };
inline constexpr uint32_t gpusPerHost = 8;
inline constexpr uint32_t fleetGpus = 32;

struct Series
{
    std::string host;
    std::string gpu;
    std::string value;
    std::string extraLabels; // ,"name":"value" pairs
};

inline QByteArray vectorAnswer(const std::vector<Series> &series, double evalSeconds = 1700000100.0)
{
    std::string out = R"({"status":"success","data":{"resultType":"vector","result":[)";
    for (size_t i = 0; i < series.size(); ++i) {
        const auto &s = series[i];
        out += (i ? "," : "") + std::string(R"({"metric":{)");
        std::string labels;
        if (!s.host.empty()) {
            labels += R"("Hostname":")" + s.host + "\"";
        }
        if (!s.gpu.empty()) {
            labels += std::string(labels.empty() ? "" : ",") + R"("gpu":")" + s.gpu + "\"";
        }
        labels += labels.empty() && !s.extraLabels.empty() ? s.extraLabels.substr(1) : s.extraLabels;
        out += labels + R"(},"value":[)" + QByteArray::number(evalSeconds, 'f', 3).toStdString() + ",\"" + s.value
            + "\"]}";
    }
    out += "]}}";
    return QByteArray::fromStdString(out);
}

inline int denseIndex(const std::string &host, uint32_t gpu)
{
    const auto it = std::find(hostsInOrder.begin(), hostsInOrder.end(), host);
    return static_cast<int>(it - hostsInOrder.begin()) * gpusPerHost + static_cast<int>(gpu);
}

inline std::string uuidOf(int index)
{
    return "GPU-00000000-0000-4000-8000-" + QByteArray::number(100000000000LL + index).toStdString();
}

// Gauges: 100 x metric + dense index; counts and throttle reasons: 0, so every GPU is healthy. The rail links are up
// (node-exporter's state id 4); the facility's series, one for the fleet's one rack, 100 x metric on all its GPUs.
inline float expectedValue(MetricId id, int index)
{
    if (metricCatalog()[static_cast<size_t>(id)].isRate || id == MetricId::ThrottleReasons) {
        return 0;
    }
    if (id == MetricId::RailLinkState) {
        return 1;
    }
    if (MetricMap::scopeOf(id) == MetricMap::Scope::Rack) {
        return static_cast<float>(100 * static_cast<int>(id));
    }
    return static_cast<float>(100 * static_cast<int>(id) + index);
}

// A series' value as the upstream answers it: node-exporter's state id, transmit wait as ticks a second.
inline std::string upstreamValue(MetricId id, int index)
{
    if (id == MetricId::RailLinkState) {
        return "4";
    }
    const double v = expectedValue(id, index);
    return QByteArray::number(id == MetricId::RailTransmitWait ? v / MetricMap::transmitWaitScale : v, 'g', 12)
        .toStdString();
}

inline std::vector<Series> metricSeries(MetricId id, const std::string &skipHost = {}, int skipGpu = -1)
{
    std::vector<Series> out;
    // The facility's: the four hosts are one rack (auto-r01-k01, as the layout from labels packs them).
    if (MetricMap::scopeOf(id) == MetricMap::Scope::Rack) {
        out.push_back({ {}, {}, upstreamValue(id, 0), R"(,"rack":"auto-r01-k01")" });
        return out;
    }
    // node-exporter's: one per NIC, the node in the scrape's instance; each node's storage NIC too (mlx5_8, no GPU's).
    if (MetricMap::scopeOf(id) == MetricMap::Scope::Nic) {
        for (const auto &h : hosts) {
            for (uint32_t g = 0; g <= gpusPerHost; ++g) {
                if (h == skipHost && static_cast<int>(g) == skipGpu) {
                    continue;
                }
                out.push_back({ {}, {}, g == gpusPerHost ? "7" : upstreamValue(id, denseIndex(h, g)),
                    R"(,"instance":")" + h + R"(:9100","device":"mlx5_)" + std::to_string(g) + R"(","port":"1")" });
            }
        }
        return out;
    }
    for (const auto &h : hosts) {
        for (uint32_t g = 0; g < gpusPerHost; ++g) {
            if (h == skipHost && static_cast<int>(g) == skipGpu) {
                continue;
            }
            const float v = expectedValue(id, denseIndex(h, g));
            out.push_back({ h, std::to_string(g), QByteArray::number(v).toStdString(), {} });
        }
    }
    return out;
}

// The raw XID gauge and double-bit counter the events come from: 0 on every GPU but those given (dense index ->
// value).
inline void answerEvents(
    FakePrometheus &fake, const std::map<int, std::string> &xid, const std::map<int, std::string> &dbe)
{
    std::vector<Series> series;
    for (const auto &[field, values] :
        { std::pair { "DCGM_FI_DEV_XID_ERRORS", &xid }, std::pair { "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", &dbe } }) {
        for (const auto &h : hosts) {
            for (uint32_t g = 0; g < gpusPerHost; ++g) {
                const auto it = values->find(denseIndex(h, g));
                series.push_back({ h, std::to_string(g), it == values->end() ? "0" : it->second,
                    std::string(R"(,"__name__":")") + field + "\"" });
            }
        }
    }
    fake.set(PrometheusSource::eventQuery(hostnameProfile), { 200, vectorAnswer(series), 0 });
}

inline void answerTimestamp(FakePrometheus &fake, double seconds)
{
    fake.set(PrometheusSource::sampleTimeQuery(hostnameProfile),
        { 200, vectorAnswer({ { {}, {}, QByteArray::number(seconds, 'f', 3).toStdString(), {} } }), 0 });
}

// A healthy fleet: discovery with identity labels, every metric, the newest sample at `seconds`.
inline void answerFleet(FakePrometheus &fake, double seconds = 1700000000.5, const std::string &placement = {})
{
    std::vector<Series> gpus;
    for (const auto &h : hosts) {
        for (uint32_t g = 0; g < gpusPerHost; ++g) {
            std::string labels = R"(,"UUID":")" + uuidOf(denseIndex(h, g))
                + R"(","modelName":"NVIDIA H100 80GB HBM3","DCGM_FI_DRIVER_VERSION":"550.54.15")";
            if (!placement.empty()) {
                // node-1 and node-2 in row r10, the others in row r2; one rack per host.
                const bool low = h == "node-1" || h == "node-2";
                labels += std::string(R"(,"row":")") + (low ? "r10" : "r2") + R"(","rack":"k-)" + h + "\"";
            }
            gpus.push_back({ h, std::to_string(g), "1", labels });
        }
    }
    fake.set(PrometheusSource::profileDiscoveryQuery(), { 200, vectorAnswer(gpus), 0 });
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        if (const auto q = PrometheusSource::queryFor(hostnameProfile, static_cast<MetricId>(m))) {
            fake.set(*q, { 200, vectorAnswer(metricSeries(static_cast<MetricId>(m))), 0 });
        }
    }
    answerTimestamp(fake, seconds);
    answerEvents(fake, {}, {});
}

inline std::unique_ptr<PrometheusSource> startSource(FakePrometheus &fake, std::vector<std::string> *log,
    std::chrono::milliseconds timeout = std::chrono::milliseconds(2000), const std::string &topologyFile = {})
{
    auto source = std::make_unique<PrometheusSource>([log](const std::string &line) {
        if (log) {
            log->push_back(line);
        }
    });
    PrometheusSource::Options options;
    options.url = fake.url();
    options.timeout = timeout;
    options.topologyFile = topologyFile;
    std::string error;
    if (!source->start(options, &error)) {
        qWarning("start failed: %s", error.c_str());
        return nullptr;
    }
    return source;
}

inline bool contains(const std::string &text, const char *part)
{
    return text.find(part) != std::string::npos;
}

// One series of a range query's matrix: (Unix ms, value text) points.
struct RangeSeries
{
    std::string host;
    std::string gpu;
    std::vector<std::pair<int64_t, std::string>> points;
    std::string extraLabels;
};

inline QByteArray matrixAnswer(const std::vector<RangeSeries> &series)
{
    std::string out = R"({"status":"success","data":{"resultType":"matrix","result":[)";
    for (size_t i = 0; i < series.size(); ++i) {
        const auto &s = series[i];
        std::string labels;
        if (!s.host.empty()) {
            labels = R"("Hostname":")" + s.host + R"(","gpu":")" + s.gpu + "\"";
        }
        labels += labels.empty() && !s.extraLabels.empty() ? s.extraLabels.substr(1) : s.extraLabels;
        out += (i ? "," : "") + std::string(R"({"metric":{)") + labels + R"(},"values":[)";
        for (size_t p = 0; p < s.points.size(); ++p) {
            out += (p ? "," : "") + std::string("[") + std::to_string(s.points[p].first / 1000) + "."
                + QByteArray::number(s.points[p].first % 1000).rightJustified(3, '0').toStdString() + ",\""
                + s.points[p].second + "\"]";
        }
        out += "]}";
    }
    out += "]}}";
    return QByteArray::fromStdString(out);
}

} // namespace fleetscope::backend::testing
