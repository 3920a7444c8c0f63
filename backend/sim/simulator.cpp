// SPDX-License-Identifier: Apache-2.0
// The simulator built, its jobs scheduled, and its step: the faults' models stepped, then the physics
// (simulatorphysics.cpp). Its frame: simulatorframe.cpp.
#include "sim/simulator.h"

#include "core/determinism.h"
#include "sim/gpuphysics.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace fleetscope::backend {

using namespace determinism;

namespace {

constexpr double targetAllocation = 0.96; // fraction of nodes the scheduler keeps busy

constexpr GpuPhysics hgxH100 { 62.0F, 700.0F, 1980.0F, 345.0F, 0.052, 0.008, 0.0016F, false };
// B200 in a GB200 superchip: up to 1,200 W on a cold plate.
constexpr GpuPhysics gb200 { 140.0F, 1200.0F, 1965.0F, 345.0F, 0.026, 0.006, 0.0F, true };

const GpuPhysics &physicsOf(Hardware hardware)
{
    return hardware == Hardware::Gb200Nvl72 ? gb200 : hgxH100;
}
} // namespace

FleetShape Simulator::shapeFor(uint32_t gpuCount, uint64_t seed, Hardware hardware)
{
    return FleetShape::forGpuCount(gpuCount, seed, hardware);
}

Simulator::Simulator(uint32_t gpuCount, uint64_t seed, double stepSeconds, Scenario::Kind scenario, Hardware hardware)
    : m_shape(shapeFor(gpuCount, seed, hardware))
    , m_physics(&physicsOf(hardware))
    , m_seed(seed)
    , m_dt(stepSeconds)
    , m_lastDt(stepSeconds)
    , m_scenario(scenario, m_shape, seed)
    , m_faults(m_shape, seed)
    , m_injected(m_shape.gpuCount, seed)
    , m_domainFaults(m_shape, seed, physicsOf(hardware).maxPower * 0.5F)
    , m_rail(m_shape.gpuCount, seed)
    , m_stragglers(m_shape.gpuCount, seed)
{
    for (const auto &planned : m_scenario.plannedFaults()) {
        m_domainFaults.plan(planned.fault, planned.staged);
    }
    const size_t n = gpuCount;
    m_thermalResistance.resize(n);
    m_powerEfficiency.resize(n);
    for (size_t i = 0; i < n; ++i) {
        m_thermalResistance[i] = static_cast<float>(
            m_physics->resistance + m_physics->resistanceSpread * unit(hash(m_seed, SaltGpuResistance, i)));
        m_powerEfficiency[i] = static_cast<float>(0.92 + 0.12 * unit(hash(m_seed, SaltGpuEfficiency, i)));
    }
    m_temp.assign(n, 0.0F);
    m_memTemp.assign(n, 0.0F);
    m_power.assign(n, m_physics->idlePower);
    m_util.assign(n, 0.0F);
    m_memCopyUtil.assign(n, 0.0F);
    m_smClock.assign(n, 0.0F);
    m_fbUsed.assign(n, 0.0F);
    m_health.assign(n, health::Ok);
    m_throttleReasons.assign(n, 0.0F);
    m_thermalThrottled.assign(n, 0);
    m_rackSink.assign(m_shape.racks.size(), 24.0F);
    m_rackPowerKw.assign(m_shape.racks.size(), 0.0F);
    if (m_physics->liquidCooled) {
        m_cduFlow.resize(m_shape.racks.size());
        for (size_t k = 0; k < m_cduFlow.size(); ++k) {
            m_cduFlow[k] = static_cast<float>(1.6 + 0.4 * unit(hash(m_seed, SaltCduFlow, k)));
        }
        m_coolantSupply.assign(m_shape.racks.size(), nan);
        m_coolantReturn.assign(m_shape.racks.size(), nan);
        m_coolantFlow.assign(m_shape.racks.size(), nan);
    }
    m_rowSupply.assign(m_shape.rows.size(), 18.0F);
    m_rowSupplyDrift.assign(m_shape.rows.size(), 0.0F);
    m_jobOfNode.assign(m_shape.nodes.size(), -1);

    // Start from a fleet that has been running a while: jobs already placed, at various ages, and temperatures
    // near equilibrium, so the first frame already looks like a real fleet.
    schedule();
    for (auto &job : m_jobs) {
        const double age = 6 * 3600.0 * unit(hash(m_seed, SaltJobAge, job.id));
        job.startSeconds -= age;
        job.endSeconds -= age * 0.5;
        job.cadenceFromSeconds = job.runningSinceSeconds = job.startSeconds;
        // Its past ran without incident: its last checkpoint is the last one due.
        if (age >= job.checkpointEverySeconds + 45.0) {
            job.lastCheckpointSeconds
                = job.startSeconds + std::floor((age - 45.0) / job.checkpointEverySeconds) * job.checkpointEverySeconds;
        }
    }
    updateCooling(true);
    updateGpus(); // the GPUs' power, which warms the racks' inlets
    updateCooling(true);
    // The temperatures updateGpus converges to (inlet, the air warmed upstream in the chassis, the GPU's own power),
    // so that the first minutes show no warm-up swing: rate-of-change views read it as a heat wave.
    for (const auto &node : m_shape.nodes) {
        float preheat = 0;
        for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
            m_temp[g] = m_rackSink[node.rack] + preheat + m_power[g] * m_thermalResistance[g];
            m_memTemp[g] = m_temp[g] + 6.0F;
            preheat += m_physics->preheatPerWatt * m_power[g];
        }
    }
    m_events.clear(); // what happened before the start (jobs placed, first throttles) is not news
}

bool Simulator::placeJob(uint32_t nodeCount, uint64_t salt)
{
    const auto total = static_cast<uint32_t>(m_jobOfNode.size());
    if (nodeCount == 0 || nodeCount > total) {
        return false;
    }
    // First fit from a random starting node, so jobs spread over the floor instead of piling up at index 0.
    const auto start = static_cast<uint32_t>(unit(hash(m_seed, SaltJobPlace, salt)) * total);
    uint32_t run = 0;
    for (uint32_t k = 0; k < total + nodeCount; ++k) {
        const uint32_t node = (start + k) % total;
        if (node == 0) {
            run = 0; // a job's nodes are a contiguous index range: never wrap around
        }
        if (const int32_t holder = m_jobOfNode[node]; holder >= 0) {
            // Busy through the end of the job holding it: on from there, as the node-by-node walk would (at step 0 a
            // million GPUs' 16,000 placements walked most of 131,072 nodes each, a quarter of the backend's start).
            const Job &job = m_jobs[static_cast<size_t>(holder)];
            k += job.firstNode + job.nodeCount - 1 - node;
            run = 0;
            continue;
        }
        run = m_faults.nodeDown(node) ? 0 : run + 1;
        if (run == nodeCount) {
            const uint32_t first = node + 1 - nodeCount;
            Job job;
            job.id = m_nextJobId++;
            job.firstNode = first;
            job.nodeCount = nodeCount;
            job.startSeconds = job.cadenceFromSeconds = job.runningSinceSeconds = nowSeconds();
            const double hours = 0.25 + 11.75 * std::pow(unit(hash(m_seed, SaltJobDuration, job.id)), 2.0);
            job.endSeconds = job.startSeconds + hours * 3600.0;
            const uint64_t shapeHash = hash(m_seed, SaltJobShape, job.id);
            job.iterationSeconds = 8.0 + 40.0 * unit(shapeHash);
            job.checkpointEverySeconds = 600.0 + 1800.0 * unit(mix(shapeHash));
            job.phase = unit(mix(shapeHash + 1));
            job.memoryMiB = static_cast<float>(40000.0 + 38000.0 * unit(mix(shapeHash + 2)));
            const auto index = static_cast<int32_t>(m_jobs.size());
            std::fill_n(m_jobOfNode.begin() + first, nodeCount, index);
            m_jobs.push_back(job);
            FleetEvent e;
            e.timeSeconds = nowSeconds();
            e.kind = FleetEvent::Kind::JobStart;
            e.jobId = job.id;
            e.node = first;
            e.text = fmt::format("job {} started on {} GPUs from {}", job.id,
                nodeCount * HardwareSpec::of(m_shape.hardware).gpusPerNode, m_shape.nodes[first].hostname);
            m_events.push_back(std::move(e));
            return true;
        }
    }
    return false;
}

void Simulator::schedule()
{
    const double t = nowSeconds();
    // Retire ended jobs, then re-index the node map.
    const auto ended
        = std::stable_partition(m_jobs.begin(), m_jobs.end(), [t](const Job &j) { return j.endSeconds > t; });
    if (ended != m_jobs.end()) {
        for (auto it = ended; it != m_jobs.end(); ++it) {
            FleetEvent e;
            e.timeSeconds = t;
            e.kind = FleetEvent::Kind::JobEnd;
            e.jobId = it->id;
            e.node = it->firstNode;
            e.text = fmt::format("job {} ended", it->id);
            m_events.push_back(std::move(e));
            m_truth.ended(it->id, t);
            m_endedJobs.push_back(*it);
        }
        m_jobs.erase(ended, m_jobs.end());
        while (!m_endedJobs.empty() && m_endedJobs.front().endSeconds < t - 3600.0) {
            m_endedJobs.pop_front();
        }
        std::fill(m_jobOfNode.begin(), m_jobOfNode.end(), -1);
        for (size_t j = 0; j < m_jobs.size(); ++j) {
            std::fill_n(m_jobOfNode.begin() + m_jobs[j].firstNode, m_jobs[j].nodeCount, static_cast<int32_t>(j));
        }
    }
    const auto totalNodes = static_cast<double>(m_jobOfNode.size());
    auto busyNodes
        = static_cast<double>(std::count_if(m_jobOfNode.begin(), m_jobOfNode.end(), [](int32_t j) { return j >= 0; }));
    // Submit jobs until the fleet is as full as the scheduler aims for; sizes are log-uniform from 1 node (8 GPUs) to
    // 512 nodes (4,096 GPUs), capped by the fleet. A job that finds no free contiguous span waits (fragmentation,
    // as in real schedulers) and a smaller one may take its place.
    const double maxLog = std::log2(std::min(512.0, std::max(1.0, totalNodes / 4)));
    const uint64_t attempts = m_step == 0 ? 64 + static_cast<uint64_t>(totalNodes) / 8 : 64;
    for (uint64_t attempt = 0; busyNodes < targetAllocation * totalNodes && attempt < attempts; ++attempt) {
        const uint64_t salt = hash(m_seed, SaltSchedule, m_step, attempt);
        const double draw = unit(hash(m_seed, SaltJobSize, salt));
        const auto nodes = static_cast<uint32_t>(std::exp2(std::floor(draw * (maxLog + 1))));
        if (placeJob(nodes, salt)) {
            busyNodes += nodes;
        }
    }
}

bool Simulator::inCheckpoint(const Job &job, double t) const
{
    // All GPUs of the job wait on storage for about a minute; a fresh job's first 45 s load (a restarted one loaded
    // during its restart).
    const double age = t - job.cadenceFromSeconds;
    return (age >= job.checkpointEverySeconds || !job.fromRestart) && std::fmod(age, job.checkpointEverySeconds) < 45.0;
}

float Simulator::computeUtilisation(const Job &job, double t) const
{
    // Iteration: compute, then an all-reduce where the GPUs wait on the network.
    const double phase = std::fmod((t - job.startSeconds) / job.iterationSeconds + job.phase, 1.0);
    if (phase > 0.9) {
        return 38.0F;
    }
    return 97.0F;
}

void Simulator::stageStraggler(double t)
{
    // One GPU of the largest running job (the first placed among equals), chosen by the seed.
    const Job *largest = nullptr;
    for (const auto &job : m_jobs) {
        if (largest == nullptr || job.nodeCount > largest->nodeCount) {
            largest = &job;
        }
    }
    if (largest == nullptr) {
        return;
    }
    const uint32_t first = m_shape.nodes[largest->firstNode].firstGpu;
    const auto &last = m_shape.nodes[largest->firstNode + largest->nodeCount - 1];
    const uint32_t count = last.firstGpu + last.gpuCount - first;
    const auto gpu = static_cast<uint32_t>(first + hash(m_seed, SaltStragglerPick, largest->id) % count);
    m_stragglers.begin({ gpu, Scenario::stragglerDrop, t, std::numeric_limits<double>::infinity() });
    m_stagedStraggler = gpu;
}

void Simulator::step(double seconds)
{
    ++m_step;
    m_time += seconds;
    m_lastDt = seconds;
    const double t = nowSeconds();
    // The degrading GPU logs a soft XID about once a minute at full severity.
    const double extraXids = m_scenario.badGpuSeverity(t) / 60.0;
    m_domainFaults.step(m_step, t, seconds, &m_injected);
    m_faults.step(m_step, t, seconds, m_temp, m_scenario.badGpu(), extraXids,
        [this, t](uint32_t node) { return m_scenario.nodeHeldDown(node, t) || m_domainFaults.nodeDown(node); });
    m_injected.step(m_step, t, seconds);
    m_stragglers.step(m_step, t, seconds);
    for (const auto &port : m_domainFaults.portCounts()) {
        m_rail.count(port.gpu, port.linkDowns, port.symbolErrors, port.receiveErrors, t);
    }
    for (const uint32_t g : m_domainFaults.linkChanges()) {
        m_rail.setLinkUp(g, !m_domainFaults.linkDown(g));
    }
    m_rail.background(m_step, t, seconds, [this](uint32_t g) { return m_faults.gpuOffline(g); });
    for (auto &e : m_faults.takeEvents()) {
        m_events.push_back(std::move(e));
    }
    schedule();
    if (m_scenario.kind() == Scenario::Kind::Straggler && m_stagedStraggler < 0 && t >= Scenario::onsetSeconds) {
        stageStraggler(t);
    }
    updateCooling();
    updateGpus();
    m_rail.accumulateWait(t);
}

} // namespace fleetscope::backend
