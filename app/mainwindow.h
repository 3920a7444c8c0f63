// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "app/commandline.h"
#include "model/viewstate.h"

#include <QMainWindow>

class QDockWidget;
class QTabWidget;

namespace fleetscope {

class BreadcrumbBar;
class ConsoleSession;
class DeskExports;
class DeskSearch;
class DeskStatus;
class DeskToolbar;
class DetailPanel;
class FlightRecorder;
class HeatmapView;
class JobDesk;
class MapPage;
class Navigation;
class ReplayController;
class RollupModel;
class SearchBox;
class ProblemsPage;
class SummaryPage;
class SummaryView;
class TimelineBar;

// The desk: the console for an engineer at a desk, composed of pages over a ConsoleSession. The map page (place
// bar with breadcrumbs and search, the map, the timeline, the legend) with its docks (rollups of the place, detail
// of the selection, a job's own page), and the executive summary on a page of its own; menus File, View, Go and Help;
// the status bar.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    // Over `session` when given (not owned), else over a session of its own made from the options.
    explicit MainWindow(const ConsoleOptions &options, ConsoleSession *session = nullptr, QWidget *parent = nullptr);
    ~MainWindow() override;

    ConsoleSession *session() const { return m_session; }
    HeatmapView *heatmap() const;
    MapPage *mapPage() const { return m_map; }
    void connectTo(const QString &address); // the session to HOST:PORT
    // File > Connect to backend: address and credentials files, remembered for this machine if asked.
    void openConnectionDialog();
    void showProblem(const QString &message); // one that stops the console (the embedded backend failed)
    // The view as a short string ("Copy view"), and opening one.
    ViewState currentView() const;
    void openView(const ViewState &view);
    void goToTime(qint64 timeMs);
    bool isLoadingHistory() const;
    Navigation *navigation() const;
    DetailPanel *detailPanel() const { return m_detail; }
    // The job page's dock (JobDesk): every entry point opens it.
    JobDesk *jobDesk() const { return m_jobDesk; }
    ProblemsPage *problemsPage() const { return m_problems; }
    RollupModel *rollups() const { return m_rollups; }
    SearchBox *searchBox() const { return m_search; }
    SummaryView *summary() const { return m_summary; }
    // The executive summary's page; showSummary(true) brings it to the front.
    void showSummary(bool shown);
    bool isSummaryShown() const;
    const FlightRecorder &recorder() const;
    ReplayController *replay() const;
    TimelineBar *timeline() const { return m_timeline; }
    DeskExports *exports() const { return m_exports; }
    QPixmap grabWithMap(); // the window as on screen, the map's labels included

private:
    QWidget *makeMapTab();
    void makeDocks();
    void onPlaceChanged();
    void onGpuChosen(int gpu);
    void showDetailDock();
    void closeEvent(QCloseEvent *event) override;

    ConsoleOptions m_options;
    ConsoleSession *m_session = nullptr;
    MapPage *m_map = nullptr;
    QTabWidget *m_pages = nullptr;
    DeskToolbar *m_toolbar = nullptr;
    DeskStatus *m_status = nullptr;
    DeskExports *m_exports = nullptr;
    BreadcrumbBar *m_breadcrumbs = nullptr;
    SearchBox *m_search = nullptr;
    DeskSearch *m_deskSearch = nullptr;
    RollupModel *m_rollups = nullptr;
    QDockWidget *m_rollupDock = nullptr;
    DetailPanel *m_detail = nullptr;
    QDockWidget *m_detailDock = nullptr;
    ProblemsPage *m_problems = nullptr;
    QDockWidget *m_problemsDock = nullptr;
    QDockWidget *m_silencesDock = nullptr;
    JobDesk *m_jobDesk = nullptr;
    SummaryView *m_summary = nullptr;
    SummaryPage *m_summaryPage = nullptr;
    QWidget *m_summaryTab = nullptr; // the page in a scroll area
    TimelineBar *m_timeline = nullptr;
};

} // namespace fleetscope
