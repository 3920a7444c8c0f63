// SPDX-License-Identifier: Apache-2.0
#include "app/mainwindow.h"

#include "app/commandline.h"
#include "app/connectiondialog.h"
#include "app/consolesession.h"
#include "app/deskexports.h"
#include "app/deskmenus.h"
#include "app/desksearch.h"
#include "app/deskstatus.h"
#include "app/desktoolbar.h"
#include "app/firstpaint.h"
#include "app/pages/jobdesk.h"
#include "app/pages/mappage.h"
#include "app/pages/problemspage.h"
#include "app/pages/summarypage.h"
#include "model/navigation.h"
#include "model/replaycontroller.h"
#include "widgets/alerts/silencesview.h"
#include "widgets/detail/detailpanel.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/navigation/breadcrumbbar.h"
#include "widgets/navigation/rollupmodel.h"
#include "widgets/navigation/rolluptable.h"
#include "widgets/search/searchbox.h"
#include "widgets/summary/summaryview.h"
#include "widgets/timeline/timelinebar.h"

#include <QAction>
#include <QCloseEvent>
#include <QDateTime>
#include <QDateTimeEdit>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QPainter>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace fleetscope {

namespace {
ConsoleSession::Options sessionOptions(const ConsoleOptions &options)
{
    ConsoleSession::Options o;
    o.recordMinutes = options.recordMinutes;
    o.metric = options.metric;
    o.changeWindowS = options.changeWindowS;
    o.autoRange = options.range == QStringLiteral("auto");
    return o;
}
} // namespace

MainWindow::MainWindow(const ConsoleOptions &options, ConsoleSession *session, QWidget *parent)
    : QMainWindow(parent)
    , m_options(options)
    , m_session(session != nullptr ? session : new ConsoleSession(sessionOptions(options), this))
{
    setWindowTitle(tr("Fleetscope"));
    resize(options.windowSize);
    prepareFirstPaintOnShow(this);
    m_pages = new QTabWidget(this);
    m_pages->setDocumentMode(true);
    m_pages->addTab(makeMapTab(), tr("Map"));
    // The executive summary: a page of its own, not a dock that squeezes the map.
    m_summaryPage = new SummaryPage(m_session, {}, this);
    m_summary = m_summaryPage->view();
    m_summary->setPricePerGpuHour(options.pricePerGpuHour);
    auto *summaryScroll = new QScrollArea(this); // scrolls rather than clips in a small window
    summaryScroll->setWidgetResizable(true);
    summaryScroll->setWidget(m_summaryPage);
    m_summaryTab = summaryScroll;
    m_pages->addTab(m_summaryTab, tr("Executive summary"));
    setCentralWidget(m_pages);
    makeDocks();
    m_toolbar = new DeskToolbar(m_session, heatmap(), this);
    addToolBar(m_toolbar);
    m_status = new DeskStatus(m_session, m_map, statusBar());
    m_exports = new DeskExports(m_session, m_map, this);
    connect(m_exports, &DeskExports::finished, this,
        [this](const QString &file, const QString &error, const QString &what) {
            statusBar()->showMessage(error.isEmpty()
                    ? (what.isEmpty() ? tr("Saved %1").arg(file) : tr("Saved %1 (%2)").arg(file, what))
                    : tr("Could not export: %1").arg(error),
                10000);
        });
    addDeskMenus(this, m_breadcrumbs,
        { m_rollupDock->toggleViewAction(), m_problemsDock->toggleViewAction(), m_silencesDock->toggleViewAction(),
            m_detailDock->toggleViewAction(), m_jobDesk->toggleViewAction() });

    connect(m_pages, &QTabWidget::currentChanged, this, [this] {
        const bool summary = isSummaryShown();
        // The docks belong to the map.
        m_rollupDock->setVisible(!summary);
        if (summary) {
            m_detailDock->hide();
        }
        m_summaryPage->setShown(summary);
    });
    // A GPU clicked in the summary's offender lists: the map drills to it, as the problems list does.
    connect(m_summary, &SummaryView::gpuChosen, this, [this](uint32_t gpu) {
        const TopologyPtr topology = m_session->topology();
        if (!topology || gpu >= topology->gpuCount) {
            return;
        }
        showSummary(false);
        navigation()->goTo(Place::gpu(gpu));
    });
    connect(m_summaryPage, &SummaryPage::errorOccurred, this,
        [this](const QString &message) { statusBar()->showMessage(message, 15000); });

    // The rollups and the detail show the map's places: they take a new fleet from the map, before a view's place
    // is opened on it.
    connect(m_map, &MapPage::topologyChanged, this, [this](const TopologyPtr &topology) {
        m_rollups->setTopology(topology);
        m_detail->setTopology(topology);
    });
    connect(m_session, &ConsoleSession::metricsChanged, this,
        [this] { m_detail->setMetrics(m_session->backendMetrics()); });
    connect(m_session, &ConsoleSession::jobsChanged, m_detail, &DetailPanel::setJobs);
    connect(
        m_session, &ConsoleSession::shownChanged, this, [this](const ShownState &shown, ShownState::Changes changes) {
            if (changes & ShownState::Metric) {
                m_rollups->setMetric(shown.metric);
            }
            if (changes & ShownState::Frame) {
                m_rollups->setFrame(shown.frame);
                if (shown.raw) {
                    m_detail->setFrame(shown.raw);
                }
            }
        });
    connect(m_session, &ConsoleSession::fleetEventsChanged, this,
        [this] { m_timeline->setEvents(TimelineBar::markersFrom(m_session->fleetEvents())); });

    // Where to start: the command line's view, else the last session's, else the command line's options.
    ViewState start;
    start.metric = options.metric;
    start.arrangement = options.arrangement;
    start.range = options.range;
    start.changeWindowS = options.changeWindowS;
    if (!options.view.isEmpty()) {
        start = *ViewState::parse(options.view); // checked by the command line
    } else if (options.restoreLastView) {
        const QString last = QSettings().value(QStringLiteral("lastView")).toString();
        if (auto view = ViewState::parse(last); view && !last.isEmpty()) {
            start = *view;
        }
    }
    openView(start);
}

MainWindow::~MainWindow()
{
    delete m_exports; // waits for exports under way, which read the session's recorder
    m_exports = nullptr;
}

QWidget *MainWindow::makeMapTab()
{
    auto *tab = new QWidget(this);
    auto *layout = new QVBoxLayout(tab);
    layout->setContentsMargins(6, 6, 6, 6);
    m_map = new MapPage(m_session, m_options.animated, tab);
    m_breadcrumbs = new BreadcrumbBar(m_map->navigation(), tab);
    m_search = new SearchBox(tab);
    m_search->setPlaceholderText(tr("Find host, serial, UUID, job… (Ctrl+F)"));
    m_search->setMinimumWidth(m_search->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 36);
    auto *search = new DeskSearch(m_session, m_map, m_search);
    m_deskSearch = search;
    connect(search, &DeskSearch::message, this,
        [this](const QString &text, int ms) { statusBar()->showMessage(text, ms); });
    auto *placeBar = new QHBoxLayout;
    placeBar->addWidget(m_breadcrumbs, 1);
    placeBar->addWidget(m_search);
    layout->addLayout(placeBar);
    layout->addWidget(m_map, 1);

    // Live by default; drag back to any recorded moment, play it again at 1x to 60x, compare two moments; any
    // time the backend holds, further back than the recorder, typed beside it and loaded with QueryRange.
    m_timeline = new TimelineBar(m_session->replay(), m_map);
    auto *goToEdit = new QDateTimeEdit(QDateTime::currentDateTime(), m_map);
    goToEdit->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    goToEdit->setCalendarPopup(true);
    goToEdit->setToolTip(tr("Show the fleet at this time (from the recorder, else from the backend's history)"));
    auto *go = new QToolButton(m_map);
    go->setText(tr("Go"));
    connect(go, &QToolButton::clicked, this, [this, goToEdit] { goToTime(goToEdit->dateTime().toMSecsSinceEpoch()); });
    auto *timeRow = new QHBoxLayout;
    timeRow->addWidget(m_timeline, 1);
    timeRow->addWidget(goToEdit);
    timeRow->addWidget(go);
    m_map->pageLayout()->insertLayout(1, timeRow);
    connect(m_timeline, &TimelineBar::compareRequested, m_session, &ConsoleSession::compare);
    connect(m_timeline, &TimelineBar::compareCleared, m_session, &ConsoleSession::clearComparison);

    connect(m_map->navigation(), &Navigation::placeChanged, this, &MainWindow::onPlaceChanged);
    connect(m_map, &MapPage::gpuChosen, this, &MainWindow::onGpuChosen);
    connect(
        m_map, &MapPage::message, this, [this](const QString &text, int ms) { statusBar()->showMessage(text, ms); });
    connect(m_map, &MapPage::viewOpened, this, [this] {
        if (m_toolbar != nullptr) {
            m_toolbar->syncFromSession();
        }
    });
    return tab;
}

void MainWindow::makeDocks()
{
    // What is inside the current place, one line per child: which rack of this row is hot, without hovering.
    m_rollups = new RollupModel(this);
    auto *table = new RollupTable(m_rollups, this);
    connect(table, &RollupTable::placeActivated, this, [this](Place place) { navigation()->down(place); });
    m_rollupDock = new QDockWidget(tr("Inside the fleet"), this);
    m_rollupDock->setObjectName(QStringLiteral("rollups"));
    m_rollupDock->setWidget(table);
    addDockWidget(Qt::LeftDockWidgetArea, m_rollupDock);

    m_detail = new DetailPanel(m_session->historySource(), this);
    m_detailDock = new QDockWidget(tr("Detail"), this);
    m_detailDock->setObjectName(QStringLiteral("detail"));
    m_detailDock->setWidget(m_detail);
    addDockWidget(Qt::RightDockWidgetArea, m_detailDock);
    // What is wrong right now, under the rollups: a click shows the problem on the map.
    m_problems = new ProblemsPage(m_session, ProblemsPage::Look::Desk, m_map, this);
    connect(m_problems, &ProblemsPage::message, this,
        [this](const QString &text, int ms) { statusBar()->showMessage(text, ms); });
    m_problemsDock = new QDockWidget(tr("Problems"), this);
    m_problemsDock->setObjectName(QStringLiteral("problems"));
    m_problemsDock->setWidget(m_problems);
    addDockWidget(Qt::LeftDockWidgetArea, m_problemsDock);
    splitDockWidget(m_rollupDock, m_problemsDock, Qt::Vertical);
    // The NOC's silences, behind the problems (a tab): who is on what, until when; Expire on each.
    m_silencesDock = new QDockWidget(tr("Silences"), this);
    m_silencesDock->setObjectName(QStringLiteral("silences"));
    m_silencesDock->setWidget(m_problems->silencesView());
    tabifyDockWidget(m_problemsDock, m_silencesDock);
    m_problemsDock->raise();
    // A job's own page, a tab beside the detail: opened by every entry point (JobDesk follows the map's and the
    // problems'; Find's and the detail's come from here).
    m_jobDesk = new JobDesk(m_session, m_map, m_problems, m_problemsDock, this);
    addDockWidget(Qt::RightDockWidgetArea, m_jobDesk);
    m_jobDesk->hide();
    // Tabbed with the detail once first shown: tabbed from the start, hidden, it widened the window past its size.
    connect(m_jobDesk, &QDockWidget::visibilityChanged, this, [this, placed = false](bool visible) mutable {
        if (visible && !placed) {
            placed = true;
            tabifyDockWidget(m_detailDock, m_jobDesk);
            m_jobDesk->raise();
        }
    });
    connect(m_jobDesk, &JobDesk::message, this,
        [this](const QString &text, int ms) { statusBar()->showMessage(text, ms); });
    connect(m_deskSearch, &DeskSearch::jobChosen, m_jobDesk, [this](quint64 id) { m_jobDesk->openJob(id); });
    connect(m_detail, &DetailPanel::jobPageRequested, m_jobDesk, [this](quint64 id) { m_jobDesk->openJob(id); });
    resizeDocks({ m_rollupDock, m_detailDock }, { 330, 480 }, Qt::Horizontal);
    // The map first: the detail opens with the first GPU or node chosen (View menu brings it back).
    m_detailDock->hide();
}

void MainWindow::onGpuChosen(int gpu)
{
    const TopologyPtr topology = m_session->topology();
    if (gpu < 0 || !topology || static_cast<uint32_t>(gpu) >= topology->gpuCount) {
        statusBar()->clearMessage();
        return;
    }
    const auto &node = topology->nodeOf(static_cast<uint32_t>(gpu));
    statusBar()->showMessage(tr("Selected %1 GPU %2 (fleet index %3)")
                                 .arg(node.hostname)
                                 .arg(gpu - static_cast<int>(node.firstGpu))
                                 .arg(gpu));
    m_detail->setGpu(gpu);
    showDetailDock();
}

void MainWindow::onPlaceChanged()
{
    const TopologyPtr topology = navigation()->topology();
    if (!topology) {
        return;
    }
    const Place place = navigation()->current();
    m_rollups->setPlace(place);
    m_rollupDock->setWindowTitle(tr("Inside %1").arg(place.listText(*topology)));
    if (place.level == Place::Level::Node) {
        m_detail->setNode(static_cast<int>(place.index));
        showDetailDock();
    } else if (place.level == Place::Level::Gpu) {
        m_detail->setGpu(static_cast<int>(place.index));
        showDetailDock();
    }
}

void MainWindow::showDetailDock()
{
    if (!isSummaryShown()) {
        m_detailDock->show();
    }
}

void MainWindow::showSummary(bool shown)
{
    m_pages->setCurrentWidget(shown ? m_summaryTab : m_pages->widget(0));
}

bool MainWindow::isSummaryShown() const
{
    return m_pages->currentWidget() == m_summaryTab;
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    QSettings().setValue(QStringLiteral("lastView"), currentView().toString());
    QMainWindow::closeEvent(event);
}

HeatmapView *MainWindow::heatmap() const
{
    return m_map->heatmap();
}

Navigation *MainWindow::navigation() const
{
    return m_map->navigation();
}

const FlightRecorder &MainWindow::recorder() const
{
    return m_session->recorder();
}

ReplayController *MainWindow::replay() const
{
    return m_session->replay();
}

QPixmap MainWindow::grabWithMap()
{
    // Where the map draws through OpenGL, QWidget::grab renders its GL image over what its overlay painter drew
    // (redirected into the pixmap beneath it), so the labels would be lost: draw the map as it shows on top.
    QPixmap shot = grab();
    QPainter painter(&shot);
    HeatmapView *view = heatmap();
    painter.drawImage(QRect(view->mapTo(this, QPoint(0, 0)), view->size()), view->grabMap());
    return shot;
}

void MainWindow::connectTo(const QString &address)
{
    m_session->connectTo(address);
}

void MainWindow::openConnectionDialog()
{
    const QString current = m_session->address();
    ConnectionDialog dialog(current, m_session->channelSecurity(), this);
    if (dialog.exec() != QDialog::Accepted) {
        return;
    }
    if (dialog.remember()) {
        QSettings settings;
        saveConnectionSettings(dialog.backend(), dialog.security(), &settings);
    }
    m_session->setChannelSecurity(dialog.security());
    connectTo(dialog.backend());
}

void MainWindow::showProblem(const QString &message)
{
    m_status->showProblem(message);
}

ViewState MainWindow::currentView() const
{
    return m_map->currentView();
}

void MainWindow::openView(const ViewState &view)
{
    m_map->openView(view);
}

void MainWindow::goToTime(qint64 timeMs)
{
    m_session->goToTime(timeMs);
}

bool MainWindow::isLoadingHistory() const
{
    return m_session->isLoadingHistory();
}

} // namespace fleetscope
