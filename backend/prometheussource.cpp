// SPDX-License-Identifier: Apache-2.0
#include "prometheussource.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <malloc.h>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

constexpr float nan = std::numeric_limits<float>::quiet_NaN();
// As the simulator grades a GPU.
constexpr float warningTemp = 83.0F;
constexpr float criticalTemp = 90.0F;
// DCGM's clock event reasons that slow a GPU down: power cap, hardware slowdown, software and hardware thermal
// slowdown, power brake. (0x1, idle, is not throttling.)
constexpr uint64_t slowdownReasons = 0x4U | 0x8U | 0x20U | 0x40U | 0x80U;

int64_t nowUnixMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The counters' increase and the XID gauge's changes over the catalogue's 5-minute window.
bool isWindowCount(MetricId id)
{
    return metricCatalog()[static_cast<size_t>(id)].isRate;
}

std::string printable(const std::string &body)
{
    std::string out;
    for (const char c : body.substr(0, 200)) {
        out += (c >= 0x20 && c < 0x7f) ? c : ' ';
    }
    return out;
}

} // namespace

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

std::optional<std::string> PrometheusSource::queryFor(MetricId id, const std::string &selector)
{
    const auto &def = metricCatalog()[static_cast<size_t>(id)];
    if (def.dcgmField.empty()) {
        return std::nullopt;
    }
    if (!isWindowCount(id)) {
        return def.dcgmField + selector;
    }
    // The XID gauge holds the last XID and never resets: count its changes, not its value.
    if (id == MetricId::XidErrors) {
        return fmt::format("changes({}{}[5m])", def.dcgmField, selector);
    }
    return fmt::format("increase({}{}[5m])", def.dcgmField, selector);
}

std::string PrometheusSource::eventQuery()
{
    return R"({__name__=~"DCGM_FI_DEV_XID_ERRORS|DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"})";
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
    if (nodes.empty() || nodes.size() > maxHosts) {
        return {};
    }
    std::string out = R"({Hostname=~")";
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

std::string PrometheusSource::sampleTimeQuery(const std::string &selector)
{
    // timestamp() of a plain selector is the sample's own time, not the evaluation time. One metric only: timestamp()
    // drops the metric name, so several would collide; and every field of a node comes from the same scrape, with the
    // same time. The GPU temperature is in every dcgm-exporter configuration (discovery relies on it too).
    return "max(timestamp(DCGM_FI_DEV_GPU_TEMP" + selector + "))";
}

std::string PrometheusSource::discoveryQuery()
{
    return "count by (Hostname, gpu, UUID, modelName, DCGM_FI_DRIVER_VERSION, hall, row, rack) "
           "(DCGM_FI_DEV_GPU_TEMP)";
}

double PrometheusSource::clean(double value, size_t *sentinels, size_t *nans)
{
    if (!std::isfinite(value)) {
        ++*nans;
        return std::numeric_limits<double>::quiet_NaN();
    }
    // DCGM's blank / not found / not supported / not permissioned: 0x7FFFFFFFFFFFFFF0..F3 for int64 fields (all
    // 2^63 once a double), 0x7FFFFFF0..F3 for int32 fields, 2^47 + 0..3 for fp64 fields.
    const bool int64Blank = value >= 9.2233720368547e18;
    const bool int32Blank = value >= 2147483632.0 && value <= 2147483635.0;
    const bool fp64Blank = value >= 140737488355328.0 && value <= 140737488355331.0;
    if (int64Blank || int32Blank || fp64Blank) {
        ++*sentinels;
        return std::numeric_limits<double>::quiet_NaN();
    }
    return value;
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
    if (!query(discoveryQuery(), nowUnixMs(), deadline, true, &gpus, &queryError)) {
        if (!fromFile) {
            *error = fmt::format("cannot learn the fleet's layout from {}: {}", options.url, queryError);
            return false;
        }
        log(fmt::format("prometheus: GPU identities unknown for now ({})", queryError));
    }
    if (!fromFile && !PrometheusTopology::fromLabels(gpus, &m_topology, error)) {
        *error = fmt::format("{}: {}", options.url, *error);
        return false;
    }
    if (const size_t unknown = m_topology.applyIdentity(gpus); unknown > 0) {
        log(fmt::format(
            "prometheus: {} GPUs the server knows are not in the topology file; they are ignored", unknown));
    }
    log(fmt::format("prometheus: {} GPUs on {} nodes in {} racks, layout from {}", m_topology.shape().gpuCount,
        m_topology.shape().nodes.size(), m_topology.shape().racks.size(),
        fromFile ? options.topologyFile : std::string("the series' labels")));
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
                   : (detail.rfind("upstream error", 0) == 0 ? detail : printable(response.body)));
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

std::shared_ptr<SimFrame> PrometheusSource::emptyFrame() const
{
    const uint32_t n = m_topology.shape().gpuCount;
    auto frame = std::make_shared<SimFrame>();
    for (auto &plane : frame->planes) {
        plane.assign(n, nan);
    }
    frame->planes[static_cast<size_t>(MetricId::HealthState)].assign(n, static_cast<float>(health::NoData));
    frame->health.assign(n, health::NoData);
    return frame;
}

std::shared_ptr<SimFrame> PrometheusSource::poll()
{
    const auto started = std::chrono::steady_clock::now();
    const auto deadline = started + m_options.timeout;
    const int64_t evalMs = nowUnixMs();
    const uint32_t n = m_topology.shape().gpuCount;
    const bool wasOk = m_report.ok;
    m_report = {};
    auto fail = [&](std::string error) -> std::shared_ptr<SimFrame> {
        m_report.ok = false;
        m_report.error = std::move(error);
        m_report.elapsed
            = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
        if (m_report.error != m_loggedError) {
            log(fmt::format("prometheus: {}; keeping the last good frame", m_report.error));
            m_loggedError = m_report.error;
        }
        return nullptr;
    };

    // The newest sample first: when the server has nothing newer than the last frame, there is nothing to fetch.
    if (!query(sampleTimeQuery(), evalMs, deadline, false, &m_samples, &m_report.error)) {
        return fail(m_report.error);
    }
    int64_t sampleMs = evalMs; // no series at all: a frame without data, as of now
    if (!m_samples.empty()) {
        const double seconds = m_samples.front().value;
        if (!std::isfinite(seconds) || seconds <= 0) {
            return fail(fmt::format("query '{}': the newest sample time is '{}'", sampleTimeQuery(), seconds));
        }
        sampleMs = std::llround(seconds * 1000.0);
    }
    if (!m_samples.empty() && sampleMs <= m_lastSampleMs) {
        m_report.ok = true;
        return nullptr;
    }

    auto frame = emptyFrame();
    frame->sampleTimeMs = sampleMs;
    std::vector<uint8_t> hasData(n, 0);
    std::vector<uint8_t> got(n, 0);
    m_events.clear();
    m_jobs.begin(n);
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        const auto id = static_cast<MetricId>(m);
        const auto promql = queryFor(id);
        if (!promql) {
            continue;
        }
        // Every metric's series carry the job labels (when any metric's do, they all should; reading them all costs
        // little and misses none).
        if (!query(*promql, evalMs, deadline, false, &m_samples, &m_report.error, true)) {
            return fail(m_report.error);
        }
        std::fill(got.begin(), got.end(), 0);
        auto &plane = frame->planes[m];
        for (const auto &s : m_samples) {
            const int64_t g = m_topology.indexOf(s.hostname, s.gpu);
            if (g < 0) {
                if (m_report.unknownSeries++ == 0) {
                    m_report.unknownExample = fmt::format("{}/{}", s.hostname, s.gpu);
                }
                continue;
            }
            const auto index = static_cast<size_t>(g);
            // A GPU shared by two jobs has a series per job (dcgm-exporter's HPC mapping): both are its jobs.
            m_jobs.add(static_cast<uint32_t>(g), s);
            if (got[index]) {
                ++m_report.duplicateSeries;
                continue;
            }
            got[index] = 1;
            const double value = clean(s.value, &m_report.sentinelValues, &m_report.nanValues);
            plane[index] = static_cast<float>(value);
            hasData[index] |= std::isfinite(value) ? 1 : 0;
        }
    }

    // The raw values the events come from: the XID gauge's and the double-bit counter's (the planes hold their
    // 5-minute changes), and the clock event reasons (a plane as it is).
    if (!query(eventQuery(), evalMs, deadline, false, &m_samples, &m_report.error, false, 4)) {
        return fail(m_report.error);
    }
    {
        std::vector<double> xidNow(n, std::nan(""));
        std::vector<double> dbeNow(n, std::nan(""));
        std::vector<double> reasonsNow(n, std::nan(""));
        const auto &xidField = metricCatalog()[static_cast<size_t>(MetricId::XidErrors)].dcgmField;
        const auto &dbeField = metricCatalog()[static_cast<size_t>(MetricId::EccDbe)].dcgmField;
        size_t ignoredSentinels = 0;
        size_t ignoredNans = 0;
        for (const auto &s : m_samples) {
            const int64_t g = m_topology.indexOf(s.hostname, s.gpu);
            auto *target = s.name == xidField ? &xidNow : s.name == dbeField ? &dbeNow : nullptr;
            if (g >= 0 && target && std::isnan((*target)[static_cast<size_t>(g)])) {
                (*target)[static_cast<size_t>(g)] = clean(s.value, &ignoredSentinels, &ignoredNans);
            }
        }
        const auto &reasons = frame->plane(MetricId::ThrottleReasons);
        for (uint32_t g = 0; g < n; ++g) {
            reasonsNow[g] = reasons[g];
        }
        m_jobs.finish(sampleMs, m_topology.shape(), &m_events);
        m_eventDetector.update(xidNow, dbeNow, reasonsNow, m_topology.shape(), m_jobs.jobOfGpu(), &m_events);
    }

    const auto &temp = frame->plane(MetricId::GpuTemp);
    const auto &xid = frame->plane(MetricId::XidErrors);
    const auto &sbe = frame->plane(MetricId::EccSbe);
    const auto &dbe = frame->plane(MetricId::EccDbe);
    const auto &reasons = frame->plane(MetricId::ThrottleReasons);
    auto &state = frame->planes[static_cast<size_t>(MetricId::HealthState)];
    for (uint32_t g = 0; g < n; ++g) {
        if (!hasData[g]) {
            ++m_report.gpusWithoutData;
            continue; // stays no data, every value NaN
        }
        uint8_t h = health::Ok;
        if (temp[g] >= criticalTemp || dbe[g] > 0) {
            h = health::Critical;
        } else if (temp[g] >= warningTemp || xid[g] > 0) {
            h = health::Warning;
        }
        state[g] = static_cast<float>(h);
        if (std::isfinite(reasons[g]) && reasons[g] >= 0
            && (static_cast<uint64_t>(reasons[g]) & slowdownReasons) != 0) {
            h |= health::throttledFlag;
        }
        if (sbe[g] > 0 || dbe[g] > 0) {
            h |= health::eccFlag;
        }
        if (xid[g] > 0) {
            h |= health::xidFlag;
        }
        frame->health[g] = h;
    }

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

namespace {

// Unix milliseconds as the HTTP API's seconds.
std::string apiSeconds(int64_t ms)
{
    return fmt::format("{}{}.{:03}", ms < 0 ? "-" : "", std::abs(ms) / 1000, std::abs(ms) % 1000);
}

} // namespace

bool PrometheusSource::rangeQuery(const std::string &promql, int64_t fromMs, int64_t toMs, int64_t stepMs,
    std::chrono::milliseconds timeout, PromJson *json, size_t maxPoints, const PromJson::SeriesFn &seriesFn,
    const PromJson::PointFn &pointFn, std::string *error) const
{
    const std::string target = fmt::format("/api/v1/query_range?query={}&start={}&end={}&step={}",
        PrometheusHttp::encode(promql), apiSeconds(fromMs), apiSeconds(toMs), apiSeconds(stepMs));
    // A copy per call: the client is not thread-safe, its copies are (and share a TLS context).
    const PrometheusHttp http = m_http;
    PrometheusHttp::Response response;
    std::string detail;
    if (!http.get(target, timeout, &response, &detail)) {
        if (detail.find("timed out") != std::string::npos) {
            detail += fmt::format(" (a range query has {} ms)", timeout.count());
        }
        *error = fmt::format("range query '{}': {}", promql, detail);
        return false;
    }
    const size_t maxSeries = size_t { m_topology.shape().gpuCount } * 2 + 64;
    const bool parsed = json->parseMatrix(&response.body, maxSeries, maxPoints, seriesFn, pointFn, &detail);
    if (response.status != 200) {
        *error = fmt::format("range query '{}': HTTP {}: {}", promql, response.status,
            parsed ? std::string("(no error text)")
                   : (detail.rfind("upstream error", 0) == 0 ? detail : printable(response.body)));
        return false;
    }
    if (!parsed) {
        *error = fmt::format("range query '{}': {}", promql, detail);
        return false;
    }
    return true;
}

bool PrometheusSource::rangeTimes(
    Range *range, std::vector<int64_t> *times, std::vector<int64_t> *sampleTimes, std::string *error) const
{
    times->clear();
    sampleTimes->clear();
    if (range->stepMs < 1 || range->toMs < range->fromMs) {
        *error = fmt::format("need from <= to and a step of at least 1 ms (got {} .. {} step {})", range->fromMs,
            range->toMs, range->stepMs);
        return false;
    }
    const int64_t maxPoints = std::max<int64_t>(2, m_options.maxRangePoints);
    int64_t rows = (range->toMs - range->fromMs) / range->stepMs + 1;
    if (rows > maxPoints) {
        // Coarser, on the same grid: every k-th of the times asked for.
        const int64_t k = (rows - 1 + maxPoints - 2) / (maxPoints - 1);
        range->stepMs *= k;
        rows = (range->toMs - range->fromMs) / range->stepMs + 1;
    }
    const int64_t from = range->fromMs;
    const int64_t step = range->stepMs;
    std::vector<int64_t> sampleOfRow(static_cast<size_t>(rows), -1);
    PromJson json;
    const bool ok = rangeQuery(
        sampleTimeQuery(hostSelector(range->gpus)), from, from + (rows - 1) * step, step, m_options.historyTimeout,
        &json, static_cast<size_t>(rows) + 16, [](const PromSample &) { return int64_t { 0 }; },
        [&](int64_t, int64_t timeMs, double seconds) {
            const int64_t offset = timeMs - from;
            if (offset < 0 || offset % step != 0 || offset / step >= rows || !std::isfinite(seconds) || seconds <= 0) {
                return; // not a time asked for, or no time at all: that row stays without a sample
            }
            sampleOfRow[static_cast<size_t>(offset / step)] = std::llround(seconds * 1000.0);
        },
        error);
    if (!ok) {
        return false;
    }
    for (int64_t r = 0; r < rows; ++r) {
        if (sampleOfRow[static_cast<size_t>(r)] >= 0) {
            times->push_back(from + r * step);
            sampleTimes->push_back(sampleOfRow[static_cast<size_t>(r)]);
        }
    }
    return true;
}

bool PrometheusSource::rangeValues(const Range &range, MetricId metric, const std::vector<int64_t> &times,
    std::vector<float> *values, std::string *error) const
{
    const size_t columns = range.gpus.size();
    values->assign(times.size() * columns, nan);
    if (times.empty() || columns == 0) {
        return true;
    }
    const auto promql = queryFor(metric, hostSelector(range.gpus));
    if (!promql) {
        *error = fmt::format(
            "metric '{}' has no DCGM field to ask the upstream for", metricCatalog()[static_cast<size_t>(metric)].key);
        return false;
    }
    const int64_t from = times.front();
    const int64_t to = times.back();
    const int64_t step = range.stepMs;
    // Output row of each time of the grid (-1: a time left out, without any sample).
    std::vector<int32_t> rowOf(static_cast<size_t>((to - from) / step + 1), -1);
    for (size_t r = 0; r < times.size(); ++r) {
        rowOf[static_cast<size_t>((times[r] - from) / step)] = static_cast<int32_t>(r);
    }
    std::unordered_map<uint32_t, int64_t> columnOf;
    columnOf.reserve(columns);
    for (size_t c = 0; c < columns; ++c) {
        columnOf.emplace(range.gpus[c], static_cast<int64_t>(c)); // a GPU asked for twice fills its first column
    }
    // A GPU's series change over time (a job's pod labels come and go), so one column takes every series of its GPU;
    // two points of one GPU at the same time are two series of it at once, and the first counts, as on the live path.
    std::vector<uint8_t> filled(values->size(), 0);
    size_t unknown = 0;
    size_t duplicates = 0;
    size_t sentinels = 0;
    size_t nans = 0;
    std::string unknownExample;
    PromJson json;
    const size_t maxPoints = rowOf.size() * (size_t { m_topology.shape().gpuCount } * 2 + 64);
    const bool ok = rangeQuery(
        *promql, from, to, step, m_options.historyTimeout, &json, maxPoints,
        [&](const PromSample &labels) -> int64_t {
            const int64_t g = m_topology.indexOf(labels.hostname, labels.gpu);
            if (g < 0) {
                if (unknown++ == 0) {
                    unknownExample = fmt::format("{}/{}", labels.hostname, labels.gpu);
                }
                return -1;
            }
            const auto it = columnOf.find(static_cast<uint32_t>(g));
            if (it == columnOf.end()) {
                return -1; // another GPU of a host asked for
            }
            return it->second;
        },
        [&](int64_t column, int64_t timeMs, double value) {
            const int64_t offset = timeMs - from;
            if (offset < 0 || offset % step != 0 || offset / step >= static_cast<int64_t>(rowOf.size())) {
                return;
            }
            const int32_t row = rowOf[static_cast<size_t>(offset / step)];
            if (row < 0) {
                return;
            }
            const size_t at = static_cast<size_t>(row) * columns + static_cast<size_t>(column);
            if (filled[at]++ != 0) {
                ++duplicates;
                return;
            }
            (*values)[at] = static_cast<float>(clean(value, &sentinels, &nans));
        },
        error);
    if (ok && unknown > 0) {
        log(fmt::format("prometheus: a range query's {} series name GPUs not in the topology (e.g. {}); ignored",
            unknown, unknownExample));
    }
    if (ok && duplicates > 0) {
        log(fmt::format("prometheus: a range query has {} points of GPUs that had two series at once; the first "
                        "one's kept",
            duplicates));
    }
    return ok;
}

std::vector<TimedEvent> PrometheusSource::pastEvents(int64_t fromMs, int64_t toMs)
{
    std::vector<TimedEvent> out;
    if (toMs <= fromMs) {
        return out;
    }
    const auto &shape = m_topology.shape();
    const int64_t maxPoints = std::max<int64_t>(2, m_options.maxRangePoints);
    const int64_t step
        = std::max<int64_t>({ 1, m_options.eventStep.count(), (toMs - fromMs + maxPoints - 2) / (maxPoints - 1) });
    // The grid ends now, so that the first poll continues where it stops.
    const int64_t start = toMs - (toMs - fromMs) / step * step;
    // Per GPU, whatever other labels its series have: a job's pod labels, and recent dcgm-exporters' err_code and
    // err_msg on the XID gauge, start a new series when they change, which a comparison of series with their own
    // past would miss. Two series of one GPU at once (two exporters) count as the higher one.
    const auto &xid = metricCatalog()[static_cast<size_t>(MetricId::XidErrors)].dcgmField;
    const auto &dbe = metricCatalog()[static_cast<size_t>(MetricId::EccDbe)].dcgmField;
    const auto &reasons = metricCatalog()[static_cast<size_t>(MetricId::ThrottleReasons)].dcgmField;
    auto now = [](const std::string &field) { return fmt::format("max by (Hostname, gpu) ({})", field); };
    auto before = [step](const std::string &field) {
        return fmt::format("max by (Hostname, gpu) ({} offset {}ms)", field, step);
    };
    // Each query answers only the changed points: the XID gauge at a new XID, the double-bit counter's increases,
    // the clock event reasons where they changed (after, and before).
    struct Point
    {
        int64_t timeMs;
        uint32_t gpu;
        double value;
    };
    auto points = [&](const std::string &promql, std::vector<Point> *found) {
        PromJson json;
        std::vector<uint32_t> gpuOfColumn;
        std::string error;
        const bool ok = rangeQuery(
            promql, start, toMs, step, m_options.timeout, &json, size_t { 10'000'000 },
            [&](const PromSample &labels) -> int64_t {
                const int64_t g = m_topology.indexOf(labels.hostname, labels.gpu);
                if (g < 0) {
                    return -1;
                }
                gpuOfColumn.push_back(static_cast<uint32_t>(g));
                return static_cast<int64_t>(gpuOfColumn.size() - 1);
            },
            [&](int64_t column, int64_t timeMs, double value) {
                found->push_back({ timeMs, gpuOfColumn[static_cast<size_t>(column)], value });
            },
            &error);
        if (!ok) {
            log(fmt::format("prometheus: events before the start are not known: {}", error));
        }
        return ok;
    };
    std::vector<FleetEvent> events;
    auto take = [&](int64_t timeMs) {
        for (auto &e : events) {
            out.push_back({ 0, timeMs, std::move(e) });
        }
        events.clear();
    };
    std::vector<Point> found;
    if (points(fmt::format("({} != {}) > 0", now(xid), before(xid)), &found)) {
        for (const auto &p : found) {
            PrometheusEvents::xidChanged(shape, p.gpu, std::nan(""), p.value, 0, &events);
            take(p.timeMs);
        }
    }
    found.clear();
    if (points(fmt::format("({} - {}) > 0", now(dbe), before(dbe)), &found)) {
        for (const auto &p : found) {
            PrometheusEvents::dbeIncreased(shape, p.gpu, p.value, 0, &events);
            take(p.timeMs);
        }
    }
    found.clear();
    std::vector<Point> earlier;
    if (points(fmt::format("{} != {}", now(reasons), before(reasons)), &found)
        && points(fmt::format("{} != {}", before(reasons), now(reasons)), &earlier)) {
        std::map<std::pair<int64_t, uint32_t>, double> wasAt; // (time, GPU) -> the reasons a step before
        for (const auto &p : earlier) {
            wasAt[{ p.timeMs, p.gpu }] = p.value;
        }
        for (const auto &p : found) {
            const auto it = wasAt.find({ p.timeMs, p.gpu });
            if (it != wasAt.end()) {
                PrometheusEvents::reasonsChanged(shape, p.gpu, it->second, p.value, 0, &events);
                take(p.timeMs);
            }
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const TimedEvent &a, const TimedEvent &b) {
        return a.timeMs != b.timeMs ? a.timeMs < b.timeMs : a.event.gpu < b.event.gpu;
    });
    if (!out.empty()) {
        log(fmt::format(
            "prometheus: {} events in the {} minutes before the start", out.size(), (toMs - fromMs) / 60000));
    }
    return out;
}

void PrometheusSource::keepLargeAnswersInTheHeap()
{
    // Blocks up to 1 GiB (the largest answer accepted) come from the heap, and freed memory at its top is given back
    // only past 2 GiB: the peak of one poll stays mapped between polls.
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 2147483647);
}

} // namespace fleetscope::backend
