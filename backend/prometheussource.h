// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "framepoller.h"
#include "metriccatalog.h"
#include "prometheushttp.h"
#include "prometheustopology.h"
#include "promjson.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fleetscope::backend {

// Frames from a Prometheus-compatible server (Prometheus, VictoriaMetrics, Thanos, Mimir) that scrapes dcgm-exporter:
// per poll one instant query per metric of the catalogue, all at the same evaluation time, and one for the newest
// sample's timestamp, which becomes the frame's sample time. Every answer is checked; a poll with any failed answer
// publishes nothing (the last good frame stays) and says why in upstreamError() and the log.
//
// Threads: start() on any thread before the poller is handed to FrameSource; from then on only FrameSource's ticker
// thread calls it. lastReport() is for that thread (and for tests that poll by hand).
class PrometheusSource final : public FramePoller
{
public:
    struct Options
    {
        std::string url; // http://host:port[/prefix]
        std::string topologyFile; // empty: the layout comes from the series' labels
        std::chrono::milliseconds timeout { 5000 }; // for one poll's whole set of queries
    };

    // What the last poll found, beyond the values.
    struct Report
    {
        bool ok = false;
        std::string error;
        size_t unknownSeries = 0; // series whose (Hostname, gpu) is not in the topology: ignored
        std::string unknownExample; // "host/gpu" of one of them
        size_t duplicateSeries = 0; // a second series for the same GPU and metric: ignored
        size_t sentinelValues = 0; // DCGM's blank / not-found / not-supported / not-permissioned: no data
        size_t nanValues = 0; // NaN or +-Inf: no data
        size_t gpusWithoutData = 0; // no series at all this poll
        size_t answerBytes = 0; // JSON bytes received for the whole set
        std::chrono::microseconds elapsed { 0 };
    };

    using Log = std::function<void(const std::string &)>;

    explicit PrometheusSource(Log log = {});

    // Reads the topology file, if any, and asks the server for the GPUs it knows (their labels give the layout when
    // there is no file, and the GPUs' identity either way). False with an error when there is no layout.
    bool start(const Options &options, std::string *error);

    const FleetShape &shape() const override { return m_topology.shape(); }
    uint64_t topologyGeneration() const override { return m_topology.generation(); }
    std::shared_ptr<SimFrame> emptyFrame() const override;
    std::shared_ptr<SimFrame> poll() override;
    std::string upstreamError() const override { return m_report.ok ? std::string() : m_report.error; }
    const Report &lastReport() const { return m_report; }

    // The PromQL for a metric of the catalogue; nullopt for one computed here (health).
    static std::optional<std::string> queryFor(MetricId id);
    // The newest sample time of the fleet (of its GPU temperatures: every field of a node shares its scrape's time).
    static std::string sampleTimeQuery();
    // One series per GPU with the labels the layout and identity come from.
    static std::string discoveryQuery();
    // NaN for DCGM's sentinels (int64, int32 and fp64 blanks, 0x...F0 to F3) and for non-finite values; counts which.
    static double clean(double value, size_t *sentinels, size_t *nans);

private:
    bool query(const std::string &promql, int64_t evalMs, std::chrono::steady_clock::time_point deadline,
        bool withPlacement, std::vector<PromSample> *out, std::string *error);
    void log(const std::string &line) const;

    Options m_options;
    Log m_log;
    PrometheusHttp m_http;
    PromJson m_json;
    PrometheusTopology m_topology;
    Report m_report;
    std::string m_loggedError; // the error last logged, so a failing upstream logs once, not once a poll
    size_t m_loggedUnknown = 0;
    int64_t m_lastSampleMs = 0;
    std::vector<PromSample> m_samples; // reused between queries
};

} // namespace fleetscope::backend
