// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/jobtracker.h"
#include "model/fleetmodel.h"
#include "model/heatmaplayout.h"
#include "widgets/heatmap/heatmapmapstate.h"

#include <functional>
#include <memory>

namespace fleetscope {

// The map's layout, built from the fleet, the arrangement, the jobs and (compact, by job) the window's shape: at once
// for fleets up to syncGpus (a few ms), else on a JobTracker (100-160 ms at a million GPUs) while the map shows the
// layout it had; the latest request wins, an earlier one is never applied.
//
// Threads: the owner's (the GUI thread); layouts are built on the tracker's worker from what a request holds (shared,
// never changed), and handed back on the owner's thread.
class HeatmapLayoutJob
{
public:
    static constexpr uint32_t syncGpus = 100'000;

    struct Request
    {
        TopologyPtr topology;
        JobsPtr jobs;
        HeatmapArrangement arrangement = HeatmapArrangement::FloorPlan;
        double aspect = 1; // the window's width over its height
    };
    // Called with each layout to show, on the owner's thread; built off it: whether it came from the worker.
    using Ready = std::function<void(std::shared_ptr<const HeatmapLayout> layout, bool builtOffThread)>;

    explicit HeatmapLayoutJob(Ready ready);

    // A layout for this request: ready called before this returns for a small fleet, later for a big one.
    void request(const Request &request);
    // A layout is being built on the worker (never for fleets up to syncGpus).
    bool isPending() const { return m_tracker.running(); }

    static HeatmapLayout build(const Request &request);

private:
    Ready m_ready;
    JobTracker m_tracker; // last: goes first, with the job under way
};

} // namespace fleetscope
