// SPDX-License-Identifier: Apache-2.0
// The simulator's physics, each step: cooling (air from each row's cooling unit, liquid loops of NVL72 racks) and
// every GPU's utilisation, power, clocks, temperatures and throttling.
#include "sim/simulator.h"

#include "core/determinism.h"
#include "sim/gpuphysics.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace fleetscope::backend {

using namespace determinism;

namespace {

constexpr double pi = 3.14159265358979323846;

constexpr float throttleTemp = 87.0F;
constexpr float throttleReleaseTemp = 84.0F;
constexpr float warningTemp = 83.0F;
constexpr float criticalTemp = 90.0F;

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

// A job's GPUs while checkpointing (waiting on storage) and while restarting (loading the checkpoint).
constexpr float checkpointUtil = 4.0F;
constexpr float restartUtil = 15.0F;

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
    // A straggler (a GPU whose clock dropped) likewise sets its job's pace.
    m_jobStalled.assign(m_jobs.size(), 0);
    m_jobCongestion.assign(m_jobs.size(), 0.0F);
    std::vector<float> jobDrag(m_jobs.size(), 1.0F);
    std::vector<int64_t> slowGpu(m_jobs.size(), -1);
    const auto slowedBy = [&](size_t j, float drag, uint32_t gpu) {
        if (drag < jobDrag[j]) {
            jobDrag[j] = drag;
            slowGpu[j] = gpu;
        }
    };
    for (const uint32_t g : m_domainFaults.affectedGpus()) {
        const int32_t j = m_jobOfNode[m_shape.nodeOfGpu[g]];
        if (j < 0) {
            continue;
        }
        const auto index = static_cast<size_t>(j);
        if (m_domainFaults.linkFlapping(g)) {
            slowedBy(index, flapDrag, g);
            m_jobCongestion[index] = std::max(m_jobCongestion[index], waitLinkFlap);
            if (m_step > 0) {
                m_truth.slowGpu(g, m_jobs[index].id, 1.0F - flapDrag, JobTruth::StragglerKind::Link, t);
            }
        } else if (m_domainFaults.linkDown(g)) {
            m_jobStalled[index] = 1;
            m_jobCongestion[index] = std::max(m_jobCongestion[index], waitLinkDown);
        }
    }
    for (const size_t i : m_stragglers.active()) {
        const uint32_t g = m_stragglers.faults()[i].gpu;
        const int32_t j = m_jobOfNode[m_shape.nodeOfGpu[g]];
        if (j < 0 || m_faults.gpuOffline(g)) {
            continue;
        }
        const float drop = m_stragglers.drop(g);
        slowedBy(static_cast<size_t>(j), 1.0F - drop, g);
        if (m_step > 0) {
            m_truth.slowGpu(g, m_jobs[static_cast<size_t>(j)].id, drop, JobTruth::StragglerKind::Clock, t);
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
            slowedBy(j, 1.0F - 0.45F * badSeverity, static_cast<uint32_t>(badGpu));
        }
    }
    accountJobs(jobDrag, slowGpu);

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
        if (job != nullptr) {
            switch (m_jobState[static_cast<size_t>(jobIndex)]) {
            case JobTruth::State::Compute:
                jobUtil = computeUtilisation(*job, t) * jobDrag[static_cast<size_t>(jobIndex)];
                break;
            case JobTruth::State::Checkpoint:
                jobUtil = checkpointUtil;
                break;
            case JobTruth::State::Restart:
                jobUtil = restartUtil;
                break;
            case JobTruth::State::Stall:
                break;
            }
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
            if (const float drop = m_stragglers.drop(g); drop > 0 && util > 1.0F) {
                // A straggler: its clock down by the drop, its dynamic power with it.
                power = phys.idlePower + (power - phys.idlePower) * (1.0F - drop);
                clock *= 1.0F - drop;
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

} // namespace fleetscope::backend
