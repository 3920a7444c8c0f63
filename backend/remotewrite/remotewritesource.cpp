// SPDX-License-Identifier: Apache-2.0
#include "remotewrite/remotewritesource.h"

#include "core/clock.h"
#include "dcgm/dcgmvalue.h"
#include "formats/topologyfile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
// The GPU temperature's name in every generation dcgm-exporter has had: the series a layout and interval are learnt
// from.
const std::vector<std::string> &gpuTempNames()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto p : MetricMap::allProfiles) {
            const std::string name = MetricMap::profile(p).seriesName(MetricId::GpuTemp);
            if (std::find(out.begin(), out.end(), name) == out.end()) {
                out.push_back(name);
            }
        }
        return out;
    }();
    return names;
}

// A series' labels as the discovery and the job bookkeeping read them: the node and gpu labels under the map's names
// (hostname since NVIDIA/dcgm-exporter#655, Hostname before), __name__, and the placement or job labels asked for.
void readSeries(const std::vector<WriteRequestReader::Label> &series, unsigned wanted, const MetricMap::Labels &names,
    PromSample *s)
{
    for (std::string *f :
        { &s->hostname, &s->gpu, &s->name, &s->uuid, &s->model, &s->driver, &s->vbios, &s->hall, &s->row, &s->rack,
            &s->nic, &s->instance, &s->nameSpace, &s->pod, &s->container, &s->hpcJob, &s->hpcUser }) {
        f->clear();
    }
    s->hostnameRank = -1;
    PromLabelReader reader(wanted, names);
    for (const auto &label : series) {
        reader.read(label.name, label.value, s);
    }
}

// The three labels every series is mapped by, found without copying.
struct SeriesKey
{
    std::string_view name;
    std::string_view hostname;
    std::string_view gpu;
    std::string_view instance; // node-exporter's series name their node by their target
    std::string_view nic;
    std::string_view rack;
    bool hasJobLabels = false;
};

SeriesKey keyOf(const std::vector<WriteRequestReader::Label> &labels, const MetricMap &map)
{
    SeriesKey key;
    MetricMap::Identity id;
    for (const auto &l : labels) {
        const auto &n = l.name;
        if (n == "__name__") {
            key.name = l.value;
        } else if (n == "pod" || n == "exported_pod" || n == "pod_name" || n == "hpc_job") {
            key.hasJobLabels = key.hasJobLabels || !l.value.empty();
        } else {
            map.readLabel(n, l.value, &id);
        }
    }
    key.hostname = id.hostname;
    key.gpu = id.gpu;
    key.instance = id.instance;
    key.nic = id.nic;
    key.rack = id.rack;
    return key;
}
} // namespace

RemoteWriteSource::RemoteWriteSource(Log log)
    : m_log(std::move(log))
{ }

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
    TopologyFile file;
    if (!options.topologyFile.empty()) {
        if (!TopologyFile::load(options.topologyFile, &file, error)) {
            return false;
        }
        m_topology = PrometheusTopology::fromFile(file); // before the first push: discovery reads it
    }
    BoundedHttpServer::Limits http;
    http.threads = static_cast<size_t>(std::max(1, options.threads));
    http.maxConnections = options.maxConnections;
    http.maxConnectionsPerAddress = options.maxConnectionsPerAddress;
    http.requestTimeout = options.requestTimeout;
    http.idleTimeout = options.idleTimeout;
    http.maxBodyBytes = options.limits.maxBodyBytes;
    auto security = options.security;
    security.optionPrefix = "--remote-write";
    m_server = std::make_unique<BoundedHttpServer>(
        http, std::move(security), std::vector<std::string> { "POST" },
        [this](const HttpRequest &request, HttpResponse &response) {
            if (request.path != "/api/v1/write") {
                response.status = 404;
                return;
            }
            std::string reason;
            response.status = take({ request.header("Content-Encoding"), request.header("Content-Type"),
                                       request.header("X-Prometheus-Remote-Write-Version") },
                request.body, nowUnixMs(), &reason);
            if (response.status == 503) {
                response.headers.emplace_back("Retry-After", "1");
            }
            if (!reason.empty()) {
                response.body = reason + "\n";
            }
        },
        m_log);
    if (!m_server->start(options.listen, error)) {
        *error = fmt::format("--remote-write-listen: {}", *error);
        return false;
    }
    m_port = m_server->port();
    log(fmt::format("remote write: listening on {}/api/v1/write{}", m_server->url(),
        options.security.authenticates() ? " (a token or client certificate needed)" : ""));

    // What the first pushes teach: the interval, and the layout when there is no file. A sender cannot keep the
    // discovery open (a new hostname every half second did, until the start failed and systemd restarted it in a
    // loop): past startTimeout the receiver serves what it has learnt, and fails only when no GPU pushed at all.
    std::vector<std::string> adopted;
    {
        std::unique_lock lock(m_mutex);
        const auto deadline = std::chrono::steady_clock::now() + options.startTimeout;
        while (!discoveryDone(nowUnixMs()) && std::chrono::steady_clock::now() < deadline) {
            m_discoveryChanged.wait_until(
                lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)));
        }
        if (m_discovered.empty()) {
            *error = fmt::format("no GPU series ({}) pushed to {}/api/v1/write in {} s; point the scraper's remote "
                                 "write there (vmagent -remoteWrite.url=..., Prometheus remote_write)",
                gpuTempNames().front(), m_server->url(), options.startTimeout.count() / 1000);
            lock.unlock();
            stop();
            return false;
        }
        const int64_t learnt = learntInterval();
        if (options.windowMs <= 0 && learnt <= 0) {
            log(fmt::format("remote write: {} GPUs pushed in {} s, but not two samples of any one yet: windows of {} "
                            "ms (Prometheus' default scrape interval) until told otherwise with "
                            "--remote-write-interval-ms",
                m_discovered.size(), options.startTimeout.count() / 1000, fallbackIntervalMs));
        }
        m_windowMs = options.windowMs > 0 ? options.windowMs : learnt > 0 ? learnt : fallbackIntervalMs;
        m_map = options.metricMap
            ? *options.metricMap
            : MetricMap::choose(std::vector<std::string>(m_namesSeen.begin(), m_namesSeen.end()),
                m_hostnameLabelUses[0] >= m_hostnameLabelUses[1] ? "hostname" : "Hostname", &adopted);
        std::vector<PromSample> gpus;
        gpus.reserve(m_discovered.size());
        for (auto &[key, d] : m_discovered) {
            gpus.push_back(std::move(d.labels));
        }
        m_discovered.clear();
        if (options.topologyFile.empty() && !PrometheusTopology::fromLabels(gpus, &m_topology, error)) {
            lock.unlock();
            stop();
            return false;
        }
        if (const size_t unknown = m_topology.applyIdentity(gpus); unknown > 0) {
            log(fmt::format("remote write: {} GPUs pushed are not in the topology file; they are ignored", unknown));
        }
        for (size_t why = 0; why < m_uplinksRefused.size(); ++why) {
            if (m_uplinksRefused[why].count > 0) {
                log(fmt::format("remote write: {} {} series ignored: {}; the first: {}", m_uplinksRefused[why].count,
                    UplinkLabels::seriesName, UplinkLabels::why(static_cast<UplinkLabels::Refusal>(why)),
                    m_uplinksRefused[why].example));
            }
        }
        if (m_uplinksOfUnknownHosts > 0) {
            log(fmt::format("remote write: {} {} series ignored: hca's host is not a node of the topology file",
                m_uplinksOfUnknownHosts, UplinkLabels::seriesName));
        }
        if (!m_uplinks.empty()) {
            std::vector<UplinkLabels::Series> uplinks;
            uplinks.reserve(m_uplinks.size());
            for (auto &[key, uplink] : m_uplinks) {
                uplinks.push_back(std::move(uplink));
            }
            m_uplinks.clear();
            for (const auto &line : m_topology.applyUplinks(uplinks)) {
                log("remote write: " + line);
            }
        }
        WindowFolder::Options folder;
        folder.windowMs = m_windowMs;
        folder.delayMs = options.delayMs;
        folder.graceMs = options.graceMs;
        folder.maxOpenWindows = options.maxOpenWindows;
        folder.startMs = nowUnixMs();
        m_folder = std::make_unique<WindowFolder>(m_topology.shape(), folder);
    }
    m_ready = true;
    log(fmt::format("remote write: {} {}", options.metricMap ? "metric map from" : "dcgm-exporter profile",
        m_map.name() + (options.metricMap ? "" : " chosen from the series pushed")));
    for (const auto &line : adopted) {
        log(fmt::format("remote write: {} (a name of another generation, present in the pushes)", line));
    }
    log(fmt::format("remote write: {} GPUs on {} nodes in {} racks, layout from {}; windows of {} ms ({}), published "
                    "{} ms after they end",
        m_topology.shape().gpuCount, m_topology.shape().nodes.size(), m_topology.shape().racks.size(),
        options.topologyFile.empty() ? std::string("the pushed series' labels") : options.topologyFile, m_windowMs,
        options.windowMs > 0 ? "as given" : "the scrape interval the samples show", options.delayMs));
    return true;
}

int64_t RemoteWriteSource::learntInterval() const
{
    const size_t wantedDeltas = std::min<size_t>(32, m_discovered.size());
    if (m_deltas.empty() || m_deltas.size() < wantedDeltas) {
        return 0;
    }
    // No frames faster than one a second from what senders' timestamps say: samples 10 ms apart gave windows of 10
    // ms for good. --remote-write-interval-ms sets a faster one knowingly.
    return std::max(minimumLearntIntervalMs, intervalOf(m_deltas));
}

bool RemoteWriteSource::discoveryDone(int64_t nowMs) const
{
    if (m_discovered.empty()) {
        return false;
    }
    const int64_t window = m_options.windowMs > 0 ? m_options.windowMs : learntInterval();
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
}

BoundedHttpServer::Load RemoteWriteSource::httpLoad() const
{
    return m_server ? m_server->load() : BoundedHttpServer::Load();
}

bool RemoteWriteSource::discover(std::string_view bytes, int64_t nowMs, std::string *error)
{
    // Read whole before anything is kept, as take() does.
    thread_local PromSample labels;
    std::vector<std::pair<PromSample, std::vector<int64_t>>> temps;
    static const MetricMap::Labels anyGeneration; // both spellings of the node and driver labels
    static const MetricMap anyMap;
    static const auto profileNames = [] {
        auto names = MetricMap::allProfileNames();
        std::sort(names.begin(), names.end());
        return names;
    }();
    std::vector<std::string> names;
    std::vector<UplinkLabels::Series> uplinks;
    WriteRequestReader reader(bytes, m_options.limits);
    while (reader.next()) {
        const auto key = keyOf(reader.labels(), anyMap);
        if (key.name == UplinkLabels::seriesName) {
            auto &uplink = uplinks.emplace_back();
            for (const auto &label : reader.labels()) {
                uplink.read(label.name, label.value);
            }
            continue;
        }
        if (std::binary_search(profileNames.begin(), profileNames.end(), key.name)
            && std::find(names.begin(), names.end(), key.name) == names.end()) {
            names.emplace_back(key.name);
        }
        const auto &tempNames = gpuTempNames();
        if (std::find(tempNames.begin(), tempNames.end(), key.name) == tempNames.end() || key.hostname.empty()
            || key.gpu.empty()) {
            continue;
        }
        readSeries(reader.labels(), PromLabelReader::Placement, anyGeneration, &labels);
        std::vector<int64_t> times;
        for (const auto &sample : reader.samples()) {
            times.push_back(sample.timestampMs);
        }
        temps.emplace_back(labels, std::move(times));
    }
    if (!reader.error().empty()) {
        *error = reader.error();
        return false;
    }
    std::lock_guard lock(m_mutex);
    for (auto &name : names) {
        m_namesSeen.insert(std::move(name));
    }
    for (auto &uplink : uplinks) {
        // Only what UplinkLabels reads as an uplink is kept (its names at most 64 bytes, its ports numbers), and with
        // a topology file only its hosts': a sender cannot fill memory with label sets no GPU would take. What is
        // refused is counted by reason, with its first example, for start() to log as applyUplinks logs its own.
        UplinkLabels::Uplink read;
        const auto refusal = UplinkLabels::read(uplink, &read);
        if (refusal != UplinkLabels::Refusal::None) {
            auto &refused = m_uplinksRefused[static_cast<size_t>(refusal)];
            if (refused.count++ == 0) {
                refused.example = UplinkLabels::example(uplink);
            }
            continue;
        }
        if (!m_options.topologyFile.empty() && m_topology.nodeOf(read.host) < 0) {
            ++m_uplinksOfUnknownHosts;
            continue;
        }
        // One entry per distinct label set (the same series pushed again is one); applyUplinks chooses between an
        // HCA port's several. Bounded by the fleet limit.
        std::string key = uplink.hca + '\0' + uplink.port + '\0' + uplink.uplink + '\0' + uplink.uplinkPort + '\0'
            + uplink.uplinkType;
        if (m_uplinks.size() < FleetShape::maxGpus) {
            m_uplinks.emplace(std::move(key), std::move(uplink));
        }
    }
    const bool fromFile = !m_options.topologyFile.empty();
    for (auto &[gpu, times] : temps) {
        // With a topology file nothing is discovered: only its GPUs' samples teach the interval, so that a sender
        // of other hosts cannot set it.
        if (fromFile) {
            const int64_t node = m_topology.nodeOf(gpu.hostname);
            if (node < 0 || m_topology.indexOn(static_cast<uint32_t>(node), gpu.gpu) < 0) {
                continue;
            }
        }
        ++m_hostnameLabelUses[gpu.hostnameRank == 0 ? 0 : 1];
        std::string key = gpu.hostname + '\0' + gpu.gpu;
        auto it = m_discovered.find(key);
        if (it == m_discovered.end()) {
            if (m_discovered.size() >= FleetShape::maxGpus) {
                continue;
            }
            it = m_discovered.emplace(std::move(key), Discovered { std::move(gpu), 0 }).first;
            m_lastNewGpuMs = nowMs;
        }
        m_lastAcceptedMs = nowMs; // the sender is there: no upstream error once the frames start
        for (const int64_t t : times) {
            // Both after 1970, so the difference cannot overflow; one past the longest interval the option takes
            // (10 minutes) is no scrape interval, and would overflow the arithmetic on windows.
            if (it->second.lastMs > 0 && t > it->second.lastMs && t - it->second.lastMs <= maxIntervalMs
                && m_deltas.size() < 4096) {
                m_deltas.push_back(t - it->second.lastMs);
            }
            it->second.lastMs = std::max(it->second.lastMs, t);
        }
    }
    m_discoveryChanged.notify_all();
    return true;
}

int RemoteWriteSource::take(const RemoteWriteHeaders &headers, std::string_view body, int64_t now, std::string *reason)
{
    thread_local std::string scratch;
    thread_local PromSample labels;
    RemoteWriteRefusal refusal;
    auto refused = [&](const std::string &why) {
        *reason = why;
        std::lock_guard lock(m_mutex);
        ++m_stats.requests;
        ++m_stats.refused;
        m_stats.lastRefusal = why;
    };
    if (!unpackRemoteWrite(headers, body, m_options.limits, &scratch, &refusal)) {
        refused(refusal.reason);
        return refusal.status;
    }
    if (!m_ready) {
        std::string error;
        if (!discover(scratch, now, &error)) {
            refused(error);
            return 400;
        }
        std::lock_guard lock(m_mutex);
        ++m_stats.requests;
        return 204;
    }
    // Frames not keeping up: the sender keeps the data and retries, rather than it being dropped here.
    if (m_folder->openWindows() >= m_folder->options().maxOpenWindows) {
        *reason = "the receiver's frames are behind; retry later";
        std::lock_guard lock(m_mutex);
        ++m_stats.requests;
        ++m_stats.overloaded;
        return 503;
    }
    // Mapped whole before anything reaches the windows: a request refused half-way leaves nothing behind.
    thread_local std::vector<MappedSample> samples;
    std::vector<MappedJob> jobs;
    samples.clear();
    uint64_t unknownGpu = 0;
    uint64_t unknownMetric = 0;
    uint64_t unnamed = 0;
    std::string unknownExample;
    // A host's series come one after another (a target's scrape): its node is looked up once for them.
    std::string lastHost;
    int64_t lastNode = -1;
    std::vector<PushedSlurm::Pushed> slurm; // a Slurm exporter's series: jobs joined at the window's close
    WriteRequestReader reader(scratch, m_options.limits);
    while (reader.next()) {
        const auto key = keyOf(reader.labels(), m_map);
        // Senders add their own series (vmagent's up, scrape_duration_seconds, ...): not ours, and not a fault.
        const auto metric = m_map.metric(key.name);
        if (!metric && PushedSlurm::isSlurmSeries(key.name)) {
            PushedSlurm::read(reader, &slurm);
            continue;
        }
        if (!metric) {
            ++unknownMetric;
            continue;
        }
        const auto scope = MetricMap::scopeOf(metric->id);
        if (scope != MetricMap::Scope::Gpu) {
            // A rail NIC's series goes to its GPU, a rack's to every GPU of the rack (PrometheusTopology::gpusOf); a
            // NIC that serves no GPU (storage) or a rack not in the topology is left out, not counted as a fault.
            const auto span = m_topology.gpusOf(scope, key.hostname, key.instance, key.gpu, key.nic, key.rack);
            const bool convert = !metric->conversion.isIdentity();
            for (const auto &sample : reader.samples()) {
                size_t ignored = 0;
                const bool usable = !std::isnan(cleanDcgmValue(sample.value, &ignored, &ignored));
                const double value = usable
                    ? MetricMap::planeValue(metric->id, convert ? metric->conversion.apply(sample.value) : sample.value)
                    : sample.value;
                for (uint32_t g = span.first; g < span.first + span.count; ++g) {
                    samples.push_back({ g, metric->id, sample.timestampMs, value });
                }
            }
            continue;
        }
        if (key.hostname.empty() || key.gpu.empty()) {
            ++unnamed;
            continue;
        }
        if (key.hostname != lastHost) {
            lastHost.assign(key.hostname);
            lastNode = m_topology.nodeOf(key.hostname);
        }
        const int64_t g = lastNode < 0 ? -1 : m_topology.indexOn(static_cast<uint32_t>(lastNode), key.gpu);
        if (g < 0) {
            if (unknownGpu++ == 0) {
                unknownExample = fmt::format("{}/{}", key.hostname.substr(0, 64), key.gpu.substr(0, 16));
            }
            continue;
        }
        int64_t newest = 0;
        const bool convert = !metric->conversion.isIdentity();
        for (const auto &sample : reader.samples()) {
            // DCGM's blanks and NaN stay as they are, for the windows to tell them apart.
            size_t ignored = 0;
            const bool usable = !std::isnan(cleanDcgmValue(sample.value, &ignored, &ignored));
            const double value = convert && usable ? metric->conversion.apply(sample.value) : sample.value;
            samples.push_back({ static_cast<uint32_t>(g), metric->id, sample.timestampMs, value, metric->part });
            newest = std::max(newest, sample.timestampMs);
        }
        if (metric->id == MetricId::GpuTemp && newest > 0 && key.hasJobLabels) {
            readSeries(reader.labels(), PromLabelReader::Jobs, m_map.labels(), &labels);
            jobs.push_back({ static_cast<uint32_t>(g), newest, MappedJob::jobKey(labels) });
        }
    }
    if (!reader.error().empty()) {
        refused(reader.error());
        return 400;
    }
    WindowFolder::Counts counts;
    m_folder->add(samples, jobs, now, &counts);
    m_folder->addSlurm(std::move(slurm), now);
    std::lock_guard lock(m_mutex);
    ++m_stats.requests;
    m_stats.series += reader.seriesRead();
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
    return 204;
}

void RemoteWriteSource::useHistory(std::unique_ptr<UpstreamHistory> history, const std::string &from)
{
    m_history = std::move(history);
    log(fmt::format("remote write: history from {}", from));
}

std::vector<TimedEvent> RemoteWriteSource::pastEvents(int64_t fromMs, int64_t toMs)
{
    return m_history ? m_history->pastEvents(fromMs, toMs) : std::vector<TimedEvent> {};
}

RemoteWriteSource::Stats RemoteWriteSource::stats() const
{
    const auto load = httpLoad();
    std::lock_guard lock(m_mutex);
    Stats stats = m_stats;
    stats.unauthorized = load.unauthorized;
    stats.timedOut = load.timedOut;
    return stats;
}

std::shared_ptr<Frame> RemoteWriteSource::emptyFrame() const
{
    return m_folder->emptyFrame();
}

std::vector<JobInfo> RemoteWriteSource::jobs() const
{
    return m_folder->jobs();
}

std::chrono::steady_clock::time_point RemoteWriteSource::nextPollAt(
    std::chrono::steady_clock::time_point scheduled) const
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

std::shared_ptr<Frame> RemoteWriteSource::poll()
{
    auto newest = closeWindows(nowUnixMs());
    logDrops();
    return newest;
}

std::shared_ptr<Frame> RemoteWriteSource::firstFrame()
{
    auto frame = emptyFrame();
    frame->sequence = m_pastFrames;
    return frame;
}

FramePoller::Past RemoteWriteSource::pastFrames(int64_t nowMs, std::chrono::milliseconds every, size_t maxFrames)
{
    Past past = m_history ? m_history->pastFrames(nowMs, every, maxFrames) : Past {};
    m_pastFrames = past.frames.size();
    return past;
}

std::shared_ptr<Frame> RemoteWriteSource::closeWindows(int64_t nowMs)
{
    std::shared_ptr<Frame> newest;
    WindowFolder::Closed closed;
    while (m_folder->closeNext(nowMs, &closed)) {
        newest = std::move(closed.frame);
        for (auto &e : closed.events) {
            m_events.push_back(std::move(e));
        }
    }
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
    const uint64_t drops = s.refused + s.overloaded + s.unauthorized + s.timedOut + s.unknownGpuSeries + s.unnamedSeries
        + s.samples.dropped() + s.samples.sentinelValues + s.samples.nanValues;
    if (drops == m_loggedDrops) {
        return;
    }
    m_loggedDrops = drops;
    m_lastDropLog = now;
    log(fmt::format(
        "remote write: so far {} requests, {} refused (last: {}), {} answered 503 (frames behind), {} "
        "pushes without a valid credential (401/403), {} connections past a deadline; {} series of GPUs not "
        "in the topology (e.g. {}), {} without hostname/gpu, {} of other metrics; samples: {} "
        "taken, {} too old, {} from the future, {} out of order, {} duplicates, {} with no window free; "
        "{} DCGM blanks and {} NaN/Inf read as no data",
        s.requests, s.refused, s.lastRefusal.empty() ? std::string("none") : s.lastRefusal, s.overloaded,
        s.unauthorized, s.timedOut, s.unknownGpuSeries,
        s.unknownGpuExample.empty() ? std::string("none") : s.unknownGpuExample, s.unnamedSeries, s.unknownMetricSeries,
        s.samples.accepted, s.samples.tooOld, s.samples.future, s.samples.outOfOrder, s.samples.duplicate,
        s.samples.windowsFull, s.samples.sentinelValues, s.samples.nanValues));
}

} // namespace fleetscope::backend
