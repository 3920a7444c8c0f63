// SPDX-License-Identifier: Apache-2.0
#pragma once

// What every job accounting suite checks of a report, and a simulator's jobs as the backend lists them.
#include "core/jobaccount.h"
#include "sim/simulator.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace fleetscope::backend::jobchecks {

inline double lossOf(const JobReport &r, LossCause cause)
{
    double sum = 0;
    for (const auto &l : r.losses) {
        sum += l.cause == cause ? l.gpuHours : 0.0;
    }
    return sum;
}

inline double secondsIn(const JobReport &r, JobPhase phase)
{
    double sum = 0;
    for (const auto &s : r.phases) {
        sum += s.phase == phase ? static_cast<double>(s.toMs - s.fromMs) / 1000.0 : 0.0;
    }
    return sum;
}

// Productive and lost add up to the GPU-time watched, its GPUs x the time watched (QVERIFY: call through
// QVERIFY_ADDS_UP, or check QTest::currentTestFailed() after).
inline void checkAddsUp(const JobReport &r)
{
    double lost = 0;
    for (const auto &l : r.losses) {
        lost += l.gpuHours;
    }
    QVERIFY2(std::abs(r.productiveGpuHours + lost - r.gpuHours) <= 1e-6 * std::max(1.0, r.gpuHours),
        qPrintable(QStringLiteral("%1 + %2 != %3").arg(r.productiveGpuHours).arg(lost).arg(r.gpuHours)));
    const double watched
        = static_cast<double>(r.job.gpuCount) * static_cast<double>(r.asOfMs - r.watchedFromMs) / 3'600'000.0;
    QVERIFY2(std::abs(watched - r.gpuHours) <= 1e-6 * std::max(1.0, watched),
        qPrintable(QStringLiteral("%1 != %2").arg(watched).arg(r.gpuHours)));
    QVERIFY(r.goodput >= 0 && r.goodput <= 1);
}

// A simulator's jobs as the backend describes them, on its clock (ms of simulated time), ended ones too.
inline std::vector<JobInfo> jobsOf(const Simulator &sim)
{
    std::vector<JobInfo> out;
    const auto &shape = sim.shape();
    auto describe = [&](const Simulator::Job &j, bool ended) {
        const auto &last = shape.nodes[j.firstNode + j.nodeCount - 1];
        JobInfo info;
        info.id = j.id;
        info.name = "sim-" + std::to_string(j.id);
        info.firstGpu = shape.nodes[j.firstNode].firstGpu;
        info.gpuCount = last.firstGpu + last.gpuCount - info.firstGpu;
        info.startMs = static_cast<int64_t>(j.startSeconds * 1000);
        info.lastCheckpointMs
            = std::isfinite(j.lastCheckpointSeconds) ? static_cast<int64_t>(j.lastCheckpointSeconds * 1000) : 0;
        info.endMs = ended ? static_cast<int64_t>(j.endSeconds * 1000) : 0;
        out.push_back(info);
    };
    for (const auto &j : sim.jobs()) {
        describe(j, false);
    }
    for (const auto &j : sim.endedJobs()) {
        describe(j, true);
    }
    return out;
}

} // namespace fleetscope::backend::jobchecks
