// SPDX-License-Identifier: Apache-2.0
// PrometheusSource's history: range queries (QueryRange) and the events before the backend started.
#include "prometheus/prometheussource.h"

#include "dcgm/dcgmgrade.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

constexpr float nan = std::numeric_limits<float>::quiet_NaN();

// Unix milliseconds as the HTTP API's seconds. The magnitude as unsigned: std::abs(INT64_MIN) does not exist.
std::string apiSeconds(int64_t ms)
{
    const uint64_t magnitude = ms < 0 ? uint64_t { 0 } - static_cast<uint64_t>(ms) : static_cast<uint64_t>(ms);
    return fmt::format("{}{}.{:03}", ms < 0 ? "-" : "", magnitude / 1000, magnitude % 1000);
}

// The row of a point's time on the grid from, from + step, ... (rows of them), or -1 when it is not one of those
// times. The time is an upstream's, any int64 (INT64_MIN included): compared before anything is subtracted from it.
int64_t rowOnGrid(int64_t timeMs, int64_t from, int64_t step, int64_t rows)
{
    if (timeMs < from) {
        return -1;
    }
    const auto offset = static_cast<uint64_t>(timeMs) - static_cast<uint64_t>(from); // exact: from <= timeMs
    const auto step64 = static_cast<uint64_t>(step);
    if (offset % step64 != 0 || offset / step64 >= static_cast<uint64_t>(rows)) {
        return -1;
    }
    return static_cast<int64_t>(offset / step64);
}

} // namespace

bool PrometheusSource::rangeQuery(const std::string &promql, int64_t fromMs, int64_t toMs, int64_t stepMs,
    std::chrono::milliseconds timeout, PromJson *json, size_t maxPoints, const PromJson::SeriesFn &seriesFn,
    const PromJson::PointFn &pointFn, std::string *error, size_t maxBytes, size_t *bytes, bool withJobs) const
{
    const std::string target = fmt::format("/api/v1/query_range?query={}&start={}&end={}&step={}",
        PrometheusHttp::encode(promql), apiSeconds(fromMs), apiSeconds(toMs), apiSeconds(stepMs));
    // A copy per call: the client is not thread-safe, its copies are (and share a TLS context).
    PrometheusHttp http = m_http;
    if (maxBytes > 0) {
        http.maxBodyBytes = std::min(http.maxBodyBytes, maxBytes);
    }
    PrometheusHttp::Response response;
    std::string detail;
    if (!http.get(target, timeout, &response, &detail)) {
        if (detail.find("timed out") != std::string::npos) {
            detail += fmt::format(" (a range query has {} ms)", timeout.count());
        }
        *error = fmt::format("range query '{}': {}", promql, detail);
        return false;
    }
    if (bytes) {
        *bytes += response.body.size();
    }
    const size_t maxSeries = size_t { m_topology.shape().gpuCount } * 2 + 64;
    const bool parsed = json->parseMatrix(&response.body, maxSeries, maxPoints, seriesFn, pointFn, &detail, withJobs);
    if (response.status != 200) {
        *error = fmt::format("range query '{}': HTTP {}: {}", promql, response.status,
            parsed ? std::string("(no error text)")
                   : (detail.rfind("upstream error", 0) == 0 ? detail : printableExcerpt(response.body)));
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
    // The service refuses the same before it asks (from before 1970, reversed, step below 1 ms); here again, since
    // these are any caller's int64s: with 0 <= from <= to, to - from is an int64 and no step below overflows.
    if (range->stepMs < 1 || range->fromMs < 0 || range->toMs < range->fromMs) {
        *error = fmt::format("need 0 <= from <= to and a step of at least 1 ms (got {} .. {} step {})", range->fromMs,
            range->toMs, range->stepMs);
        return false;
    }
    const int64_t maxPoints = std::max<int64_t>(2, m_options.maxRangePoints);
    const int64_t span = range->toMs - range->fromMs;
    // Rows less one: (span / step) + 1 overflows for a step of 1 ms over all of int64's positive times.
    if (span / range->stepMs > maxPoints - 1) {
        // Coarser, on the same grid: every k-th of the times asked for (k rounded up, so that at most maxPoints
        // remain). k <= gaps, so k x step <= gaps x step <= to - from: no overflow.
        const int64_t gaps = span / range->stepMs;
        range->stepMs *= gaps / (maxPoints - 1) + (gaps % (maxPoints - 1) != 0 ? 1 : 0);
    }
    const int64_t rows = span / range->stepMs + 1;
    const int64_t from = range->fromMs;
    const int64_t step = range->stepMs;
    std::vector<int64_t> sampleOfRow(static_cast<size_t>(rows), -1);
    PromJson json;
    json.setLabels(m_map.labels());
    const bool ok = rangeQuery(
        sampleTimeQuery(m_map, hostSelector(range->gpus)), from, from + (rows - 1) * step, step,
        m_options.historyTimeout, &json, static_cast<size_t>(rows) + 16,
        [](const PromSample &) { return int64_t { 0 }; },
        [&](int64_t, int64_t timeMs, double seconds) {
            const int64_t row = rowOnGrid(timeMs, from, step, rows);
            int64_t sampleMs = 0;
            if (row < 0 || !PromJson::unixMs(seconds, &sampleMs) || sampleMs <= 0) {
                return; // not a time asked for, or no time at all: that row stays without a sample
            }
            sampleOfRow[static_cast<size_t>(row)] = sampleMs;
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
    // A fabric or facility series names no GPU and carries no node label: those are asked for the whole fleet.
    const auto scope = MetricMap::scopeOf(metric);
    const auto promql = queryFor(m_map, metric, scope == MetricMap::Scope::Gpu ? hostSelector(range.gpus) : "");
    if (!promql) {
        *error = fmt::format("metric '{}' has no series to ask the upstream for (metric map: {})",
            metricCatalog()[static_cast<size_t>(metric)].key, m_map.name());
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
    json.setLabels(m_map.labels());
    const size_t maxPoints = rowOf.size() * (size_t { m_topology.shape().gpuCount } * 4 + 64);
    // The columns each series fills: one (its GPU's) for a GPU's or a NIC's, every asked-for GPU of its rack for a
    // rack's; series k's are columns[columnStart[k] .. columnStart[k + 1]).
    std::vector<uint32_t> seriesColumns;
    std::vector<size_t> columnStart { 0 };
    const bool ok = rangeQuery(
        *promql, from, to, step, m_options.historyTimeout, &json, maxPoints,
        [&](const PromSample &labels) -> int64_t {
            const auto span = m_topology.gpusOf(scope, labels);
            if (span.count == 0) {
                if (scope == MetricMap::Scope::Gpu && unknown++ == 0) {
                    unknownExample = fmt::format("{}/{}", labels.hostname, labels.gpu);
                }
                return -1;
            }
            const size_t before = seriesColumns.size();
            for (uint32_t g = span.first; g < span.first + span.count; ++g) {
                if (const auto it = columnOf.find(g); it != columnOf.end()) {
                    seriesColumns.push_back(static_cast<uint32_t>(it->second));
                }
            }
            if (seriesColumns.size() == before) {
                return -1; // another GPU of a host asked for
            }
            columnStart.push_back(seriesColumns.size());
            return static_cast<int64_t>(columnStart.size() - 2);
        },
        [&](int64_t series, int64_t timeMs, double value) {
            const int64_t onGrid = rowOnGrid(timeMs, from, step, static_cast<int64_t>(rowOf.size()));
            if (onGrid < 0) {
                return;
            }
            const int32_t row = rowOf[static_cast<size_t>(onGrid)];
            if (row < 0) {
                return;
            }
            const float converted = planeValue(metric, value, &sentinels, &nans);
            const auto k = static_cast<size_t>(series);
            for (size_t c = columnStart[k]; c < columnStart[k + 1]; ++c) {
                const size_t at = static_cast<size_t>(row) * columns + seriesColumns[c];
                if (filled[at]++ != 0) {
                    ++duplicates;
                    continue;
                }
                (*values)[at] = converted;
            }
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
    // The frame source's clock less its --past-events; from before 1970 too would let to - from overflow.
    fromMs = std::max<int64_t>(0, fromMs);
    if (toMs <= fromMs) {
        return out;
    }
    const auto &shape = m_topology.shape();
    const int64_t maxPoints = std::max<int64_t>(2, m_options.maxRangePoints);
    const int64_t span = toMs - fromMs;
    const int64_t step = std::max<int64_t>(
        { 1, m_options.eventStep.count(), span / (maxPoints - 1) + (span % (maxPoints - 1) != 0 ? 1 : 0) });
    // The grid ends now, so that the first poll continues where it stops.
    const int64_t start = toMs - span / step * step;
    // Per GPU, whatever other labels its series have: a job's pod labels, and recent dcgm-exporters' err_code and
    // err_msg on the XID gauge, start a new series when they change, which a comparison of series with their own
    // past would miss. Two series of one GPU at once (two exporters) count as the higher one.
    const auto &xid = m_map.seriesName(MetricId::XidErrors);
    const auto &dbe = m_map.seriesName(MetricId::EccDbe);
    const auto &reasons = m_map.seriesName(MetricId::ThrottleReasons);
    const std::string by = byNodeAndGpu();
    auto now = [&by](const std::string &field) { return fmt::format("max by ({}) ({})", by, field); };
    auto before = [&by, step](const std::string &field) {
        return fmt::format("max by ({}) ({} offset {}ms)", by, field, step);
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
        json.setLabels(m_map.labels());
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
    // A site's map may leave any of them out.
    if (!xid.empty() && points(fmt::format("({} != {}) > 0", now(xid), before(xid)), &found)) {
        for (const auto &p : found) {
            PrometheusEvents::xidChanged(shape, p.gpu, std::nan(""), p.value, 0, &events);
            take(p.timeMs);
        }
    }
    found.clear();
    if (!dbe.empty() && points(fmt::format("({} - {}) > 0", now(dbe), before(dbe)), &found)) {
        for (const auto &p : found) {
            PrometheusEvents::dbeIncreased(shape, p.gpu, p.value, 0, &events);
            take(p.timeMs);
        }
    }
    found.clear();
    std::vector<Point> earlier;
    if (!reasons.empty() && points(fmt::format("{} != {}", now(reasons), before(reasons)), &found)
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

FramePoller::Past PrometheusSource::pastFrames(int64_t nowMs, std::chrono::milliseconds every, size_t maxFrames)
{
    const auto &shape = m_topology.shape();
    const uint32_t n = shape.gpuCount;
    const int64_t step = std::max<int64_t>(1, every.count());
    // Rows from - rows x step .. now: the last one's sample is the newest the store holds, which the first poll's
    // frame is stamped with; the frames given are those older than it.
    const auto rows = static_cast<int64_t>(std::min<uint64_t>(
        maxFrames, static_cast<uint64_t>(std::max<int64_t>(0, m_options.warmWindow.count()) / step)));
    if (rows == 0 || n == 0 || nowMs <= 0) {
        return {};
    }
    const int64_t from = std::max<int64_t>(nowMs % step, nowMs - rows * step);
    const int64_t gridRows = (nowMs - from) / step + 1;
    const auto started = std::chrono::steady_clock::now();
    const auto deadline = started + m_options.warmTimeout;
    size_t bytes = 0;
    auto cold = [&](const std::string &why) {
        log(fmt::format("prometheus: the anomaly detector does not learn from the store at the start ({}); it learns "
                        "from the live frames",
            why));
        return Past {};
    };
    // Each query within what is left of the warm-up's time and bytes.
    auto ask = [&](const std::string &promql, size_t maxSeries, bool withJobs, const PromJson::SeriesFn &seriesFn,
                   const PromJson::PointFn &pointFn, std::string *error) {
        const auto left
            = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 || bytes >= m_options.warmMaxBytes) {
            *error = left.count() <= 0
                ? fmt::format("its range queries took more than the {} ms allowed", m_options.warmTimeout.count())
                : fmt::format("its answers reached the {} bytes allowed", m_options.warmMaxBytes);
            return false;
        }
        PromJson json;
        json.setLabels(m_map.labels());
        // Every series at most one point per time asked for: more is not an answer to this grid.
        const size_t maxPoints = maxSeries * static_cast<size_t>(gridRows);
        if (!rangeQuery(promql, from, from + (gridRows - 1) * step, step, left, &json, maxPoints, seriesFn, pointFn,
                error, m_options.warmMaxBytes - bytes, &bytes, withJobs)) {
            if (error->find("larger than") != std::string::npos) {
                *error += fmt::format(" (the warm-up's answers may have {} bytes together)", m_options.warmMaxBytes);
            }
            return false;
        }
        return true;
    };

    // The rows' sample times.
    std::vector<int64_t> sampleOfRow(static_cast<size_t>(gridRows), -1);
    std::string error;
    if (!ask(
            sampleTimeQuery(m_map), 16, false, [](const PromSample &) { return int64_t { 0 }; },
            [&](int64_t, int64_t timeMs, double seconds) {
                const int64_t row = rowOnGrid(timeMs, from, step, gridRows);
                int64_t sampleMs = 0;
                // No newer than the row's own time (a store answers timestamp() at or before it; a skewed exporter's
                // or another replica's later sample would put the past after the first live frame).
                if (row >= 0 && PromJson::unixMs(seconds, &sampleMs) && sampleMs > 0 && sampleMs <= timeMs
                    && sampleMs <= nowMs) {
                    sampleOfRow[static_cast<size_t>(row)] = sampleMs;
                }
            },
            &error)) {
        return cold(error);
    }
    // A frame per row with a sample newer than the last row's (a row may repeat an older sample while the store has
    // none newer) and older than the newest of all.
    const int64_t newest = *std::max_element(sampleOfRow.begin(), sampleOfRow.end());
    std::vector<int32_t> frameOfRow(static_cast<size_t>(gridRows), -1);
    Past past;
    int64_t last = 0;
    for (int64_t r = 0; r < gridRows; ++r) {
        const int64_t sampleMs = sampleOfRow[static_cast<size_t>(r)];
        if (sampleMs > last && sampleMs < newest) {
            frameOfRow[static_cast<size_t>(r)] = static_cast<int32_t>(past.frames.size());
            auto frame = emptyFrame();
            frame->sampleTimeMs = sampleMs;
            frame->sequence = past.frames.size();
            past.frames.push_back(std::move(frame));
            last = sampleMs;
        }
    }
    if (past.frames.empty()) {
        log(fmt::format("prometheus: the store holds no samples of the {} minutes before the start; the anomaly "
                        "detector learns from the live frames",
            (nowMs - from) / 60000));
        return {};
    }

    // Every metric's series onto their GPUs, as a poll maps them (PrometheusTopology::gpusOf, planeValue); the GPU
    // temperature's series (every dcgm-exporter has it, and every GPU's carries the job labels) give the jobs.
    const size_t frames = past.frames.size();
    std::vector<uint8_t> hasData(frames * n, 0);
    std::vector<uint8_t> got(frames * n, 0);
    std::vector<PrometheusTopology::Span> spans;
    std::vector<uint32_t> pointsOf;
    std::vector<PromSample> jobLabels; // distinct job labels
    std::map<std::string, uint32_t> jobLabelIndex;
    std::vector<uint32_t> jobOfSeries; // of the GPU temperature's series: its job labels and GPU
    std::vector<uint32_t> gpuOfSeries;
    std::vector<std::vector<uint32_t>> seenIn(frames); // per frame, the job series present
    size_t sentinels = 0;
    size_t nans = 0;
    size_t duplicates = 0;
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        const auto id = static_cast<MetricId>(m);
        const auto promql = queryFor(m_map, id);
        if (!promql) {
            continue;
        }
        const auto scope = MetricMap::scopeOf(id);
        const bool ofJobs = id == MetricId::GpuTemp;
        const size_t maxSeries = size_t { n } * (scope == MetricMap::Scope::Gpu ? 2 : 4) + 64;
        spans.clear();
        pointsOf.clear();
        std::fill(got.begin(), got.end(), 0);
        bool tooMany = false;
        const bool ok = ask(
            *promql, maxSeries, ofJobs,
            [&](const PromSample &labels) -> int64_t {
                const auto span = m_topology.gpusOf(scope, labels);
                if (span.count == 0) {
                    return -1; // not a GPU of the topology: a poll ignores it too
                }
                spans.push_back(span);
                pointsOf.push_back(0);
                if (ofJobs) {
                    const std::string key = labels.nameSpace + '\0' + labels.pod + '\0' + labels.container + '\0'
                        + labels.hpcJob + '\0' + labels.hpcUser;
                    const auto [it, added] = jobLabelIndex.emplace(key, static_cast<uint32_t>(jobLabels.size()));
                    if (added) {
                        jobLabels.push_back(labels);
                    }
                    jobOfSeries.push_back(it->second);
                    gpuOfSeries.push_back(span.first);
                }
                return static_cast<int64_t>(spans.size() - 1);
            },
            [&](int64_t series, int64_t timeMs, double value) {
                const auto k = static_cast<size_t>(series);
                if (++pointsOf[k] > static_cast<uint32_t>(gridRows)) {
                    tooMany = true;
                    return;
                }
                const int64_t row = rowOnGrid(timeMs, from, step, gridRows);
                if (row < 0 || frameOfRow[static_cast<size_t>(row)] < 0) {
                    return;
                }
                const auto f = static_cast<size_t>(frameOfRow[static_cast<size_t>(row)]);
                const float v = planeValue(id, value, &sentinels, &nans);
                auto &plane = past.frames[f]->planes[m];
                const auto span = spans[k];
                for (uint32_t g = span.first; g < span.first + span.count; ++g) {
                    if (got[f * n + g] != 0) {
                        ++duplicates; // a second series of the GPU at once: the first counts, as on a poll
                        continue;
                    }
                    got[f * n + g] = 1;
                    plane[g] = v;
                    // As on the live path: a GPU has data by its DCGM fields, not by its NIC's or rack's.
                    if (scope == MetricMap::Scope::Gpu && std::isfinite(v)) {
                        hasData[f * n + g] = 1;
                    }
                }
                if (ofJobs) {
                    seenIn[f].push_back(static_cast<uint32_t>(k));
                }
            },
            &error);
        if (!ok) {
            return cold(error);
        }
        if (tooMany) {
            return cold(fmt::format(
                "range query '{}': a series has more points than the {} times asked for", *promql, gridRows));
        }
    }

    // Slurm's jobs as of now (one instant query; the store's Slurm series are not read back over the window), so that
    // the pod labels of the GPUs they claim (soperator's Slurm worker pods) do not become jobs of their own.
    for (size_t k = 0; k < gpuOfSeries.size(); ++k) {
        const auto &pod = jobLabels[jobOfSeries[k]].pod;
        if (!pod.empty()) {
            m_slurm.noteAlias(shape.nodeOfGpu[gpuOfSeries[k]], pod, shape.nodes.size());
        }
    }
    if (frames > 0) {
        pollSlurm(nowMs, past.frames.front()->sampleTimeMs, deadline);
    }
    // The jobs, frame by frame as polls would have seen them: those running in the first frame start there, later
    // starts and ends are events.
    for (size_t f = 0; f < frames; ++f) {
        auto &frame = *past.frames[f];
        const std::vector<uint8_t> has(hasData.begin() + static_cast<std::ptrdiff_t>(f * n),
            hasData.begin() + static_cast<std::ptrdiff_t>((f + 1) * n));
        gradeDcgmFrame(&frame, has);
        m_jobs.begin(n);
        for (const uint32_t k : seenIn[f]) {
            if (!m_slurm.claims(gpuOfSeries[k])) {
                m_jobs.add(gpuOfSeries[k], jobLabels[jobOfSeries[k]]);
            }
        }
        std::vector<FleetEvent> events;
        m_jobs.finish(frame.sampleTimeMs, shape, &events);
        for (auto &e : events) {
            past.events.push_back({ 0, frame.sampleTimeMs, std::move(e) });
        }
    }
    past.jobs = SlurmJobs::merged(m_slurm.jobs(), m_jobs.jobs());
    m_pastFrames = frames;
    log(fmt::format("prometheus: the anomaly detector learns from {} frames of the {} minutes before the start, read "
                    "from the store ({} KiB in {} ms)",
        frames, (nowMs - from) / 60000, bytes / 1024,
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count()));
    return past;
}

} // namespace fleetscope::backend
