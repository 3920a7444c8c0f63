// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/frame.h"
#include "core/framepoller.h"
#include "core/jobaccount.h"

#include <array>
#include <memory>
#include <vector>

namespace fleetscope::backend {

// What judges each frame a FrameSource publishes, whatever produced it, before any subscriber sees it: it fills the
// planes that come from the fleet's own history rather than from the producer, and appends the events it finds there
// (the anomaly detector and the repeat-offender score: FleetAnalytics, analytics/fleetanalytics.h). Called by the
// source's ticker thread only (and by its constructor, before the ticker starts).
class FrameJudge
{
public:
    // The planes a judge writes. A frame not judged (from before the source's start, or from a source without a
    // judge) has them all "no data".
    static constexpr std::array<MetricId, 2> planes = { MetricId::Anomaly, MetricId::Offender };

    virtual ~FrameJudge() = default;
    // Judges a frame with the events that came with it; jobs are the producer's as of this frame.
    virtual void judge(Frame *frame, const std::vector<JobInfo> &jobs, std::vector<FleetEvent> *events) = 0;
    // Learns from the frames held from before the source's start (oldest first; jobs as of the first frame, ended
    // ones included), before the first frame is judged: those frames stay unjudged and raise no events.
    virtual void warm(const std::vector<std::shared_ptr<const Frame>> & /*past*/, const std::vector<JobInfo> & /*jobs*/)
    { }
    // The jobs' accounts it keeps from the frames it judges (thread-safe), or null when it keeps none.
    virtual const JobAccounts *jobAccounts() const { return nullptr; }
};

} // namespace fleetscope::backend
