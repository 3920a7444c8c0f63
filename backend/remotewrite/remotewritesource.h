// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framepoller.h"
#include "dcgm/metricmap.h"
#include "dcgm/prometheustopology.h"
#include "http/boundedhttpserver.h"
#include "remotewrite/remotewritedecoder.h"
#include "remotewrite/windowfolder.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace fleetscope::backend {

// Frames pushed by Prometheus remote write 1.0 (vmagent, Prometheus, Grafana Agent / Alloy): POST /api/v1/write with
// a snappy-compressed WriteRequest of dcgm-exporter's series. Answers 204 when the request was taken (samples it could
// not use are counted and logged, not refused: the sender must not resend them), 400 with the reason for a body it
// cannot read (the sender drops it), 413 for a body over the limit (from its Content-Length, unread), 415 for remote
// write 2.0, 503 with Retry-After while the frames are not keeping up or the bodies being read fill their budget
// (the spec has senders retry 5xx with a backoff; 429 they only may). See WindowFolder for how samples become frames.
//
// The connections are a BoundedHttpServer's (http/): its door's rule (loopback, or TLS and a token or client
// certificate, or --insecure-listen; a push without its credential is answered 401 unread), Options::threads decode
// and take requests, connections are bounded in all and per sender address, each request is read whole within
// Options::requestTimeout, and bodies being read share a bounded budget (503 with Retry-After past it).
//
// Start-up: listens at once, then learns from the first pushes what it needs: the scrape interval (from the time
// between two samples of the same series, at least 1 s, unless given) and, without a topology file, the fleet's
// layout (the GPUs that send; done when no new one has appeared for one and a half intervals, at least 2 s). With a
// topology file nothing is discovered: only its GPUs' samples teach the interval. infiniband_exporter's uplink series
// pushed meanwhile give GPUs their leaf switch and port where the file does not (PrometheusTopology::applyUplinks);
// those pushed later are not read, for the topology is fixed by then. start() returns when both are
// known, or at startTimeout with what it has learnt (windows of 15 s when no interval was), failing only when no GPU
// pushed at all; pushes before then only teach it.
//
// Threads: the HTTP server's pool decodes and maps requests and hands them to the folder; FrameSource's ticker calls
// poll(). The topology is fixed once start() returns.
class RemoteWriteSource final : public FramePoller
{
public:
    struct Options
    {
        std::string listen = "127.0.0.1:9201";
        std::string topologyFile; // empty: the layout comes from the pushed series' labels
        int64_t windowMs = 0; // 0: detected from the samples
        int64_t delayMs = 2000; // how late a window is closed after its end, for senders' batching
        int64_t graceMs = 0; // 0: three windows
        size_t maxOpenWindows = 8; // windows taking samples at once; more: 503
        std::chrono::milliseconds startTimeout { 120000 };
        std::chrono::milliseconds dropLogInterval { 10000 }; // what was not used is logged at most this often
        RemoteWriteLimits limits;
        std::optional<MetricMap> metricMap; // --metric-map; without, chosen from the series pushed
        int threads = 4; // requests decoded and taken at once (the HTTP edge's threads)
        size_t maxConnections = 1024; // open at once, from all senders; more are closed as they come
        size_t maxConnectionsPerAddress = 256; // open at once from one sender's address
        // Who may push: TLS, a bearer token or client certificate (--remote-write-tls-cert, -token-file, -client-ca).
        BoundedHttpServer::Security security;
        // From a request's first byte to its last: a 32 MiB body at 10 Mbit/s takes 27 s. A sender slower than that
        // has its connection shut.
        std::chrono::milliseconds requestTimeout { 30000 };
        std::chrono::milliseconds idleTimeout { 120000 }; // a kept-alive connection without a request
    };

    // Everything counted since the start, for the log and tests.
    struct Stats
    {
        uint64_t requests = 0;
        uint64_t refused = 0; // 4xx
        uint64_t overloaded = 0; // 503: the frames behind
        uint64_t unauthorized = 0; // 401 or 403: no valid token or client certificate
        uint64_t timedOut = 0; // connections shut for a head or body not whole in time
        uint64_t series = 0;
        uint64_t unknownGpuSeries = 0; // (hostname, gpu) not in the topology
        uint64_t unknownMetricSeries = 0; // not a field of the catalogue
        uint64_t unnamedSeries = 0; // a catalogue field without Hostname / hostname or gpu
        WindowFolder::Counts samples;
        std::string lastRefusal;
        std::string unknownGpuExample;
    };

    using Log = std::function<void(const std::string &)>;

    explicit RemoteWriteSource(Log log = {});
    ~RemoteWriteSource() override;

    bool start(const Options &options, std::string *error);
    // Closes the listener and waits for requests in progress; safe to call twice.
    void stop();
    int port() const { return m_port; }
    int64_t windowMs() const { return m_windowMs; }
    Stats stats() const;
    // The HTTP door's open connections, and those shut for a deadline or refused a credential.
    BoundedHttpServer::Load httpLoad() const;

    const FleetShape &shape() const override { return m_topology.shape(); }
    uint64_t topologyGeneration() const override { return m_topology.generation(); }
    // Every GPU without data, at the time of the start (before any sample).
    std::shared_ptr<Frame> emptyFrame() const;
    // Numbered after the frames pastFrames gave.
    std::shared_ptr<Frame> firstFrame() override;
    // The frames the judge learns from at the start: from the store that history comes from (useHistory), as the
    // Prometheus source gives its own; none without one.
    Past pastFrames(int64_t nowMs, std::chrono::milliseconds every, size_t maxFrames) override;
    std::shared_ptr<Frame> poll() override;
    std::string upstreamError() const override;
    std::vector<FleetEvent> takeEvents() override { return std::move(m_events); }
    std::vector<JobInfo> jobs() const override;
    std::chrono::steady_clock::time_point nextPollAt(std::chrono::steady_clock::time_point scheduled) const override;
    // The layout and names learnt (or read) by start(), for an UpstreamHistory over the same series.
    const PrometheusTopology &topology() const { return m_topology; }
    const MetricMap &metricMap() const { return m_map; }
    // History (QueryRange, the events before the start) from an upstream that holds the same series
    // (VictoriaMetrics written to by the same vmagent, read by a PrometheusSource started for history over
    // topology() and metricMap()); `from` names it in the log. After start(), before the source is handed to
    // FrameSource. Without it, history is the frames held.
    void useHistory(std::unique_ptr<UpstreamHistory> history, const std::string &from);
    std::vector<TimedEvent> pastEvents(int64_t fromMs, int64_t toMs) override;
    const HistoryProvider *history() const override { return m_history.get(); }

    // One request, as the HTTP handler gives it (nowMs: the backend's clock): the status to answer, and the reason
    // for a refusal. Thread-safe.
    int take(const RemoteWriteHeaders &headers, std::string_view body, int64_t nowMs, std::string *reason);
    // Publishes the windows due at nowMs (poll() with the clock); the newest frame, or null when none was due.
    std::shared_ptr<Frame> closeWindows(int64_t nowMs);

    // The interval the samples show: the median of the times between two samples of a series, rounded to 10 ms.
    static int64_t intervalOf(std::vector<int64_t> deltas);
    // Learnt intervals are at least this (a faster one only from --remote-write-interval-ms); without one learnt by
    // startTimeout, windows are this long (Prometheus' default scrape interval).
    static constexpr int64_t minimumLearntIntervalMs = 1000;
    static constexpr int64_t fallbackIntervalMs = 15000;
    // The longest interval learnt (as --remote-write-interval-ms takes): longer gaps between samples are not counted.
    static constexpr int64_t maxIntervalMs = 600000;

private:
    struct Discovered
    {
        PromSample labels;
        int64_t lastMs = 0;
    };

    bool discover(std::string_view bytes, int64_t nowMs, std::string *error);
    bool discoveryDone(int64_t nowMs) const;
    int64_t learntInterval() const; // 0 until enough samples came twice; m_mutex held
    void log(const std::string &line) const;
    void logDrops();

    Options m_options;
    Log m_log;
    std::unique_ptr<BoundedHttpServer> m_server;
    int m_port = 0;

    mutable std::mutex m_mutex; // discovery, stats
    std::condition_variable m_discoveryChanged;
    std::map<std::string, Discovered> m_discovered; // by hostname \0 gpu
    std::vector<int64_t> m_deltas;
    std::set<std::string> m_namesSeen; // of the built-in profiles' series names
    std::map<std::string, UplinkLabels::Series> m_uplinks; // by their labels; at most FleetShape::maxGpus
    struct Refused
    {
        size_t count = 0;
        std::string example; // the first's labels, cut and printable
    };
    std::array<Refused, static_cast<size_t>(UplinkLabels::Refusal::Count)> m_uplinksRefused {};
    size_t m_uplinksOfUnknownHosts = 0; // with a topology file
    std::array<size_t, 2> m_hostnameLabelUses {}; // GPUs seen with hostname, with Hostname
    int64_t m_lastNewGpuMs = 0;
    Stats m_stats;
    int64_t m_lastAcceptedMs = 0;

    // Fixed once start() returns.
    PrometheusTopology m_topology;
    MetricMap m_map;
    int64_t m_windowMs = 0;
    std::unique_ptr<WindowFolder> m_folder;
    std::unique_ptr<UpstreamHistory> m_history;
    uint64_t m_pastFrames = 0; // given by pastFrames, numbered 0 .. m_pastFrames - 1 before the first frame
    std::atomic<bool> m_ready { false };

    // The ticker's.
    std::vector<FleetEvent> m_events;
    uint64_t m_loggedDrops = 0;
    std::chrono::steady_clock::time_point m_lastDropLog {};
};

} // namespace fleetscope::backend
