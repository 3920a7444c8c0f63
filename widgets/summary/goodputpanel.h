// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/summary/goodputfigures.h"
#include "widgets/summary/summaryfigures.h"

#include <QPixmap>
#include <QStringList>
#include <QWidget>

#include <vector>

class QChartView;
class QFormLayout;
class QLabel;
class QStandardItemModel;
class QTableView;

namespace fleetscope {

// The summary page's goodput: the running jobs' goodput over the day and the week against the field's 97 % (figures
// placed among the page's, addFiguresTo), its trend over the week's daily buckets and the day's hourly ones, and
// "Where goodput went": the week's job-hours lost by cause and subject (which incident and its domain, which GPU,
// which job's restarts), most first, sortable, with their share of the jobs' GPU-time, the jobs each cost and their
// cost at the page's price, and the totals per cause as a bar chart. A summary without goodput (no job ran, or an
// older backend) hides the figures and says so; it never shows 0 %.
// Threads: GUI thread only. Bounded: one row per loss the backend lists (at most GoodputSummary::maxLosses, 100).
class GoodputPanel : public QWidget
{
    Q_OBJECT
public:
    explicit GoodputPanel(QWidget *parent = nullptr);

    // Adds the goodput figures (day, week, the cost of the week's lost job-hours) as rows of the page's figures.
    void addFiguresTo(QFormLayout *form);
    void setSummaries(SummaryPtr day, SummaryPtr week);
    void setTrend(const std::vector<SummaryTrendPoint> &day, const std::vector<SummaryTrendPoint> &week);
    void setTopology(TopologyPtr topology);
    void setPricePerGpuHour(double price);
    // A wall's page: the week's goodput alone among the figures (a wall's screen has no room to spare), the rest
    // hidden with the panel itself (SummaryView::useWallLayout). One way.
    void useWallLayout();
    // The page's look: its font (the figures twice as large) and a dark ground for a wall.
    void setLook(const QFont &font, bool dark);

    const GoodputFigures &figures() const { return m_figures; }
    double pricePerGpuHour() const { return m_price; }
    QTableView *table() const { return m_table; }
    // The figures as sentences, for the PDF; empty before any summary.
    QStringList reportLines() const;
    // The losses as the table lists them (most first, whatever its sort), header first, for the PDF.
    std::vector<QStringList> lossRows() const;
    QPixmap trendChart() const;
    QPixmap causeChart() const;
    // SummaryReport::goodputCsv and goodputLossesCsv of what is shown.
    QByteArray figuresCsv() const;
    QByteArray lossesCsv() const;

Q_SIGNALS:
    // A loss row naming a GPU clicked (fleet index).
    void gpuChosen(uint32_t gpu);

private:
    void update();
    void updateFigureRows();
    void updateTable();
    void updateTrendChart();
    void updateCauseChart();

    SummaryPtr m_day;
    SummaryPtr m_week;
    TopologyPtr m_topology;
    std::vector<SummaryTrendPoint> m_dayTrend;
    std::vector<SummaryTrendPoint> m_weekTrend;
    double m_price = 0;
    GoodputFigures m_figures;
    QFont m_font;
    bool m_dark = false;
    bool m_wall = false;

    QFormLayout *m_form = nullptr;
    QLabel *m_dayFigure = nullptr;
    QLabel *m_weekFigure = nullptr;
    QLabel *m_lostFigure = nullptr;
    QLabel *m_title = nullptr;
    QLabel *m_line = nullptr; // what the week lost, or why there is nothing to show
    QStandardItemModel *m_model = nullptr;
    QTableView *m_table = nullptr;
    QChartView *m_trendView = nullptr;
    QChartView *m_causeView = nullptr;
};

} // namespace fleetscope
