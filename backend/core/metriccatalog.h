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

// The metrics the simulator produces, in MetricId order.
const std::vector<MetricDef> &metricCatalog();
std::optional<MetricId> metricByKey(const std::string &key);
// The set sent when a subscriber asks for none.
std::vector<MetricId> defaultMetrics();

} // namespace fleetscope::backend
