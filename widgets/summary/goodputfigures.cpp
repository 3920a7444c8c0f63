// SPDX-License-Identifier: Apache-2.0
#include "widgets/summary/goodputfigures.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("fleetscope::SummaryView", text);
}

size_t causeIndex(LossCause cause)
{
    const auto i = static_cast<size_t>(cause);
    return i < goodputCauses.size() ? i : 0;
}

bool usable(double gpuHours)
{
    return std::isfinite(gpuHours) && gpuHours >= 0;
}

// A range's goodput in percent, or false when it has none to show.
bool goodputOf(const Summary &s, double *percent)
{
    if (s.jobsAccounted == 0 || !std::isfinite(s.goodput)) {
        return false;
    }
    *percent = 100.0 * std::clamp(s.goodput, 0.0, 1.0);
    return true;
}

double lostOf(const Summary &s)
{
    const double lost = s.jobGpuHours - s.productiveGpuHours;
    return std::isfinite(lost) ? std::max(0.0, lost) : 0.0;
}

std::array<double, 6> byCause(const std::vector<GoodputLoss> &losses)
{
    std::array<double, 6> sums {};
    for (const auto &l : losses) {
        if (usable(l.gpuHours)) {
            sums[causeIndex(l.cause)] += l.gpuHours;
        }
    }
    return sums;
}
} // namespace

GoodputFigures computeGoodputFigures(const Summary &day, const Summary &week, double pricePerGpuHour)
{
    GoodputFigures f;
    f.hasDay = goodputOf(day, &f.dayGoodput);
    f.hasWeek = goodputOf(week, &f.weekGoodput);
    if (f.hasDay) {
        f.dayJobs = day.jobsAccounted;
        f.dayJobGpuHours = day.jobGpuHours;
        f.dayLostGpuHours = lostOf(day);
        f.dayByCause = byCause(day.losses);
    }
    if (!f.hasWeek) {
        return f;
    }
    f.weekJobs = week.jobsAccounted;
    f.weekJobGpuHours = week.jobGpuHours;
    f.weekProductiveGpuHours = week.productiveGpuHours;
    f.weekLostGpuHours = lostOf(week);
    f.weekLostCost = f.weekLostGpuHours * pricePerGpuHour;
    f.weekByCause = byCause(week.losses);
    for (const auto &l : week.losses) {
        if (usable(l.gpuHours)) {
            f.losses.push_back(l);
        }
    }
    // Most first as the backend sends them; sorted again so that the page never depends on it.
    std::stable_sort(f.losses.begin(), f.losses.end(),
        [](const GoodputLoss &a, const GoodputLoss &b) { return a.gpuHours > b.gpuHours; });
    return f;
}

QString goodputCauseName(LossCause cause)
{
    switch (cause) {
    case LossCause::Incident:
        return tr("Incident");
    case LossCause::Straggler:
        return tr("Straggler");
    case LossCause::Restart:
        return tr("Restart");
    case LossCause::Checkpoint:
        return tr("Checkpoint");
    case LossCause::Stall:
        return tr("Stall");
    case LossCause::Unspecified:
        break;
    }
    return tr("Other");
}

QString goodputCauseKey(LossCause cause)
{
    switch (cause) {
    case LossCause::Incident:
        return QStringLiteral("incident");
    case LossCause::Straggler:
        return QStringLiteral("straggler");
    case LossCause::Restart:
        return QStringLiteral("restart");
    case LossCause::Checkpoint:
        return QStringLiteral("checkpoint");
    case LossCause::Stall:
        return QStringLiteral("stall");
    case LossCause::Unspecified:
        break;
    }
    return QStringLiteral("other");
}

QString summaryGpuName(uint32_t gpu, const Topology *topology)
{
    if (topology == nullptr || gpu >= topology->gpuCount || gpu >= topology->nodeOfGpu.size()) {
        return QString::number(gpu);
    }
    const auto &node = topology->nodeOf(gpu);
    return tr("%1 GPU %2").arg(node.hostname).arg(gpu - node.firstGpu);
}

QString goodputLossSubject(const GoodputLoss &loss, const Topology *topology)
{
    QStringList parts;
    if (loss.cause == LossCause::Incident && loss.incidentId != 0) {
        parts << tr("incident %1").arg(loss.incidentId);
    }
    if (loss.domain >= 0) {
        const QString name = topology != nullptr && static_cast<uint64_t>(loss.domain) < topology->domains.size()
            ? topology->domainName(static_cast<uint32_t>(loss.domain))
            : tr("domain %1").arg(loss.domain);
        parts << name;
    }
    if (loss.gpu >= 0 && loss.gpu <= static_cast<int64_t>(UINT32_MAX)) {
        parts << summaryGpuName(static_cast<uint32_t>(loss.gpu), topology);
    } else if (loss.node >= 0) {
        parts << (topology != nullptr && static_cast<uint64_t>(loss.node) < topology->nodes.size()
                ? tr("node %1").arg(topology->nodes[static_cast<size_t>(loss.node)].hostname)
                : tr("node %1").arg(loss.node));
    }
    if (loss.jobId != 0) {
        parts << tr("job %1").arg(loss.jobId);
    }
    if (parts.isEmpty()) {
        return loss.what.isEmpty() ? tr("not attributed") : loss.what;
    }
    return parts.join(QStringLiteral(" · "));
}

} // namespace fleetscope
