// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "app/commandline.h"
#include "app/viewstate.h"
#include "client/telemetryclient.h"
#include "model/fleetsearch.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QTimer>

class QDockWidget;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace fleetscope {

class BreadcrumbBar;
class ConsoleSession;
class DeskExports;
class DeskStatus;
class DeskToolbar;
class DetailPanel;
class FlightRecorder;
class HeatmapView;
class MapPage;
class Navigation;
class ReplayController;
class RollupModel;
class SearchBox;
class SummaryView;
class TimelineBar;

// The desk: the console for an engineer at a desk, composed of pages over a ConsoleSession. The map page (place
// bar with breadcrumbs and search, the map, the timeline, the legend) with its docks (rollups of the place, detail
// of the selection), and the executive summary on a page of its own; menus File, View, Go and Help; the status bar.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    // Over `session` when given (not owned), else over a session of its own made from the options.
    explicit MainWindow(const ConsoleOptions &options, ConsoleSession *session = nullptr, QWidget *parent = nullptr);
    ~MainWindow() override;

    ConsoleSession *session() const { return m_session; }
    TelemetryClient *client();
    HeatmapView *heatmap() const;
    MapPage *mapPage() const { return m_map; }
    // Connects the session to HOST:PORT (the embedded backend's or the user's).
    void connectTo(const QString &address);
    // Shows a problem that stops the console from working (the embedded backend failed) in the status bar.
    void showProblem(const QString &message);
    // The view as a short string ("Copy view"), and opening one.
    ViewState currentView() const;
    void openView(const ViewState &view);
    void goToTime(qint64 timeMs);
    bool isLoadingHistory() const;
    Navigation *navigation() const;
    DetailPanel *detailPanel() const { return m_detail; }
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
    // The window as on screen, the map's labels included.
    QPixmap grabWithMap();

private:
    QWidget *makeMapTab();
    void makeDocks();
    void makeMenus();
    void onSearchResult(const SearchResult &result);
    void onPlaceChanged();
    void onGpuChosen(int gpu);
    void rebuildSearch();
    void showDetailDock();
    void showShortcuts();
    void showAbout();
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
    FleetSearch m_fleetSearch;
    quint64 m_searchGeneration = 0; // the topology generation the search index is being built for
    RollupModel *m_rollups = nullptr;
    QSortFilterProxyModel *m_rollupSort = nullptr;
    QTableView *m_rollupTable = nullptr;
    QDockWidget *m_rollupDock = nullptr;
    DetailPanel *m_detail = nullptr;
    QDockWidget *m_detailDock = nullptr;
    SummaryView *m_summary = nullptr;
    QWidget *m_summaryPage = nullptr;
    TimelineBar *m_timeline = nullptr;
    QTimer m_summaryTimer; // refreshes the summary while its page is shown
    QElapsedTimer m_riskClock; // since the summary's capacity at risk was last computed
};

} // namespace fleetscope
