// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/alerts.h"
#include "model/fleetmodel.h"
#include "model/history.h"
#include "model/jobreport.h"

#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

class QBoxLayout;
class QLabel;
class QStackedWidget;
class QTableWidget;

namespace fleetscope {

class JobHeader;
class JobTimeline;

// A job's own page (docs/JOBS.md): who it is and what it is doing now, its goodput and the GPU-hours it lost per
// cause, its stragglers ranked by how much each holds it back, and its timeline (its GPUs' utilisation band over its
// life with its checkpoints, stalls and restarts, and the events, incidents and alerts that hit its GPUs). Handed
// what it shows (JobWatch's report, the session's events and alerts); every row and mark is clickable. On the desk it
// sits beside the map, which outlines the job's GPUs; on a wall it is drawn large and takes no input.
class JobPage : public QWidget
{
    Q_OBJECT
public:
    explicit JobPage(QWidget *parent = nullptr);

    // The topology the report's GPU and domain indices refer to (names GPUs "r01-k02-n03 GPU 5").
    void setTopology(TopologyPtr topology);
    // The report shown; null clears the page (it then says what problem() says, or "loading").
    void setReport(JobReportPtr report);
    // Why the report shown is not fresh ("backend unavailable: ..."), shown above it with the report marked old;
    // empty when it is.
    void setProblem(const QString &problem);
    // The fleet's events as the session holds them: the page keeps those that hit the job's GPUs (or name the job)
    // within its life.
    void setEvents(const std::vector<FleetEvent> &events);
    // The NOC's alerts: those placed on the job's GPUs are marked on the timeline and listed.
    void setAlerts(const AlertBoard &alerts);
    // Large text, no input: the wall's job page.
    void setWallMode(bool wall);

    JobReportPtr report() const;

Q_SIGNALS:
    // A straggler's or a loss's GPU, or a mark on one GPU: select and show it.
    void gpuActivated(uint32_t gpu);
    // A time on the timeline: replay the fleet there.
    void timeActivated(qint64 timeMs);
    // An incident's mark or loss: show it among the problems, its domain outlined.
    void incidentActivated(quint64 incidentId);
    void closeRequested();

private:
    // The report's job's events and alerts, again as marks and as the list (a new report, events or alerts).
    void refreshHits();
    void refreshTables();
    void refreshProblem();
    void activateRow(QTableWidget *table, int row);
    // The report's indices were checked against another topology than the page's: its GPUs are not today's.
    bool otherShape() const;

    TopologyPtr m_topology;
    JobReportPtr m_report;
    QString m_problem;
    std::vector<FleetEvent> m_events; // the session's, whole: a new report may name another job
    AlertBoard m_alerts;
    bool m_wall = false;

    QStackedWidget *m_stack;
    QLabel *m_placeholder;
    QWidget *m_content;
    QLabel *m_banner;
    JobHeader *m_header;
    JobTimeline *m_timeline;
    QBoxLayout *m_tablesRow = nullptr;
    QLabel *m_stragglersCaption;
    QTableWidget *m_stragglers;
    QLabel *m_lossesCaption;
    QTableWidget *m_losses;
    QLabel *m_hitsCaption;
    QTableWidget *m_hits;
};

} // namespace fleetscope
