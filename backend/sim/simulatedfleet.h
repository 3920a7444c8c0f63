// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framepoller.h"
#include "core/framesource.h"
#include "sim/simulator.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace fleetscope::backend {

// A simulated backend: the fleet to simulate, and the frame source's interval (one step each, of interval x speed
// simulated time) and budgets.
struct SimulationOptions : FrameSource::Options
{
    uint32_t gpuCount = 10240;
    uint64_t seed = 1;
    double speed = 1.0; // simulated seconds per wall-clock second
    Scenario::Kind scenario = Scenario::Kind::None;
    Hardware hardware = Hardware::HgxH100;
    // A past simulated before the start, in steps of coarseEvery, so that history and replay have something at once.
    std::chrono::seconds history { 0 };
    // Degradations the simulator injects, per GPU and simulated day (cooling, clock and power faults that the anomaly
    // detector should find); 0: none (the default, so that a plain fleet is as it always was).
    double degradationsPerGpuDay = 0;
    // Stragglers the simulator injects, per GPU and simulated day (StragglerModel::documentedRatePerGpuDay is
    // docs/FAULTS.md's); 0: none at random (the default, as for degradations), the straggler scenario's still.
    double stragglersPerGpuDay = 0;
};

// The simulator as a frame producer: one simulation step per poll, stamped with the wall-clock time it was taken.
// Before the start it simulates the asked-for past in coarse steps (pastFrames), so that history and replay have
// something at once. Its jobs are the simulator's, named and owned, with times converted to wall-clock time at the
// simulation's speed.
class SimulatedFleet final : public FramePoller
{
public:
    explicit SimulatedFleet(const SimulationOptions &options);

    // The generation identifies this layout; it is stable for a given fleet so that a restarted backend with the
    // same arguments serves the same generation and consoles keep their layout. Another kind of hardware is another
    // layout (an HGX fleet's generation is as it always was: its kind is 0).
    static uint64_t generationOf(const SimulationOptions &options);
    // The fleet's shape, as the simulator will have it, without building the simulator: the topology of a generation
    // depends on that generation alone (its size, seed and hardware).
    static FleetShape shapeOf(const SimulationOptions &options);

    const FleetShape &shape() const override { return m_simulator.shape(); }
    uint64_t topologyGeneration() const override { return generationOf(m_options); }
    Past pastFrames(int64_t nowMs, std::chrono::milliseconds every, size_t maxFrames) override;
    std::shared_ptr<Frame> firstFrame() override;
    std::shared_ptr<Frame> poll() override;
    std::string upstreamError() const override { return {}; }
    std::vector<FleetEvent> takeEvents() override { return m_simulator.takeEvents(); }
    std::vector<JobInfo> jobs() const override { return m_jobs; }
    // A step one interval after the one before, the first one interval after the start.
    std::chrono::steady_clock::time_point nextPollAt(std::chrono::steady_clock::time_point scheduled) const override;

    const Simulator &simulator() const { return m_simulator; }

private:
    std::shared_ptr<Frame> snapshotAt(int64_t sampleTimeMs);
    JobInfo describeJob(const Simulator::Job &job, int64_t nowMs) const;

    SimulationOptions m_options;
    Simulator m_simulator;
    std::vector<JobInfo> m_jobs; // as of the last frame
    std::chrono::steady_clock::time_point m_firstStepAt {};
};

// A frame source over a simulated fleet.
std::unique_ptr<FrameSource> simulatedSource(const SimulationOptions &options);

} // namespace fleetscope::backend
