// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/summary.h"

#include <QString>

#include <array>
#include <cstdint>
#include <vector>

namespace fleetscope {

// The jobs' goodput as the summary page shows it: of the GPU-time of the jobs that ran in a range, the share spent
// computing (docs/JOBS.md), and where the rest went.
//
// The target is the field's published reference, not a law: ByteRobust (ByteDance, 2025) reports a 97 % effective
// training time ratio over three months of training on 9,600 GPUs. A fleet under it is losing job-hours to faults,
// stragglers, restarts and checkpoints that a better-run fleet keeps.
constexpr double targetGoodput = 97.0; // percent

// The causes in the order the page lists and charts them; Unspecified (the losses the backend did not list one by
// one) last.
constexpr std::array<LossCause, 6> goodputCauses = { LossCause::Incident, LossCause::Straggler, LossCause::Restart,
    LossCause::Checkpoint, LossCause::Stall, LossCause::Unspecified };

struct GoodputFigures
{
    // A range without goodput (jobsAccounted 0: no job ran, or a backend without job accounting) has none to show:
    // its figure is hidden, never shown as 0 %.
    bool hasDay = false;
    bool hasWeek = false;
    double dayGoodput = 0; // percent
    double weekGoodput = 0;
    uint32_t dayJobs = 0;
    uint32_t weekJobs = 0;
    double dayJobGpuHours = 0;
    double weekJobGpuHours = 0;
    double weekProductiveGpuHours = 0;
    double dayLostGpuHours = 0; // jobGpuHours - productiveGpuHours, never below 0
    double weekLostGpuHours = 0;
    double weekLostCost = 0; // weekLostGpuHours x the page's price
    // GPU-hours lost by cause (indexed by LossCause), summed from the listed losses.
    std::array<double, 6> dayByCause {};
    std::array<double, 6> weekByCause {};
    std::vector<GoodputLoss> losses; // the week's, most GPU-hours first
};

// Pure: from the day's and the week's summaries alone. Losses the page cannot show (GPU-hours not finite or below 0)
// are left out.
GoodputFigures computeGoodputFigures(const Summary &day, const Summary &week, double pricePerGpuHour);

// "Incident", "Straggler", "Restart", "Checkpoint", "Stall", "Other" (not listed one by one).
QString goodputCauseName(LossCause cause);
// The same for files: "incident", "straggler", "restart", "checkpoint", "stall", "other".
QString goodputCauseKey(LossCause cause);
// What a loss was, named as the desk names things: "incident 12 · leaf su03-l5", "r01-k02-n03 GPU 5", "node
// r01-k02-n03"; the backend's own words where the fields name nothing (a job's restarts, the rest).
QString goodputLossSubject(const GoodputLoss &loss, const Topology *topology);
// A GPU as the desk names it: "r01-k02-n03 GPU 5", or its fleet index without a topology that holds it.
QString summaryGpuName(uint32_t gpu, const Topology *topology);

} // namespace fleetscope
