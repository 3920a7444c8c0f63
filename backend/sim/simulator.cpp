// SPDX-License-Identifier: Apache-2.0
#include "sim/simulator.h"

#include "core/determinism.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace fleetscope::backend {

using namespace determinism;

namespace {

constexpr double pi = 3.14159265358979323846;

enum Salt : uint64_t {
    SaltGpuResistance = 1,
    SaltGpuEfficiency,
    SaltJobSize,
    SaltJobPlace,
    SaltJobDuration,
    SaltJobShape,
    SaltSchedule,
    SaltUtilJitter,
    SaltRowDrift,
    SaltJobAge,
    SaltCduFlow,
};

constexpr float throttleTemp = 87.0F;
constexpr float throttleReleaseTemp = 84.0F;
constexpr float warningTemp = 83.0F;
constexpr float criticalTemp = 90.0F;
constexpr double targetAllocation = 0.96; // fraction of nodes the scheduler keeps busy
constexpr float nan = std::numeric_limits<float>::quiet_NaN();

// Throttle reason bits, as DCGM's clock event reasons.
constexpr uint32_t reasonPowerCap = 0x4;
constexpr uint32_t reasonHwSlowdown = 0x8;
constexpr uint32_t reasonThermal = 0x20;
constexpr uint32_t reasonPowerBrake = 0x80; // HW power brake: a PDU trip left the node on one feed

// A rail port's transmit wait (% of the time it had data and no credit): a job's GPUs wait on the link of a peer
// that is down or flapping; otherwise a little in the all-reduce, less in compute.
constexpr float waitLinkDown = 35.0F;
constexpr float waitLinkFlap = 20.0F;
constexpr float flapDrag = 0.6F; // a job with a flapping link runs at this share of its pace

// A GPU that starts to throttle is a warning; one that stops is news only.
FleetEvent throttleEvent(
    double t, bool started, FleetEvent::Kind start, FleetEvent::Kind end, uint32_t gpu, size_t node, std::string text)
{
    return FleetEvent(t, started ? start : end, started ? FleetEvent::Severity::Warning : FleetEvent::Severity::Info,
        gpu, static_cast<int64_t>(node), std::move(text));
}

// The liquid loop of a GB200 NVL72 rack.
constexpr float facilityAboveAir = 12.0F; // warm-water cooling: the row's facility water runs this far above its air
constexpr float trayBaseKw = 0.9F; // per compute tray besides its GPUs: two Grace CPUs, NICs, DPU, fans
constexpr float trayShareOfGpu = 0.25F; // ... plus this much of its GPUs' power (the CPUs and NICs feed them)
constexpr float switchTraysKw = 7.2F; // nine NVLink switch trays
constexpr float liquidShare = 0.85F; // of the rack's heat, the rest leaves through its fans
constexpr float coolantKjPerLitreKelvin = 3.9F; // PG25
constexpr float loopSeconds = 20.0F; // thermal mass of coolant, manifolds and cold plates

} // namespace

// One kind of GPU and how it is cooled.
struct GpuPhysics
{
    float idlePower;
    float maxPower;
    float busyClock; // MHz
    float idleClock;
    double resistance; // °C per W, the least of the fleet's
    double resistanceSpread; // ... and above it, the manufacturing spread
    float preheatPerWatt; // °C the chassis air warms per watt of the GPUs upstream; 0 on cold plates
    bool liquidCooled;
};

namespace {
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
            job.startSeconds = nowSeconds();
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

float Simulator::jobUtilisation(const Job &job, double t) const
{
    const double age = t - job.startSeconds;
    // Checkpoint: all GPUs of the job wait on storage for about a minute.
    if (std::fmod(age, job.checkpointEverySeconds) < 45.0) {
        return 4.0F;
    }
    // Iteration: compute, then an all-reduce where the GPUs wait on the network.
    const double phase = std::fmod(age / job.iterationSeconds + job.phase, 1.0);
    if (phase > 0.9) {
        return 38.0F;
    }
    return 97.0F;
}

void Simulator::updateCooling(bool settle)
{
    const double t = nowSeconds();
    for (size_t r = 0; r < m_rowSupply.size(); ++r) {
        // A slow daily swing plus a bounded random walk per cooling unit.
        const double noise = unit(hash(m_seed, SaltRowDrift, m_step, r)) - 0.5;
        m_rowSupplyDrift[r] = static_cast<float>(0.995 * m_rowSupplyDrift[r] + 0.05 * noise);
        m_rowSupply[r] = static_cast<float>(
            18.0 + 1.2 * std::sin(2 * pi * t / 86400.0 + static_cast<double>(r)) + m_rowSupplyDrift[r]);
    }
    // Rack exhaust in kW drives recirculation into the rack itself and, less, its neighbours in the row.
    std::vector<float> rackKw(m_shape.racks.size(), 0.0F);
    for (size_t k = 0; k < m_shape.racks.size(); ++k) {
        const auto &rack = m_shape.racks[k];
        float sum = 0;
        for (uint32_t n = rack.firstNode; n < rack.firstNode + rack.nodeCount; ++n) {
            const auto &node = m_shape.nodes[n];
            for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
                sum += m_power[g];
            }
        }
        rackKw[k] = sum / 1000.0F;
    }
    if (m_physics->liquidCooled) {
        updateLiquidLoops(rackKw, settle);
        return;
    }
    m_rackPowerKw = rackKw;
    for (size_t k = 0; k < m_shape.racks.size(); ++k) {
        const auto &rack = m_shape.racks[k];
        const auto &row = m_shape.rows[rack.row];
        float neighbours = 0;
        if (k > row.firstRack) {
            neighbours += rackKw[k - 1];
        }
        if (k + 1 < row.firstRack + row.rackCount) {
            neighbours += rackKw[k + 1];
        }
        m_rackSink[k] = m_rowSupply[rack.row] + m_scenario.supplyOffset(rack, t) + m_domainFaults.supplyOffset(k)
            + 0.06F * rackKw[k] + 0.035F * neighbours;
    }
}

void Simulator::updateLiquidLoops(const std::vector<float> &gpuKw, bool settle)
{
    const double t = nowSeconds();
    const float alpha = settle ? 1.0F : 1.0F - std::exp(-static_cast<float>(m_lastDt) / loopSeconds);
    for (size_t k = 0; k < m_shape.racks.size(); ++k) {
        const auto &rack = m_shape.racks[k];
        const float power
            = gpuKw[k] * (1.0F + trayShareOfGpu) + trayBaseKw * static_cast<float>(rack.nodeCount) + switchTraysKw;
        m_rackPowerKw[k] = power;
        // P = flow x heat capacity x rise; the trays' cold plates are in parallel, and each sees about the loop's
        // mean, half the rise above the supply. A cooling failure warms the facility water as it warms the air.
        // A failed CDU loses flow and warms its secondary supply (DomainFaultModel).
        const auto index = static_cast<uint32_t>(k);
        const float flow = m_cduFlow[k] * m_domainFaults.flowFactor(index);
        const float rise = liquidShare * power / (flow * coolantKjPerLitreKelvin);
        const float supply = m_rowSupply[rack.row] + facilityAboveAir + m_scenario.supplyOffset(rack, t)
            + m_domainFaults.supplyOffset(index);
        m_rackSink[k] += (supply + 0.5F * rise - m_rackSink[k]) * alpha;
        // The manifold's sensors: the loop's return is as far above the plates' mean as the supply is below it.
        m_coolantSupply[k] = supply;
        m_coolantReturn[k] = std::max(supply, 2.0F * m_rackSink[k] - supply);
        m_coolantFlow[k] = flow * 60.0F;
    }
}

void Simulator::updateGpus()
{
    const double t = nowSeconds();
    const auto dt = static_cast<float>(m_lastDt);
    const float alphaGpu = 1.0F - std::exp(-dt / 25.0F);
    const float alphaMem = 1.0F - std::exp(-dt / 60.0F);
    const int64_t badGpu = m_scenario.badGpu();
    const float badSeverity = m_scenario.badGpuSeverity(t);

    // A job stalls while any of its GPUs is impaired or offline: data-parallel training waits for every rank. A
    // degrading GPU that still works drags its job down to its own pace.
    // A rank whose rail link is down stalls its job too; one whose link flaps slows it, and the job's other ports
    // wait on it (transmit wait).
    m_jobStalled.assign(m_jobs.size(), 0);
    m_jobCongestion.assign(m_jobs.size(), 0.0F);
    std::vector<float> jobDrag(m_jobs.size(), 1.0F);
    for (const uint32_t g : m_domainFaults.affectedGpus()) {
        const int32_t j = m_jobOfNode[m_shape.nodeOfGpu[g]];
        if (j < 0) {
            continue;
        }
        const auto index = static_cast<size_t>(j);
        if (m_domainFaults.linkFlapping(g)) {
            jobDrag[index] = std::min(jobDrag[index], flapDrag);
            m_jobCongestion[index] = std::max(m_jobCongestion[index], waitLinkFlap);
        } else if (m_domainFaults.linkDown(g)) {
            m_jobStalled[index] = 1;
            m_jobCongestion[index] = std::max(m_jobCongestion[index], waitLinkDown);
        }
    }
    for (size_t j = 0; j < m_jobs.size(); ++j) {
        const auto &job = m_jobs[j];
        const uint32_t first = m_shape.nodes[job.firstNode].firstGpu;
        const auto &last = m_shape.nodes[job.firstNode + job.nodeCount - 1];
        for (uint32_t g = first; g < last.firstGpu + last.gpuCount && m_jobStalled[j] == 0; ++g) {
            if (m_faults.gpuImpaired(g) || m_faults.gpuOffline(g)) {
                m_jobStalled[j] = 1;
            }
        }
        if (badGpu >= first && badGpu < last.firstGpu + last.gpuCount) {
            jobDrag[j] = std::min(jobDrag[j], 1.0F - 0.45F * badSeverity);
        }
    }

    for (size_t k = 0; k < m_shape.nodes.size(); ++k) {
        const auto &node = m_shape.nodes[k];
        const auto &rack = m_shape.racks[node.rack];
        const float domainCap = m_domainFaults.powerCap(static_cast<uint32_t>(k));
        const float cap = std::min(m_scenario.powerCap(m_shape, rack, t), domainCap);
        if (m_faults.nodeDown(static_cast<uint32_t>(k))) {
            // An offline node reports nothing; it cools down meanwhile.
            for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
                m_injected.note(g, InjectedFaults::Kind::Offline, true, t);
                m_temp[g] += (m_rackSink[node.rack] - m_temp[g]) * alphaGpu;
                m_memTemp[g] += (m_temp[g] + 4.0F - m_memTemp[g]) * alphaMem;
                m_power[g] = 0;
                m_util[g] = m_memCopyUtil[g] = m_smClock[g] = m_fbUsed[g] = nan;
                m_throttleReasons[g] = nan;
                m_health[g] = health::Offline;
                m_rail.setTransmitWait(g, 0); // a port that is off waits on nothing
            }
            continue;
        }
        const int32_t jobIndex = m_jobOfNode[k];
        const Job *job = jobIndex >= 0 ? &m_jobs[static_cast<size_t>(jobIndex)] : nullptr;
        float jobUtil = 0.0F;
        if (job != nullptr && m_jobStalled[static_cast<size_t>(jobIndex)] == 0) {
            jobUtil = jobUtilisation(*job, t) * jobDrag[static_cast<size_t>(jobIndex)];
        }
        float preheat = 0; // air warmed by the GPUs upstream in this chassis
        for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
            float util = 0;
            if (job != nullptr && jobUtil > 0) {
                const double jitter = unit(hash(m_seed, SaltUtilJitter, m_step, g)) - 0.5;
                util = std::clamp(jobUtil + static_cast<float>(3.0 * jitter), 0.0F, 100.0F);
            }
            const bool impaired = m_faults.gpuImpaired(g);
            m_injected.note(g, InjectedFaults::Kind::Offline, false, t);
            m_injected.note(g, InjectedFaults::Kind::Impaired, impaired, t);
            const bool hot
                = m_temp[g] >= throttleTemp || (m_thermalThrottled[g] != 0 && m_temp[g] >= throttleReleaseTemp);
            if (hot != (m_thermalThrottled[g] != 0)) {
                m_thermalThrottled[g] = hot ? 1 : 0;
                m_events.push_back(throttleEvent(t, hot, FleetEvent::Kind::ThermalThrottleStart,
                    FleetEvent::Kind::ThermalThrottleEnd, g, k,
                    fmt::format("{} GPU {} {} thermal throttling at {:.0f} °C", node.hostname, g - node.firstGpu,
                        hot ? "started" : "stopped", m_temp[g])));
            }
            uint32_t reasons = 0;
            const GpuPhysics &phys = *m_physics;
            float power = phys.idlePower + (phys.maxPower - phys.idlePower) * (util / 100.0F) * m_powerEfficiency[g];
            float clock = util > 1.0F ? phys.busyClock : phys.idleClock;
            if (hot) {
                reasons |= reasonThermal;
                power *= 0.72F;
                clock -= 540.0F;
            }
            if (impaired) {
                reasons |= reasonHwSlowdown;
                clock = std::min(clock, 800.0F);
            }
            if (m_injected.degrading()) {
                // A stuck clock: power follows the clock down (roughly linearly at a fixed voltage).
                const float drop = m_injected.clockDrop(g);
                if (drop > 0 && clock > 0) {
                    const float lowered = std::max(clock - drop, 210.0F);
                    power = phys.idlePower + (power - phys.idlePower) * (lowered / clock);
                    clock = lowered;
                }
                power = std::max(power - m_injected.powerDrop(g), 0.5F * phys.idlePower);
            }
            if (!std::isinf(domainCap)) {
                reasons |= reasonPowerBrake;
            }
            if (power > cap) {
                // Capped: the clock drops until the power fits (power goes roughly with the clock's cube).
                reasons |= reasonPowerCap;
                clock *= std::cbrt(cap / power);
                power = cap;
            }
            m_util[g] = util;
            m_memCopyUtil[g] = util * 0.42F;
            m_power[g] = power;
            m_smClock[g] = clock;
            m_fbUsed[g] = job != nullptr ? job->memoryMiB : 3.0F;
            // Power-cap throttling starts and stops are events too (NaN, for a GPU that was offline, counts as none).
            const float before = m_throttleReasons[g];
            const bool wasCapped = !std::isnan(before) && (static_cast<uint32_t>(before) & reasonPowerCap) != 0;
            const bool capped = (reasons & reasonPowerCap) != 0;
            if (capped != wasCapped) {
                m_events.push_back(throttleEvent(t, capped, FleetEvent::Kind::PowerThrottleStart,
                    FleetEvent::Kind::PowerThrottleEnd, g, k,
                    capped ? fmt::format("{} GPU {} power-capped at {:.0f} W", node.hostname, g - node.firstGpu, cap)
                           : fmt::format("{} GPU {} no longer power-capped", node.hostname, g - node.firstGpu)));
            }
            m_throttleReasons[g] = static_cast<float>(reasons);

            const bool linkDown = m_domainFaults.linkDown(g);
            float wait = 0;
            if (linkDown) {
                wait = 0;
            } else if (job != nullptr && m_jobCongestion[static_cast<size_t>(jobIndex)] > 0) {
                wait = m_jobCongestion[static_cast<size_t>(jobIndex)];
            } else if (util >= 60) {
                wait = 0.3F;
            } else if (util >= 20) {
                wait = 1.5F;
            } else if (util > 1) {
                wait = 0.05F;
            }
            m_rail.setTransmitWait(g, wait);

            float resistance = m_thermalResistance[g];
            if (static_cast<int64_t>(g) == badGpu) {
                resistance *= 1.0F + 0.7F * badSeverity; // a failing fan or dried-out thermal paste
            }
            const float target = m_rackSink[node.rack] + preheat + power * resistance + m_injected.tempOffset(g);
            m_temp[g] += (target - m_temp[g]) * alphaGpu;
            m_memTemp[g] += (m_temp[g] + 6.0F - m_memTemp[g]) * alphaMem;
            preheat += m_physics->preheatPerWatt * power;

            uint8_t h = health::Ok;
            const bool xid = m_faults.windowCount(ErrorCounter::XidCount, g) > 0;
            const bool dbe = m_faults.windowCount(ErrorCounter::EccDbeCount, g) > 0;
            const bool sbe = m_faults.windowCount(ErrorCounter::EccSbeCount, g) > 0;
            if (m_temp[g] >= criticalTemp || impaired || dbe) {
                h = health::Critical;
            } else if (m_temp[g] >= warningTemp || xid || linkDown) {
                h = health::Warning;
            }
            if (reasons != 0) {
                h |= health::throttledFlag;
            }
            if (sbe || dbe) {
                h |= health::eccFlag;
            }
            if (xid) {
                h |= health::xidFlag;
            }
            m_health[g] = h;
        }
    }
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
    updateCooling();
    updateGpus();
    m_rail.accumulateWait(t);
}

std::shared_ptr<Frame> Simulator::snapshot() const
{
    auto frame = std::make_shared<Frame>();
    frame->sequence = m_step;
    auto set = [&](MetricId id, const std::vector<float> &values) { frame->planes[static_cast<size_t>(id)] = values; };
    // Reported at DCGM's own resolution: whole °C, %, MHz and MiB, power in milliwatts (the state itself keeps full
    // precision). NaN stays NaN.
    // In double, as a decimal reading is parsed: 654.321 W is the float nearest 654321 x 0.001.
    auto quantised = [&](MetricId id, const std::vector<float> &values, double perUnit) {
        auto &plane = frame->planes[static_cast<size_t>(id)];
        plane.resize(values.size());
        for (size_t g = 0; g < values.size(); ++g) {
            plane[g] = static_cast<float>(std::round(static_cast<double>(values[g]) * perUnit) * (1.0 / perUnit));
        }
    };
    quantised(MetricId::GpuTemp, m_temp, 1);
    quantised(MetricId::MemTemp, m_memTemp, 1);
    quantised(MetricId::Power, m_power, 1000);
    quantised(MetricId::GpuUtil, m_util, 1);
    quantised(MetricId::MemCopyUtil, m_memCopyUtil, 1);
    quantised(MetricId::SmClock, m_smClock, 1);
    quantised(MetricId::FbUsed, m_fbUsed, 1);
    set(MetricId::XidErrors, m_faults.windowPlane(ErrorCounter::XidCount));
    set(MetricId::EccSbe, m_faults.windowPlane(ErrorCounter::EccSbeCount));
    set(MetricId::EccDbe, m_faults.windowPlane(ErrorCounter::EccDbeCount));
    set(MetricId::NvlinkErrors, m_faults.windowPlane(ErrorCounter::NvlinkCount));
    set(MetricId::PcieReplays, m_faults.windowPlane(ErrorCounter::PcieReplayCount));
    set(MetricId::RemappedRows, m_faults.windowPlane(ErrorCounter::RemappedUncorrectableCount));
    set(MetricId::RemappedRowsCorrectable, m_faults.windowPlane(ErrorCounter::RemappedCorrectableCount));
    set(MetricId::ThrottleReasons, m_throttleReasons);
    set(MetricId::RailLinkState, m_rail.linkState());
    set(MetricId::RailLinkDowns, m_rail.linkDowns());
    set(MetricId::RailSymbolErrors, m_rail.symbolErrors());
    set(MetricId::RailReceiveErrors, m_rail.receiveErrors());
    set(MetricId::RailTransmitWait, m_rail.transmitWait());
    if (m_physics->liquidCooled) {
        // The rack's manifold and leak sensors, on each of its GPUs (to 0.1 °C and 0.1 L/min, as a BMC reads them).
        auto &supply = frame->planes[static_cast<size_t>(MetricId::CoolantSupplyTemp)];
        auto &ret = frame->planes[static_cast<size_t>(MetricId::CoolantReturnTemp)];
        auto &flow = frame->planes[static_cast<size_t>(MetricId::CoolantFlow)];
        auto &leak = frame->planes[static_cast<size_t>(MetricId::LeakDetected)];
        const auto tenths = [](float v) { return std::round(v * 10.0F) / 10.0F; };
        supply.resize(m_health.size());
        ret.resize(m_health.size());
        flow.resize(m_health.size());
        leak.resize(m_health.size());
        for (const auto &node : m_shape.nodes) {
            for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
                supply[g] = tenths(m_coolantSupply[node.rack]);
                ret[g] = tenths(m_coolantReturn[node.rack]);
                flow[g] = tenths(m_coolantFlow[node.rack]);
                leak[g] = m_domainFaults.leakDetected(g) ? 1.0F : 0.0F;
            }
        }
    }
    // What this fleet does not have (coolant on air-cooled racks) is no data, as every source's frames say it.
    for (auto &plane : frame->planes) {
        if (plane.empty()) {
            plane.assign(m_health.size(), nan);
        }
    }
    auto &state = frame->planes[static_cast<size_t>(MetricId::HealthState)];
    state.resize(m_health.size());
    for (size_t g = 0; g < m_health.size(); ++g) {
        state[g] = static_cast<float>(m_health[g] & 0x07U);
    }
    // An offline GPU reports nothing, whatever its counters or temperature were; its rack's coolant and leak sensors,
    // which its rack's BMC serves, still do.
    const auto fromRack = [](size_t m) {
        return m == static_cast<size_t>(MetricId::CoolantSupplyTemp)
            || m == static_cast<size_t>(MetricId::CoolantReturnTemp) || m == static_cast<size_t>(MetricId::CoolantFlow)
            || m == static_cast<size_t>(MetricId::LeakDetected);
    };
    for (size_t g = 0; g < m_health.size(); ++g) {
        if ((m_health[g] & 0x07U) == health::Offline) {
            for (size_t m = 0; m < frame->planes.size(); ++m) {
                if (m != static_cast<size_t>(MetricId::HealthState) && !fromRack(m) && !frame->planes[m].empty()) {
                    frame->planes[m][g] = nan;
                }
            }
        }
    }
    frame->health = m_health;
    if (!m_rawErrors || m_rawErrorsVersion != m_faults.totalsVersion()) {
        auto raw = std::make_shared<RawErrorFields>();
        for (size_t c = 0; c < raw->totals.size(); ++c) {
            raw->totals[c] = m_faults.totalPlane(static_cast<FaultModel::Counter>(c));
        }
        raw->lastXid = m_faults.lastXid();
        m_rawErrors = std::move(raw);
        m_rawErrorsVersion = m_faults.totalsVersion();
    }
    frame->rawErrors = m_rawErrors;
    frame->railTotals = m_rail.totals(m_time);
    return frame;
}

} // namespace fleetscope::backend
