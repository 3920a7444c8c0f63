// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmaplayoutjob.h"

#include <utility>

namespace fleetscope {

HeatmapLayoutJob::HeatmapLayoutJob(Ready ready)
    : m_ready(std::move(ready))
{ }

HeatmapLayout HeatmapLayoutJob::build(const Request &request)
{
    if (!request.topology) {
        return {};
    }
    switch (request.arrangement) {
    case HeatmapArrangement::Compact:
        return HeatmapLayout::compact(*request.topology, request.aspect);
    case HeatmapArrangement::ByJob:
        return HeatmapLayout::byJob(*request.topology, request.jobs.get(), request.aspect);
    case HeatmapArrangement::ByFabric:
        return HeatmapLayout::byFabric(*request.topology, request.aspect);
    case HeatmapArrangement::FloorPlan:
        break;
    }
    return HeatmapLayout::floorPlan(*request.topology);
}

void HeatmapLayoutJob::request(const Request &request)
{
    if (!request.topology || request.topology->gpuCount <= syncGpus) {
        m_tracker.cancel(); // a big fleet's layout still being built is not shown after this one
        m_ready(std::make_shared<const HeatmapLayout>(build(request)), false);
        return;
    }
    m_tracker.start(
        [request](const JobTracker::Ticket &) { return std::make_shared<const HeatmapLayout>(build(request)); },
        [this](std::shared_ptr<const HeatmapLayout> layout) { m_ready(std::move(layout), true); });
}

} // namespace fleetscope
