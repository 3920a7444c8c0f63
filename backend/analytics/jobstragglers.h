// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/frame.h"
#include "core/jobaccount.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fleetscope::backend {

// A job's GPUs against their peers, over its compute frames (docs/JOBS.md "Stragglers"): per GPU its deficit against
// the job's median of each frame (SM clock, power and utilisation below it, temperature above it), smoothed over about
// 5 minutes of frame time; a GPU scoring at least 1 for 2 minutes is a straggler. The slowest straggler's clock
// deficit is the pace the job loses. Memory: a fixed record per GPU, sized once; nothing allocated per frame.
class JobStragglers
{
public:
    static constexpr double windowSeconds = 300; // the smoothing's time constant
    // The pace now: the clock deficit smoothed over about 30 s (a frame's alone is noisy, the 5 minutes' lag).
    static constexpr double paceSeconds = 30;
    static constexpr int64_t persistMs = 120 * 1000;
    // Deficits that score 1 (why these: docs/JOBS.md).
    static constexpr float clockThreshold = 0.05F;
    static constexpr float powerThreshold = 0.10F;
    static constexpr float utilThreshold = 0.10F;
    static constexpr float tempThresholdC = 10.0F;

    void resize(size_t gpus);
    // The job's GPUs changed from `from` to `to`: each GPU kept keeps its record (its deficits, its straggling, its
    // GPU-hours lost), a new one starts afresh, a gone one is let go.
    void remap(const std::vector<uint32_t> &from, const std::vector<uint32_t> &to);
    // Frames closer than this to the last one observed are not: at a frame a second, a million GPUs' deficits cost
    // a fifth, and 5 s is fine against 5 minutes' smoothing and 2 minutes' persistence.
    static constexpr int64_t observeEveryMs = 5000;
    // Whether a compute frame at timeMs is one to observe.
    bool due(int64_t timeMs) const { return m_lastMs == 0 || timeMs - m_lastMs >= observeEveryMs; }
    // One compute frame at timeMs over the job's GPUs (dense indices); scratch is reused for the medians.
    void observe(const Frame &frame, const std::vector<uint32_t> &gpus, int64_t timeMs, std::vector<float> *scratch);
    // The share of the job's pace lost now (the slowest straggler's clock deficit), 0 when none.
    double paceLost() const { return m_paceLost; }
    // GPU-hours the slowest straggler cost before it was found persistent (from when it was slow, at its pace then),
    // once, when it is found; 0 otherwise. Already added to its gpu_hours_lost.
    double takeFoundLate()
    {
        const double late = m_foundLate;
        m_foundLate = 0;
        return late;
    }
    // The straggler that sets the pace (an index into the job's GPUs), -1 when none.
    int slowest() const { return m_slowest; }
    // Charges GPU-hours lost to the slowest.
    void charge(double gpuHours);
    // Stragglers now, ranked by hold-back then score, at most JobReport::maxStragglers.
    void ranked(int64_t nowMs, const std::vector<uint32_t> &gpus, std::vector<Straggler> *out) const;
    uint32_t count() const { return m_count; }

private:
    enum Kind { Clock, Power, Util, Temp, Kinds };
    // A GPU's record, one cache line: smoothed deficits (a share below the median, or tens of °C above it) and
    // values, for people.
    struct Gpu
    {
        float deficit[Kinds] = {};
        float value[Kinds] = {};
        float pace = 0; // the clock deficit over paceSeconds
        bool seen = false;
        bool persistent = false;
        int64_t aboveSinceMs = 0; // score at least 1 since; 0 when not
        double slowGpuHours = 0; // while slow and not yet persistent: what it would cost the job as its slowest
        double gpuHoursLost = 0;
        float score() const;
        int strongest() const;
    };

    std::vector<Gpu> m_gpus;
    float m_median[Kinds] = {}; // the job's, smoothed as the GPUs' values are
    bool m_medianSeen[Kinds] = {};
    int64_t m_lastMs = 0;
    double m_paceLost = 0;
    double m_foundLate = 0;
    int m_slowest = -1;
    uint32_t m_count = 0;
};

} // namespace fleetscope::backend
