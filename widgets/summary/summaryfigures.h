// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/summary.h"

#include <QMetaType>
#include <QString>

#include <cstdint>
#include <vector>

namespace fleetscope {

// One point of the trends: a bucket's fleet utilisation and its jobs' goodput.
struct SummaryTrendPoint
{
    int64_t endMs = 0; // the bucket's end
    double utilisation = 0; // percent
    bool hasGoodput = false; // false: no job accounted in the bucket (none ran, or an older backend)
    double goodput = 0; // percent, when hasGoodput
};
// A bucket's point from its summary.
SummaryTrendPoint summaryTrendPoint(const Summary &bucket);

// What one refresh brought: the day's and the week's summaries (null when that call failed) and the trend buckets
// that answered, oldest first.
struct SummaryFetch
{
    SummaryPtr day;
    SummaryPtr week;
    std::vector<SummaryTrendPoint> dayTrend;
    std::vector<SummaryTrendPoint> weekTrend;
};

// What the summary page shows, derived from the day and week summaries alone.
struct SummaryFigures
{
    double dayUtilisation = 0; // percent
    double weekUtilisation = 0;
    double idleGpuHours = 0; // over the day
    double idleCost = 0; // idleGpuHours x price
    uint32_t gpus = 0;
    uint32_t healthyGpus = 0; // at the end of the day's range
    double availability = 0; // healthyGpus / gpus
    uint64_t weekFailures = 0;
    uint32_t worstCount = 0; // 1 % of the fleet, at least one GPU
    uint64_t worstFailures = 0; // failures of the worst 1 % over the week
    double worstShare = 0; // worstFailures / weekFailures, 0..1; 0 without failures
    bool worstShareIsLowerBound = false; // the backend listed fewer offenders than 1 % of the fleet could hold
    std::vector<SummaryOffender> worst; // those GPUs, most failures first
};

// Pure, so that tests can check it against the backend's own numbers.
SummaryFigures computeSummaryFigures(const Summary &day, const Summary &week, double pricePerGpuHour);

// The texts shown for figures, shared by the page and its reports.
QString formatSummaryPercent(double percent);
QString formatSummaryHours(double hours);
QString formatSummaryMoney(double amount);

// The most offenders GetSummary lists: the worst 1 % is exact up to a fleet of 100,000 GPUs, a lower bound beyond.
constexpr uint32_t maxSummaryOffenders = 1000;

} // namespace fleetscope

Q_DECLARE_METATYPE(fleetscope::SummaryFetch)
