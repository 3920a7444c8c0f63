// SPDX-License-Identifier: Apache-2.0
#include "widgets/summary/summaryfigures.h"

#include <algorithm>
#include <cmath>

namespace fleetscope {

SummaryFigures computeSummaryFigures(const Summary &day, const Summary &week, double pricePerGpuHour)
{
    SummaryFigures f;
    f.dayUtilisation = day.fleet.meanUtilisation;
    f.weekUtilisation = week.fleet.meanUtilisation;
    f.idleGpuHours = day.fleet.idleGpuHours;
    f.idleCost = f.idleGpuHours * pricePerGpuHour;
    f.gpus = day.fleet.gpuCount;
    f.healthyGpus = day.fleet.gpuCount - day.fleet.unhealthyGpus;
    f.availability = f.gpus > 0 ? static_cast<double>(f.healthyGpus) / f.gpus : 0.0;
    f.weekFailures = week.totalFailures;
    f.worstCount = std::max<uint32_t>(1, (week.fleet.gpuCount + 99) / 100);
    const size_t listed = std::min<size_t>(f.worstCount, week.offenders.size());
    f.worst.assign(week.offenders.begin(), week.offenders.begin() + static_cast<ptrdiff_t>(listed));
    for (const auto &o : f.worst) {
        f.worstFailures += o.failures;
    }
    f.worstShare = f.weekFailures > 0 ? static_cast<double>(f.worstFailures) / static_cast<double>(f.weekFailures) : 0;
    f.worstShareIsLowerBound = listed < f.worstCount && week.offenders.size() >= maxSummaryOffenders;
    return f;
}

SummaryTrendPoint summaryTrendPoint(const Summary &bucket)
{
    SummaryTrendPoint p { bucket.requestedToMs, bucket.fleet.meanUtilisation };
    p.hasGoodput = bucket.jobsAccounted > 0 && std::isfinite(bucket.goodput);
    p.goodput = p.hasGoodput ? 100 * std::clamp(bucket.goodput, 0.0, 1.0) : 0;
    return p;
}

QString formatSummaryPercent(double percent)
{
    return QString::number(percent, 'f', 1) + QStringLiteral(" %");
}

QString formatSummaryHours(double hours)
{
    return QString::number(hours, 'f', 1) + QStringLiteral(" GPU-h");
}

QString formatSummaryMoney(double amount)
{
    return QStringLiteral("USD ") + QString::number(amount, 'f', 2);
}

} // namespace fleetscope
