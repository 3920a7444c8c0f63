// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/capacityrisk.h"

#include "client/summaryclient.h"

#include <QPointer>
#include <QWidget>

#include <cstdint>
#include <map>
#include <set>
#include <vector>

class QChart;
class QGridLayout;
class QChartView;
class QDoubleSpinBox;
class QLabel;
class QStandardItemModel;
class QTableView;

namespace fleetscope {

// The executive summary: fleet utilisation over the last day and week against the 85 % target, idle GPU-hours and
// their cost, availability, where failures concentrate (Pareto), and utilisation by row and by job.
//
// GetSummary answers aggregates over one range, not time series, so the trend lines are built from several calls:
// the last day in hourly buckets and the last week in daily buckets; a bucket the backend holds no frame for is left
// out. Threads: GUI thread only; answers of a superseded refresh are dropped.
class SummaryView : public QWidget
{
    Q_OBJECT
public:
    static constexpr double targetUtilisation = 85.0; // percent
    static constexpr int dayBuckets = 24; // one an hour
    static constexpr int weekBuckets = 7; // one a day

    struct TrendPoint
    {
        int64_t endMs = 0; // the bucket's end
        double utilisation = 0; // percent
    };

    // What the view shows, derived from the day and week summaries alone (pure, so tests can check it).
    struct Figures
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
    static Figures computeFigures(const Summary &day, const Summary &week, double pricePerGpuHour);
    // The texts shown for figures, shared with the PDF report.
    static QString formatPercent(double percent);
    static QString formatHours(double hours);
    static QString formatMoney(double amount);

    explicit SummaryView(QWidget *parent = nullptr);
    ~SummaryView() override;

    // The client the view asks; not owned. Null: refresh() does nothing.
    void setClient(SummaryClient *client);
    // Asks for the day and week ending at nowMs and for the trend buckets; refreshed() once all have answered.
    void refresh(int64_t nowMs);
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
    QString exportPdf(const QString &path);
    QString exportPng(const QString &path);

Q_SIGNALS:
    void refreshed();
    void errorOccurred(const QString &message);

private:
    void onSummary(const SummaryPtr &summary);
    void onFailed(quint64 id, const QString &message);
    void settle(quint64 id);
    void updateFigures();
    void updateTrendChart();
    void updateParetoChart();
    void fillRollups(QStandardItemModel *model, const std::vector<SummaryRollup> &rollups);
    void updateRisk();
    QChart *newChart() const;
    void styleChart(QChart *chart) const;
    QString gpuName(uint32_t gpu) const;
    QStringList reportLines() const;

    QPointer<SummaryClient> m_client;
    SummaryPtr m_day;
    SummaryPtr m_week;
    std::vector<TrendPoint> m_dayTrend;
    std::vector<TrendPoint> m_weekTrend;
    Figures m_figures;

    // The refresh in flight: its request ids and what each is for.
    quint64 m_dayId = 0;
    quint64 m_weekId = 0;
    std::map<quint64, bool> m_trendIds; // id -> is a week bucket
    std::set<quint64> m_pending;
    std::vector<TrendPoint> m_nextDayTrend;
    std::vector<TrendPoint> m_nextWeekTrend;
    SummaryPtr m_nextDay;
    SummaryPtr m_nextWeek;

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
    QStandardItemModel *m_riskRackModel = nullptr;
    QStandardItemModel *m_riskJobModel = nullptr;
    QTableView *m_riskRackTable = nullptr;
    QTableView *m_riskJobTable = nullptr;
    bool m_dark = false;
    QGridLayout *m_grid = nullptr;
};

} // namespace fleetscope
