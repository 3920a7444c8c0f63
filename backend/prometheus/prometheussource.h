// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framepoller.h"
#include "core/metriccatalog.h"
#include "dcgm/metricmap.h"
#include "dcgm/prometheusevents.h"
#include "dcgm/prometheusjobs.h"
#include "dcgm/prometheustopology.h"
#include "dcgm/slurmjobs.h"
#include "prometheus/prometheushttp.h"
#include "prometheus/promjson.h"

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace fleetscope::backend {

// Frames from a Prometheus-compatible server (Prometheus, VictoriaMetrics, Thanos, Mimir) that scrapes dcgm-exporter:
// per poll one instant query per metric of the catalogue, all at the same evaluation time, and one for the newest
// sample's timestamp, which becomes the frame's sample time. Every answer is checked; a poll with any failed answer
// publishes nothing (the last good frame stays) and says why in upstreamError() and the log.
//
// Each poll also reads the jobs from the series' labels (PrometheusJobs) and from a Slurm exporter's node-to-job
// series (SlurmJobs, one more query; a node a Slurm job runs on is that job's, whatever pod its series name), and the
// events from the changes since the last poll (PrometheusEvents; one more query, for the raw XID gauge and double-bit
// ECC counter). History comes from the server's range queries (/api/v1/query_range): QueryRange's values, and the
// events of the hour before the start (pastEvents).
//
// Threads: start() on any thread before the poller is handed to FrameSource; from then on only FrameSource's ticker
// thread calls it, except the HistoryProvider methods, which any thread may call at any time (they share nothing
// that changes after start() but the log, which is locked). lastReport() is for the ticker thread (and for tests
// that poll by hand).
class PrometheusSource final : public FramePoller, public UpstreamHistory
{
public:
    struct Options
    {
        std::string url; // http://host:port[/prefix]
        std::string topologyFile; // empty: the layout comes from the series' labels
        std::chrono::milliseconds timeout { 5000 }; // for one poll's whole set of queries
        PrometheusHttp::Options http; // authentication and TLS towards the server
        // For each range query of QueryRange. Those of pastEvents have the poll's timeout each: they hold up the
        // first frame.
        std::chrono::milliseconds historyTimeout { 30000 };
        // Points per series of one range query; a finer step is coarsened to fit (Prometheus refuses over 11,000).
        int64_t maxRangePoints = 11000;
        // Past events are looked for with this step (or a coarser one over a long range): an event's time is the end
        // of the step it happened in.
        std::chrono::milliseconds eventStep { 15000 };
        // --metric-map: the site's own names, units and labels; without one, start() chooses a built-in profile of
        // dcgm-exporter from the series the server holds.
        std::optional<MetricMap> metricMap;
        // The frames the judge learns from at the start (pastFrames): the last warmWindow, one per FrameSource's
        // coarse step, as much as the anomaly detector takes (AnomalyDetector::Options::warmSeconds). Their range
        // queries have warmTimeout and warmMaxBytes of answers together: past either, or on any bad answer, the
        // backend starts without them (its detector learns live), and the log says why.
        std::chrono::milliseconds warmWindow { 1800000 };
        std::chrono::milliseconds warmTimeout { 60000 };
        size_t warmMaxBytes = size_t { 512 } << 20U;
    };

    // What the last poll found, beyond the values.
    struct Report
    {
        bool ok = false;
        std::string error;
        size_t unknownSeries = 0; // series whose (node, gpu) is not in the topology: ignored
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
    // there is no file, and the GPUs' identity either way), choosing the metric map from them unless the options
    // give one. False with an error when there is no layout.
    bool start(const Options &options, std::string *error);
    // For history only (QueryRange, past events: an UpstreamHistory), over a layout known elsewhere (the remote-write
    // receiver's): no discovery and no polls.
    bool startForHistory(
        const Options &options, const PrometheusTopology &topology, const MetricMap &map, std::string *error);
    // The names, units and labels the queries use (after start()).
    const MetricMap &metricMap() const { return m_map; }

    const FleetShape &shape() const override { return m_topology.shape(); }
    uint64_t topologyGeneration() const override { return m_topology.generation(); }
    // Every GPU without data, at the time of the start (before any sample).
    std::shared_ptr<Frame> emptyFrame() const;
    // The frame before the first poll: every GPU without data, stamped 1 ms before the newest sample the server
    // holds, so that the first poll's frame (stamped with that sample or a later one) never goes back in time. Left
    // unstamped (FrameSource stamps it with the start) when the server has no sample or does not answer. Numbered
    // after the frames pastFrames gave; the jobs (jobs()) are those of the start, so that the judge knows them from
    // its first frame.
    std::shared_ptr<Frame> firstFrame() override;
    std::shared_ptr<Frame> poll() override;
    std::string upstreamError() const override { return m_report.ok ? std::string() : m_report.error; }
    // Once the scrape interval is known (from one host's sample times), the next poll comes just after that host's
    // next scrape, never sooner than scheduled: no polling faster than the data changes.
    std::chrono::steady_clock::time_point nextPollAt(std::chrono::steady_clock::time_point scheduled) const override;
    // The scrape interval seen (the median of the last few intervals of one host's samples), 0 while unknown.
    int64_t scrapeIntervalMs() const { return m_scrapeIntervalMs; }
    std::vector<FleetEvent> takeEvents() override { return std::move(m_events); }
    std::vector<JobInfo> jobs() const override { return SlurmJobs::merged(m_slurm.jobs(), m_jobs.jobs()); }
    // What the last Slurm query found and dropped.
    const SlurmJobs::Report &slurmReport() const { return m_slurm.report(); }
    std::vector<TimedEvent> pastEvents(int64_t fromMs, int64_t toMs) override;
    // The store's frames of the warm-up window before nowMs (Options::warmWindow), one per `every` (a range query per
    // metric, mapped to GPUs as a poll maps its instant queries), at most maxFrames, each stamped with the newest
    // sample it holds and older than the newest sample of all (the first poll's); the jobs the series' labels show
    // in them, and the jobs' starts and ends between them as events. Nothing (and a log line saying why) when the
    // store holds no such samples, answers badly or exceeds the warm-up's bounds. Also the UpstreamHistory's, for a
    // remote-write receiver whose history this is.
    Past pastFrames(int64_t nowMs, std::chrono::milliseconds every, size_t maxFrames) override;
    const HistoryProvider *history() const override { return this; }
    const Report &lastReport() const { return m_report; }

    bool rangeTimes(Range *range, std::vector<int64_t> *times, std::vector<int64_t> *sampleTimes,
        std::string *error) const override;
    bool rangeValues(const Range &range, MetricId metric, const std::vector<int64_t> &times, std::vector<float> *values,
        std::string *error) const override;

    // The PromQL for a metric of the catalogue, from the map's series (with a label selector such as
    // {hostname=~"..."} when given); nullopt for one computed here (health) or one the map has no series for.
    static std::optional<std::string> queryFor(const MetricMap &map, MetricId id, const std::string &selector = {});
    // The raw XID gauge and double-bit ECC counter, for the events.
    static std::string eventQuery(const MetricMap &map);
    // A range query's selector for the hosts of these GPUs ({hostname=~"a|b"}, on the map's node label), empty when
    // there are too many, or when the fleet's series name their node under both spellings (exporters before and
    // after 4.8.3 at once): then the whole fleet's series are asked for.
    std::string hostSelector(const std::vector<uint32_t> &gpus) const;
    // The newest sample time of the fleet (of its GPU temperatures: every field of a node shares its scrape's time).
    static std::string sampleTimeQuery(const MetricMap &map, const std::string &selector = {});
    // One series per GPU with the labels the layout and identity come from, for this map.
    static std::string discoveryQuery(const MetricMap &map);
    // The same before a profile is chosen: the temperatures of every built-in profile, both node labels and their
    // series names, which choose the profile.
    static std::string profileDiscoveryQuery();
    // Which of the built-in profiles' series names a node's series carry (one series per name).
    static std::string profileNamesQuery(const std::string &hostnameLabel, const std::string &host);

private:
    bool query(const std::string &promql, int64_t evalMs, std::chrono::steady_clock::time_point deadline,
        bool withPlacement, std::vector<PromSample> *out, std::string *error, bool withJobs = false,
        size_t seriesPerGpu = 2);
    // GET of a range query from fromMs to toMs (step apart) into the parser; thread-safe. maxBytes (when not 0)
    // bounds the answer below the client's own bound; *bytes (when given) grows by the answer's size.
    bool rangeQuery(const std::string &promql, int64_t fromMs, int64_t toMs, int64_t stepMs,
        std::chrono::milliseconds timeout, PromJson *json, size_t maxPoints, const PromJson::SeriesFn &seriesFn,
        const PromJson::PointFn &pointFn, std::string *error, size_t maxBytes = 0, size_t *bytes = nullptr,
        bool withJobs = false) const;
    // A series' sample as its plane holds it: DCGM's sentinels and NaN or infinite values as no data (counted), the
    // map's conversion (of a difference, for a window count), node-exporter's port states as up or down. The one
    // mapping of values for polls, range queries and the warm-up.
    float planeValue(MetricId id, double raw, size_t *sentinels, size_t *nans) const;
    void log(const std::string &line) const;
    // Chooses the built-in profile from the discovery's series and the names the server holds.
    void chooseProfile(const std::vector<PromSample> &gpus, std::chrono::steady_clock::time_point deadline);
    // "Hostname, hostname, gpu": what history queries aggregate by.
    std::string byNodeAndGpu() const;

    Options m_options;
    Log m_log;
    PrometheusHttp m_http;
    PromJson m_json;
    PrometheusTopology m_topology;
    MetricMap m_map = MetricMap::profile(MetricMap::Profile::Gen483);
    bool m_bothHostnameLabels = false; // the fleet's series name their node under both spellings
    Report m_report;
    std::string m_loggedError; // the error last logged, so a failing upstream logs once, not once a poll
    size_t m_loggedUnknown = 0;
    int64_t m_lastSampleMs = 0;
    // One host's (the layout's first) newest sample time, and the last intervals between them.
    void noteScrape(int64_t sampleMs);
    int64_t m_refSampleMs = 0;
    std::vector<int64_t> m_scrapeDeltas;
    int64_t m_scrapeIntervalMs = 0;
    int64_t m_loggedIntervalMs = 0;
    std::vector<PromSample> m_samples; // reused between queries
    PrometheusJobs m_jobs;
    // The Slurm exporter's series joined onto the layout (prometheusslurm.cpp): false, the Slurm jobs left as they
    // were and a log line once, when the query fails (a fleet without the exporter answers nothing: no Slurm jobs).
    // Run before the metrics' queries, so that the GPUs a Slurm job claims are kept from the pod labels' jobs.
    bool pollSlurm(int64_t evalMs, int64_t sampleMs, std::chrono::steady_clock::time_point deadline);
    // The pod names of the GPU series' (soperator's Slurm nodes are pods): a node_name may be one.
    void noteAliases(const std::vector<PromSample> &samples);
    SlurmJobs m_slurm;
    std::vector<uint64_t> m_jobOfGpu; // Slurm's jobs, else the pod labels'
    std::string m_loggedSlurm; // the Slurm problem last logged
    PrometheusEvents m_eventDetector;
    std::vector<FleetEvent> m_events; // found by the last poll
    uint64_t m_pastFrames = 0; // given by pastFrames, numbered 0 .. m_pastFrames - 1 before the first frame
    mutable std::mutex m_logMutex; // m_log is called from the ticker and from history queries
};

// The first 200 bytes of an answer with control bytes blanked, for a log line about it.
std::string printableExcerpt(const std::string &body);

} // namespace fleetscope::backend
