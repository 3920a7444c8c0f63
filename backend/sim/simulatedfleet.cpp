// SPDX-License-Identifier: Apache-2.0
#include "sim/simulatedfleet.h"

#include "analytics/fleetanalytics.h"
#include "core/clock.h"
#include "core/determinism.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace fleetscope::backend {

SimulatedFleet::SimulatedFleet(const SimulationOptions &options)
    : m_options(options)
    , m_simulator(options.gpuCount, options.seed,
          std::chrono::duration<double>(options.interval).count() * options.speed, options.scenario, options.hardware)
{
    m_simulator.setDegradationRate(options.degradationsPerGpuDay);
    m_simulator.setStragglerRate(options.stragglersPerGpuDay);
}

uint64_t SimulatedFleet::generationOf(const SimulationOptions &options)
{
    return (static_cast<uint64_t>(options.hardware) << 56U) | (static_cast<uint64_t>(options.gpuCount) << 32U)
        | (options.seed & 0xffffffffU);
}

FleetShape SimulatedFleet::shapeOf(const SimulationOptions &options)
{
    return Simulator::shapeFor(options.gpuCount, options.seed, options.hardware);
}

FramePoller::Past SimulatedFleet::pastFrames(int64_t nowMs, std::chrono::milliseconds every, size_t maxFrames)
{
    // Coarse steps of `every` (wall-clock) each, as many as the history asks and the caller holds; the last step's
    // state is the first frame, with its events.
    Past past;
    const auto stepMs = std::max<int64_t>(1, every.count());
    const auto wanted = static_cast<size_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(m_options.history).count() / stepMs);
    const size_t steps = std::min(wanted, maxFrames);
    const double simSeconds = static_cast<double>(stepMs) / 1000.0 * m_options.speed;
    for (size_t i = 0; i < steps; ++i) {
        m_simulator.step(simSeconds);
        if (i + 1 == steps) {
            break;
        }
        auto frame = snapshotAt(nowMs - static_cast<int64_t>(steps - i) * stepMs);
        for (auto &e : m_simulator.takeEvents()) {
            past.events.push_back({ 0, frame->sampleTimeMs, std::move(e) });
        }
        past.frames.push_back(std::move(frame));
    }
    return past;
}

std::shared_ptr<Frame> SimulatedFleet::firstFrame()
{
    m_firstStepAt = std::chrono::steady_clock::now() + m_options.interval;
    return snapshotAt(nowUnixMs());
}

std::shared_ptr<Frame> SimulatedFleet::poll()
{
    m_simulator.step();
    // The sample's own time: when this state was taken, not when a subscriber gets it.
    return snapshotAt(nowUnixMs());
}

std::chrono::steady_clock::time_point SimulatedFleet::nextPollAt(std::chrono::steady_clock::time_point scheduled) const
{
    return std::max(scheduled, m_firstStepAt);
}

std::shared_ptr<Frame> SimulatedFleet::snapshotAt(int64_t sampleTimeMs)
{
    auto frame = m_simulator.snapshot();
    frame->sampleTimeMs = sampleTimeMs;
    m_jobs.clear();
    m_jobs.reserve(m_simulator.jobs().size() + m_simulator.endedJobs().size());
    for (const auto &j : m_simulator.jobs()) {
        m_jobs.push_back(describeJob(j, sampleTimeMs));
    }
    for (auto it = m_simulator.endedJobs().rbegin(); it != m_simulator.endedJobs().rend(); ++it) {
        m_jobs.push_back(describeJob(*it, sampleTimeMs));
    }
    return frame;
}

JobInfo SimulatedFleet::describeJob(const Simulator::Job &job, int64_t nowMs) const
{
    static const char *const kinds[] = { "train-llm", "finetune", "eval-suite", "train-vision", "rl-rollout", "embed" };
    static const char *const teams[] = { "ml-research", "ml-platform", "vision", "speech", "ranking", "search" };
    const uint64_t h = determinism::hash(m_options.seed, 0x4a4f42, job.id);
    const auto &shape = m_simulator.shape();
    const auto &lastNode = shape.nodes[job.firstNode + job.nodeCount - 1];
    JobInfo info;
    info.id = job.id;
    info.name = fmt::format("{}-{}", kinds[h % 6], job.id);
    info.owner = teams[(h >> 8U) % 6];
    info.firstGpu = shape.nodes[job.firstNode].firstGpu;
    info.gpuCount = lastNode.firstGpu + lastNode.gpuCount - info.firstGpu;
    // Simulated seconds before now, converted to wall-clock milliseconds at the simulation's speed.
    const double t = m_simulator.nowSeconds();
    auto wall = [&](double simSeconds) {
        return nowMs - static_cast<int64_t>(std::llround((t - simSeconds) / m_options.speed * 1000.0));
    };
    info.startMs = wall(job.startSeconds);
    // The last checkpoint completed (a restart's cadence restarts from its end; one under way is not yet one).
    if (!std::isnan(job.lastCheckpointSeconds)) {
        info.lastCheckpointMs = wall(job.lastCheckpointSeconds);
    }
    info.endMs = job.endSeconds <= t ? wall(job.endSeconds) : 0;
    return info;
}

std::unique_ptr<FrameSource> simulatedSource(const SimulationOptions &options)
{
    return judgedSource(std::make_unique<SimulatedFleet>(options), options);
}

} // namespace fleetscope::backend
