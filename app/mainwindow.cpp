// SPDX-License-Identifier: Apache-2.0
#include "app/mainwindow.h"

#include "model/autorange.h"
#include "widgets/navigation/breadcrumbbar.h"
#include "widgets/heatmap/colorlegend.h"
#include "widgets/heatmap/colormap.h"
#include "model/csvexport.h"
#include "widgets/detail/detailpanel.h"
#include "model/framediff.h"
#include "widgets/heatmap/heatmapview.h"
#include "client/historyclient.h"
#include "model/navigation.h"
#include "model/replaycontroller.h"
#include "widgets/navigation/rollupmodel.h"
#include "widgets/search/searchbox.h"
#include "client/summaryclient.h"
#include "widgets/summary/summaryview.h"
#include "widgets/timeline/timelinebar.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDateTimeEdit>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QPainter>
#include <QPointer>
#include <QProgressBar>
#include <QScrollArea>
#include <QSettings>
#include <QShortcut>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cstdio>

namespace fleetscope {

MainWindow::MainWindow(const ConsoleOptions &options, QWidget *parent)
    : QMainWindow(parent)
    , m_options(options)
    , m_recorder([&options] {
        FlightRecorderOptions recorder;
        recorder.retention = std::chrono::minutes(options.recordMinutes);
        return recorder;
    }())
{
    setWindowTitle(tr("Fleetscope"));
    resize(options.windowSize);
    m_recordPool.setMaxThreadCount(1); // frames must reach the recorder in the order they came

    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(6, 6, 6, 6);
    auto *placeBar = new QHBoxLayout;
    layout->addLayout(placeBar);
    m_view = new HeatmapView(central);
    m_view->setAnimated(options.animated);
    m_view->setArrangement(options.arrangement == QStringLiteral("compact") ? HeatmapView::Arrangement::Compact
            : options.arrangement == QStringLiteral("jobs")                 ? HeatmapView::Arrangement::ByJob
                                                                            : HeatmapView::Arrangement::FloorPlan);
    m_legend = new ColorLegend(central);
    layout->addWidget(m_view, 1);
    setUpTimeline(layout);
    layout->addWidget(m_legend);
    setCentralWidget(central);
    setUpNavigation(central);
    placeBar->addWidget(m_breadcrumbs, 1);
    placeBar->addWidget(m_search);
    setUpDocks();
    setUpActions();

    auto *toolbar = addToolBar(tr("View"));
    toolbar->setMovable(false);
    toolbar->addWidget(new QLabel(tr(" Metric: "), toolbar));
    m_metricBox = new QComboBox(toolbar);
    m_metricBox->setMinimumContentsLength(22);
    m_metricBox->setToolTip(tr("The metric the map shows"));
    toolbar->addWidget(m_metricBox);
    m_showBox = new QComboBox(toolbar);
    m_showBox->addItem(tr("value"), 0);
    for (const auto window : RateOfChange::windowChoices) {
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(window).count();
        m_showBox->addItem(seconds < 60 ? tr("change per min over %1 s").arg(seconds)
                                        : tr("change per min over %1 min").arg(seconds / 60),
            static_cast<int>(seconds));
    }
    m_showBox->setToolTip(tr("Show the metric, or how fast it changes (heat fronts stand out)"));
    m_showBox->setCurrentIndex(std::max(0, m_showBox->findData(options.changeWindowS)));
    toolbar->addWidget(m_showBox);
    toolbar->addSeparator();
    toolbar->addWidget(new QLabel(tr(" Colours: "), toolbar));
    m_colourBox = new QComboBox(toolbar);
    m_colourBox->addItem(tr("as suggested"), QString());
    for (const auto &name : ColorMap::names()) {
        // A categorical map fits only its own metric (health), which suggests it.
        if (ColorMap::byName(name).kind() != ColorMap::Kind::Categorical) {
            m_colourBox->addItem(name, name);
        }
    }
    m_colourBox->setToolTip(tr("Colour map: perceptually uniform and colour-blind safe"));
    toolbar->addWidget(m_colourBox);
    m_rangeBox = new QComboBox(toolbar);
    m_rangeBox->addItem(tr("fixed range"), QStringLiteral("fixed"));
    m_rangeBox->addItem(tr("auto range"), QStringLiteral("auto"));
    m_rangeBox->setToolTip(tr("Fixed: the metric's own range. Auto: the 1st to 99th percentile of the values shown, "
                              "so a few outliers cannot wash out the rest."));
    m_rangeBox->setCurrentIndex(std::max(0, m_rangeBox->findData(options.range)));
    toolbar->addWidget(m_rangeBox);
    toolbar->addSeparator();
    toolbar->addWidget(new QLabel(tr(" Arrange: "), toolbar));
    m_arrangeBox = new QComboBox(toolbar);
    m_arrangeBox->addItem(tr("floor plan"), static_cast<int>(HeatmapView::Arrangement::FloorPlan));
    m_arrangeBox->addItem(tr("compact"), static_cast<int>(HeatmapView::Arrangement::Compact));
    m_arrangeBox->addItem(tr("by job"), static_cast<int>(HeatmapView::Arrangement::ByJob));
    m_arrangeBox->setCurrentIndex(m_arrangeBox->findData(static_cast<int>(m_view->arrangement())));
    m_arrangeBox->setToolTip(tr("Floor plan: rows and racks as on the floor. Compact: fleet order, filling the "
                                "window. By job: each job's GPUs together, idle GPUs last."));
    toolbar->addWidget(m_arrangeBox);
    connect(m_arrangeBox, &QComboBox::currentIndexChanged, this,
        [this] { m_view->setArrangement(static_cast<HeatmapView::Arrangement>(m_arrangeBox->currentData().toInt())); });
    toolbar->addSeparator();
    toolbar->addWidget(new QLabel(tr(" Zoomed out, a pixel shows: "), toolbar));
    auto *aggregation = new QComboBox(toolbar);
    aggregation->addItem(tr("the worst GPU"));
    aggregation->addItem(tr("the mean"));
    aggregation->setToolTip(tr("When there are more GPUs than pixels"));
    toolbar->addWidget(aggregation);
    connect(aggregation, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_view->setAggregation(index == 0 ? HeatmapView::Aggregation::Worst : HeatmapView::Aggregation::Mean);
    });
    for (auto *box : { m_colourBox, m_showBox, m_rangeBox }) {
        connect(box, &QComboBox::currentIndexChanged, this, [this] { onMetricSelected(m_metricBox->currentIndex()); });
    }

    m_connectionLabel = new QLabel(this);
    m_gpuLabel = new QLabel(this);
    m_ageLabel = new QLabel(this);
    m_fpsLabel = new QLabel(this);
    m_ageLabel->setMinimumWidth(m_ageLabel->fontMetrics().horizontalAdvance(tr("data as of 00:00:00 (0000.0 s old)")));
    m_fpsLabel->setMinimumWidth(m_fpsLabel->fontMetrics().horizontalAdvance(tr("000.0 fps")));
    statusBar()->addWidget(m_connectionLabel, 1);
    m_loading = new QProgressBar(this);
    m_loading->setRange(0, 0); // busy: QueryRange streams without a known size
    m_loading->setMaximumWidth(120);
    m_loading->setToolTip(tr("Loading history from the backend"));
    m_loading->hide();
    statusBar()->addPermanentWidget(m_loading);
    statusBar()->addPermanentWidget(m_gpuLabel);
    statusBar()->addPermanentWidget(m_ageLabel);
    statusBar()->addPermanentWidget(m_fpsLabel);

    connect(&m_client, &TelemetryClient::stateChanged, this, &MainWindow::onStateChanged);
    connect(&m_client, &TelemetryClient::topologyChanged, this, &MainWindow::onTopologyChanged);
    connect(&m_client, &TelemetryClient::metricsChanged, this, &MainWindow::onMetricsChanged);
    connect(&m_client, &TelemetryClient::frameReady, this, &MainWindow::onFrame);
    connect(&m_client, &TelemetryClient::jobsChanged, this, [this] {
        const JobsPtr jobs = m_client.jobs();
        m_view->setJobs(jobs);
        m_detail->setJobs(jobs);
        if (m_fleetSearch.topology()) {
            m_fleetSearch.setJobs(jobs);
            m_search->setSearch(m_fleetSearch);
        }
    });
    connect(&m_client, &TelemetryClient::errorOccurred, this, [this](const QString &message) {
        statusBar()->showMessage(message, 10000);
        Q_EMIT problemReported(message);
    });
    connect(m_metricBox, &QComboBox::currentIndexChanged, this, &MainWindow::onMetricSelected);
    connect(m_view, &HeatmapView::gpuSelected, this, [this](int gpu) {
        const auto topology = m_client.topology();
        if (gpu >= 0 && topology) {
            const auto &node = topology->nodeOf(static_cast<uint32_t>(gpu));
            statusBar()->showMessage(tr("Selected %1 GPU %2 (fleet index %3)")
                                         .arg(node.hostname)
                                         .arg(gpu - static_cast<int>(node.firstGpu))
                                         .arg(gpu));
            // A click opens the GPU in the detail panel and goes one level down towards it; a click outside the
            // current place goes to the place beside it at the same level.
            m_detail->setGpu(gpu);
            showDetailDock();
            openTowards(static_cast<uint32_t>(gpu));
        } else {
            statusBar()->clearMessage();
        }
    });
    connect(m_view, &HeatmapView::gpuActivated, this, [this](int gpu) { openTowards(static_cast<uint32_t>(gpu)); });

    if (!options.view.isEmpty()) {
        openView(*ViewState::parse(options.view)); // checked by the command line
    } else if (options.restoreLastView) {
        const QString last = QSettings().value(QStringLiteral("lastView")).toString();
        if (auto view = ViewState::parse(last); view && !last.isEmpty()) {
            openView(*view);
        }
    }

    // Once a second: on a software renderer every repaint of the window recomposites the whole GL map.
    m_statusTimer.setInterval(1000);
    connect(&m_statusTimer, &QTimer::timeout, this, &MainWindow::refreshStatus);
    m_statusTimer.start();
    m_fpsClock.start();
    onStateChanged(TelemetryClient::State::Connecting,
        options.backend.isEmpty() ? tr("starting the embedded simulator…")
                                  : tr("connecting to %1…").arg(options.backend));
}

void MainWindow::connectTo(const QString &address)
{
    m_client.start(address);
    // History (charts, events) on its own channel, so a long query never holds up the live stream.
    delete m_history;
    m_history = new HistoryClient(address, this);
    m_history->setTopology(m_client.topology());
    m_detail->setHistoryClient(m_history);
    delete m_summaryClient;
    m_summaryClient = new SummaryClient(address, this);
    m_summary->setClient(m_summaryClient);
    if (m_summaryDock->isVisible()) {
        m_summary->refresh(QDateTime::currentMSecsSinceEpoch());
    }
    m_historyRequest = 0;
    connect(m_history, &HistoryClient::rangeReady, this, &MainWindow::onHistoryFrame);
    connect(m_history, &HistoryClient::requestFailed, this, [this](quint64 id, const QString &message) {
        if (id == m_eventStream) {
            // Followed again when the client is live again, and in any case on a timer: the history channel can fail
            // while the live stream carries on.
            m_eventStream = 0;
            QTimer::singleShot(10000, this, [this] {
                if (m_eventStream == 0 && m_client.topology() && m_client.state() == TelemetryClient::State::Live) {
                    followFleetEvents();
                }
            });
        }
        if (id == m_historyRequest) {
            m_historyRequest = 0;
            m_loading->hide();
            statusBar()->showMessage(tr("Could not load that time from the backend: %1").arg(message), 15000);
        }
    });
    connect(m_history, &HistoryClient::eventsReady, this, [this](const EventBatchPtr &batch) {
        if (batch->requestId != m_eventStream) {
            return;
        }
        for (const auto &e : batch->events) {
            if (e.severity != FleetEvent::Severity::Info) {
                m_events.push_back(e);
            }
        }
        // The last hour (what the stream was asked for, and the wall's events page shows), at most the newest 2,000.
        const int64_t from = QDateTime::currentMSecsSinceEpoch() - 3600 * 1000;
        m_events.erase(
            std::remove_if(m_events.begin(), m_events.end(), [from](const FleetEvent &e) { return e.timeMs < from; }),
            m_events.end());
        if (m_events.size() > 2000) {
            m_events.erase(m_events.begin(), m_events.end() - 2000);
        }
        m_timeline->setEvents(TimelineBar::markersFrom(m_events));
        Q_EMIT fleetEventsChanged();
    });
    if (m_client.topology()) {
        followFleetEvents();
    }
}

void MainWindow::followFleetEvents()
{
    if (m_history == nullptr) {
        return;
    }
    m_history->cancel(m_eventStream);
    m_events.clear();
    EventFilter all;
    all.everything = true;
    m_eventStream = m_history->streamEvents(all, QDateTime::currentMSecsSinceEpoch() - 3600 * 1000);
}

void MainWindow::setUpTimeline(QVBoxLayout *layout)
{
    // Live by default; drag back to any recorded moment, play it again at 1x to 60x, compare two moments.
    m_replay = new ReplayController(&m_recorder, this);
    QWidget *parent = layout->parentWidget();
    m_timeline = new TimelineBar(m_replay, parent);
    // Any time the backend holds, further back than the recorder: typed here, loaded with QueryRange.
    m_goToEdit = new QDateTimeEdit(QDateTime::currentDateTime(), parent);
    m_goToEdit->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    m_goToEdit->setCalendarPopup(true);
    m_goToEdit->setToolTip(tr("Show the fleet at this time (from the recorder, else from the backend's history)"));
    auto *go = new QToolButton(parent);
    m_goButton = go;
    go->setText(tr("Go"));
    connect(go, &QToolButton::clicked, this, [this] { goToTime(m_goToEdit->dateTime().toMSecsSinceEpoch()); });
    auto *timeRow = new QHBoxLayout;
    timeRow->addWidget(m_timeline, 1);
    timeRow->addWidget(m_goToEdit);
    timeRow->addWidget(go);
    layout->addLayout(timeRow);
    connect(m_replay, &ReplayController::frameToShow, this, &MainWindow::showFrame);
    connect(m_replay, &ReplayController::modeChanged, this, [this] {
        m_comparing = false;
        onMetricSelected(m_metricBox->currentIndex()); // back from a comparison to the metric itself
        refreshStatus();
    });
    connect(m_timeline, &TimelineBar::compareRequested, this, &MainWindow::showComparison);
    connect(m_timeline, &TimelineBar::compareCleared, this, [this] {
        m_comparing = false;
        onMetricSelected(m_metricBox->currentIndex());
        m_replay->goLive();
    });
}

void MainWindow::showFrame(const FramePtr &frame)
{
    const TopologyPtr topology = m_client.topology();
    if (!frame || !topology || frame->topologyGeneration != topology->generation || m_comparing) {
        return; // a recorded frame of an earlier fleet layout cannot be drawn on this one
    }
    const FramePtr shown = m_rate ? m_rate->apply(frame) : frame;
    m_view->setFrame(shown);
    updateAutoRange(shown);
    m_rollups->setFrame(shown);
    m_detail->setFrame(frame);
    refreshStatus();
}

void MainWindow::goToTime(qint64 timeMs)
{
    if (!m_recorder.sampleTimes().empty() && timeMs >= m_recorder.earliestMs()) {
        m_replay->seek(timeMs);
        return;
    }
    const TopologyPtr topology = m_client.topology();
    const int index = m_metricBox->currentIndex();
    const auto &metrics = m_client.metrics();
    if (m_history == nullptr || !topology || index < 0 || static_cast<size_t>(index) >= metrics.size()) {
        statusBar()->showMessage(tr("Not connected: no history to load"), 10000);
        return;
    }
    // One frame of the whole fleet: the metric shown and the health state, at the last sample at or before then.
    RangeRequest request;
    request.metricIds = { metrics[static_cast<size_t>(index)].id, QStringLiteral("health") };
    request.gpus.resize(topology->gpuCount);
    for (uint32_t g = 0; g < topology->gpuCount; ++g) {
        request.gpus[g] = g;
    }
    request.fromMs = timeMs;
    request.toMs = timeMs;
    request.stepMs = 1000;
    m_history->cancel(m_historyRequest);
    m_replay->pause();
    m_historyRequest = m_history->queryRange(request);
    m_loading->show();
    statusBar()->showMessage(
        tr("Loading %1 from the backend…").arg(QDateTime::fromMSecsSinceEpoch(timeMs).toString(Qt::ISODate)));
}

void MainWindow::onHistoryFrame(const RangeResultPtr &result)
{
    if (result->requestId != m_historyRequest) {
        return;
    }
    m_historyRequest = 0;
    m_loading->hide();
    const TopologyPtr topology = m_client.topology();
    const RangeSeries *values = result->series.empty() ? nullptr : &result->series.front();
    const RangeSeries *states = result->find(QStringLiteral("health"));
    if (!topology || values == nullptr || values->rows() == 0 || values->columns() != topology->gpuCount) {
        statusBar()->showMessage(tr("The backend holds nothing at that time"), 15000);
        return;
    }
    auto frame = std::make_shared<Frame>();
    frame->sampleTimeMs = values->sampleTimes.front();
    frame->topologyGeneration = topology->generation;
    frame->planes.push_back(
        { values->metricId, { values->values.begin(), values->values.begin() + values->columns() } });
    frame->health.assign(topology->gpuCount, health::NoData);
    if (states != nullptr && states->rows() > 0 && states->columns() == topology->gpuCount) {
        for (uint32_t g = 0; g < topology->gpuCount; ++g) {
            const float state = states->at(0, g);
            frame->health[g] = static_cast<uint8_t>(state >= 0 && state <= 4 ? state : float(health::NoData));
        }
    }
    m_replay->pause();
    showFrame(frame);
    statusBar()->showMessage(tr("Showing %1 from the backend's history")
                                 .arg(QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs).toString(Qt::ISODate)),
        15000);
}

void MainWindow::showComparison(qint64 aMs, qint64 bMs)
{
    const FramePtr older = m_recorder.frameAt(std::min(aMs, bMs));
    const FramePtr newer = m_recorder.frameAt(std::max(aMs, bMs));
    const auto &metrics = m_client.metrics();
    const int index = m_metricBox->currentIndex();
    if (!older || !newer || index < 0 || static_cast<size_t>(index) >= metrics.size()) {
        statusBar()->showMessage(tr("Nothing recorded at one of the two times"), 10000);
        return;
    }
    const MetricInfo &metric = metrics[static_cast<size_t>(index)];
    QString error;
    const FramePtr diff = difference(*newer, *older, metric.id, &error);
    if (!diff) {
        statusBar()->showMessage(tr("Cannot compare: %1").arg(error), 10000);
        return;
    }
    // The colour range fits the change: symmetric about zero, from the 1st to the 99th percentile.
    const ValueRange range = robustRange(diff->planes[0].values, 0.01, 0.99, true);
    m_replay->pause();
    m_comparing = false;
    m_shownMetric = differenceMetric(metric, range.valid ? range.max : 0.0F);
    const QString when = QStringLiteral("%1 → %2").arg(
        QDateTime::fromMSecsSinceEpoch(older->sampleTimeMs).toString(QStringLiteral("HH:mm:ss")),
        QDateTime::fromMSecsSinceEpoch(newer->sampleTimeMs).toString(QStringLiteral("HH:mm:ss")));
    m_shownMetric.name = tr("%1 change %2").arg(metric.name, when);
    m_view->setMetric(m_shownMetric);
    m_view->setFrame(diff);
    m_legend->setMetric(m_shownMetric, m_view->colorMap());
    m_rollups->setMetric(m_shownMetric);
    m_rollups->setFrame(diff);
    m_comparing = true; // until the timeline goes live or the comparison is cleared
    refreshStatus();
}

void MainWindow::setUpNavigation(QWidget *mapArea)
{
    m_navigation = new Navigation(this);
    m_breadcrumbs = new BreadcrumbBar(m_navigation, mapArea);
    m_search = new SearchBox(mapArea);
    m_search->setPlaceholderText(tr("Find host, serial, UUID, job… (Ctrl+F)"));
    m_search->setMinimumWidth(m_search->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 36);
    m_search->setEnabled(false); // until the fleet's index is built
    connect(m_navigation, &Navigation::placeChanged, this, &MainWindow::onPlaceChanged);
    connect(m_search, &SearchBox::resultChosen, this, &MainWindow::onSearchResult);
    // Up a level from the map (Esc, Backspace); back and forward through the places visited (Alt+Left/Right).
    connect(m_view, &HeatmapView::upRequested, m_navigation, &Navigation::up);
    m_breadcrumbs->backAction()->setShortcuts(QKeySequence::Back);
    m_breadcrumbs->forwardAction()->setShortcuts(QKeySequence::Forward);
    addAction(m_breadcrumbs->backAction());
    addAction(m_breadcrumbs->forwardAction());
    auto *find = new QShortcut(QKeySequence::Find, this);
    connect(find, &QShortcut::activated, this, [this] {
        m_search->setFocus();
        m_search->selectAll();
    });
}

void MainWindow::setUpDocks()
{
    // What is inside the current place, one line per child: which rack of this row is hot, without hovering.
    m_rollups = new RollupModel(this);
    m_rollupSort = new QSortFilterProxyModel(this);
    m_rollupSort->setSourceModel(m_rollups);
    m_rollupSort->setSortRole(RollupModel::SortRole);
    m_rollupTable = new QTableView(this);
    m_rollupTable->setModel(m_rollupSort);
    m_rollupTable->setSortingEnabled(true);
    m_rollupTable->sortByColumn(3, Qt::DescendingOrder); // the hottest first
    m_rollupTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_rollupTable->verticalHeader()->hide();
    m_rollupTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_rollupTable->setToolTip(tr("Double-click or Enter opens a place"));
    connect(m_rollupTable, &QTableView::activated, this, [this](const QModelIndex &index) {
        const QVariant place = m_rollupSort->data(index, RollupModel::PlaceRole);
        if (place.canConvert<Place>()) {
            m_navigation->down(place.value<Place>());
        }
    });
    m_rollupDock = new QDockWidget(tr("Inside the fleet"), this);
    m_rollupDock->setObjectName(QStringLiteral("rollups"));
    m_rollupDock->setWidget(m_rollupTable);
    addDockWidget(Qt::LeftDockWidgetArea, m_rollupDock);

    m_detail = new DetailPanel(nullptr, this);
    m_detailDock = new QDockWidget(tr("Detail"), this);
    m_detailDock->setObjectName(QStringLiteral("detail"));
    m_detailDock->setWidget(m_detail);
    addDockWidget(Qt::RightDockWidgetArea, m_detailDock);
    resizeDocks({ m_rollupDock, m_detailDock }, { 330, 480 }, Qt::Horizontal);
    // The map first: the detail opens with the first GPU or node chosen (View menu brings it back).
    m_detailDock->hide();

    // The executive summary: utilisation against the target, idle GPU-hours and their cost, where failures
    // concentrate. From GetSummary, refreshed every five minutes while it is shown.
    m_summary = new SummaryView(this);
    m_summary->setPricePerGpuHour(m_options.pricePerGpuHour);
    m_summaryDock = new QDockWidget(tr("Executive summary"), this);
    m_summaryDock->setObjectName(QStringLiteral("summary"));
    auto *summaryScroll = new QScrollArea(m_summaryDock); // scrolls rather than clips in a narrow window
    summaryScroll->setWidgetResizable(true);
    summaryScroll->setWidget(m_summary);
    m_summaryDock->setWidget(summaryScroll);
    addDockWidget(Qt::RightDockWidgetArea, m_summaryDock);
    m_summaryDock->hide();
    m_summaryTimer.setInterval(5 * 60 * 1000);
    connect(
        &m_summaryTimer, &QTimer::timeout, this, [this] { m_summary->refresh(QDateTime::currentMSecsSinceEpoch()); });
    connect(m_summaryDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible) {
            // A page more than a panel: most of the window's width.
            resizeDocks({ m_summaryDock }, { width() * 3 / 5 }, Qt::Horizontal);
        }
        if (visible && m_summaryClient != nullptr) {
            m_summary->refresh(QDateTime::currentMSecsSinceEpoch());
            m_summaryTimer.start();
        } else if (!visible) {
            m_summaryTimer.stop();
        }
    });
    connect(m_summary, &SummaryView::errorOccurred, this,
        [this](const QString &message) { statusBar()->showMessage(message, 15000); });
}

void MainWindow::setUpActions()
{
    auto *menu = menuBar()->addMenu(tr("&View"));
    QAction *copy = menu->addAction(tr("&Copy view"), this, [this] {
        const QString text = currentView().toString();
        QApplication::clipboard()->setText(text);
        statusBar()->showMessage(tr("Copied %1 — open it with fleetscope --view '%1'").arg(text), 10000);
    });
    copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    menu->addAction(m_breadcrumbs->backAction());
    menu->addAction(m_breadcrumbs->forwardAction());
    menu->addAction(m_rollupDock->toggleViewAction());
    menu->addAction(m_detailDock->toggleViewAction());
    menu->addAction(m_summaryDock->toggleViewAction());
    m_summaryDock->toggleViewAction()->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    auto *exports = menuBar()->addMenu(tr("&Export"));
    exports->addAction(tr("Map as &PNG…"), this, &MainWindow::exportMap)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exports->addAction(tr("&Values of this place as CSV…"), this, &MainWindow::exportValues);
    exports->addAction(tr("&Time series of the selection as CSV…"), this, &MainWindow::exportTimeSeries);
}

void MainWindow::openTowards(uint32_t gpu)
{
    const TopologyPtr topology = m_navigation->topology();
    const Place current = m_navigation->current();
    if (!topology || gpu >= topology->gpuCount) {
        return;
    }
    if (current.gpuRange(*topology).contains(gpu)) {
        m_navigation->downTowards(gpu);
    } else {
        m_navigation->goTo(placeOfGpu(*topology, gpu, current.level));
    }
}

void MainWindow::onPlaceChanged(Place place)
{
    const TopologyPtr topology = m_navigation->topology();
    if (!topology) {
        return;
    }
    const GpuRange range = place.gpuRange(*topology);
    const bool fleet = place.level == Place::Level::Fleet;
    m_view->zoomToCells(fleet ? QRect() : m_view->cellsOf(range.first, range.count));
    // The place in focus; the rest of the fleet dimmed around it.
    m_view->setFocusRange(fleet ? 0 : range.first, fleet ? 0 : range.count);
    m_rollups->setPlace(place);
    m_rollupDock->setWindowTitle(tr("Inside %1").arg(place.name(*topology)));
    if (place.level == Place::Level::Node) {
        m_detail->setNode(static_cast<int>(place.index));
        showDetailDock();
    } else if (place.level == Place::Level::Gpu) {
        m_view->setSelectedGpu(static_cast<int>(place.index));
        m_detail->setGpu(static_cast<int>(place.index));
        showDetailDock();
    }
}

void MainWindow::onSearchResult(const SearchResult &result)
{
    const TopologyPtr topology = m_navigation->topology();
    if (!topology) {
        return;
    }
    m_view->setMarkedGpus({});
    switch (result.kind) {
    case SearchResult::Kind::Row:
        m_navigation->goTo(Place::row(static_cast<uint32_t>(result.id)));
        break;
    case SearchResult::Kind::Rack:
        m_navigation->goTo(Place::rack(static_cast<uint32_t>(result.id)));
        break;
    case SearchResult::Kind::Node:
        m_navigation->goTo(Place::node(static_cast<uint32_t>(result.id)));
        break;
    case SearchResult::Kind::Gpu:
        m_navigation->goTo(Place::gpu(static_cast<uint32_t>(result.id)));
        break;
    case SearchResult::Kind::Job: {
        // The job's blast radius: its GPUs outlined wherever they are, and the view fitted around them.
        const JobsPtr jobs = m_client.jobs();
        const Job *job = nullptr;
        if (jobs) {
            const auto found = std::find_if(
                jobs->jobs.begin(), jobs->jobs.end(), [&result](const Job &j) { return j.id == result.id; });
            job = found != jobs->jobs.end() ? &*found : nullptr;
        }
        if (job == nullptr || job->gpus.empty()) {
            statusBar()->showMessage(tr("Job %1 is no longer listed by the backend").arg(result.id), 10000);
            break;
        }
        m_view->setMarkedGpus(job->gpus);
        QRect cells;
        for (uint32_t gpu : job->gpus) {
            cells |= m_view->cellsOf(gpu, 1);
        }
        m_view->zoomToCells(cells);
        statusBar()->showMessage(tr("Job %1 #%2 (%3): %L4 GPUs outlined%5")
                                     .arg(job->name)
                                     .arg(job->id)
                                     .arg(job->owner)
                                     .arg(job->gpus.size())
                                     .arg(job->isRunning() ? QString() : tr(", ended")),
            15000);
        break;
    }
    }
    m_view->setFocus();
}

void MainWindow::rebuildSearch()
{
    const TopologyPtr topology = m_client.topology();
    if (!topology) {
        return;
    }
    // At a million GPUs the index takes about half a second: build it on a worker thread.
    m_searchGeneration = topology->generation;
    QPointer<MainWindow> self(this);
    const JobsPtr jobs = m_client.jobs();
    QThreadPool::globalInstance()->start([self, topology, jobs] {
        FleetSearch search(topology, jobs);
        QMetaObject::invokeMethod(qApp, [self, search = std::move(search)]() mutable {
            if (self && self->m_searchGeneration == search.topology()->generation) {
                search.setJobs(self->m_client.jobs());
                self->m_fleetSearch = search;
                self->m_search->setSearch(std::move(search));
                self->m_search->setEnabled(true);
            }
        });
    });
}

ViewState MainWindow::currentView() const
{
    ViewState view;
    view.place = m_navigation->current().toText();
    view.selectedGpu = m_view->selectedGpu();
    view.metric = m_metricBox->currentData().toString();
    view.colourMap = m_colourBox->currentData().toString();
    view.arrangement = m_options.arrangement;
    switch (m_view->arrangement()) {
    case HeatmapView::Arrangement::FloorPlan:
        view.arrangement = QStringLiteral("floor");
        break;
    case HeatmapView::Arrangement::Compact:
        view.arrangement = QStringLiteral("compact");
        break;
    case HeatmapView::Arrangement::ByJob:
        view.arrangement = QStringLiteral("jobs");
        break;
    }
    const auto position = m_view->viewPosition();
    view.zoom = position.zoom;
    view.centreX = position.centreX;
    view.centreY = position.centreY;
    view.range = m_rangeBox->currentData().toString();
    view.changeWindowS = m_showBox->currentData().toInt();
    if (m_replay->mode() != ReplayController::Mode::Live && m_view->frame()) {
        view.live = false;
        view.timeMs = m_view->frame()->sampleTimeMs;
    }
    return view;
}

void MainWindow::openView(const ViewState &view)
{
    if (!view.metric.isEmpty()) {
        m_options.metric = view.metric;
        if (const int index = m_metricBox->findData(view.metric); index >= 0) {
            m_metricBox->setCurrentIndex(index);
        }
    }
    m_colourBox->setCurrentIndex(std::max(0, m_colourBox->findData(view.colourMap)));
    m_rangeBox->setCurrentIndex(std::max(0, m_rangeBox->findData(view.range)));
    m_showBox->setCurrentIndex(std::max(0, m_showBox->findData(view.changeWindowS)));
    const int arrangement = view.arrangement == QStringLiteral("compact") ? 1
        : view.arrangement == QStringLiteral("jobs")                      ? 2
                                                                          : 0;
    m_arrangeBox->setCurrentIndex(arrangement);
    m_pendingView = view;
    if (m_navigation->topology()) {
        applyPendingView();
    }
}

void MainWindow::applyPendingView()
{
    if (!m_pendingView) {
        return;
    }
    const ViewState view = *m_pendingView;
    m_pendingView.reset();
    const TopologyPtr topology = m_navigation->topology();
    QString error;
    if (const auto place = Place::fromText(view.place, *topology, &error)) {
        m_navigation->goTo(*place);
    } else {
        statusBar()->showMessage(tr("The view's place does not fit this fleet: %1").arg(error), 15000);
    }
    if (view.selectedGpu >= 0 && static_cast<uint32_t>(view.selectedGpu) < topology->gpuCount) {
        m_view->setSelectedGpu(view.selectedGpu);
        m_detail->setGpu(view.selectedGpu);
        showDetailDock();
    }
    if (view.zoom > 0) {
        m_view->setViewPosition({ view.zoom, view.centreX, view.centreY });
    }
    if (!view.live) {
        goToTime(view.timeMs);
    }
}

void MainWindow::exportMap()
{
    const QString file = QFileDialog::getSaveFileName(this, tr("Export the map"),
        QStringLiteral("fleetscope-%1.png")
            .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))),
        tr("PNG images (*.png)"));
    if (file.isEmpty()) {
        return;
    }
    // The map at the screen's own resolution (physical pixels), labels included.
    const bool saved = m_view->grabFramebuffer().save(file, "PNG");
    statusBar()->showMessage(saved ? tr("Saved %1").arg(file) : tr("Could not write %1").arg(file), 10000);
}

namespace {
std::vector<uint32_t> gpusOf(const Topology &topology, const Place &place)
{
    const GpuRange range = place.gpuRange(topology);
    std::vector<uint32_t> gpus(range.count);
    for (uint32_t i = 0; i < range.count; ++i) {
        gpus[i] = range.first + i;
    }
    return gpus;
}
} // namespace

void MainWindow::exportValues()
{
    const TopologyPtr topology = m_navigation->topology();
    const FramePtr frame = m_client.latestFrame();
    if (!topology || !frame) {
        statusBar()->showMessage(tr("Nothing to export yet: no frame has arrived"), 10000);
        return;
    }
    const QString file = QFileDialog::getSaveFileName(
        this, tr("Export values"), QStringLiteral("fleetscope-values.csv"), tr("CSV files (*.csv)"));
    if (file.isEmpty()) {
        return;
    }
    QFile out(file);
    QString error = out.open(QIODevice::WriteOnly | QIODevice::Truncate) ? CsvExport::writeCurrentValues(
                        out, *topology, *frame, m_client.metrics(), gpusOf(*topology, m_navigation->current()))
                                                                         : out.errorString();
    statusBar()->showMessage(error.isEmpty() ? tr("Saved %1").arg(file) : tr("Could not export: %1").arg(error), 10000);
}

void MainWindow::exportTimeSeries()
{
    const TopologyPtr topology = m_navigation->topology();
    const int selected = m_view->selectedGpu();
    if (!topology || (selected < 0 && m_navigation->current().level != Place::Level::Node)) {
        statusBar()->showMessage(tr("Select a GPU or open a node first"), 10000);
        return;
    }
    const std::vector<uint32_t> gpus = selected >= 0 ? std::vector<uint32_t> { static_cast<uint32_t>(selected) }
                                                     : gpusOf(*topology, m_navigation->current());
    // The recorded frames of the last 15 minutes, at most 900 of them.
    std::vector<FramePtr> frames;
    const auto times = m_recorder.sampleTimes();
    const int64_t from = times.empty() ? 0 : times.back() - 15 * 60 * 1000;
    const size_t stride = std::max<size_t>(1, times.size() / 900);
    for (size_t i = 0; i < times.size(); i += stride) {
        if (times[i] >= from) {
            if (FramePtr frame = m_recorder.frameAt(times[i]);
                frame && frame->topologyGeneration == topology->generation) {
                frames.push_back(std::move(frame));
            }
        }
    }
    const QString file = QFileDialog::getSaveFileName(
        this, tr("Export time series"), QStringLiteral("fleetscope-series.csv"), tr("CSV files (*.csv)"));
    if (file.isEmpty()) {
        return;
    }
    QFile out(file);
    QString error = out.open(QIODevice::WriteOnly | QIODevice::Truncate)
        ? CsvExport::writeTimeSeries(out, *topology, frames, m_client.metrics(), gpus)
        : out.errorString();
    statusBar()->showMessage(error.isEmpty() ? tr("Saved %1 (%2 samples)").arg(file).arg(frames.size())
                                             : tr("Could not export: %1").arg(error),
        10000);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!m_wallMode) { // a wall's view is its playlist's, not the one to open next time
        QSettings().setValue(QStringLiteral("lastView"), currentView().toString());
    }
    QMainWindow::closeEvent(event);
}

void MainWindow::showProblem(const QString &message)
{
    m_connectionLabel->setText(QStringLiteral("⚠ ") + message);
    m_connectionLabel->setStyleSheet(QStringLiteral("color: #e0603a; font-weight: bold;"));
    Q_EMIT problemReported(message);
}

void MainWindow::onStateChanged(TelemetryClient::State state, const QString &detail)
{
    QString colour;
    switch (state) {
    case TelemetryClient::State::Live:
        colour = QStringLiteral("#4caf50");
        break;
    case TelemetryClient::State::Reconnecting:
        colour = QStringLiteral("#e0603a");
        break;
    default:
        colour = QStringLiteral("#d6a400");
        break;
    }
    m_connectionLabel->setText(QStringLiteral("● ") + detail);
    m_connectionLabel->setStyleSheet(QStringLiteral("color: %1;").arg(colour));
    // The fleet's event stream ends with the backend; back live, it is followed again.
    if (state == TelemetryClient::State::Live && m_eventStream == 0 && m_client.topology()) {
        followFleetEvents();
    }
}

void MainWindow::showDetailDock()
{
    if (!m_wallMode) { // a wall shows its pages, never a desk's docks
        m_detailDock->show();
    }
}

QWidget *MainWindow::enterWallMode()
{
    Q_ASSERT(!m_wallMode);
    m_wallMode = true;
    // Nobody points at a wall: a stray click (or a touch screen) must not select, zoom or open anything.
    m_view->setAttribute(Qt::WA_TransparentForMouseEvents);
    menuBar()->hide();
    statusBar()->hide();
    for (auto *toolbar : findChildren<QToolBar *>()) {
        toolbar->hide();
    }
    for (auto *dock : findChildren<QDockWidget *>()) {
        dock->hide();
        dock->toggleViewAction()->setEnabled(false);
    }
    // Nothing on a wall may open a dialog, and nobody is there to use the timeline, search or breadcrumbs.
    for (auto *action : findChildren<QAction *>()) {
        action->setEnabled(false);
    }
    for (QWidget *w :
        std::initializer_list<QWidget *> { m_timeline, m_goToEdit, m_goButton, m_breadcrumbs, m_search }) {
        w->hide();
    }
    QWidget *summary = m_summaryDock->widget();
    m_summaryDock->setWidget(nullptr);
    summary->setParent(nullptr);
    return summary;
}

bool MainWindow::isStale() const
{
    // Old data must never look fresh: past three intervals without a new sample it is stale.
    return m_lastLiveSampleMs > 0 && static_cast<double>(msSinceNewData()) > 3.0 * static_cast<double>(m_intervalMs);
}

void MainWindow::onTopologyChanged(const TopologyPtr &topology)
{
    m_view->setTopology(topology);
    m_summary->setTopology(topology);
    m_navigation->setTopology(topology);
    m_rollups->setTopology(topology);
    m_detail->setTopology(topology);
    if (m_history != nullptr) {
        m_history->setTopology(topology);
    }
    m_search->setEnabled(false);
    rebuildSearch();
    applyPendingView();
    followFleetEvents();
    m_gpuLabel->setText(tr("%L1 GPUs · %L2 nodes · %L3 racks")
                            .arg(topology->gpuCount)
                            .arg(topology->nodes.size())
                            .arg(topology->racks.size()));
}

void MainWindow::onMetricsChanged()
{
    m_detail->setMetrics(m_client.metrics());
    const QString current = m_metricBox->currentData().toString();
    const QString wanted = current.isEmpty() ? m_options.metric : current;
    QSignalBlocker block(m_metricBox);
    m_metricBox->clear();
    int select = 0;
    for (const auto &m : m_client.metrics()) {
        m_metricBox->addItem(QStringLiteral("%1 (%2)").arg(m.name, m.unit), m.id);
        if (m.id == wanted) {
            select = m_metricBox->count() - 1;
        }
    }
    if (!wanted.isEmpty() && m_metricBox->itemData(select).toString() != wanted) {
        statusBar()->showMessage(
            tr("The backend has no metric '%1'; showing %2 instead.").arg(wanted, m_metricBox->itemText(select)),
            15000);
    }
    m_metricBox->setCurrentIndex(select);
    onMetricSelected(select);
}

void MainWindow::onMetricSelected(int index)
{
    const auto &metrics = m_client.metrics();
    if (index < 0 || static_cast<size_t>(index) >= metrics.size()) {
        return;
    }
    const MetricInfo &metric = metrics[static_cast<size_t>(index)];
    // The value, or its rate of change per minute over the chosen window (from the frames as they arrive).
    const int windowS = m_showBox->currentData().toInt();
    if (windowS > 0) {
        m_rate.emplace(metric.id, std::chrono::seconds(windowS));
        m_shownMetric = RateOfChange::rateMetric(metric);
        statusBar()->showMessage(
            tr("Change per minute: the map fills in once %1 s of frames have arrived.").arg(std::max(2, windowS / 4)),
            10000);
    } else {
        m_rate.reset();
        m_shownMetric = metric;
    }
    m_view->setMetric(m_shownMetric);
    // The user's colour map wins over the metric's suggestion.
    const QString chosen = m_colourBox->currentData().toString();
    if (!chosen.isEmpty()) {
        m_view->setColorMap(ColorMap::byName(chosen));
    }
    m_legend->setMetric(m_shownMetric, m_view->colorMap());
    m_rollups->setMetric(m_shownMetric);
    if (const FramePtr last = m_client.latestFrame(); last && m_rate) {
        m_view->setFrame(m_rate->apply(last));
    }
    updateAutoRange(m_view->frame());
    // Subscribe to the shown metric alongside the health-relevant defaults, so a switch back is instant.
    QStringList ids { metric.id };
    for (const auto &id : { QStringLiteral("gpu_temp"), QStringLiteral("power"), QStringLiteral("gpu_util") }) {
        if (!ids.contains(id)) {
            ids << id;
        }
    }
    m_client.setMetrics(ids);
}

void MainWindow::onFrame(const FramePtr &frame)
{
    // The stream's interval, from live frames only (the map may be showing a replayed one).
    // Staleness is judged by this machine's monotonic clock since the last newer sample arrived, never by comparing
    // the backend's sample times with this machine's wall clock (they may disagree, and either may step). The
    // interval is the median of the recent gaps between samples, leaving out the gap across an outage.
    if (frame->sampleTimeMs > m_lastLiveSampleMs) {
        const bool afterOutage = m_lastLiveSampleMs > 0 && isStale();
        if (m_lastLiveSampleMs > 0 && !afterOutage) {
            m_intervalGaps.push_back(std::clamp<qint64>(frame->sampleTimeMs - m_lastLiveSampleMs, 100, 60000));
            if (m_intervalGaps.size() > 8) {
                m_intervalGaps.erase(m_intervalGaps.begin());
            }
            std::vector<qint64> sorted = m_intervalGaps;
            std::nth_element(
                sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
            m_intervalMs = sorted[sorted.size() / 2];
        }
        m_newDataClock.start();
    }
    m_lastLiveSampleMs = std::max<qint64>(m_lastLiveSampleMs, frame->sampleTimeMs);
    m_recordPool.start([this, frame] { m_recorder.record(frame); });
    m_replay->onLiveFrame(frame); // shown at once when live; kept for later otherwise
    refreshStatus();
    // Capacity at risk is a pass over every GPU: every few seconds, and only while someone can see it.
    if (m_summary->isVisible() && (!m_riskClock.isValid() || m_riskClock.elapsed() >= 5000)) {
        m_riskClock.start();
        m_summary->setLiveState(frame, m_client.jobs());
    }
    const FramePtr shown = m_view->frame();
    if (!m_screenshotFile.isEmpty() && shown && shown->plane(m_view->metric().id) != nullptr) {
        // Save after this frame has been painted, not before.
        const QString file = m_screenshotFile;
        m_screenshotFile.clear();
        connect(
            m_view, &QOpenGLWidget::frameSwapped, this,
            [this, file] {
                refreshStatus();
                const bool saved = grabWithMap().save(file, "PNG");
                if (!saved) {
                    std::fprintf(stderr, "fleetscope: cannot write %s\n", qPrintable(file));
                }
                Q_EMIT screenshotDone(saved ? 0 : 1);
            },
            Qt::SingleShotConnection);
    }
}

void MainWindow::updateAutoRange(const FramePtr &shown)
{
    // Categories have no range to fit.
    if (m_rangeBox->currentData().toString() != QStringLiteral("auto")
        || m_view->colorMap().kind() == ColorMap::Kind::Categorical) {
        return;
    }
    const MetricPlane *plane = shown ? shown->plane(m_shownMetric.id) : nullptr;
    if (plane == nullptr) {
        return;
    }
    const bool diverging = m_view->colorMap().kind() == ColorMap::Kind::Diverging;
    const ValueRange range = robustRange(plane->values, 0.01, 0.99, diverging);
    if (!range.valid) {
        return;
    }
    // Move the range only when it is off by more than a tenth of its span, so the colours do not shimmer from one
    // frame to the next while the fleet is steady.
    const MetricInfo &current = m_view->metric();
    const float tolerance = (current.rangeMax - current.rangeMin) * 0.1F;
    if (std::abs(range.min - current.rangeMin) <= tolerance && std::abs(range.max - current.rangeMax) <= tolerance) {
        return;
    }
    m_view->setRange(range.min, range.max);
    m_shownMetric.rangeMin = range.min;
    m_shownMetric.rangeMax = range.max;
    m_legend->setMetric(m_shownMetric, m_view->colorMap());
}

QPixmap MainWindow::grabWithMap()
{
    // QWidget::grab renders the map's GL image over what the map's overlay painter drew (the overlay is redirected
    // into the pixmap beneath it), so the labels would be lost: draw the map's own framebuffer, text included, on
    // top.
    QPixmap shot = grab();
    QPainter painter(&shot);
    painter.drawImage(QRect(m_view->mapTo(this, QPoint(0, 0)), m_view->size()), m_view->grabFramebuffer());
    return shot;
}

void MainWindow::takeScreenshotWhenLive(const QString &file, int timeoutS)
{
    m_screenshotFile = file;
    QTimer::singleShot(timeoutS * 1000, this, [this, timeoutS] {
        if (!m_screenshotFile.isEmpty()) {
            std::fprintf(stderr, "fleetscope: no live frame arrived within %d s (%s); no screenshot taken\n", timeoutS,
                qPrintable(m_client.stateDetail()));
            Q_EMIT screenshotDone(1);
        }
    });
}

void MainWindow::refreshStatus()
{
    const qint64 elapsed = m_fpsClock.elapsed();
    if (elapsed >= 1000) {
        m_fps = static_cast<double>(m_view->paintCount() - m_fpsPaints) * 1000.0 / static_cast<double>(elapsed);
        m_fpsPaints = m_view->paintCount();
        m_fpsClock.restart();
    }
    m_fpsLabel->setText(m_fps < 0 ? tr("– fps") : tr("%1 fps").arg(m_fps, 0, 'f', 1));
    const FramePtr frame = m_view->frame();
    if (!frame) {
        m_ageLabel->setText(tr("no data yet"));
        return;
    }
    const double age = static_cast<double>(QDateTime::currentMSecsSinceEpoch() - frame->sampleTimeMs) / 1000.0;
    const QString when = QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs).toString(QStringLiteral("HH:mm:ss"));
    m_ageLabel->setText(tr("data as of %1 (%2 s old)").arg(when).arg(std::max(0.0, age), 0, 'f', 1));
    // A replay or a comparison shows old data on purpose, and says so in its own banner.
    if (m_comparing || m_replay->mode() != ReplayController::Mode::Live) {
        m_ageLabel->setStyleSheet(QString());
        m_view->setStaleNote({});
        m_view->setReplayNote(m_comparing
                ? m_shownMetric.name
                : (m_wallMode ? tr("Replay · %1 · %2×") : tr("Replay · %1 · %2× (LIVE returns to now)"))
                      .arg(QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs)
                               .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")))
                      .arg(m_replay->speed()));
        return;
    }
    m_view->setReplayNote({});
    // Past three intervals the age turns into a warning and the map is patterned.
    const bool stale = isStale();
    m_ageLabel->setStyleSheet(stale ? QStringLiteral("color: #e0603a; font-weight: bold;") : QString());
    // A wall counts the seconds in its header, and its map's note stays the same (no GL repaint a second for it); a
    // desk gets the count and the client's full detail. Counted by this machine's clock since the data came.
    const qint64 silentS = msSinceNewData() / 1000;
    const QString note = m_wallMode
        ? tr("No new data since %1").arg(when)
        : tr("No new data for %1 s (as of %2) · %3").arg(silentS).arg(when, m_client.stateDetail());
    m_view->setStaleNote(stale ? note : QString());
}

} // namespace fleetscope
