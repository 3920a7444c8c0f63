// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/capacityrisk.h"
#include "model/summary.h"
#include "widgets/summary/summaryfigures.h"

#include <QWidget>

#include <cstdint>
#include <vector>

class QChart;
class QGridLayout;
class QChartView;
class QDoubleSpinBox;
class QLabel;
class QStandardItemModel;
class QTableView;

namespace fleetscope {

class GoodputPanel;
class RepeatOffendersPanel;

// The executive summary: fleet utilisation over the last day and week against the 85 % target, the running jobs'
// goodput against 97 % and where it went (GoodputPanel), idle GPU-hours and their cost, availability, where failures
// concentrate (Pareto), and utilisation by row and by job.
//
// The page only shows what it is handed (the session's SummaryFetcher asks the backend and assembles the answers),
// computeSummaryFigures derives the figures, SummaryReport writes the reports.
// Threads: GUI thread only.
class SummaryView : public QWidget
{
    Q_OBJECT
public:
    static constexpr double targetUtilisation = 85.0; // percent
    static constexpr int dayBuckets = 24; // one an hour
    static constexpr int weekBuckets = 7; // one a day

    using TrendPoint = SummaryTrendPoint;
    using Figures = SummaryFigures;
    static Figures computeFigures(const Summary &day, const Summary &week, double pricePerGpuHour)
    {
        return computeSummaryFigures(day, week, pricePerGpuHour);
    }
    // The texts shown for figures, shared with the PDF report.
    static QString formatPercent(double percent) { return formatSummaryPercent(percent); }
    static QString formatHours(double hours) { return formatSummaryHours(hours); }
    static QString formatMoney(double amount) { return formatSummaryMoney(amount); }

    explicit SummaryView(QWidget *parent = nullptr);
    ~SummaryView() override;

    // Shows what a refresh brought (the trend, and the day's and week's summaries where both came); refreshed().
    void showFetch(const SummaryFetch &result);
    // Shows summaries obtained elsewhere (the day's and the week's); the trend is left as it is.
    void setSummaries(SummaryPtr day, SummaryPtr week);
    void setTrend(std::vector<TrendPoint> day, std::vector<TrendPoint> week);

    double pricePerGpuHour() const;
    void setPricePerGpuHour(double price);
    bool hasData() const { return m_day && m_week; }
    const Figures &figures() const { return m_figures; }
    SummaryPtr daySummary() const { return m_day; }
    SummaryPtr weekSummary() const { return m_week; }
    const std::vector<TrendPoint> &dayTrend() const { return m_dayTrend; }
    const std::vector<TrendPoint> &weekTrend() const { return m_weekTrend; }

    // Offenders by hostname and GPU number on the node (the fleet index alone without a topology).
    void setTopology(TopologyPtr topology);
    // Capacity at risk now, from the live frame's health and the running jobs.
    void setLiveState(const FramePtr &frame, const JobsPtr &jobs);
    const CapacityAtRisk &capacityAtRisk() const { return m_risk; }
    // Every text of the view from this font: the figures twice its size, the charts' labels as large (a wall).
    void setBaseFont(const QFont &font);
    // Charts on a dark ground (a wall).
    void setDark(bool dark);
    // The wall's page: the figures, both charts and capacity at risk with its jobs; the tables meant for a desk
    // (offenders, rows, jobs, racks at risk) are left out. One way: a wall stays a wall.
    void useWallLayout();

    // The worst 1 % of GPUs as CSV (RFC 4180, CRLF): gpu (fleet index), hostname, gpu_on_node (empty without a
    // topology), failures, share of the week's failures.
    QByteArray offendersCsv() const;
    // Each returns an empty string on success, else what went wrong.
    QString exportOffendersCsv(const QString &path) const;
    // The repeat offenders (lasting score) as listed: SummaryReport::repeatOffendersCsv.
    QByteArray repeatOffendersCsv() const;
    QString exportRepeatOffendersCsv(const QString &path) const;
    RepeatOffendersPanel *repeatOffenders() const { return m_repeat; }
    // The jobs' goodput as CSV: one row for the day and one for the week (SummaryReport::goodputCsv), and where it
    // went, the week's losses most first (SummaryReport::goodputLossesCsv).
    QByteArray goodputCsv() const;
    QString exportGoodputCsv(const QString &path) const;
    QByteArray goodputLossesCsv() const;
    QString exportGoodputLossesCsv(const QString &path) const;
    GoodputPanel *goodput() const { return m_goodput; }
    QString exportPdf(const QString &path);
    QString exportPng(const QString &path);

Q_SIGNALS:
    void refreshed();
    // A GPU clicked in a list of offenders (fleet index), for the map to drill to.
    void gpuChosen(uint32_t gpu);

private:
    void updateFigures();
    void updateTrendChart();
    void updateParetoChart();
    void fillRollups(QStandardItemModel *model, const std::vector<SummaryRollup> &rollups);
    void updateRisk();
    void updateUnitHours();
    QChart *newChart() const;
    QString gpuName(uint32_t gpu) const;
    QStringList reportLines() const;

    SummaryPtr m_day;
    SummaryPtr m_week;
    std::vector<TrendPoint> m_dayTrend;
    std::vector<TrendPoint> m_weekTrend;
    Figures m_figures;

    QDoubleSpinBox *m_price = nullptr;
    QLabel *m_dayUtil = nullptr;
    QLabel *m_weekUtil = nullptr;
    QLabel *m_idle = nullptr;
    QLabel *m_cost = nullptr;
    QLabel *m_availability = nullptr;
    QLabel *m_worstShare = nullptr;
    QLabel *m_note = nullptr;
    QChartView *m_trendView = nullptr;
    QChartView *m_paretoView = nullptr;
    QStandardItemModel *m_rowModel = nullptr;
    QStandardItemModel *m_jobModel = nullptr;
    QStandardItemModel *m_offenderModel = nullptr;
    QTableView *m_rowTable = nullptr;
    QTableView *m_jobTable = nullptr;
    QTableView *m_offenderTable = nullptr;
    TopologyPtr m_topology;
    CapacityAtRisk m_risk;
    bool m_hasRisk = false;
    QLabel *m_riskLabel = nullptr;
    QLabel *m_unitsLabel = nullptr; // schedulable units fully healthy, and the GPUs stranded in the others
    QLabel *m_unitHoursLabel = nullptr; // GPU-hours lost in units not fully healthy over the last day
    RepeatOffendersPanel *m_repeat = nullptr;
    GoodputPanel *m_goodput = nullptr;
    QStandardItemModel *m_riskRackModel = nullptr;
    QStandardItemModel *m_riskJobModel = nullptr;
    QTableView *m_riskRackTable = nullptr;
    QTableView *m_riskJobTable = nullptr;
    bool m_dark = false;
    QGridLayout *m_grid = nullptr;
};

} // namespace fleetscope
