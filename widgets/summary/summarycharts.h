// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QFont>

#include <cstdint>

class QChart;
class QChartView;
class QDateTimeAxis;
class QValueAxis;

namespace fleetscope {

// The summary page's charts share one look: its font (large on a wall), a light or dark theme, axis labels smaller.

// A chart in the page's theme with its title and legend in font.
QChart *newSummaryChart(const QFont &font, bool dark);
// The axes' labels and titles a little smaller than font; after the axes are added.
void styleSummaryAxes(QChart *chart, const QFont &font);
// A 0..100 % axis.
QValueAxis *summaryPercentAxis();
// A target as a red dashed line at value percent from firstMs to lastMs on the chart's axes, named "Target N %"; the
// time axis shows that span.
void addSummaryTarget(
    QChart *chart, QDateTimeAxis *time, QValueAxis *value, int64_t firstMs, int64_t lastMs, int percent);
// Gives view its new chart; the one it had is deleted with its series.
void replaceSummaryChart(QChartView *view, QChart *chart);
// A chart view as the page shows one: antialiased, never narrower than readable.
QChartView *newSummaryChartView(const QString &name, QWidget *parent);

} // namespace fleetscope
