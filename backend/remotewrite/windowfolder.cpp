// SPDX-License-Identifier: Apache-2.0
#include "remotewrite/windowfolder.h"

#include "dcgm/dcgmgrade.h"
#include "dcgm/dcgmvalue.h"
#include "dcgm/metricmap.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace fleetscope::backend {

namespace {

constexpr size_t fieldCount = static_cast<size_t>(MetricId::Count);
constexpr size_t slotCount = WindowFolder::slots;
static_assert(slotCount <= 32, "a window's mask has a bit per slot");
constexpr int64_t countWindowMs = 5 * 60 * 1000; // as increase(...[5m]) and changes(...[5m])
constexpr size_t maxJobLabelSets = 1U << 20U;
constexpr float nanF = std::numeric_limits<float>::quiet_NaN();
constexpr double nanD = std::numeric_limits<double>::quiet_NaN();

bool isCount(MetricId id)
{
    return metricCatalog()[static_cast<size_t>(id)].isRate;
}

bool isPushed(MetricId id)
{
    return id != MetricId::HealthState && id != MetricId::Count;
}

// Transmit wait comes as a counter of ticks (scaled to %-seconds by the map) and is kept as its rate: a gauge in the
// frame, a raw total in the window.
bool isRawCounter(MetricId id)
{
    return isCount(id) || id == MetricId::RailTransmitWait;
}

// Which exporter a field comes from (MetricMap::Scope): dcgm-exporter, node-exporter or the facility's. Each scrapes
// at its own time, so a GPU's newest sample in a window is kept per source.
size_t sourceOf(MetricId id)
{
    return static_cast<size_t>(MetricMap::scopeOf(id));
}

// The slot of a metric's part (WindowFolder::slots): the metric's own for part 0, one after the catalogue's for the
// second counter of a summed metric; slotCount for a part no metric has.
size_t slotOf(MetricId id, uint8_t part)
{
    if (part == 0) {
        return static_cast<size_t>(id);
    }
    const auto &summed = MetricMap::summedMetrics;
    const auto it = std::find(summed.begin(), summed.end(), id);
    return part == 1 && it != summed.end() ? fieldCount + static_cast<size_t>(it - summed.begin()) : slotCount;
}

MetricId metricOfSlot(size_t slot)
{
    return slot < fieldCount ? static_cast<MetricId>(slot) : MetricMap::summedMetrics[slot - fieldCount];
}

// The slots of each source, as a window's mask bits.
const std::array<uint32_t, WindowFolder::sources> &sourceMasks()
{
    static const auto masks = [] {
        std::array<uint32_t, WindowFolder::sources> m {};
        for (size_t f = 0; f < slotCount; ++f) {
            m[sourceOf(metricOfSlot(f))] |= 1U << f;
        }
        return m;
    }();
    return masks;
}

} // namespace

// One window's samples: per GPU the newest sample time in it (ms after the window's start, plus one; 0: none yet)
// and which fields it has; the values by field (gauges as floats, counters' raw totals as doubles, allocated for a
// field when its first sample comes).
struct WindowFolder::Window
{
    int64_t index = 0;
    int64_t startMs = 0;
    int64_t newestMs = 0;
    std::array<std::vector<int32_t>, sources> time; // by source; a source's allocated with its first sample
    std::vector<uint32_t> mask; // a bit per field
    std::array<std::vector<float>, fieldCount> gauges;
    std::array<std::vector<double>, slotCount> counts; // by slot
    std::vector<std::pair<uint32_t, uint32_t>> jobs; // (GPU, job label set id)
};

void WindowFolder::Counts::add(const Counts &o)
{
    accepted += o.accepted;
    tooOld += o.tooOld;
    future += o.future;
    outOfOrder += o.outOfOrder;
    duplicate += o.duplicate;
    windowsFull += o.windowsFull;
    beforeStart += o.beforeStart;
    sentinelValues += o.sentinelValues;
    nanValues += o.nanValues;
}

WindowFolder::WindowFolder(const FleetShape &shape, const Options &options)
    : m_shape(shape)
    , m_options(options)
    , m_gpus(shape.gpuCount)
    , m_closedThrough(std::numeric_limits<int64_t>::min())
    , m_pushedSlurm(shape)
{
    m_options.windowMs = std::clamp<int64_t>(m_options.windowMs, 1, maxWindowMs);
    if (m_options.startMs > 0) {
        m_firstWindow = windowOf(m_options.startMs, m_options.windowMs) + 1;
        m_closedThrough = m_firstWindow - 1;
    }
    m_options.delayMs = std::clamp<int64_t>(m_options.delayMs, 0, maxWindowMs);
    if (m_options.graceMs <= 0) {
        m_options.graceMs = 3 * m_options.windowMs;
    }
    m_options.maxOpenWindows = std::max<size_t>(2, m_options.maxOpenWindows);
    for (size_t f = 0; f < slotCount; ++f) {
        const auto id = metricOfSlot(f);
        if (!isPushed(id)) {
            continue;
        }
        if (isRawCounter(id)) {
            m_raw[f].assign(m_gpus, nanD);
        }
        if (!isCount(id) && f < fieldCount) {
            m_values[f].assign(m_gpus, nanF);
        }
    }
    for (auto &seen : m_lastSeenMs) {
        seen.assign(m_gpus, 0);
    }
    m_transmitWaitMs.assign(m_gpus, 0);
}

WindowFolder::~WindowFolder() = default;

int64_t WindowFolder::windowOf(int64_t timeMs, int64_t windowMs)
{
    // Floor, also for times before 1970, without negating the time: -INT64_MIN does not exist, and a sender's
    // timestamp may be any int64 (it wrapped to a window far in the future before, counted as from the future instead
    // of too old). Division truncates towards zero; a negative time with a remainder is one window further down.
    const int64_t quotient = timeMs / windowMs;
    return timeMs % windowMs < 0 ? quotient - 1 : quotient;
}

WindowFolder::Window *WindowFolder::windowFor(int64_t index, int64_t nowMs, Counts *counts)
{
    // No sender stamps a sample before 1970: such a time is too old for any window. Refused before anything is
    // computed from it, so that every window's start, end and age below is a time after 1970 and before the clock's
    // next window (index x window length could not even be represented for the window of INT64_MIN).
    if (index < 0) {
        ++counts->tooOld;
        return nullptr;
    }
    if (index < m_firstWindow) {
        ++counts->beforeStart;
        return nullptr;
    }
    if (index <= m_closedThrough) {
        ++counts->tooOld;
        return nullptr;
    }
    // One window ahead of the clock is clock skew between scraper and backend; more is not a sample of now.
    if (index > windowOf(nowMs, m_options.windowMs) + 1) {
        ++counts->future;
        return nullptr;
    }
    auto it = m_open.find(index);
    if (it != m_open.end()) {
        return it->second.get();
    }
    if (m_open.size() >= m_options.maxOpenWindows) {
        ++counts->windowsFull;
        return nullptr;
    }
    auto window = std::make_unique<Window>();
    window->index = index;
    window->startMs = index * m_options.windowMs;
    window->time[0].assign(m_gpus, 0);
    window->mask.assign(m_gpus, 0);
    return m_open.emplace(index, std::move(window)).first->second.get();
}

std::string MappedJob::jobKey(const PromSample &s)
{
    std::string key;
    for (const std::string *part : { &s.nameSpace, &s.pod, &s.container, &s.hpcJob, &s.hpcUser }) {
        key += *part;
        key += '\x1f';
    }
    return key;
}

uint32_t WindowFolder::internJob(const std::string &key, int64_t window)
{
    if (const auto it = m_jobIds.find(key); it != m_jobIds.end()) {
        int64_t &last = m_jobLastWindow[it->second - 1];
        last = std::max(last, window);
        return it->second;
    }
    uint32_t id = 0;
    if (!m_freeJobIds.empty()) {
        id = m_freeJobIds.back();
        m_freeJobIds.pop_back();
    } else if (m_jobLabels.size() >= maxJobLabelSets) {
        return 0; // a fleet does not run a million jobs at once; a sender that makes up labels gets no more
    } else {
        m_jobLabels.emplace_back();
        m_jobLastWindow.push_back(0);
        id = static_cast<uint32_t>(m_jobLabels.size());
    }
    // The key holds the five labels in order, each ended by the separator.
    PromSample &kept = m_jobLabels[id - 1];
    size_t at = 0;
    for (std::string *part : { &kept.nameSpace, &kept.pod, &kept.container, &kept.hpcJob, &kept.hpcUser }) {
        const size_t end = std::min(key.find('\x1f', at), key.size());
        part->assign(key, at, end - at);
        at = std::min(end + 1, key.size());
    }
    m_jobLastWindow[id - 1] = window;
    m_jobIds.emplace(key, id);
    return id;
}

void WindowFolder::forgetJobs(int64_t closedWindow)
{
    // Held by a GPU (m_gpuJobs) or pushed for a window after closedWindow - jobForgetWindows (every open window's
    // are): kept. The table is swept once a window, a pass over the sets held (a few thousand in a real fleet).
    std::vector<bool> held(m_jobLabels.size() + 1, false);
    for (const auto &gpuJob : m_gpuJobs) {
        held[gpuJob.second] = true;
    }
    for (auto it = m_jobIds.begin(); it != m_jobIds.end();) {
        const uint32_t id = it->second;
        if (!held[id] && m_jobLastWindow[id - 1] <= closedWindow - jobForgetWindows) {
            m_jobLabels[id - 1] = PromSample();
            m_freeJobIds.push_back(id);
            it = m_jobIds.erase(it);
        } else {
            ++it;
        }
    }
}

size_t WindowFolder::jobLabelSets() const
{
    std::lock_guard lock(m_mutex);
    return m_jobIds.size();
}

void WindowFolder::add(
    const std::vector<MappedSample> &samples, const std::vector<MappedJob> &jobs, int64_t nowMs, Counts *counts)
{
    std::lock_guard lock(m_mutex);
    for (const auto &s : samples) {
        const size_t f = slotOf(s.metric, s.part);
        if (s.gpu >= m_gpus || !isPushed(s.metric) || f == slotCount) {
            continue; // the mapping never makes these (a part the metric does not have among them)
        }
        Window *w = windowFor(windowOf(s.timeMs, m_options.windowMs), nowMs, counts);
        if (w == nullptr) {
            continue;
        }
        const auto offset = static_cast<int32_t>(s.timeMs - w->startMs + 1);
        const auto bit = static_cast<uint32_t>(1U << static_cast<unsigned>(f));
        const size_t source = sourceOf(s.metric);
        if (w->time[source].empty()) {
            w->time[source].assign(m_gpus, 0);
        }
        int32_t &time = w->time[source][s.gpu];
        uint32_t &mask = w->mask[s.gpu];
        if (offset < time) {
            ++counts->outOfOrder;
            continue;
        }
        if (offset == time && (mask & bit) != 0) {
            ++counts->duplicate;
            continue;
        }
        if (offset > time) {
            // A newer scrape in the same window: its fields replace the older one's (whose bits are cleared, so
            // that a field of the newer scrape is not taken for a repeat of the older one). The other sources' stay.
            time = offset;
            mask &= ~sourceMasks()[source];
        }
        mask |= bit;
        // Read before a gauge is narrowed to a float, where DCGM's int32 blanks would no longer be told apart.
        size_t sentinels = 0;
        size_t nans = 0;
        const double value = cleanDcgmValue(s.value, &sentinels, &nans);
        counts->sentinelValues += sentinels;
        counts->nanValues += nans;
        if (isRawCounter(s.metric)) {
            auto &plane = w->counts[f];
            if (plane.empty()) {
                plane.assign(m_gpus, nanD);
            }
            plane[s.gpu] = value;
        } else {
            auto &plane = w->gauges[f];
            if (plane.empty()) {
                plane.assign(m_gpus, nanF);
            }
            plane[s.gpu] = static_cast<float>(value);
        }
        w->newestMs = std::max(w->newestMs, s.timeMs);
        ++counts->accepted;
    }
    Counts ignored; // a job's labels come with a sample already counted
    for (const auto &j : jobs) {
        if (j.gpu >= m_gpus) {
            continue;
        }
        Window *w = windowFor(windowOf(j.timeMs, m_options.windowMs), nowMs, &ignored);
        if (w != nullptr) {
            if (const uint32_t id = internJob(j.key, w->index); id != 0) {
                w->jobs.emplace_back(j.gpu, id);
            }
        }
    }
}

size_t WindowFolder::openWindows() const
{
    std::lock_guard lock(m_mutex);
    return m_open.size();
}

int64_t WindowFolder::nextCloseMs(int64_t nowMs) const
{
    std::lock_guard lock(m_mutex);
    const int64_t index = m_open.empty() ? windowOf(nowMs, m_options.windowMs) : m_open.begin()->first;
    return (index + 1) * m_options.windowMs + m_options.delayMs;
}

std::shared_ptr<Frame> WindowFolder::emptyFrame() const
{
    return frameWithoutData(m_gpus);
}

bool WindowFolder::closeNext(int64_t nowMs, Closed *closed)
{
    std::unique_ptr<Window> window;
    {
        std::lock_guard lock(m_mutex);
        if (m_open.empty()) {
            return false;
        }
        const auto first = m_open.begin();
        if ((first->first + 1) * m_options.windowMs + m_options.delayMs > nowMs) {
            return false;
        }
        window = std::move(first->second);
        m_open.erase(first);
        m_closedThrough = window->index;
    }
    *closed = {};
    fold(*window, closed);
    return true;
}

void WindowFolder::fold(Window &w, Closed *closed)
{
    const int64_t endMs = w.startMs + m_options.windowMs;
    // The window's samples into the state.
    for (uint32_t g = 0; g < m_gpus; ++g) {
        std::array<int64_t, sources> seenMs {};
        bool heard = false;
        for (size_t source = 0; source < sources; ++source) {
            if (!w.time[source].empty() && w.time[source][g] != 0) {
                seenMs[source] = w.startMs + w.time[source][g] - 1;
                m_lastSeenMs[source][g] = std::max(m_lastSeenMs[source][g], seenMs[source]);
                heard = true;
            }
        }
        if (!heard) {
            continue;
        }
        closed->gpusReporting += w.time[0][g] != 0 ? 1 : 0; // the GPU's own exporter
        for (size_t f = 0; f < slotCount; ++f) {
            if ((w.mask[g] & (1U << f)) == 0) {
                continue;
            }
            const auto id = metricOfSlot(f);
            if (!isRawCounter(id)) {
                m_values[f][g] = w.gauges[f][g];
                continue;
            }
            const double now = w.counts[f][g];
            if (std::isnan(now)) {
                continue;
            }
            double &before = m_raw[f][g];
            const int64_t at = seenMs[sourceOf(id)];
            if (id == MetricId::RailTransmitWait) {
                // Its rate since the last sample (the map scaled ticks to %-seconds); a fall is a reset, which
                // leaves the last rate until the next sample.
                int64_t &beforeMs = m_transmitWaitMs[g];
                if (!std::isnan(before) && now >= before && at > beforeMs) {
                    m_values[f][g] = static_cast<float>((now - before) * 1000.0 / static_cast<double>(at - beforeMs));
                }
                before = now;
                beforeMs = at;
                continue;
            }
            double increase = 0;
            if (!std::isnan(before)) {
                if (id == MetricId::XidErrors) {
                    increase = now != before ? 1.0 : 0.0; // the last XID: a change is one more
                } else {
                    increase = now >= before ? now - before : now; // a fall is a reset: counted from zero
                }
            }
            before = now;
            if (increase > 0) {
                m_increases[static_cast<size_t>(id)][g].emplace_back(at, increase); // a summed metric's parts add up
            }
        }
    }
    // The jobs of the GPUs heard from are this window's; the others keep theirs until the grace period ends.
    std::sort(w.jobs.begin(), w.jobs.end());
    w.jobs.erase(std::unique(w.jobs.begin(), w.jobs.end()), w.jobs.end());
    std::vector<std::pair<uint32_t, uint32_t>> kept;
    kept.reserve(m_gpuJobs.size());
    for (const auto &gpuJob : m_gpuJobs) {
        if (w.time[0][gpuJob.first] == 0) {
            kept.push_back(gpuJob);
        }
    }
    m_gpuJobs.clear();
    std::merge(kept.begin(), kept.end(), w.jobs.begin(), w.jobs.end(), std::back_inserter(m_gpuJobs));

    // The frame: every GPU heard from within the grace period, with its latest values.
    auto frame = emptyFrame();
    frame->sampleTimeMs = std::max(w.newestMs, w.startMs);
    std::vector<uint8_t> hasData(m_gpus, 0);
    // Per source, the GPUs heard from within the grace period; a GPU's own (dcgm-exporter's) makes it one with data.
    std::array<std::vector<uint8_t>, sources> heardFrom;
    for (size_t source = 0; source < sources; ++source) {
        heardFrom[source].assign(m_gpus, 0);
        for (uint32_t g = 0; g < m_gpus; ++g) {
            const int64_t seen = m_lastSeenMs[source][g];
            heardFrom[source][g] = seen > 0 && endMs - seen <= m_options.graceMs ? 1 : 0;
        }
    }
    const auto &current = heardFrom[0];
    for (size_t f = 0; f < fieldCount; ++f) {
        const auto id = static_cast<MetricId>(f);
        if (!isPushed(id)) {
            continue;
        }
        auto &plane = frame->planes[f];
        const auto &fresh = heardFrom[sourceOf(id)];
        const bool own = sourceOf(id) == 0;
        if (!isCount(id)) {
            for (uint32_t g = 0; g < m_gpus; ++g) {
                if (fresh[g]) {
                    plane[g] = m_values[f][g];
                    hasData[g] |= own && std::isfinite(plane[g]) ? 1 : 0;
                }
            }
            continue;
        }
        const size_t second = slotOf(id, 1);
        for (uint32_t g = 0; g < m_gpus; ++g) {
            if (fresh[g] && (!std::isnan(m_raw[f][g]) || (second < slotCount && !std::isnan(m_raw[second][g])))) {
                plane[g] = 0;
            }
        }
        auto &increases = m_increases[f];
        for (auto it = increases.begin(); it != increases.end();) {
            auto &list = it->second;
            while (!list.empty() && list.front().first <= endMs - countWindowMs) {
                list.pop_front();
            }
            if (list.empty()) {
                it = increases.erase(it);
                continue;
            }
            if (fresh[it->first]) {
                double sum = 0;
                for (const auto &[t, v] : list) {
                    sum += v;
                }
                plane[it->first] = static_cast<float>(sum);
            }
            ++it;
        }
    }
    closed->gpusWithoutData = gradeDcgmFrame(frame.get(), hasData);

    // Jobs and events as the Prometheus source finds them, from the raw values of the GPUs heard from: Slurm's
    // first, whose GPUs the pod labels' jobs do not get; the pods' names for the next window's Slurm join.
    m_pushedSlurm.join(frame->sampleTimeMs, &m_slurm, &closed->events);
    m_jobs.begin(m_gpus);
    {
        // The job table is the HTTP threads' too (add() interns into it, growing it or reusing a forgotten id).
        std::lock_guard lock(m_mutex);
        for (const auto &[gpu, id] : m_gpuJobs) {
            if (current[gpu]) {
                const auto &labels = m_jobLabels[id - 1];
                m_slurm.noteAlias(m_shape.nodeOfGpu[gpu], labels.pod, m_shape.nodes.size());
                if (!m_slurm.claims(gpu)) {
                    m_jobs.add(gpu, labels);
                }
            }
        }
        forgetJobs(w.index);
    }
    m_jobs.finish(frame->sampleTimeMs, m_shape, &closed->events);
    std::vector<double> xid(m_gpus, nanD);
    std::vector<double> dbe(m_gpus, nanD);
    std::vector<double> reasons(m_gpus, nanD);
    const auto &reasonPlane = frame->plane(MetricId::ThrottleReasons);
    for (uint32_t g = 0; g < m_gpus; ++g) {
        if (current[g]) {
            xid[g] = m_raw[static_cast<size_t>(MetricId::XidErrors)][g];
            dbe[g] = m_raw[static_cast<size_t>(MetricId::EccDbe)][g];
            reasons[g] = reasonPlane[g];
        }
    }
    m_slurm.mergedJobOfGpu(m_jobs.jobOfGpu(), &m_jobOfGpu);
    m_events.update(xid, dbe, reasons, m_shape, m_jobOfGpu, &closed->events);
    closed->frame = std::move(frame);
}

} // namespace fleetscope::backend
