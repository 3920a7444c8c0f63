// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fleetscope::backend {

enum class MetricId : uint8_t {
    GpuTemp,
    MemTemp,
    Power,
    GpuUtil,
    MemCopyUtil,
    SmClock,
    FbUsed,
    XidErrors,
    EccSbe,
    EccDbe,
    NvlinkErrors,
    PcieReplays,
    ThrottleReasons,
    HealthState,
    Anomaly,
    RemappedRows,
    RemappedRowsCorrectable,
    Offender,
    // The fabric: each GPU's rail NIC (node-exporter's InfiniBand collector, one port per GPU).
    RailLinkState,
    RailLinkDowns,
    RailSymbolErrors,
    RailReceiveErrors,
    RailTransmitWait,
    // The facility: a liquid-cooled rack's coolant loop and leak sensors (a site's BMC / Redfish exporter), the same
    // value on each GPU of the rack or tray; absent for air-cooled racks.
    CoolantSupplyTemp,
    CoolantReturnTemp,
    CoolantFlow,
    LeakDetected,
    Count
};

struct MetricDef
{
    MetricId id;
    std::string key; // the id used on the wire
    std::string name;
    std::string unit;
    std::string dcgmField;
    float rangeMin;
    float rangeMax;
    bool isRate;
    std::string colourMap;
};

// A rail port's transmit wait as node_exporter counts it (node_infiniband_port_transmit_wait_total): as NVIDIA's
// ibdiagnet reads it ("Congestion Assessment on InfiniBand Links"), a Quantum-generation port counts a tick per 8 bytes
// it could not send, so at NDR's 400 Gb/s (50 GB/s) a port stalled all the time counts 6.25e9 ticks a second. The
// simulator's pages count so; the metric maps read rate(ticks) * 100 / this as the share of time stalled, in %.
constexpr double railTransmitWaitTicksPerSecond = 6.25e9;

// The metrics the simulator produces, in MetricId order.
const std::vector<MetricDef> &metricCatalog();
std::optional<MetricId> metricByKey(const std::string &key);
// The set sent when a subscriber asks for none.
std::vector<MetricId> defaultMetrics();

} // namespace fleetscope::backend
