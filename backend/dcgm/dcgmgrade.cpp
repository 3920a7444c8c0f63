// SPDX-License-Identifier: Apache-2.0
#include "dcgm/dcgmgrade.h"

#include <cmath>
#include <limits>

namespace fleetscope::backend {

namespace {
constexpr float warningTemp = 83.0F;
constexpr float criticalTemp = 90.0F;
// DCGM's clock event reasons that slow a GPU down: power cap, hardware slowdown, software and hardware thermal
// slowdown, power brake. (0x1, idle, is not throttling.)
constexpr uint64_t slowdownReasons = 0x4U | 0x8U | 0x20U | 0x40U | 0x80U;
} // namespace

std::shared_ptr<Frame> frameWithoutData(uint32_t gpuCount)
{
    auto frame = std::make_shared<Frame>();
    for (auto &plane : frame->planes) {
        plane.assign(gpuCount, std::numeric_limits<float>::quiet_NaN());
    }
    frame->planes[static_cast<size_t>(MetricId::HealthState)].assign(gpuCount, static_cast<float>(health::NoData));
    frame->health.assign(gpuCount, health::NoData);
    return frame;
}

size_t gradeDcgmFrame(Frame *frame, const std::vector<uint8_t> &hasData)
{
    const auto &temp = frame->plane(MetricId::GpuTemp);
    const auto &xid = frame->plane(MetricId::XidErrors);
    const auto &sbe = frame->plane(MetricId::EccSbe);
    const auto &dbe = frame->plane(MetricId::EccDbe);
    const auto &reasons = frame->plane(MetricId::ThrottleReasons);
    auto &state = frame->planes[static_cast<size_t>(MetricId::HealthState)];
    size_t withoutData = 0;
    for (size_t g = 0; g < hasData.size(); ++g) {
        if (!hasData[g]) {
            ++withoutData;
            continue; // stays no data, every value NaN
        }
        uint8_t h = health::Ok;
        if (temp[g] >= criticalTemp || dbe[g] > 0) {
            h = health::Critical;
        } else if (temp[g] >= warningTemp || xid[g] > 0) {
            h = health::Warning;
        }
        state[g] = static_cast<float>(h);
        if (std::isfinite(reasons[g]) && reasons[g] >= 0
            && (static_cast<uint64_t>(reasons[g]) & slowdownReasons) != 0) {
            h |= health::throttledFlag;
        }
        if (sbe[g] > 0 || dbe[g] > 0) {
            h |= health::eccFlag;
        }
        if (xid[g] > 0) {
            h |= health::xidFlag;
        }
        frame->health[g] = h;
    }
    return withoutData;
}

} // namespace fleetscope::backend
