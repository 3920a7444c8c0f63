// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "analytics/anomalydetector.h"
#include "analytics/incidentfolder.h"
#include "analytics/jobaccounting.h"
#include "analytics/offenderscore.h"
#include "core/framejudge.h"
#include "core/framesource.h"

#include <memory>
#include <vector>

namespace fleetscope::backend {

// The fleet's analytics, run on every frame a source publishes: the anomaly detector (its plane and the anomalies'
// starts and ends, docs/ANOMALY.md), then the repeat-offender score over the frame and its events, those included
// (its plane and ranking, docs/OFFENDERS.md), then the incident folder over the frame and every event so far
// (docs/INCIDENTS.md), then the jobs' accounting over the frame and its events, the incidents' included (docs/JOBS.md).
// All on the frame's sample time.
class FleetAnalytics final : public FrameJudge
{
public:
    explicit FleetAnalytics(const FleetShape &shape);
    void judge(Frame *frame, const std::vector<JobInfo> &jobs, std::vector<FleetEvent> *events) override;
    // The detector learns from them (the offender score and the incidents work on events: held frames raise none).
    // The jobs' accounts start with them too.
    void warm(const std::vector<std::shared_ptr<const Frame>> &past, const std::vector<JobInfo> &jobs) override;
    const JobAccounts *jobAccounts() const override { return &m_jobs; }

private:
    AnomalyDetector m_detector;
    OffenderScore m_offenders;
    IncidentFolder m_incidents;
    JobAccounting m_jobs;
};

// A FrameSource over the producer whose frames the fleet's analytics judge: how the backend serves every source.
std::unique_ptr<FrameSource> judgedSource(std::unique_ptr<FramePoller> poller, const FrameSource::Options &options);

} // namespace fleetscope::backend
