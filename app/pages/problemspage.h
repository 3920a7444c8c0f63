// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/alerts.h"
#include "model/problems.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QMenu;
class QPushButton;
class QTableView;

namespace fleetscope {

class ConsoleSession;
class FleetAlerts;
class MapPage;
class ProblemsBoard;
class ProblemsModel;
class SilenceDialog;
class SilencesView;

// What is wrong right now, ranked by severity and blast radius, as the desk and the wall show it, wired once to the
// session: read again as events, jobs or the fleet change, and with time (bursts go quiet, durations grow): every 5 s
// on the wall, every 30 s on the desk, while the page is shown.
//
// The desk's look (its "Problems" dock): a table filtered by kind, incidents first, each entry wrapped to the dock's
// width (it reads whole in a narrow dock), the chosen problem kept chosen across updates; activating one (click,
// Enter) shows it on the map: a GPU's problem drills to the GPU, a node's to it; an incident's, a rack's or a job's
// folded line to the smallest place that holds its GPUs (a rack, a row or the fleet), its GPUs outlined as a job's
// blast radius is, and an incident's shared domain (a leaf switch, a PDU, a cooling unit) highlighted around them: all
// the domain's GPUs, hit or not (HeatmapView::setDomainGpus); the message says which ("leaf su03-l5: 32 GPUs; 31 hit").
// The wall's: a board in type readable across a room, warnings and worse only (information, a rack half way through a
// driver rollout, stays on the desk); nobody points at it.
//
// The NOC's alerts (the session's FleetAlerts) are listed among the problems, ranked by their severity, those
// silenced or inhibited after the rest and marked with who silenced them, until when and why. On the desk a chosen
// alert drills to its GPUs as a problem does; "Silence…" (a button and the table's context menu) opens a
// SilenceDialog with matchers proposed for the chosen problem, incident or alert, "Open runbook" opens an alert's
// runbook in the desktop's browser. Both are greyed out, with the reason as their tooltip, where the backend says this
// console may not silence. The context menu's "Open job page" opens the page of a job the problem hits.
class ProblemsPage : public QWidget
{
    Q_OBJECT
public:
    enum class Look { Desk, Wall };
    // map: where a chosen problem is shown (the desk's look only).
    ProblemsPage(ConsoleSession *session, Look look, MapPage *map = nullptr, QWidget *parent = nullptr);

    // The desk's table (null on the wall) and the wall's board (null on the desk).
    ProblemsModel *model() const { return m_model; }
    ProblemsBoard *board() const { return m_board; }
    // The open problems at the last refresh, counted (model/problems.h).
    ProblemTally tally() const { return m_tally; }
    // The wall's look: what its banner says while a shared incident is open (model/problems.h leadIncidentLine), and
    // that incident's severity; empty when none is (and on the desk).
    QString leadIncident() const { return m_lead; }
    EventSeverity leadSeverity() const { return m_leadSeverity; }
    // Whether the page is seen now: shown, it reads the problems at once and then follows them; hidden, the desk's
    // stops, the wall's goes on counting them (its header says the tally) without painting. The desk's dock is shown
    // from the start, the wall's page only while it is on the wall.
    void setShown(bool shown);
    // Reads the session's problems again.
    void refresh();
    // Rows as tall as their wrapped entries (the first ones: a million GPUs' thousands of problems are not measured);
    // done by refresh() and as the dock is resized.
    void fitRows();
    // The desk's: chooses the open incident of that id (the problems read again, every kind, when it is not listed)
    // and shows it on the map as a click would, its domain outlined. False when it is not open (or on the wall).
    bool showIncident(quint64 incidentId);
    // Where a chosen problem is shown: its GPU, its node, or the smallest place holding its GPUs.
    static Place placeToShow(const Problem &problem, const Topology &topology);

    // The alerts shown beside the problems, who this console is to the backend (whether it may silence), and what to
    // say while the alerts are old (FleetAlerts::freshnessText; empty while live): kept as the session's FleetAlerts
    // says (which is handed the silences asked for); tests may hand them in.
    void setAlerts(std::shared_ptr<const AlertBoard> board);
    void setAccess(const BackendAccess &access);
    void setAlertsNote(const QString &note);
    const AlertBoard &alertBoard() const { return *m_alerts; }
    // Why Silence… and Expire are greyed out (model/alertproblems.h silenceRefusal); empty when they are not.
    QString silenceRefusal() const;
    // The wall's banner while the alerts are old: "Alerts are old: Alertmanager unreachable …"; empty while live.
    QString alertsNote() const;

    // The desk's actions on the chosen problem (the selected row), as the buttons and the context menu run them:
    // Silence… opens the dialog (silenceDialog() while it is open; its OK asks for the silence: silenceRequested),
    // Open runbook opens the alert's runbook_url. Whether each is offered for the selected row now.
    void silenceChosen();
    void openChosenRunbook();
    bool canSilenceChosen() const;
    bool canOpenChosenRunbook() const;
    SilenceDialog *silenceDialog() const;
    QPushButton *silenceButton() const { return m_silenceButton; }
    QPushButton *runbookButton() const { return m_runbookButton; }
    // The desk's list of silences, with Expire on each (made on first use; the desk puts it in a dock).
    SilencesView *silencesView();
    // Rows measured to fit their wrapped entries; past them rows keep the height of the last one measured.
    static constexpr int maxFittedRows = 200;

Q_SIGNALS:
    // For the status bar: the problem shown, and where.
    void message(const QString &text, int timeoutMs);
    // The problems were read again: what the count above the table says (the wall's header says the same).
    void tallied(const ProblemTally &tally);
    // An incident was chosen: its GPUs, as runs [first, count), outlined on the map.
    void incidentChosen(quint64 id, const std::vector<std::pair<uint32_t, uint32_t>> &gpuRuns);
    // The operator asked for a silence (the dialog's OK), or to end one (Expire): followAlerts hands them to the
    // backend.
    void silenceRequested(const fleetscope::SilenceDraft &draft);
    void expireRequested(const QString &silenceId);
    // "Open job page" on a problem that hits a job (the table's context menu).
    void jobPageRequested(quint64 jobId);

private:
    void applyFilter();
    void choose(const QModelIndex &index);
    const Problem *chosen() const;
    void updateActions();
    void showSilences();
    void followAlerts(FleetAlerts *alerts);
    void addJobPageActions(QMenu *menu, int row);

    void makeTable();
    // The count above the table: the tally, and the GPUs critical in the frame shown as the health strip counts them.
    void showCount();

    ConsoleSession *m_session;
    MapPage *m_map;
    bool m_shown = false;
    Look m_look;
    ProblemsModel *m_model = nullptr;
    QComboBox *m_kinds = nullptr;
    QLabel *m_count = nullptr;
    QTableView *m_table = nullptr;
    ProblemsBoard *m_board = nullptr;
    QTimer m_clock;
    ProblemTally m_tally;
    QString m_lead;
    EventSeverity m_leadSeverity = EventSeverity::Warning;
    uint32_t m_gpusCritical = 0;
    std::shared_ptr<const AlertBoard> m_alerts = std::make_shared<const AlertBoard>();
    BackendAccess m_access;
    QString m_alertsNote;
    QPushButton *m_silenceButton = nullptr;
    QPushButton *m_runbookButton = nullptr;
    QPointer<SilenceDialog> m_dialog;
    QPointer<SilencesView> m_silences;
};

} // namespace fleetscope
