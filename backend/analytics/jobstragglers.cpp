// SPDX-License-Identifier: Apache-2.0
#include "analytics/jobstragglers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetscope::backend {

namespace {

constexpr MetricId metricOf[] = { MetricId::SmClock, MetricId::Power, MetricId::GpuUtil, MetricId::GpuTemp };
// Below 0.8 of the threshold a straggler's clock starts again: a score hovering at 1 does not restart it.
constexpr float releaseScore = 0.8F;

float valueAt(const std::vector<float> &plane, uint32_t gpu)
{
    return gpu < plane.size() ? plane[gpu] : std::numeric_limits<float>::quiet_NaN();
}

// The median of the finite positive values of the job's GPUs in a plane, NaN when none: of every GPU up to
// medianSample of them, else of a stride through them (the peers' reference needs no more than a few hundred to be
// within a fraction of a percent, and a job of 8,192 GPUs would cost 32 times as much).
constexpr size_t medianSample = 256;

float medianOf(const std::vector<float> &plane, const std::vector<uint32_t> &gpus, std::vector<float> *scratch)
{
    scratch->clear();
    const size_t stride = std::max<size_t>(1, gpus.size() / medianSample);
    for (size_t i = 0; i < gpus.size(); i += stride) {
        const float v = valueAt(plane, gpus[i]);
        if (std::isfinite(v) && v > 0) {
            scratch->push_back(v);
        }
    }
    if (scratch->empty()) {
        return std::numeric_limits<float>::quiet_NaN();
    }
    const auto mid = scratch->begin() + static_cast<std::ptrdiff_t>(scratch->size() / 2);
    std::nth_element(scratch->begin(), mid, scratch->end());
    return *mid;
}

// "1,980": thousands grouped, as the reason says them.
std::string grouped(double value)
{
    const auto whole = static_cast<long long>(std::llround(value));
    std::string digits = std::to_string(std::llabs(whole));
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) {
        digits.insert(static_cast<size_t>(i), ",");
    }
    return whole < 0 ? "-" + digits : digits;
}

std::string duration(int64_t ms)
{
    const double minutes = static_cast<double>(ms) / 60000.0;
    if (minutes < 120) {
        return fmt::format("{:.0f} min", std::max(1.0, minutes));
    }
    return fmt::format("{:.1f} h", minutes / 60);
}

} // namespace

namespace {
// A deficit's score: in units of its threshold.
constexpr float weights[] = { 1.0F / JobStragglers::clockThreshold, 1.0F / JobStragglers::powerThreshold,
    1.0F / JobStragglers::utilThreshold, 10.0F / JobStragglers::tempThresholdC };
} // namespace

// Heat counts once the GPU is also at least half a threshold behind on pace: a GPU that runs hot but keeps its clock
// holds nobody back (in a chassis the GPUs downstream breathe air the others warmed, so some run 10 °C over the
// median for good); one that is hot and slowing is throttling, and its heat is the reason to give.
constexpr float paceBeforeHeat = 0.5F;

float JobStragglers::Gpu::score() const
{
    const float pace = std::max(
        std::max(deficit[Clock] * weights[Clock], deficit[Power] * weights[Power]), deficit[Util] * weights[Util]);
    return pace >= paceBeforeHeat ? std::max(pace, deficit[Temp] * weights[Temp]) : pace;
}

int JobStragglers::Gpu::strongest() const
{
    float scores[Kinds] = { deficit[Clock] * weights[Clock], deficit[Power] * weights[Power],
        deficit[Util] * weights[Util], deficit[Temp] * weights[Temp] };
    if (std::max(std::max(scores[Clock], scores[Power]), scores[Util]) < paceBeforeHeat) {
        scores[Temp] = 0;
    }
    return static_cast<int>(std::max_element(scores, scores + Kinds) - scores);
}

void JobStragglers::resize(size_t gpus)
{
    m_gpus.assign(gpus, Gpu {});
    std::fill(std::begin(m_medianSeen), std::end(m_medianSeen), false);
    m_lastMs = 0;
    m_paceLost = 0;
    m_foundLate = 0;
    m_slowest = -1;
    m_count = 0;
}

void JobStragglers::remap(const std::vector<uint32_t> &from, const std::vector<uint32_t> &to)
{
    // By GPU id, whatever the lists' order (they come from the wire): sorted pairs of the old, looked up.
    std::vector<std::pair<uint32_t, size_t>> old;
    old.reserve(std::min(from.size(), m_gpus.size()));
    for (size_t i = 0; i < from.size() && i < m_gpus.size(); ++i) {
        old.emplace_back(from[i], i);
    }
    std::sort(old.begin(), old.end());
    std::vector<Gpu> gpus(to.size());
    m_paceLost = 0;
    m_slowest = -1;
    m_count = 0;
    for (size_t j = 0; j < to.size(); ++j) {
        const auto it = std::lower_bound(old.begin(), old.end(), std::make_pair(to[j], size_t(0)));
        if (it == old.end() || it->first != to[j]) {
            continue;
        }
        gpus[j] = m_gpus[it->second];
        if (gpus[j].persistent) {
            ++m_count;
            if (gpus[j].pace > m_paceLost) {
                m_paceLost = gpus[j].pace;
                m_slowest = static_cast<int>(j);
            }
        }
    }
    m_paceLost = std::min(m_paceLost, 1.0);
    m_foundLate = 0;
    m_gpus = std::move(gpus);
}

void JobStragglers::observe(
    const Frame &frame, const std::vector<uint32_t> &gpus, int64_t timeMs, std::vector<float> *scratch)
{
    if (gpus.size() != m_gpus.size()) {
        resize(gpus.size());
    }
    // Smoothed on the frames' own times, whatever their interval: a frame weighs its share of the window.
    const double dt = m_lastMs > 0 ? std::max(0.0, static_cast<double>(timeMs - m_lastMs) / 1000.0) : 0.0;
    m_lastMs = timeMs;
    const auto alpha = static_cast<float>(1.0 - std::exp(-dt / windowSeconds));
    const auto paceAlpha = static_cast<float>(1.0 - std::exp(-dt / paceSeconds));
    // What a slow GPU costs before it is found: the job's GPUs x the time x its pace lost; a gap between computing
    // frames (a checkpoint) counts for at most a minute.
    const double jobGpuHours = static_cast<double>(gpus.size()) * std::min(dt, 60.0) / 3600.0;
    float medians[Kinds];
    float inverse[Kinds]; // 1 / median: multiplied, not divided, per GPU
    const std::vector<float> *planes[Kinds];
    for (int k = 0; k < Kinds; ++k) {
        planes[k] = &frame.plane(metricOf[k]);
        medians[k] = medianOf(*planes[k], gpus, scratch);
        inverse[k] = 1.0F / medians[k];
        if (std::isfinite(medians[k])) {
            m_median[k] = m_medianSeen[k] ? m_median[k] + alpha * (medians[k] - m_median[k]) : medians[k];
            m_medianSeen[k] = true;
        }
    }
    m_paceLost = 0;
    m_slowest = -1;
    m_count = 0;
    int found = -1;
    for (size_t i = 0; i < gpus.size(); ++i) {
        Gpu &gpu = m_gpus[i];
        for (int k = 0; k < Kinds; ++k) {
            const float v = valueAt(*planes[k], gpus[i]);
            if (!std::isfinite(v) || !std::isfinite(medians[k])) {
                continue;
            }
            const float deficit
                = k == Temp ? std::max(0.0F, (v - medians[k]) * 0.1F) : std::max(0.0F, 1.0F - v * inverse[k]);
            if (!gpu.seen) {
                gpu.deficit[k] = deficit;
                gpu.value[k] = v;
                if (k == Clock) {
                    gpu.pace = deficit;
                }
            } else {
                gpu.deficit[k] += alpha * (deficit - gpu.deficit[k]);
                gpu.value[k] += alpha * (v - gpu.value[k]);
                if (k == Clock) {
                    gpu.pace += paceAlpha * (deficit - gpu.pace);
                }
            }
        }
        gpu.seen = true;
        const float score = gpu.score();
        if (score >= 1) {
            if (gpu.aboveSinceMs == 0) {
                gpu.aboveSinceMs = timeMs;
            }
        } else if (score < releaseScore) {
            gpu.aboveSinceMs = 0;
            gpu.persistent = false;
        }
        if (!gpu.persistent) {
            // Slow now (at the pace's own threshold), not yet found: what it costs is held until it is.
            gpu.slowGpuHours = gpu.pace >= clockThreshold ? gpu.slowGpuHours + jobGpuHours * gpu.pace : 0.0;
            if (gpu.aboveSinceMs != 0 && timeMs - gpu.aboveSinceMs >= persistMs) {
                gpu.persistent = true;
                found = static_cast<int>(i);
            }
        }
        if (gpu.persistent) {
            ++m_count;
            if (gpu.pace > m_paceLost) {
                m_paceLost = gpu.pace;
                m_slowest = static_cast<int>(i);
            }
        }
    }
    m_paceLost = std::min(m_paceLost, 1.0);
    // Found this frame and setting the pace: the time it was slow before it was found was lost to it too.
    if (found >= 0 && found == m_slowest) {
        Gpu &gpu = m_gpus[static_cast<size_t>(found)];
        m_foundLate += gpu.slowGpuHours;
        gpu.gpuHoursLost += gpu.slowGpuHours;
    }
    if (found >= 0) {
        m_gpus[static_cast<size_t>(found)].slowGpuHours = 0;
    }
}

void JobStragglers::charge(double gpuHours)
{
    if (m_slowest >= 0) {
        m_gpus[static_cast<size_t>(m_slowest)].gpuHoursLost += gpuHours;
    }
}

void JobStragglers::ranked(int64_t nowMs, const std::vector<uint32_t> &gpus, std::vector<Straggler> *out) const
{
    out->clear();
    std::vector<size_t> persistent;
    for (size_t i = 0; i < m_gpus.size() && i < gpus.size(); ++i) {
        const Gpu &gpu = m_gpus[i];
        if (gpu.persistent) {
            persistent.push_back(i);
        }
    }
    // Hold-back: synchronous training runs at the slowest rank's pace, so the slowest costs the job its whole clock
    // deficit; each of the others only what it would cost once those slower were fixed, beyond the next slowest.
    std::sort(
        persistent.begin(), persistent.end(), [this](size_t a, size_t b) { return m_gpus[a].pace > m_gpus[b].pace; });
    for (size_t r = 0; r < persistent.size(); ++r) {
        const Gpu &gpu = m_gpus[persistent[r]];
        const float mine = gpu.pace;
        const float next = r + 1 < persistent.size() ? m_gpus[persistent[r + 1]].pace : 0.0F;
        Straggler s;
        s.gpu = gpus[persistent[r]];
        s.score = gpu.score();
        const int k = gpu.strongest();
        s.metric = metricOf[k];
        s.value = gpu.value[k];
        s.jobMedian = m_median[k];
        s.holdBack = std::clamp(r == 0 ? mine : mine - next, 0.0F, 1.0F);
        s.sinceMs = gpu.aboveSinceMs;
        s.gpuHoursLost = gpu.gpuHoursLost;
        static constexpr const char *names[Kinds] = { "SM clock", "power", "utilisation", "temperature" };
        static constexpr const char *units[Kinds] = { " MHz", " W", "%", " °C" };
        s.reason = fmt::format("{} {}{} against the job's {}{} for {}", names[k], grouped(s.value), units[k],
            grouped(s.jobMedian), units[k], duration(nowMs - gpu.aboveSinceMs));
        out->push_back(std::move(s));
    }
    std::stable_sort(out->begin(), out->end(), [](const Straggler &a, const Straggler &b) {
        return a.holdBack != b.holdBack ? a.holdBack > b.holdBack : a.score > b.score;
    });
    if (out->size() > JobReport::maxStragglers) {
        out->resize(JobReport::maxStragglers);
    }
}

} // namespace fleetscope::backend
