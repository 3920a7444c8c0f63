// SPDX-License-Identifier: Apache-2.0
#include "analytics/fleetanalytics.h"

namespace fleetscope::backend {

FleetAnalytics::FleetAnalytics(const FleetShape &shape)
    : m_detector(shape)
    , m_offenders(shape.gpuCount)
    , m_incidents(shape)
    , m_jobs(shape)
{ }

void FleetAnalytics::judge(Frame *frame, const std::vector<JobInfo> &jobs, std::vector<FleetEvent> *events)
{
    const double timeSeconds = static_cast<double>(frame->sampleTimeMs) / 1000.0;
    m_detector.setJobs(jobs);
    m_detector.judge(frame, timeSeconds, events);
    m_offenders.update(frame, timeSeconds, *events);
    m_incidents.judge(*frame, jobs, timeSeconds, events);
    m_jobs.account(*frame, jobs, *events);
}

void FleetAnalytics::warm(const std::vector<std::shared_ptr<const Frame>> &past, const std::vector<JobInfo> &jobs)
{
    m_detector.warm(past, jobs);
    const std::vector<FleetEvent> none;
    for (const auto &frame : past) {
        if (frame != nullptr) {
            m_jobs.account(*frame, jobs, none);
        }
    }
}

std::unique_ptr<FrameSource> judgedSource(std::unique_ptr<FramePoller> poller, const FrameSource::Options &options)
{
    auto analytics = std::make_unique<FleetAnalytics>(poller->shape());
    return std::make_unique<FrameSource>(std::move(poller), options, std::move(analytics));
}

} // namespace fleetscope::backend
