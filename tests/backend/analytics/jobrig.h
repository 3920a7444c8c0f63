// SPDX-License-Identifier: Apache-2.0
#pragma once

// The job accounting suites' rig: frames built by hand over a fleet of 64 GPUs, fed to a JobAccounting.
#include "analytics/jobaccounting.h"
#include "jobchecks.h"

#include <QtTest>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace fleetscope::backend::jobchecks {

inline constexpr float noValue = std::numeric_limits<float>::quiet_NaN();
inline constexpr int64_t second = 1000;
inline constexpr int64_t minute = 60 * second;
inline constexpr float clockMHz = 1980.0F;

// An accounting over a fleet of 64 GPUs (8 nodes of 8), fed a frame every `every`: every GPU computing at 97% with
// its peers' clock, power and temperature unless a test says otherwise.
class Rig
{
public:
    explicit Rig(uint32_t gpus = 64)
        : shape(FleetShape::forGpuCount(gpus))
        , accounting(shape)
    {
        frame.health.assign(shape.gpuCount, fleetscope::health::Ok);
        for (auto &plane : frame.planes) {
            plane.assign(shape.gpuCount, noValue);
        }
        fill(MetricId::RailLinkState, 1.0F);
        fill(MetricId::SmClock, clockMHz);
        fill(MetricId::Power, 650.0F);
        fill(MetricId::GpuTemp, 62.0F);
        fill(MetricId::GpuUtil, 97.0F);
    }
    Rig(const Rig &) = delete;
    Rig &operator=(const Rig &) = delete;

    std::vector<float> &plane(MetricId id) { return frame.planes[static_cast<size_t>(id)]; }
    void fill(MetricId id, float value) { std::fill(plane(id).begin(), plane(id).end(), value); }
    void util(float value) { fill(MetricId::GpuUtil, value); }

    static JobInfo job(uint64_t id, const std::string &name, uint32_t first, uint32_t count, int64_t startMs)
    {
        JobInfo info;
        info.id = id;
        info.name = name;
        info.owner = "ml";
        info.firstGpu = first;
        info.gpuCount = count;
        info.startMs = startMs;
        return info;
    }

    void step(const std::vector<FleetEvent> &events = {})
    {
        frame.sampleTimeMs = now;
        accounting.account(frame, jobs, events);
        now += every;
    }
    // Frames for that long; the utilisation of the job's steps: 97%, with a 38% all-reduce in the last 3 s of 30.
    void compute(int64_t forMs)
    {
        for (const int64_t end = now + forMs; now < end;) {
            util(((now - origin) % (30 * second)) >= 27 * second ? 38.0F : 97.0F);
            step();
        }
    }
    void idle(int64_t forMs, float value = 4.0F)
    {
        util(value);
        for (const int64_t end = now + forMs; now < end;) {
            step();
        }
    }
    JobReport report(uint64_t id = 7)
    {
        JobReport r;
        if (!accounting.report(id, {}, &r)) {
            qWarning("no report for job %llu", static_cast<unsigned long long>(id));
        }
        return r;
    }
    void nodeDown(uint32_t node, bool down)
    {
        const auto &n = shape.nodes[node];
        std::fill_n(
            frame.health.begin() + n.firstGpu, n.gpuCount, down ? fleetscope::health::Offline : fleetscope::health::Ok);
        std::fill_n(plane(MetricId::GpuUtil).begin() + n.firstGpu, n.gpuCount, down ? noValue : 0.0F);
    }

    FleetShape shape;
    JobAccounting accounting;
    Frame frame;
    std::vector<JobInfo> jobs;
    int64_t origin = 1'700'000'000'000;
    int64_t now = origin;
    int64_t every = second;
};

} // namespace fleetscope::backend::jobchecks
