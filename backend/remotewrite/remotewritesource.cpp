// SPDX-License-Identifier: Apache-2.0
#include "remotewrite/remotewritesource.h"

#include "exporterserver.h"
#include "prometheus/remote.pb.h"

#include <google/protobuf/arena.h>
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

int64_t nowUnixMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

constexpr std::string_view gpuTempField = "DCGM_FI_DEV_GPU_TEMP";

// A series' labels as the mapping reads them: Hostname (dcgm-exporter before 4.8) or hostname (since
// NVIDIA/dcgm-exporter#655), gpu, __name__, the placement labels while the layout is learnt, and the job labels.
void readSeries(const prometheus::TimeSeries &series, unsigned wanted, PromSample *s)
{
    s->hostname.clear();
    s->gpu.clear();
    s->name.clear();
    for (std::string *f : { &s->uuid, &s->model, &s->driver, &s->hall, &s->row, &s->rack, &s->nameSpace, &s->pod,
             &s->container, &s->hpcJob, &s->hpcUser }) {
        f->clear();
    }
    PromLabelReader reader(wanted);
    for (const auto &label : series.labels()) {
        if (label.name() == "hostname") {
            if (s->hostname.empty()) {
                s->hostname = label.value();
            }
            continue;
        }
        reader.read(label.name(), label.value(), s);
    }
}

bool hasJob(const PromSample &s)
{
    return !s.nameSpace.empty() || !s.pod.empty() || !s.hpcJob.empty();
}

} // namespace

RemoteWriteSource::RemoteWriteSource(Log log)
    : m_log(std::move(log))
{
    for (const auto &def : metricCatalog()) {
        if (!def.dcgmField.empty()) {
            m_metricByName.emplace(def.dcgmField, def.id);
        }
    }
}

RemoteWriteSource::~RemoteWriteSource()
{
    stop();
}

void RemoteWriteSource::log(const std::string &line) const
{
    if (m_log) {
        m_log(line);
    } else {
        fmt::print(stderr, "fleetscope-backend: {}\n", line);
    }
}

int64_t RemoteWriteSource::intervalOf(std::vector<int64_t> deltas)
{
    if (deltas.empty()) {
        return 0;
    }
    const auto middle = deltas.begin() + static_cast<std::ptrdiff_t>(deltas.size() / 2);
    std::nth_element(deltas.begin(), middle, deltas.end());
    return std::max<int64_t>(10, (*middle + 5) / 10 * 10);
}

bool RemoteWriteSource::start(const Options &options, std::string *error)
{
    m_options = options;
    std::string host;
    int port = 0;
    if (!ExporterServer::splitAddress(options.listen, &host, &port, error)) {
        *error = fmt::format("--remote-write-listen: {}", *error);
        return false;
    }
    TopologyFile file;
    if (!options.topologyFile.empty() && !TopologyFile::load(options.topologyFile, &file, error)) {
        return false;
    }
    m_server = std::make_unique<httplib::Server>();
    m_server->set_payload_max_length(options.limits.maxBodyBytes);
    const int threads = std::max(1, options.threads);
    m_server->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    m_server->Post("/api/v1/write", [this](const httplib::Request &request, httplib::Response &response) {
        int status = 204;
        std::string reason;
        handle(request.get_header_value("Content-Encoding"), request.get_header_value("Content-Type"),
            request.get_header_value("X-Prometheus-Remote-Write-Version"), request.body, &status, &reason);
        response.status = status;
        if (!reason.empty()) {
            response.set_content(reason + "\n", "text/plain");
        }
    });
    m_port = port == 0 ? m_server->bind_to_any_port(host) : (m_server->bind_to_port(host, port) ? port : -1);
    if (m_port <= 0) {
        *error = fmt::format("--remote-write-listen: cannot listen on {}", options.listen);
        return false;
    }
    m_serverThread = std::thread([this] { m_server->listen_after_bind(); });
    log(fmt::format("remote write: listening on http://{}:{}/api/v1/write", host.find(':') != std::string::npos
        ? "[" + host + "]" : host, m_port));

    // What the first pushes teach: the interval, and the layout when there is no file.
    {
        std::unique_lock lock(m_mutex);
        const auto deadline = std::chrono::steady_clock::now() + options.startTimeout;
        while (!discoveryDone(nowUnixMs())) {
            if (m_discoveryChanged.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now()
                                                                 + std::chrono::milliseconds(100)))
                    == std::cv_status::timeout
                && std::chrono::steady_clock::now() >= deadline) {
                *error = m_discovered.empty()
                    ? fmt::format("no GPU series ({}) pushed to http://{}:{}/api/v1/write in {} s; point the "
                                  "scraper's remote write there (vmagent -remoteWrite.url=..., Prometheus remote_write)",
                          gpuTempField, host, m_port, options.startTimeout.count() / 1000)
                    : fmt::format("{} GPUs pushed in {} s, but not two samples of any one yet, so the scrape interval "
                                  "is unknown; give it with --remote-write-interval-ms",
                          m_discovered.size(), options.startTimeout.count() / 1000);
                lock.unlock();
                stop();
                return false;
            }
        }
        m_windowMs = options.windowMs > 0 ? options.windowMs : intervalOf(m_deltas);
        std::vector<PromSample> gpus;
        gpus.reserve(m_discovered.size());
        for (auto &[key, d] : m_discovered) {
            gpus.push_back(std::move(d.labels));
        }
        m_discovered.clear();
        if (options.topologyFile.empty()) {
            if (!PrometheusTopology::fromLabels(gpus, &m_topology, error)) {
                lock.unlock();
                stop();
                return false;
            }
        } else {
            m_topology = PrometheusTopology::fromFile(file);
        }
        if (const size_t unknown = m_topology.applyIdentity(gpus); unknown > 0) {
            log(fmt::format("remote write: {} GPUs pushed are not in the topology file; they are ignored", unknown));
        }
        WindowFolder::Options folder;
        folder.windowMs = m_windowMs;
        folder.delayMs = options.delayMs;
        folder.graceMs = options.graceMs;
        folder.maxOpenWindows = options.maxOpenWindows;
        folder.startMs = nowUnixMs();
        m_folder = std::make_unique<WindowFolder>(m_topology.shape(), folder);
        m_discovering = false;
    }
    m_ready = true;
    log(fmt::format("remote write: {} GPUs on {} nodes in {} racks, layout from {}; windows of {} ms ({}), published "
                    "{} ms after they end",
        m_topology.shape().gpuCount, m_topology.shape().nodes.size(), m_topology.shape().racks.size(),
        options.topologyFile.empty() ? std::string("the pushed series' labels") : options.topologyFile, m_windowMs,
        options.windowMs > 0 ? "as given" : "the scrape interval the samples show", options.delayMs));
    return true;
}

bool RemoteWriteSource::discoveryDone(int64_t nowMs) const
{
    if (m_discovered.empty()) {
        return false;
    }
    const size_t wantedDeltas = std::min<size_t>(32, m_discovered.size());
    const int64_t window = m_options.windowMs > 0 ? m_options.windowMs
        : m_deltas.size() >= wantedDeltas        ? intervalOf(m_deltas)
                                                 : 0;
    if (window <= 0) {
        return false;
    }
    if (!m_options.topologyFile.empty()) {
        return true;
    }
    // Scrapes are spread over the interval: every target has sent once one and a half intervals after the last new one.
    return nowMs - m_lastNewGpuMs >= std::max<int64_t>(2000, window * 3 / 2);
}

void RemoteWriteSource::stop()
{
    if (m_server) {
        m_server->stop();
    }
    if (m_serverThread.joinable()) {
        m_serverThread.join();
    }
}

void RemoteWriteSource::discover(const prometheus::WriteRequest &request, int64_t nowMs)
{
    thread_local PromSample labels;
    std::lock_guard lock(m_mutex);
    for (const auto &series : request.timeseries()) {
        readSeries(series, PromLabelReader::Placement, &labels);
        if (labels.name != gpuTempField || labels.hostname.empty() || labels.gpu.empty()) {
            continue;
        }
        std::string key = labels.hostname + '\0' + labels.gpu;
        auto it = m_discovered.find(key);
        if (it == m_discovered.end()) {
            if (m_discovered.size() >= FleetShape::maxGpus) {
                continue;
            }
            it = m_discovered.emplace(std::move(key), Discovered { labels, 0 }).first;
            m_lastNewGpuMs = nowMs;
        }
        m_lastAcceptedMs = nowMs; // the sender is there: no upstream error once the frames start
        for (const auto &sample : series.samples()) {
            const int64_t t = sample.timestamp();
            if (it->second.lastMs > 0 && t > it->second.lastMs && m_deltas.size() < 4096) {
                m_deltas.push_back(t - it->second.lastMs);
            }
            it->second.lastMs = std::max(it->second.lastMs, t);
        }
    }
    m_discoveryChanged.notify_all();
}

void RemoteWriteSource::handle(const std::string &contentEncoding, const std::string &contentType,
    const std::string &version, const std::string &body, int *status, std::string *reason)
{
    thread_local google::protobuf::Arena arena;
    thread_local std::string scratch;
    thread_local PromSample labels;
    arena.Reset();
    RemoteWriteRefusal refusal;
    const auto *request = decodeRemoteWrite(
        { contentEncoding, contentType, version }, body, m_options.limits, &arena, &scratch, &refusal);
    const int64_t now = nowUnixMs();
    if (request == nullptr) {
        *status = refusal.status;
        *reason = refusal.reason;
        std::lock_guard lock(m_mutex);
        ++m_stats.requests;
        ++m_stats.refused;
        m_stats.lastRefusal = refusal.reason;
        return;
    }
    if (!m_ready) {
        discover(*request, now);
        std::lock_guard lock(m_mutex);
        ++m_stats.requests;
        return;
    }
    // Frames not keeping up: the sender keeps the data and retries, rather than it being dropped here.
    if (m_folder->openWindows() >= m_folder->options().maxOpenWindows) {
        *status = 503;
        *reason = "the receiver's frames are behind; retry later";
        std::lock_guard lock(m_mutex);
        ++m_stats.requests;
        ++m_stats.overloaded;
        return;
    }
    std::vector<MappedSample> samples;
    std::vector<MappedJob> jobs;
    uint64_t unknownGpu = 0;
    uint64_t unknownMetric = 0;
    uint64_t unnamed = 0;
    std::string unknownExample;
    samples.reserve(static_cast<size_t>(request->timeseries_size()));
    for (const auto &series : request->timeseries()) {
        readSeries(series, PromLabelReader::Jobs, &labels);
        // Senders add their own series (vmagent's up, scrape_duration_seconds, ...): not ours, and not a fault.
        const auto metric = m_metricByName.find(labels.name);
        if (metric == m_metricByName.end()) {
            ++unknownMetric;
            continue;
        }
        if (labels.hostname.empty() || labels.gpu.empty()) {
            ++unnamed;
            continue;
        }
        const int64_t g = m_topology.indexOf(labels.hostname, labels.gpu);
        if (g < 0) {
            if (unknownGpu++ == 0) {
                unknownExample = fmt::format("{}/{}", labels.hostname.substr(0, 64), labels.gpu.substr(0, 16));
            }
            continue;
        }
        int64_t newest = 0;
        for (const auto &sample : series.samples()) {
            samples.push_back({ static_cast<uint32_t>(g), metric->second, sample.timestamp(), sample.value() });
            newest = std::max(newest, sample.timestamp());
        }
        if (metric->second == MetricId::GpuTemp && newest > 0 && hasJob(labels)) {
            jobs.push_back({ static_cast<uint32_t>(g), newest, labels });
        }
    }
    WindowFolder::Counts counts;
    m_folder->add(samples, jobs, now, &counts);
    std::lock_guard lock(m_mutex);
    ++m_stats.requests;
    m_stats.series += static_cast<uint64_t>(request->timeseries_size());
    m_stats.unknownGpuSeries += unknownGpu;
    m_stats.unknownMetricSeries += unknownMetric;
    m_stats.unnamedSeries += unnamed;
    if (m_stats.unknownGpuExample.empty()) {
        m_stats.unknownGpuExample = unknownExample;
    }
    m_stats.samples.add(counts);
    if (counts.accepted > 0) {
        m_lastAcceptedMs = now;
    }
}

bool RemoteWriteSource::useHistoryFrom(const PrometheusSource::Options &options, std::string *error)
{
    auto history = std::make_unique<PrometheusSource>(m_log);
    if (!history->startForHistory(options, m_topology, error)) {
        return false;
    }
    m_history = std::move(history);
    log(fmt::format("remote write: history from {}", options.url));
    return true;
}

std::vector<TimedEvent> RemoteWriteSource::pastEvents(int64_t fromMs, int64_t toMs)
{
    return m_history ? m_history->pastEvents(fromMs, toMs) : std::vector<TimedEvent> {};
}

RemoteWriteSource::Stats RemoteWriteSource::stats() const
{
    std::lock_guard lock(m_mutex);
    return m_stats;
}

std::shared_ptr<SimFrame> RemoteWriteSource::emptyFrame() const
{
    return m_folder->emptyFrame();
}

std::vector<JobInfo> RemoteWriteSource::jobs() const
{
    return m_folder->jobs();
}

std::chrono::steady_clock::time_point RemoteWriteSource::nextPollAt(std::chrono::steady_clock::time_point scheduled) const
{
    const int64_t now = nowUnixMs();
    const auto due = std::chrono::steady_clock::now() + std::chrono::milliseconds(m_folder->nextCloseMs(now) - now);
    return std::min(scheduled, due);
}

std::string RemoteWriteSource::upstreamError() const
{
    std::lock_guard lock(m_mutex);
    const int64_t quiet = nowUnixMs() - m_lastAcceptedMs;
    const int64_t grace = m_options.graceMs > 0 ? m_options.graceMs : 3 * m_windowMs;
    if (m_lastAcceptedMs > 0 && quiet <= grace + m_options.delayMs) {
        return {};
    }
    return m_lastAcceptedMs == 0
        ? fmt::format("no remote-write samples taken yet on port {}", m_port)
        : fmt::format("no remote-write samples taken for {} s on port {} (is the scraper's remote write running?)",
              quiet / 1000, m_port);
}

std::shared_ptr<SimFrame> RemoteWriteSource::poll()
{
    std::shared_ptr<SimFrame> newest;
    WindowFolder::Closed closed;
    while (m_folder->closeNext(nowUnixMs(), &closed)) {
        newest = std::move(closed.frame);
        for (auto &e : closed.events) {
            m_events.push_back(std::move(e));
        }
    }
    logDrops();
    return newest;
}

void RemoteWriteSource::logDrops()
{
    // Whatever was not used, in one line at most every ten seconds: a misconfigured sender is told, not flooded.
    const auto now = std::chrono::steady_clock::now();
    if (now - m_lastDropLog < m_options.dropLogInterval) {
        return;
    }
    const Stats s = stats();
    const uint64_t drops = s.refused + s.overloaded + s.unknownGpuSeries + s.unnamedSeries + s.samples.dropped()
        + s.samples.sentinelValues + s.samples.nanValues;
    if (drops == m_loggedDrops) {
        return;
    }
    m_loggedDrops = drops;
    m_lastDropLog = now;
    log(fmt::format("remote write: so far {} requests, {} refused (last: {}), {} answered 503; {} series of GPUs not "
                    "in the topology (e.g. {}), {} without hostname/gpu, {} of other metrics; samples: {} "
                    "taken, {} too old, {} from the future, {} out of order, {} duplicates, {} with no window free; "
                    "{} DCGM blanks and {} NaN/Inf read as no data",
        s.requests, s.refused, s.lastRefusal.empty() ? std::string("none") : s.lastRefusal, s.overloaded,
        s.unknownGpuSeries, s.unknownGpuExample.empty() ? std::string("none") : s.unknownGpuExample, s.unnamedSeries,
        s.unknownMetricSeries, s.samples.accepted, s.samples.tooOld, s.samples.future, s.samples.outOfOrder,
        s.samples.duplicate, s.samples.windowsFull, s.samples.sentinelValues, s.samples.nanValues));
}

} // namespace fleetscope::backend
