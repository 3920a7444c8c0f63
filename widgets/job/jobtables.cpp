// SPDX-License-Identifier: Apache-2.0
#include "widgets/job/jobtables.h"

#include "model/place.h"

#include <QCoreApplication>
#include <QHeaderView>
#include <QLocale>
#include <QStringBuilder>
#include <QTableWidget>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("JobPage", text);
}

QTableWidgetItem *textItem(const QString &text, Qt::Alignment align = Qt::AlignLeft | Qt::AlignVCenter)
{
    auto *item = new QTableWidgetItem(text);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    item->setTextAlignment(align);
    item->setToolTip(text);
    return item;
}

QTableWidgetItem *numberItem(const QString &text)
{
    return textItem(text, Qt::AlignRight | Qt::AlignVCenter);
}

struct MetricWords
{
    QString name;
    QString unit;
    int decimals;
};

// The four metrics a straggler is shown by (the contract's Straggler.metric_id).
MetricWords metricWords(const QString &id)
{
    if (id == QLatin1String("sm_clock")) {
        return { tr("SM clock"), QStringLiteral(" MHz"), 0 };
    }
    if (id == QLatin1String("gpu_util")) {
        return { tr("utilisation"), QStringLiteral(" %"), 0 };
    }
    if (id == QLatin1String("power")) {
        return { tr("power"), QStringLiteral(" W"), 0 };
    }
    if (id == QLatin1String("gpu_temp")) {
        return { tr("temperature"), QStringLiteral(" °C"), 0 };
    }
    return { id, QString(), 1 };
}

// A number from the wire as text: "–" for NaN or infinity.
QString number(double v, int decimals)
{
    return std::isfinite(v) ? QLocale().toString(v, 'f', decimals) : QStringLiteral("–");
}

} // namespace

QString jobGpuName(const Topology *topology, uint32_t gpu)
{
    if (topology && gpu < topology->gpuCount && gpu < topology->nodeOfGpu.size()
        && topology->nodeOfGpu[gpu] < topology->nodes.size()) {
        return Place::gpu(gpu).name(*topology);
    }
    return tr("GPU %1").arg(gpu);
}

QString lossCauseName(LossCause cause)
{
    switch (cause) {
    case LossCause::Incident:
        return tr("incident");
    case LossCause::Straggler:
        return tr("straggler");
    case LossCause::Restart:
        return tr("restart");
    case LossCause::Checkpoint:
        return tr("checkpoint");
    case LossCause::Stall:
        return tr("stall");
    case LossCause::Unspecified:
        break;
    }
    return tr("other");
}

QString stragglerShows(const Straggler &s)
{
    const MetricWords w = metricWords(s.metricId);
    return w.name % QStringLiteral(" ") % number(s.value, w.decimals) % tr(" vs ") % number(s.jobMedian, w.decimals)
        % w.unit;
}

QString agoText(int64_t ms, int64_t asOfMs)
{
    const int64_t s = std::max<int64_t>(0, (asOfMs - ms) / 1000);
    if (s < 60) {
        return tr("%1 s ago").arg(s);
    }
    if (s < 3600) {
        return tr("%1 min ago").arg(s / 60);
    }
    if (s < 48 * 3600) {
        return tr("%1 h %2 min ago").arg(s / 3600).arg((s % 3600) / 60);
    }
    return tr("%1 d %2 h ago").arg(s / 86400).arg((s % 86400) / 3600);
}

QString gpuHoursText(double hours)
{
    if (!std::isfinite(hours)) {
        return QStringLiteral("–");
    }
    return QLocale().toString(hours, 'f', std::abs(hours) < 10 ? 2 : 1);
}

QTableWidget *makeJobTable(const QStringList &headers, const QString &name)
{
    auto *table = new QTableWidget(0, static_cast<int>(headers.size()));
    table->setObjectName(name);
    table->setHorizontalHeaderLabels(headers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setWordWrap(false);
    table->setTextElideMode(Qt::ElideRight);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(false); // each table names the column that takes the rest
    table->horizontalHeader()->setHighlightSections(false);
    table->setCursor(Qt::PointingHandCursor);
    return table;
}

void fillStragglers(QTableWidget *table, const JobReport &report, const Topology *topology, size_t rows)
{
    const size_t n = std::min(rows, report.stragglers.size());
    table->setRowCount(static_cast<int>(n));
    for (size_t i = 0; i < n; ++i) {
        const Straggler &s = report.stragglers[i];
        const int row = static_cast<int>(i);
        auto *rank = numberItem(QString::number(i + 1));
        if (topology) {
            rank->setData(gpuRole, s.gpu);
        }
        table->setItem(row, RankColumn, rank);
        table->setItem(row, GpuColumn, textItem(jobGpuName(topology, s.gpu)));
        table->setItem(row, ShowsColumn, textItem(stragglerShows(s)));
        table->setItem(row, HoldBackColumn,
            numberItem(number(std::clamp(s.holdBack, 0.0F, 1.0F) * 100.0, 1) % QStringLiteral(" %")));
        table->setItem(row, SinceColumn, numberItem(agoText(s.sinceMs, report.asOfMs)));
        table->setItem(row, LostColumn, numberItem(gpuHoursText(s.gpuHoursLost)));
        table->setItem(row, ReasonColumn, textItem(s.reason));
    }
}

void fillLosses(QTableWidget *table, const JobReport &report, const Topology *topology, size_t rows)
{
    const size_t n = std::min(rows, report.losses.size());
    table->setRowCount(static_cast<int>(n));
    for (size_t i = 0; i < n; ++i) {
        const GoodputLoss &loss = report.losses[i];
        const int row = static_cast<int>(i);
        auto *cause = textItem(lossCauseName(loss.cause));
        if (topology && loss.gpu >= 0 && loss.gpu <= static_cast<int64_t>(UINT32_MAX)) {
            cause->setData(gpuRole, static_cast<uint32_t>(loss.gpu));
        }
        if (loss.incidentId != 0) {
            cause->setData(incidentRole, static_cast<quint64>(loss.incidentId));
        }
        table->setItem(row, CauseColumn, cause);
        QString what = loss.what;
        if (what.isEmpty() && loss.gpu >= 0 && loss.gpu <= static_cast<int64_t>(UINT32_MAX)) {
            what = jobGpuName(topology, static_cast<uint32_t>(loss.gpu));
        }
        table->setItem(row, WhatColumn, textItem(what));
        table->setItem(row, HoursColumn, numberItem(gpuHoursText(loss.gpuHours)));
        const double share = report.gpuHours > 0 ? loss.gpuHours / report.gpuHours * 100.0 : 0.0;
        table->setItem(row, ShareColumn, numberItem(number(share, 1) % QStringLiteral(" %")));
    }
}

} // namespace fleetscope
