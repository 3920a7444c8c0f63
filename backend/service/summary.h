// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framesource.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <memory>
#include <vector>

namespace fleetscope::backend {

// Rollups for GetSummary over [fromMs, toMs) from held frames (time order; the first may start before fromMs) and
// the events of the range. Each frame stands for the time until the next one, clipped to the range. The repeat
// offenders are the newest frame's (Frame::offenders). GPU-hours lost in schedulable units (an HGX node,
// an NVL72 rack) not fully healthy are integrated over the same frames. Pure: the service and the tests call it alike.
fleetscope::telemetry::v1::Summary summarise(const FleetShape &shape,
    const std::vector<std::shared_ptr<const Frame>> &frames, const std::vector<TimedEvent> &events,
    const std::vector<JobInfo> &jobs, int64_t fromMs, int64_t toMs, uint32_t topOffenders);

} // namespace fleetscope::backend
