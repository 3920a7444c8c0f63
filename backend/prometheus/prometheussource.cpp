// SPDX-License-Identifier: Apache-2.0
#include "prometheus/prometheussource.h"

#include "core/clock.h"
#include "dcgm/dcgmgrade.h"
#include "dcgm/dcgmvalue.h"
#include "dcgm/uplinklabels.h"
#include "formats/topologyfile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fleetscope::backend {

namespace {

// The counters' increase and the XID gauge's changes over the catalogue's 5-minute window.
bool isWindowCount(MetricId id)
{
    return metricCatalog()[static_cast<size_t>(id)].isRate;
}

} // namespace

std::string printableExcerpt(const std::string &body)
{
    std::string out;
    for (const char c : body.substr(0, 200)) {
        out += (c >= 0x20 && c < 0x7f) ? c : ' ';
    }
    return out;
}

PrometheusSource::PrometheusSource(Log log)
    : m_log(std::move(log))
{ }

void PrometheusSource::log(const std::string &line) const
{
    std::lock_guard lock(m_logMutex);
    if (m_log) {
        m_log(line);
    } else {
        fmt::print(stderr, "fleetscope-backend: {}\n", line);
    }
}

std::optional<std::string> PrometheusSource::queryFor(const MetricMap &map, MetricId id, const std::string &selector)
{
    const auto &series = map.seriesName(id);
    if (series.empty()) {
        return std::nullopt;
    }
    // Transmit wait counts ticks; its plane is the share of time stalled (MetricMap::transmitWaitScale).
    if (id == MetricId::RailTransmitWait) {
        return fmt::format("rate({}{}[5m])", series, selector);
    }
    if (!isWindowCount(id)) {
        return series + selector;
    }
    // The XID gauge holds the last XID and never resets: count its changes, not its value.
    if (id == MetricId::XidErrors) {
        return fmt::format("changes({}{}[5m])", series, selector);
    }
    // A summed metric (NVLink's two CRC counters) as the sum of each counter's own increase.
    return map.increaseQuery(id, selector);
}

std::string PrometheusSource::eventQuery(const MetricMap &map)
{
    // A map without one of them asks for the other only (and one without both for a name no series has).
    std::vector<std::string> names;
    for (const auto id : { MetricId::XidErrors, MetricId::EccDbe }) {
        if (!map.seriesName(id).empty()) {
            names.push_back(map.seriesName(id));
        }
    }
    if (names.empty()) {
        names.emplace_back("fleetscope_none");
    }
    return fmt::format(R"({{__name__=~"{}"}})", fmt::join(names, "|"));
}

std::string PrometheusSource::byNodeAndGpu() const
{
    return fmt::format("{}, {}", fmt::join(m_map.labels().hostname, ", "), m_map.labels().gpu);
}

std::string PrometheusSource::hostSelector(const std::vector<uint32_t> &gpus) const
{
    // A long regular expression is still far cheaper for the server than every GPU's series; past a couple of
    // thousand hosts the URL gets long, and the whole fleet's series are asked for instead.
    constexpr size_t maxHosts = 2000;
    const auto &shape = m_topology.shape();
    std::vector<uint32_t> nodes;
    nodes.reserve(gpus.size());
    for (const uint32_t g : gpus) {
        nodes.push_back(shape.nodeOfGpu[g]);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    if (nodes.empty() || nodes.size() > maxHosts || m_bothHostnameLabels) {
        return {};
    }
    std::string out = "{" + m_map.hostnameLabel() + R"(=~")";
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (i > 0) {
            out += '|';
        }
        // Escaped twice: for the regular expression (RE2), then for PromQL's double-quoted string.
        for (const char c : shape.nodes[nodes[i]].hostname) {
            if (std::string_view(R"(\.^$|?*+()[]{})").find(c) != std::string_view::npos) {
                out += R"(\\)"; // a backslash, escaped for the string
            }
            if (c == '"' || c == '\\') {
                out += '\\'; // the character itself, escaped for the string
            }
            out += c;
        }
    }
    out += R"("})";
    return out;
}

std::string PrometheusSource::sampleTimeQuery(const MetricMap &map, const std::string &selector)
{
    // timestamp() of a plain selector is the sample's own time, not the evaluation time. One metric only: timestamp()
    // drops the metric name, so several would collide; and every field of a node comes from the same scrape, with the
    // same time. The GPU temperature is in every dcgm-exporter configuration (discovery relies on it too).
    return "max(timestamp(" + map.seriesName(MetricId::GpuTemp) + selector + "))";
}

namespace {

// count by (__name__, the labels, hall, row, rack) of these series: one series per GPU (and per name).
std::string discoveryOf(const std::vector<std::string> &series, const MetricMap::Labels &labels)
{
    const std::string by = fmt::format("__name__, {}, {}, {}, {}, {}", fmt::join(labels.hostname, ", "), labels.gpu,
        labels.uuid, labels.model, fmt::join(labels.driver, ", "));
    return fmt::format("count by ({}, hall, row, rack) ({})", by,
        series.size() == 1 ? series.front() : fmt::format(R"({{__name__=~"{}"}})", fmt::join(series, "|")));
}

} // namespace

std::string PrometheusSource::discoveryQuery(const MetricMap &map)
{
    return discoveryOf({ map.seriesName(MetricId::GpuTemp) }, map.labels());
}

std::string PrometheusSource::profileDiscoveryQuery()
{
    std::vector<std::string> temperatures;
    for (const auto p : MetricMap::allProfiles) {
        const std::string name = MetricMap::profile(p).seriesName(MetricId::GpuTemp);
        if (std::find(temperatures.begin(), temperatures.end(), name) == temperatures.end()) {
            temperatures.push_back(name);
        }
    }
    return discoveryOf(temperatures, MetricMap::Labels {});
}

std::string PrometheusSource::profileNamesQuery(const std::string &hostnameLabel, const std::string &host)
{
    // The host's value inside a double-quoted PromQL string.
    std::string quoted;
    for (const char c : host) {
        if (c == '"' || c == '\\') {
            quoted += '\\';
        }
        quoted += c;
    }
    return fmt::format(R"(count by (__name__) ({{__name__=~"{}",{}="{}"}}))",
        fmt::join(MetricMap::allProfileNames(), "|"), hostnameLabel, quoted);
}

void PrometheusSource::chooseProfile(
    const std::vector<PromSample> &gpus, std::chrono::steady_clock::time_point deadline)
{
    // The node label most GPUs carry: MetricMap::Labels' default lists hostname first, then Hostname.
    size_t lower = 0;
    size_t upper = 0;
    std::vector<std::string> names;
    for (const auto &s : gpus) {
        lower += s.hostnameRank == 0 ? 1 : 0;
        upper += s.hostnameRank == 1 ? 1 : 0;
        if (!s.name.empty() && std::find(names.begin(), names.end(), s.name) == names.end()) {
            names.push_back(s.name);
        }
    }
    const std::string label = upper > lower ? "Hostname" : "hostname";
    // The names one node's series carry: a lookup in the server's index, where the same over the whole fleet would
    // load a series per GPU and name.
    const auto node = std::find_if(gpus.begin(), gpus.end(),
        [&](const PromSample &s) { return s.hostnameRank == (label == "hostname" ? 0 : 1) && !s.hostname.empty(); });
    std::vector<PromSample> present;
    std::string error = "no GPUs";
    if (node != gpus.end()
        && query(profileNamesQuery(label, node->hostname), nowUnixMs(), deadline, false, &present, &error, false, 0)) {
        for (const auto &s : present) {
            if (!s.name.empty() && std::find(names.begin(), names.end(), s.name) == names.end()) {
                names.push_back(s.name);
            }
        }
    } else {
        log(fmt::format("prometheus: which series names the server holds is not known ({}); the profile is chosen "
                        "from the GPUs' labels",
            error));
    }
    std::vector<std::string> adopted;
    m_map = MetricMap::choose(names, label, &adopted);
    m_bothHostnameLabels = lower > 0 && upper > 0;
    log(fmt::format("prometheus: dcgm-exporter profile {} chosen from the series present{}", m_map.name(),
        adopted.empty() ? std::string() : fmt::format("; {}", fmt::join(adopted, ", "))));
    if (m_bothHostnameLabels) {
        log(fmt::format("prometheus: {} GPUs' series name their node 'hostname' and {} 'Hostname' (dcgm-exporter "
                        "before and after 4.8.3); both are read, and history asks for the whole fleet's series",
            lower, upper));
    }
}

bool PrometheusSource::start(const Options &options, std::string *error)
{
    m_options = options;
    if (!m_http.setBaseUrl(options.url, options.http, error)) {
        return false;
    }
    const bool fromFile = !options.topologyFile.empty();
    if (fromFile) {
        TopologyFile file;
        if (!TopologyFile::load(options.topologyFile, &file, error)) {
            return false;
        }
        m_topology = PrometheusTopology::fromFile(file);
    }
    std::vector<PromSample> gpus;
    std::string queryError;
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    // Until a profile is chosen, both spellings of the node label and of the driver label are read.
    m_json.setLabels(options.metricMap ? options.metricMap->labels() : MetricMap::Labels {});
    const std::string discovery = options.metricMap ? discoveryQuery(*options.metricMap) : profileDiscoveryQuery();
    if (!query(discovery, nowUnixMs(), deadline, true, &gpus, &queryError)) {
        if (!fromFile) {
            *error = fmt::format("cannot learn the fleet's layout from {}: {}", options.url, queryError);
            return false;
        }
        log(fmt::format("prometheus: GPU identities unknown for now ({})", queryError));
    }
    if (options.metricMap) {
        m_map = *options.metricMap;
        log(fmt::format("prometheus: metric map from {}", m_map.name()));
    } else {
        chooseProfile(gpus, deadline);
    }
    m_json.setLabels(m_map.labels());
    if (!fromFile && !PrometheusTopology::fromLabels(gpus, &m_topology, error)) {
        *error = fmt::format("{}: {}", options.url, *error);
        return false;
    }
    if (const size_t unknown = m_topology.applyIdentity(gpus); unknown > 0) {
        log(fmt::format(
            "prometheus: {} GPUs the server knows are not in the topology file; they are ignored", unknown));
    }
    // Each GPU's leaf switch and port from infiniband_exporter's uplink labels where the file does not cable it
    // (none where the exporter is not scraped).
    std::vector<PromSample> uplinks;
    std::string uplinkError;
    if (query(UplinkLabels::query(), nowUnixMs(), deadline, true, &uplinks, &uplinkError)) {
        for (const auto &line : m_topology.applyUplinks(uplinks)) {
            log("prometheus: " + line);
        }
    } else {
        log(fmt::format("prometheus: the GPUs' uplinks unknown for now ({})", uplinkError));
    }
    log(fmt::format("prometheus: {} GPUs on {} nodes in {} racks, layout from {}", m_topology.shape().gpuCount,
        m_topology.shape().nodes.size(), m_topology.shape().racks.size(),
        fromFile ? options.topologyFile : std::string("the series' labels")));
    return true;
}

bool PrometheusSource::startForHistory(
    const Options &options, const PrometheusTopology &topology, const MetricMap &map, std::string *error)
{
    m_options = options;
    if (!m_http.setBaseUrl(options.url, options.http, error)) {
        return false;
    }
    m_topology = topology;
    m_map = map;
    m_json.setLabels(map.labels());
    return true;
}

bool PrometheusSource::query(const std::string &promql, int64_t evalMs, std::chrono::steady_clock::time_point deadline,
    bool withPlacement, std::vector<PromSample> *out, std::string *error, bool withJobs, size_t seriesPerGpu)
{
    const auto left
        = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
        *error = fmt::format("query '{}': no time left of the {} ms time-out", promql, m_options.timeout.count());
        return false;
    }
    const std::string target = fmt::format(
        "/api/v1/query?query={}&time={}.{:03}", PrometheusHttp::encode(promql), evalMs / 1000, evalMs % 1000);
    PrometheusHttp::Response response;
    std::string detail;
    if (!m_http.get(target, left, &response, &detail)) {
        if (detail.find("timed out") != std::string::npos) {
            detail += fmt::format(" (a poll's queries have {} ms together)", m_options.timeout.count());
        }
        *error = fmt::format("query '{}': {}", promql, detail);
        return false;
    }
    m_report.answerBytes += response.body.size();
    // At most two series per GPU and metric (a GPU seen by two exporters, or during a relabelling): more is a
    // selector that matches another fleet, or a topology that misses most of this one. Discovery is bounded by the
    // fleet limit.
    const size_t maxSeries = withPlacement ? size_t { FleetShape::maxGpus } * 2
                                           : size_t { m_topology.shape().gpuCount } * seriesPerGpu + 64;
    const bool parsed = m_json.parseVector(&response.body, maxSeries, withPlacement, out, &detail, withJobs);
    if (response.status != 200) {
        // Prometheus explains its errors in JSON (parsed, it fails with the upstream's words); others send text.
        *error = fmt::format("query '{}': HTTP {}: {}", promql, response.status,
            parsed ? std::string("(no error text)")
                   : (detail.rfind("upstream error", 0) == 0 ? detail : printableExcerpt(response.body)));
        return false;
    }
    if (!parsed) {
        if (detail.rfind("the answer has more than", 0) == 0) {
            detail += fmt::format(" for a topology of {} GPUs; does the query match more than this fleet, or does the "
                                  "topology miss most of it?",
                m_topology.shape().gpuCount);
        }
        *error = fmt::format("query '{}': {}", promql, detail);
        return false;
    }
    return true;
}

float PrometheusSource::planeValue(MetricId id, double raw, size_t *sentinels, size_t *nans) const
{
    const double value = cleanDcgmValue(raw, sentinels, nans);
    const auto &conversion = m_map.conversion(id);
    return static_cast<float>(
        MetricMap::planeValue(id, isWindowCount(id) ? conversion.applyToDifference(value) : conversion.apply(value)));
}

std::shared_ptr<Frame> PrometheusSource::emptyFrame() const
{
    return frameWithoutData(m_topology.shape().gpuCount);
}

std::shared_ptr<Frame> PrometheusSource::firstFrame()
{
    // Stamped with the start instead, it was newer than the first frame with data whenever the last scrape came
    // before the start: consoles saw time go backwards, and the flight recorder refused that frame.
    auto frame = emptyFrame();
    frame->sequence = m_pastFrames; // after the frames of before the start
    const auto deadline = std::chrono::steady_clock::now() + m_options.timeout;
    const int64_t evalMs = nowUnixMs();
    std::string error;
    int64_t sampleMs = 0;
    if (query(sampleTimeQuery(m_map), evalMs, deadline, false, &m_samples, &error) && !m_samples.empty()
        && PromJson::unixMs(m_samples.front().value, &sampleMs) && sampleMs > 0) {
        frame->sampleTimeMs = sampleMs - 1;
    }
    // The jobs as of the start, from the labels of the GPU temperature's series (every GPU's): a judge that saw the
    // first frame without them took every GPU of a job to join it at the first poll, and let it settle, not judged,
    // for minutes.
    const auto temps = queryFor(m_map, MetricId::GpuTemp);
    const uint32_t n = m_topology.shape().gpuCount;
    if (temps && query(*temps, evalMs, deadline, false, &m_samples, &error, true)) {
        m_events.clear();
        noteAliases(m_samples);
        pollSlurm(evalMs, sampleMs > 0 ? sampleMs - 1 : evalMs, deadline);
        m_jobs.begin(n);
        for (const auto &s : m_samples) {
            if (const int64_t g = m_topology.indexOf(s.hostname, s.gpu);
                g >= 0 && !m_slurm.claims(static_cast<uint32_t>(g))) {
                m_jobs.add(static_cast<uint32_t>(g), s);
            }
        }
        m_jobs.finish(sampleMs > 0 ? sampleMs - 1 : evalMs, m_topology.shape(), &m_events);
    }
    return frame;
}

std::shared_ptr<Frame> PrometheusSource::poll()
{
    const auto started = std::chrono::steady_clock::now();
    const auto deadline = started + m_options.timeout;
    const int64_t evalMs = nowUnixMs();
    const uint32_t n = m_topology.shape().gpuCount;
    const bool wasOk = m_report.ok;
    m_report = {};
    // The queries of one poll: the sample time, one a metric, the events'.
    size_t queriesDone = 0;
    size_t queriesPlanned = 3;
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        queriesPlanned += queryFor(m_map, static_cast<MetricId>(m)) ? 1 : 0;
    }
    auto fail = [&](std::string error) -> std::shared_ptr<Frame> {
        m_report.ok = false;
        m_report.elapsed
            = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
        const std::string base = error;
        // Out of time: how long the whole set would need, and what to set.
        if (error.find("timed out") != std::string::npos || error.find("no time left") != std::string::npos) {
            const auto elapsedMs = std::chrono::duration_cast<std::chrono::milliseconds>(m_report.elapsed).count();
            const int64_t neededMs = queriesDone == 0
                ? 0
                : elapsedMs * static_cast<int64_t>(queriesPlanned) / static_cast<int64_t>(queriesDone);
            // Rounded up to whole seconds, with a quarter to spare.
            const int64_t suggestMs = (neededMs * 5 / 4 + 999) / 1000 * 1000;
            error += queriesDone == 0
                ? fmt::format("; the poll's first query alone needed more than the {} ms budget: raise "
                              "--prometheus-timeout-ms, or use the push path (--source remote-write)",
                    m_options.timeout.count())
                : fmt::format("; the poll had done {} of its {} queries in {} ms, so it needs about {} ms: set "
                              "--prometheus-timeout-ms {} and --interval-ms at least that, or use the push path "
                              "(--source remote-write)",
                    queriesDone, queriesPlanned, elapsedMs, neededMs, std::max<int64_t>(1000, suggestMs));
        }
        m_report.error = std::move(error);
        // Logged once while the same thing fails, not once a poll (the figures in the hint vary).
        if (base != m_loggedError) {
            log(fmt::format("prometheus: {}; keeping the last good frame", m_report.error));
            m_loggedError = base;
        }
        return nullptr;
    };

    // The newest sample first: when the server has nothing newer than the last frame, there is nothing to fetch.
    if (!query(sampleTimeQuery(m_map), evalMs, deadline, false, &m_samples, &m_report.error)) {
        return fail(m_report.error);
    }
    ++queriesDone;
    int64_t sampleMs = evalMs; // no series at all: a frame without data, as of now
    if (!m_samples.empty()) {
        // A value, not a point's time, so not checked by the parser: a time after 1970 and before the year 10000.
        const double seconds = m_samples.front().value;
        if (!PromJson::unixMs(seconds, &sampleMs) || sampleMs <= 0) {
            return fail(fmt::format("query '{}': the newest sample time is '{}'", sampleTimeQuery(m_map), seconds));
        }
    }
    const bool anySeries = !m_samples.empty();
    // One host's own scrape time, for the interval: the fleet's newest sample moves on with every target's scrape.
    if (n > 0) {
        std::string ignored;
        const std::string refQuery = sampleTimeQuery(m_map, hostSelector({ 0 }));
        int64_t scrapeMs = 0;
        if (query(refQuery, evalMs, deadline, false, &m_samples, &ignored) && m_samples.size() == 1
            && PromJson::unixMs(m_samples.front().value, &scrapeMs) && scrapeMs > 0) {
            noteScrape(scrapeMs); // bounded: the interval and the next poll's time below stay inside int64
        }
    }
    if (anySeries && sampleMs <= m_lastSampleMs) {
        m_report.ok = true;
        return nullptr;
    }

    auto frame = emptyFrame();
    frame->sampleTimeMs = sampleMs;
    std::vector<uint8_t> hasData(n, 0);
    std::vector<uint8_t> got(n, 0);
    m_events.clear();
    pollSlurm(evalMs, sampleMs, deadline);
    m_jobs.begin(n);
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        const auto id = static_cast<MetricId>(m);
        const auto promql = queryFor(m_map, id);
        if (!promql) {
            continue;
        }
        const auto scope = MetricMap::scopeOf(id);
        // Every GPU metric's series carry the job labels (when any metric's do, they all should; reading them all
        // costs little and misses none). A node has more NICs than rails (storage, management): up to 4 a GPU.
        const bool ofGpus = scope == MetricMap::Scope::Gpu;
        if (!query(*promql, evalMs, deadline, false, &m_samples, &m_report.error, ofGpus, ofGpus ? 2 : 4)) {
            return fail(m_report.error);
        }
        ++queriesDone;
        std::fill(got.begin(), got.end(), 0);
        auto &plane = frame->planes[m];
        if (!ofGpus) {
            // A rail NIC's series goes to its GPU, a rack's to every GPU of the rack; a NIC that serves no GPU (a
            // storage NIC) and a rack not in the topology are not the GPUs' and are left out. They do not make a GPU
            // one with data: that is its DCGM fields'.
            for (const auto &s : m_samples) {
                const auto span = m_topology.gpusOf(scope, s);
                const float converted = planeValue(id, s.value, &m_report.sentinelValues, &m_report.nanValues);
                for (uint32_t g = span.first; g < span.first + span.count; ++g) {
                    if (got[g]) {
                        ++m_report.duplicateSeries;
                        continue;
                    }
                    got[g] = 1;
                    plane[g] = converted;
                }
            }
            continue;
        }
        if (id == MetricId::GpuTemp) {
            noteAliases(m_samples); // for the next poll's Slurm join
        }
        for (const auto &s : m_samples) {
            const int64_t g = m_topology.indexOf(s.hostname, s.gpu);
            if (g < 0) {
                if (m_report.unknownSeries++ == 0) {
                    m_report.unknownExample = fmt::format("{}/{}", s.hostname, s.gpu);
                }
                continue;
            }
            const auto index = static_cast<size_t>(g);
            // A GPU shared by two jobs has a series per job (dcgm-exporter's HPC mapping): both are its jobs. A
            // GPU a Slurm job claims is that job's: its pod labels name a Slurm node's pod, not a job.
            if (!m_slurm.claims(static_cast<uint32_t>(g))) {
                m_jobs.add(static_cast<uint32_t>(g), s);
            }
            if (got[index]) {
                ++m_report.duplicateSeries;
                continue;
            }
            got[index] = 1;
            plane[index] = planeValue(id, s.value, &m_report.sentinelValues, &m_report.nanValues);
            hasData[index] |= std::isfinite(plane[index]) ? 1 : 0;
        }
    }

    // The raw values the events come from: the XID gauge's and the double-bit counter's (the planes hold their
    // 5-minute changes), and the clock event reasons (a plane as it is).
    if (!query(eventQuery(m_map), evalMs, deadline, false, &m_samples, &m_report.error, false, 4)) {
        return fail(m_report.error);
    }
    {
        std::vector<double> xidNow(n, std::nan(""));
        std::vector<double> dbeNow(n, std::nan(""));
        std::vector<double> reasonsNow(n, std::nan(""));
        // Raw values, unconverted: an XID is a code, and only the double-bit counter's increases count.
        const auto &xidField = m_map.seriesName(MetricId::XidErrors);
        const auto &dbeField = m_map.seriesName(MetricId::EccDbe);
        size_t ignoredSentinels = 0;
        size_t ignoredNans = 0;
        for (const auto &s : m_samples) {
            const int64_t g = m_topology.indexOf(s.hostname, s.gpu);
            std::vector<double> *target = nullptr;
            if (!s.name.empty() && s.name == xidField) {
                target = &xidNow;
            } else if (!s.name.empty() && s.name == dbeField) {
                target = &dbeNow;
            }
            if (g >= 0 && target && std::isnan((*target)[static_cast<size_t>(g)])) {
                (*target)[static_cast<size_t>(g)] = cleanDcgmValue(s.value, &ignoredSentinels, &ignoredNans);
            }
        }
        const auto &reasons = frame->plane(MetricId::ThrottleReasons);
        for (uint32_t g = 0; g < n; ++g) {
            reasonsNow[g] = reasons[g];
        }
        m_jobs.finish(sampleMs, m_topology.shape(), &m_events);
        m_slurm.mergedJobOfGpu(m_jobs.jobOfGpu(), &m_jobOfGpu);
        m_eventDetector.update(xidNow, dbeNow, reasonsNow, m_topology.shape(), m_jobOfGpu, &m_events);
    }

    m_report.gpusWithoutData = gradeDcgmFrame(frame.get(), hasData);

    m_report.ok = true;
    m_report.elapsed
        = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
    m_lastSampleMs = sampleMs;
    if (!wasOk && !m_loggedError.empty()) {
        log("prometheus: answering again");
    }
    m_loggedError.clear();
    if (m_report.unknownSeries != m_loggedUnknown) {
        if (m_report.unknownSeries > 0) {
            log(fmt::format("prometheus: {} series name GPUs not in the topology (e.g. {}); ignored. New nodes "
                            "appear after a restart of the backend (or an edit of the topology file).",
                m_report.unknownSeries, m_report.unknownExample));
        }
        m_loggedUnknown = m_report.unknownSeries;
    }
    return frame;
}

void PrometheusSource::noteScrape(int64_t sampleMs)
{
    if (m_refSampleMs > 0 && sampleMs > m_refSampleMs) {
        m_scrapeDeltas.push_back(sampleMs - m_refSampleMs);
        if (m_scrapeDeltas.size() > 8) {
            m_scrapeDeltas.erase(m_scrapeDeltas.begin());
        }
        if (m_scrapeDeltas.size() >= 2) {
            auto sorted = m_scrapeDeltas;
            std::sort(sorted.begin(), sorted.end());
            m_scrapeIntervalMs = sorted[sorted.size() / 2];
        }
    }
    m_refSampleMs = std::max(m_refSampleMs, sampleMs);
    // Said when first known and when it changes by a fifth or more.
    if (m_scrapeIntervalMs > 0
        && (m_loggedIntervalMs == 0 || std::llabs(m_scrapeIntervalMs - m_loggedIntervalMs) * 5 > m_loggedIntervalMs)) {
        log(fmt::format("prometheus: the fleet is scraped every {} ms (host {}); polls follow it, once a scrape",
            m_scrapeIntervalMs, m_topology.shape().nodes.front().hostname));
        m_loggedIntervalMs = m_scrapeIntervalMs;
    }
}

std::chrono::steady_clock::time_point PrometheusSource::nextPollAt(
    std::chrono::steady_clock::time_point scheduled) const
{
    if (m_scrapeIntervalMs <= 0 || m_refSampleMs <= 0) {
        return scheduled;
    }
    // Just after the host's next scrape has landed (a quarter of an interval, at most a second, for the server to
    // take it in), and never later than one interval from now (a host that stopped being scraped).
    const auto now = std::chrono::steady_clock::now();
    const int64_t landedMs = m_refSampleMs + m_scrapeIntervalMs + std::min<int64_t>(1000, m_scrapeIntervalMs / 4);
    const auto expected
        = now + std::chrono::milliseconds(std::clamp<int64_t>(landedMs - nowUnixMs(), 0, m_scrapeIntervalMs));
    return std::max(scheduled, expected);
}

} // namespace fleetscope::backend
