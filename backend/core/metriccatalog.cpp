// SPDX-License-Identifier: Apache-2.0
#include "core/metriccatalog.h"

namespace fleetscope::backend {

const std::vector<MetricDef> &metricCatalog()
{
    static const std::vector<MetricDef> catalog = {
        { MetricId::GpuTemp, "gpu_temp", "GPU temperature", "°C", "DCGM_FI_DEV_GPU_TEMP", 20, 100, false, "inferno" },
        { MetricId::MemTemp, "mem_temp", "Memory temperature", "°C", "DCGM_FI_DEV_MEMORY_TEMP", 20, 110, false,
            "inferno" },
        { MetricId::Power, "power", "Power draw", "W", "DCGM_FI_DEV_POWER_USAGE", 0, 800, false, "viridis" },
        { MetricId::GpuUtil, "gpu_util", "GPU utilisation", "%", "DCGM_FI_DEV_GPU_UTIL", 0, 100, false, "viridis" },
        { MetricId::MemCopyUtil, "mem_copy_util", "Memory-copy utilisation", "%", "DCGM_FI_DEV_MEM_COPY_UTIL", 0, 100,
            false, "viridis" },
        { MetricId::SmClock, "sm_clock", "SM clock", "MHz", "DCGM_FI_DEV_SM_CLOCK", 0, 2100, false, "cividis" },
        { MetricId::FbUsed, "fb_used", "Framebuffer used", "MiB", "DCGM_FI_DEV_FB_USED", 0, 81920, false, "cividis" },
        // Error counts are counts within the last 5 minutes, not the exporter's raw counters or last-value gauges.
        { MetricId::XidErrors, "xid_errors", "XID errors (5 min)", "errors", "DCGM_FI_DEV_XID_ERRORS", 0, 5, true,
            "inferno" },
        { MetricId::EccSbe, "ecc_sbe", "ECC single-bit errors (5 min)", "errors", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", 0,
            10, true, "inferno" },
        { MetricId::EccDbe, "ecc_dbe", "ECC double-bit errors (5 min)", "errors", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 0, 2,
            true, "inferno" },
        { MetricId::NvlinkErrors, "nvlink_errors", "NVLink CRC errors (5 min)", "errors",
            "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", 0, 10, true, "inferno" },
        { MetricId::PcieReplays, "pcie_replays", "PCIe replays (5 min)", "replays", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
            0, 10, true, "inferno" },
        // Bit mask as DCGM's clock event reasons: 0x4 power cap, 0x8 hardware slowdown, 0x20 thermal slowdown.
        { MetricId::ThrottleReasons, "throttle_reasons", "Throttle reasons", "mask", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
            0, 64, false, "cividis" },
        // 0 OK, 1 warning, 2 critical, 3 offline, 4 no data: the state bits of the health byte.
        { MetricId::HealthState, "health", "Health state", "state", "", 0, 4, false, "health" },
        // Fleetscope's own, from every source (analytics/anomalydetector.h): how far a GPU departs from its job's or
        // rack's peers, its chassis and its own history (memory: how far above its own GPU), in spreads of its peers'
        // residuals (0 in line; an anomaly starts at 5).
        { MetricId::Anomaly, "anomaly", "Anomaly score", "score", "", 0, 10, false, "inferno" },
        // Rows of HBM an A100/H100 has remapped to spares (its answer to ECC errors; a GPU out of spare rows needs
        // replacing): for an uncorrectable error, always; for correctable ones, some. Counts within 5 minutes.
        { MetricId::RemappedRows, "remapped_rows", "Remapped rows, uncorrectable (5 min)", "rows",
            "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", 0, 2, true, "inferno" },
        { MetricId::RemappedRowsCorrectable, "remapped_rows_correctable", "Remapped rows, correctable (5 min)", "rows",
            "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", 0, 5, true, "inferno" },
        // Fleetscope's own, from every source (analytics/offenderscore.h, docs/OFFENDERS.md): a GPU's failures,
        // remapped rows, PCIe replays and throttle time, weighted and decayed with a half-life of 7 days. A healthy GPU
        // stays below 1; 50 is about seven serious failures a week kept up.
        { MetricId::Offender, "offender", "Repeat-offender score", "score", "", 0, 50, false, "inferno" },
        // Each GPU's rail NIC, as Prometheus node-exporter's InfiniBand collector reads it from
        // /sys/class/infiniband/<device>/ports/<port>: 1 while the port is ACTIVE (node_infiniband_state_id 4), 0
        // otherwise; counters as counts within the last 5 minutes; transmit wait as the share of time the port had
        // data to send and no credit to send it (congestion).
        { MetricId::RailLinkState, "rail_link_state", "Rail link up", "up", "node_infiniband_state_id", 0, 1, false,
            "cividis" },
        { MetricId::RailLinkDowns, "rail_link_downs", "Rail link downs (5 min)", "downs",
            "node_infiniband_link_downed_total", 0, 3, true, "inferno" },
        { MetricId::RailSymbolErrors, "rail_symbol_errors", "Rail symbol errors (5 min)", "errors",
            "node_infiniband_symbol_error_total", 0, 100, true, "inferno" },
        { MetricId::RailReceiveErrors, "rail_receive_errors", "Rail receive errors (5 min)", "errors",
            "node_infiniband_port_errors_received_total", 0, 100, true, "inferno" },
        { MetricId::RailTransmitWait, "rail_transmit_wait", "Rail transmit wait", "%",
            "node_infiniband_port_transmit_wait_total", 0, 50, false, "inferno" },
        // A liquid-cooled rack's secondary loop at the rack's manifold and its leak sensors (a site maps them from its
        // CDU's and BMC's exporter, README "Real fleets").
        { MetricId::CoolantSupplyTemp, "coolant_supply_temp", "Coolant supply temperature", "°C",
            "fleetscope_coolant_supply_celsius", 15, 50, false, "inferno" },
        { MetricId::CoolantReturnTemp, "coolant_return_temp", "Coolant return temperature", "°C",
            "fleetscope_coolant_return_celsius", 15, 65, false, "inferno" },
        { MetricId::CoolantFlow, "coolant_flow", "Coolant flow", "L/min", "fleetscope_coolant_flow_lpm", 0, 120, false,
            "cividis" },
        { MetricId::LeakDetected, "leak", "Leak detected", "leak", "fleetscope_leak_detected", 0, 1, false, "inferno" },
    };
    return catalog;
}

std::optional<MetricId> metricByKey(const std::string &key)
{
    for (const auto &m : metricCatalog()) {
        if (m.key == key) {
            return m.id;
        }
    }
    return std::nullopt;
}

std::vector<MetricId> defaultMetrics()
{
    return { MetricId::GpuTemp, MetricId::Power, MetricId::GpuUtil, MetricId::MemTemp };
}

} // namespace fleetscope::backend
