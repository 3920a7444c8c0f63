// SPDX-License-Identifier: Apache-2.0
#include "widgets/summary/summarycharts.h"

#include "widgets/style/fontscale.h"

#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLegend>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

namespace fleetscope {

QChart *newSummaryChart(const QFont &font, bool dark)
{
    auto *chart = new QChart;
    // The theme first: it resets fonts and series colours, which are set after it.
    chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    QFont title = font;
    title.setBold(true);
    chart->setTitleFont(title);
    chart->legend()->setFont(font);
    return chart;
}

void styleSummaryAxes(QChart *chart, const QFont &font)
{
    const QFont labels = scaledFont(font, 0.8);
    for (QAbstractAxis *axis : chart->axes()) {
        axis->setLabelsFont(labels);
        axis->setTitleFont(labels);
    }
}

QValueAxis *summaryPercentAxis()
{
    auto *axis = new QValueAxis;
    axis->setRange(0, 100);
    axis->setLabelFormat(QStringLiteral("%.0f %%"));
    return axis;
}

void replaceSummaryChart(QChartView *view, QChart *chart)
{
    QChart *old = view->chart();
    view->setChart(chart);
    delete old;
}

QChartView *newSummaryChartView(const QString &name, QWidget *parent)
{
    auto *view = new QChartView(parent);
    view->setObjectName(name);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(260);
    view->setMinimumWidth(380); // a chart narrower than that is a smudge
    return view;
}

void addSummaryTarget(
    QChart *chart, QDateTimeAxis *time, QValueAxis *value, int64_t firstMs, int64_t lastMs, int percent)
{
    auto *target = new QLineSeries;
    target->setName(QObject::tr("Target %1 %").arg(percent));
    target->append(static_cast<qreal>(firstMs), percent);
    target->append(static_cast<qreal>(lastMs), percent);
    QPen pen(Qt::red);
    pen.setStyle(Qt::DashLine);
    pen.setWidth(2);
    target->setPen(pen);
    chart->addSeries(target);
    target->attachAxis(time);
    target->attachAxis(value);
    time->setRange(QDateTime::fromMSecsSinceEpoch(firstMs), QDateTime::fromMSecsSinceEpoch(lastMs));
}

} // namespace fleetscope
