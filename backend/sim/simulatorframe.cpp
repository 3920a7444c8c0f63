// SPDX-License-Identifier: Apache-2.0
// The simulator's state as a frame.
#include "sim/simulator.h"

#include "sim/gpuphysics.h"

#include <algorithm>
#include <cmath>

namespace fleetscope::backend {

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
