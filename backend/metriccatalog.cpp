// SPDX-License-Identifier: Apache-2.0
#include "metriccatalog.h"

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
