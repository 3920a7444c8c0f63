// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "app/commandline.h"
#include "model/fleetsearch.h"
#include "model/flightrecorder.h"
#include "client/historyclient.h"
#include "model/place.h"
#include "model/rateofchange.h"
#include "client/telemetryclient.h"
#include "app/viewstate.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QThreadPool>
#include <QTimer>

#include <optional>

class QComboBox;
class QDateTimeEdit;
class QProgressBar;
class QVBoxLayout;
class QDockWidget;
class QLabel;
class QSortFilterProxyModel;
class QTableView;
class QToolButton;

namespace fleetscope {

class BreadcrumbBar;
class ColorLegend;
class DetailPanel;
class HeatmapView;
class HistoryClient;
class Navigation;
class ReplayController;
class RollupModel;
class TimelineBar;
class SearchBox;
class SummaryClient;
class SummaryView;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(const ConsoleOptions &options, QWidget *parent = nullptr);

    TelemetryClient *client() { return &m_client; }
    HeatmapView *heatmap() { return m_view; }
    // Connects the client to HOST:PORT (the embedded backend's or the user's).
    void connectTo(const QString &address);
    // Shows a problem that stops the console from working (the embedded backend failed) in the status bar.
    void showProblem(const QString &message);
    // The view as a short string ("Copy view"), and opening one: the metric, colours, arrangement and range at
    // once, the place, selection and zoom as soon as the fleet's topology is known.
    ViewState currentView() const;
    void openView(const ViewState &view);
    // Shows the fleet at a past time: from the flight recorder when it holds that time, else from the backend's
    // history (QueryRange), with a progress indicator while it loads.
    void goToTime(qint64 timeMs);
    bool isLoadingHistory() const { return m_historyRequest != 0; }
    Navigation *navigation() { return m_navigation; }
    DetailPanel *detailPanel() { return m_detail; }
    RollupModel *rollups() { return m_rollups; }
    SearchBox *searchBox() { return m_search; }
    SummaryView *summary() { return m_summary; }
    QDockWidget *summaryDock() { return m_summaryDock; }
    const FlightRecorder &recorder() const { return m_recorder; }
    ReplayController *replay() { return m_replay; }
    TimelineBar *timeline() { return m_timeline; }
    // --screenshot: once a live frame has been drawn, saves the window to file and emits screenshotDone(0); after
    // timeoutS seconds without one, emits screenshotDone(1) with a message on stderr.
    void takeScreenshotWhenLive(const QString &file, int timeoutS);

    // The window as on screen, the map's labels included.
    QPixmap grabWithMap();

    // Wall mode (app/wallmode.h): the map alone, without toolbars, menus, docks, the status bar, the timeline or
    // anything that opens a dialog. Returns the executive summary's page, taken out of its dock for the wall.
    QWidget *enterWallMode();
    bool isWallMode() const { return m_wallMode; }
    // The newest live sample and the stream's interval; data is stale past three intervals.
    qint64 lastLiveSampleMs() const { return m_lastLiveSampleMs; }
    qint64 liveIntervalMs() const { return m_intervalMs; }
    // Stale: no newer sample for three intervals, by this machine's monotonic clock.
    bool isStale() const;
    // Since the newest sample arrived, by the monotonic clock; 0 before any.
    qint64 msSinceNewData() const { return m_newDataClock.isValid() ? m_newDataClock.elapsed() : 0; }
    // Warnings and worse of the fleet over the last hour, oldest first.
    const std::vector<FleetEvent> &fleetEvents() const { return m_events; }

Q_SIGNALS:
    void screenshotDone(int exitCode);
    void fleetEventsChanged();
    // Something the user should know that is not shown elsewhere: where a wall puts its banner.
    void problemReported(const QString &message);

private:
    void onStateChanged(TelemetryClient::State state, const QString &detail);
    void onTopologyChanged(const TopologyPtr &topology);
    void onMetricsChanged();
    void onFrame(const FramePtr &frame);
    void onMetricSelected(int index);
    // The range the map and legend use for this frame: the metric's own, or the auto range of the values shown.
    void updateAutoRange(const FramePtr &shown);
    void setUpNavigation(QWidget *mapArea);
    void setUpDocks();
    void setUpTimeline(QVBoxLayout *layout);
    // A frame to show, live or replayed: through the rate of change when chosen, to the map, rollups and detail.
    void showFrame(const FramePtr &frame);
    void showComparison(qint64 aMs, qint64 bMs);
    void followFleetEvents();
    void onHistoryFrame(const RangeResultPtr &result);
    void setUpActions();
    void onPlaceChanged(Place place);
    void openTowards(uint32_t gpu); // a click or Enter on a GPU: one level down, or sideways to its place
    void onSearchResult(const SearchResult &result);
    void applyPendingView();
    void rebuildSearch();
    void showDetailDock();
    void exportMap();
    void exportValues();
    void exportTimeSeries();
    void closeEvent(QCloseEvent *event) override;
    void refreshStatus();

    ConsoleOptions m_options;
    TelemetryClient m_client;
    HeatmapView *m_view = nullptr;
    ColorLegend *m_legend = nullptr;
    QComboBox *m_metricBox = nullptr;
    QComboBox *m_colourBox = nullptr;
    QComboBox *m_showBox = nullptr; // the value, or its rate of change over a window
    QComboBox *m_rangeBox = nullptr;
    QComboBox *m_arrangeBox = nullptr;
    MetricInfo m_shownMetric; // what the map shows: the selected metric or its rate, with the range in use
    std::optional<RateOfChange> m_rate; // set while the map shows a rate of change
    Navigation *m_navigation = nullptr;
    BreadcrumbBar *m_breadcrumbs = nullptr;
    SearchBox *m_search = nullptr;
    FleetSearch m_fleetSearch;
    quint64 m_searchGeneration = 0; // the topology generation the search index is being built for
    RollupModel *m_rollups = nullptr;
    QSortFilterProxyModel *m_rollupSort = nullptr;
    QTableView *m_rollupTable = nullptr;
    QDockWidget *m_rollupDock = nullptr;
    HistoryClient *m_history = nullptr;
    DetailPanel *m_detail = nullptr;
    QDockWidget *m_detailDock = nullptr;
    SummaryClient *m_summaryClient = nullptr;
    SummaryView *m_summary = nullptr;
    QDockWidget *m_summaryDock = nullptr;
    QTimer m_summaryTimer; // refreshes the summary while it is shown
    std::optional<ViewState> m_pendingView; // applied once the topology arrives
    // Every frame received, compressed, for replay and export; recorded in order on one worker thread (a million
    // GPUs cost tens of ms a frame). The pool is declared after the recorder so it is drained first.
    FlightRecorder m_recorder;
    QThreadPool m_recordPool;
    ReplayController *m_replay = nullptr;
    TimelineBar *m_timeline = nullptr;
    quint64 m_eventStream = 0; // the fleet-wide StreamEvents feeding the timeline's markers
    std::vector<FleetEvent> m_events; // warnings and worse, newest last, for the markers
    bool m_comparing = false;
    QDateTimeEdit *m_goToEdit = nullptr;
    QToolButton *m_goButton = nullptr;
    bool m_wallMode = false;
    QProgressBar *m_loading = nullptr;
    quint64 m_historyRequest = 0; // the QueryRange of a past frame under way, 0 for none
    QLabel *m_connectionLabel = nullptr;
    QLabel *m_gpuLabel = nullptr;
    QLabel *m_ageLabel = nullptr;
    QLabel *m_fpsLabel = nullptr;
    QTimer m_statusTimer;
    QElapsedTimer m_fpsClock;
    QElapsedTimer m_riskClock; // since the summary's capacity at risk was last computed
    quint64 m_fpsPaints = 0;
    double m_fps = -1; // not measured yet
    QString m_screenshotFile;
    qint64 m_intervalMs = 1000; // between the last two live frames' samples
    qint64 m_lastLiveSampleMs = 0;
    std::vector<qint64> m_intervalGaps; // the last few gaps between live samples, ms
    QElapsedTimer m_newDataClock; // since the newest sample arrived
};

} // namespace fleetscope
