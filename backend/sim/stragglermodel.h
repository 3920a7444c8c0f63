// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace fleetscope::backend {

// GPUs that run slow for hours and so set the pace of their whole job (docs/FAULTS.md, "Stragglers and restarts"):
// a persistent SM clock drop from a failing fan or cold plate, a power-capped or throttled board, a degraded HBM stack
// that retries. They come at random, at a rate per GPU and day (0 unless asked, so a plain simulation is unchanged),
// each a drop of 8 to 30 % of the clock lasting 1 to 10 hours until a repair; and from the straggler scenario.
//
// Only the faults in force are touched each step: a step costs what it starts and ends, not what the fleet holds.
class StragglerModel
{
public:
    struct Fault
    {
        uint32_t gpu = 0;
        float drop = 0; // share of the clock lost, 0..1
        double onsetSeconds = 0;
        double endSeconds = std::numeric_limits<double>::infinity();
    };

    // The documented rate (docs/FAULTS.md): per GPU and day.
    static constexpr double documentedRatePerGpuDay = 0.001;
    static constexpr float minDrop = 0.08F;
    static constexpr float maxDrop = 0.30F;
    static constexpr double minHours = 1.0;
    static constexpr double maxHours = 10.0;

    StragglerModel(uint32_t gpuCount, uint64_t seed);

    void setRate(double perGpuPerDay) { m_rate = perGpuPerDay; }
    double rate() const { return m_rate; }
    // Starts a fault now (a scenario's).
    void begin(const Fault &fault);
    // One step ending at now: ends the faults due, starts the new ones at random.
    void step(uint64_t stepIndex, double now, double dt);

    // The share of its clock a GPU has lost now (0 when none; the largest where two overlap).
    float drop(uint32_t gpu) const { return m_drop.empty() ? 0.0F : m_drop[gpu]; }
    // Every fault so far, in onset order.
    const std::vector<Fault> &faults() const { return m_faults; }
    // Indices into faults() of those in force.
    const std::vector<size_t> &active() const { return m_active; }

private:
    void refresh(uint32_t gpu);

    uint32_t m_gpus;
    uint64_t m_seed;
    double m_rate = 0;
    std::vector<Fault> m_faults;
    std::vector<size_t> m_active;
    std::vector<float> m_drop; // per GPU, allocated at the first fault
};

} // namespace fleetscope::backend
