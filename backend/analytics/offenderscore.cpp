// SPDX-License-Identifier: Apache-2.0
#include "analytics/offenderscore.h"

#include "common/xid.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

namespace fleetscope::backend {

namespace {

constexpr float nan = std::numeric_limits<float>::quiet_NaN();
// More than any GPU logs in a window: a broken exporter's 1e30 must not make a score infinite.
constexpr float maxWindowCount = 1e6F;

// A usable window count: finite and positive, capped.
float windowCount(float v)
{
    return std::isfinite(v) && v > 0 ? std::min(v, maxWindowCount) : 0.0F;
}

bool usable(const std::vector<float> &plane, uint32_t gpus)
{
    return plane.size() == gpus;
}

// The k largest of value(g) > 0 over [0, gpus), largest first (ties: lower GPU first).
template <typename Value> std::vector<std::pair<float, uint32_t>> largest(uint32_t gpus, size_t k, Value value)
{
    // A min-heap of the best so far: most GPUs are below its smallest and cost one comparison.
    auto better = [](const std::pair<float, uint32_t> &a, const std::pair<float, uint32_t> &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    };
    std::vector<std::pair<float, uint32_t>> heap;
    if (k == 0) {
        return heap;
    }
    heap.reserve(k);
    for (uint32_t g = 0; g < gpus; ++g) {
        const float v = value(g);
        if (!(v > 0)) {
            continue;
        }
        if (heap.size() < k) {
            heap.emplace_back(v, g);
            std::push_heap(heap.begin(), heap.end(), better);
        } else if (v > heap.front().first) {
            std::pop_heap(heap.begin(), heap.end(), better);
            heap.back() = { v, g };
            std::push_heap(heap.begin(), heap.end(), better);
        }
    }
    std::sort_heap(heap.begin(), heap.end(), better);
    return heap;
}

} // namespace

OffenderScore::OffenderScore(uint32_t gpuCount)
    : OffenderScore(gpuCount, Options {})
{ }

OffenderScore::OffenderScore(uint32_t gpuCount, const Options &options)
    : m_gpus(gpuCount)
    , m_options(options)
{
    for (auto &part : m_parts) {
        part.assign(gpuCount, 0.0F);
    }
}

float OffenderScore::score(uint32_t gpu) const
{
    if (gpu >= m_gpus) {
        return nan;
    }
    const Weights &w = m_options.weights;
    return w.xid * m_parts[Xid][gpu] + w.seriousXid * m_parts[SeriousXid][gpu] + w.eccDoubleBit * m_parts[Dbe][gpu]
        + w.remappedRow * m_parts[Remapped][gpu] + w.remappedRowCorrectable * m_parts[RemappedCorrectable][gpu]
        + w.pcieReplay * m_parts[Pcie][gpu] + w.throttleHour * (m_parts[ThrottleSeconds][gpu] / 3600.0F);
}

RepeatOffenders::Entry OffenderScore::entry(uint32_t gpu) const
{
    RepeatOffenders::Entry e;
    if (gpu >= m_gpus) {
        return e;
    }
    e.gpu = gpu;
    e.score = score(gpu);
    e.xids = m_parts[Xid][gpu];
    e.seriousXids = m_parts[SeriousXid][gpu];
    e.eccDoubleBit = m_parts[Dbe][gpu];
    e.remappedRows = m_parts[Remapped][gpu];
    e.remappedRowsCorrectable = m_parts[RemappedCorrectable][gpu];
    e.pcieReplays = m_parts[Pcie][gpu];
    e.throttleHours = m_parts[ThrottleSeconds][gpu] / 3600.0F;
    return e;
}

void OffenderScore::update(Frame *frame, double timeSeconds, const std::vector<FleetEvent> &events)
{
    const auto started = std::chrono::steady_clock::now();
    // The time since the previous frame; none for the first, or when the clock went back.
    double dt = 0;
    if (m_lastTime >= 0 && std::isfinite(timeSeconds)) {
        dt = std::max(0.0, timeSeconds - m_lastTime);
    }
    if (std::isfinite(timeSeconds)) {
        m_lastTime = std::max(m_lastTime, timeSeconds);
    }
    if (dt > 0) {
        const auto decay = static_cast<float>(std::exp2(-dt / m_options.halfLifeSeconds));
        for (auto &part : m_parts) {
            for (float &v : part) {
                v *= decay;
            }
        }
    }
    // A frame stands for the time since the one before, but a window count for at most its window.
    const double counted = std::min(dt, windowSeconds);
    addCounters(*frame, counted);
    addThrottle(*frame, counted);
    addEvents(events);

    auto &plane = frame->planes[static_cast<size_t>(MetricId::Offender)];
    plane.resize(m_gpus);
    const bool haveHealth = frame->health.size() == m_gpus;
    for (uint32_t g = 0; g < m_gpus; ++g) {
        const float s = score(g);
        const bool noData = haveHealth && health::stateOf(frame->health[g]) == health::NoData;
        plane[g] = noData && s == 0.0F ? nan : s;
    }
    frame->offenders = rank(plane);
    m_lastCost = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void OffenderScore::addCounters(const Frame &frame, double dt)
{
    static constexpr std::array<std::pair<Part, ErrorCounter>, 4> counters = { {
        { Dbe, EccDbeCount },
        { Remapped, RemappedUncorrectableCount },
        { RemappedCorrectable, RemappedCorrectableCount },
        { Pcie, PcieReplayCount },
    } };
    static constexpr std::array<std::pair<Part, MetricId>, 4> planes = { {
        { Dbe, MetricId::EccDbe },
        { Remapped, MetricId::RemappedRows },
        { RemappedCorrectable, MetricId::RemappedRowsCorrectable },
        { Pcie, MetricId::PcieReplays },
    } };
    const auto &raw = frame.rawErrors;
    const bool rawUsable = raw && std::all_of(counters.begin(), counters.end(), [&](const auto &c) {
        return raw->totals[c.second].size() == m_gpus;
    });
    if (rawUsable) {
        // The producer's counters: exact increments since the previous frame's (none for the first one seen; a
        // frame sharing the previous one's counters has nothing new).
        if (m_lastRaw && m_lastRaw != raw) {
            for (const auto &[part, counter] : counters) {
                const auto &now = raw->totals[counter];
                const auto &before = m_lastRaw->totals[counter];
                auto &out = m_parts[part];
                for (uint32_t g = 0; g < m_gpus; ++g) {
                    // A counter that falls was reset: what it holds now is new.
                    const uint32_t increase = now[g] >= before[g] ? now[g] - before[g] : now[g];
                    out[g] += static_cast<float>(increase);
                }
            }
        }
        m_lastRaw = raw;
        return;
    }
    m_lastRaw.reset();
    if (dt <= 0) {
        return;
    }
    const auto share = static_cast<float>(dt / windowSeconds);
    for (const auto &[part, metric] : planes) {
        const auto &plane = frame.plane(metric);
        if (!usable(plane, m_gpus)) {
            continue;
        }
        auto &out = m_parts[part];
        for (uint32_t g = 0; g < m_gpus; ++g) {
            out[g] += windowCount(plane[g]) * share;
        }
    }
}

void OffenderScore::addThrottle(const Frame &frame, double dt)
{
    const auto &reasons = frame.plane(MetricId::ThrottleReasons);
    if (dt <= 0 || !usable(reasons, m_gpus)) {
        return;
    }
    const auto seconds = static_cast<float>(dt);
    auto &out = m_parts[ThrottleSeconds];
    for (uint32_t g = 0; g < m_gpus; ++g) {
        // A mask: finite, not negative, and within 64 bits before it is one.
        const float r = reasons[g];
        if (std::isfinite(r) && r >= 0 && r < 1.8e19F && (static_cast<uint64_t>(r) & throttleReasons) != 0) {
            out[g] += seconds;
        }
    }
}

void OffenderScore::addEvents(const std::vector<FleetEvent> &events)
{
    for (const auto &e : events) {
        if (e.kind != FleetEvent::Kind::Xid || e.gpu < 0 || e.gpu >= static_cast<int64_t>(m_gpus)) {
            continue;
        }
        const auto g = static_cast<size_t>(e.gpu);
        m_parts[Xid][g] += 1.0F;
        // XID 48 is the driver's word for a double-bit error, which the ECC counter counts at its own weight.
        if (fleetscope::xidSerious(e.xid) && e.xid != 48) {
            m_parts[SeriousXid][g] += 1.0F;
        }
    }
}

std::shared_ptr<const RepeatOffenders> OffenderScore::rank(const std::vector<float> &scores) const
{
    auto out = std::make_shared<RepeatOffenders>();
    const auto top = largest(m_gpus, m_options.keep, [&](uint32_t g) { return scores[g]; });
    out->top.reserve(top.size());
    for (const auto &[s, g] : top) {
        out->top.push_back(entry(g));
    }
    // The failure Pareto: of all XIDs and double-bit errors, the share of the worst 1% of GPUs.
    auto failures = [&](uint32_t g) { return m_parts[Xid][g] + m_parts[Dbe][g]; };
    double total = 0;
    for (uint32_t g = 0; g < m_gpus; ++g) {
        total += failures(g);
    }
    out->failures = total;
    if (total > 0) {
        const size_t onePercent = std::max<size_t>(1, (static_cast<size_t>(m_gpus) + 99) / 100);
        double worst = 0;
        for (const auto &[f, g] : largest(m_gpus, onePercent, failures)) {
            worst += f;
        }
        out->topPercentFailureShare = std::min(1.0, worst / total);
    }
    return out;
}

} // namespace fleetscope::backend
