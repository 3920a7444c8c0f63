// SPDX-License-Identifier: Apache-2.0
#include "app/wallwindow.h"

#include "app/consolesession.h"
#include "app/firstpaint.h"
#include "app/pages/mappage.h"
#include "app/pages/problemspage.h"
#include "app/pages/summarypage.h"
#include "app/session/jobwatch.h"
#include "model/alertlayer.h"
#include "model/hottestrow.h"
#include "model/navigation.h"
#include "model/replaycontroller.h"
#include "model/viewstate.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/job/jobpage.h"
#include "widgets/style/fontscale.h"
#include "widgets/summary/summaryview.h"
#include "widgets/wall/eventsboard.h"
#include "widgets/wall/wallheader.h"

#include <QApplication>
#include <QDateTime>
#include <QLoggingCategory>
#include <QPainter>
#include <QScreen>
#include <QShortcut>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

Q_LOGGING_CATEGORY(lcWall, "fleetscope.wall")

namespace fleetscope {

namespace {
const QString defaultMetric = QStringLiteral("gpu_temp");
constexpr qint64 problemShownMs = 30000;

QPalette wallPalette()
{
    // High contrast: near-black ground, near-white text, a saturated accent.
    QPalette p;
    const QColor ground(0x0b, 0x0d, 0x12);
    const QColor panel(0x14, 0x17, 0x1f);
    const QColor text(0xf4, 0xf6, 0xfa);
    p.setColor(QPalette::Window, ground);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, panel);
    p.setColor(QPalette::AlternateBase, QColor(0x1b, 0x1f, 0x29));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, panel);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::Highlight, QColor(0x4a, 0x9a, 0xf0));
    p.setColor(QPalette::HighlightedText, Qt::black);
    p.setColor(QPalette::ToolTipBase, panel);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0xa3, 0xb5));
    return p;
}
} // namespace

WallWindow::WallWindow(ConsoleSession *session, std::vector<WallPage> pages, bool animated, WallPlaylist::Clock clock,
    std::function<qint64()> wallClock, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_playlist(std::move(clock))
    , m_wallClock(wallClock ? std::move(wallClock) : [] { return QDateTime::currentMSecsSinceEpoch(); })
{
    setWindowTitle(tr("Fleetscope wall"));
    prepareFirstPaintOnShow(this); // laid out and painted at the screen's size before it is mapped
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_header = new WallHeader(this);
    layout->addWidget(m_header);
    m_stack = new QStackedWidget(this);
    m_map = new MapPage(session, animated, m_stack);
    // Nobody points at a wall: a stray click (or a touch screen) must not select, zoom or open anything.
    m_map->heatmap()->setAttribute(Qt::WA_TransparentForMouseEvents);
    // What the desk says in its status bar (a view whose place does not fit this fleet) goes to the header here.
    connect(m_map, &MapPage::message, this, [this](const QString &text) { report(text); });
    m_stack->addWidget(m_map);
    m_summaryPage = new SummaryPage(session, m_wallClock, m_stack);
    m_summary = m_summaryPage->view();
    m_summary->useWallLayout();
    m_stack->addWidget(m_summaryPage);
    m_events = new EventsBoard(m_stack);
    m_stack->addWidget(m_events);
    m_jobPage = new JobPage(m_stack);
    m_jobPage->setWallMode(true);
    m_stack->addWidget(m_jobPage);
    m_problemsPage = new ProblemsPage(session, ProblemsPage::Look::Wall, nullptr, m_stack);
    m_problems = m_problemsPage->board();
    m_stack->addWidget(m_problemsPage);
    layout->addWidget(m_stack, 1);
    connect(m_problemsPage, &ProblemsPage::tallied, this, &WallWindow::refreshHealth);
    connect(m_stack, &QStackedWidget::currentChanged, this, [this] {
        m_summaryPage->setShown(m_stack->currentWidget() == m_summaryPage);
        m_problemsPage->setShown(m_stack->currentWidget() == m_problemsPage);
    });
    setPalette(wallPalette());
    setAutoFillBackground(true);

    // Keys for whoever stands at the wall with a keyboard: next, previous, pause. No mouse needed, none shown.
    auto key = [this](QKeySequence sequence, auto slot) {
        auto *shortcut = new QShortcut(sequence, this);
        shortcut->setContext(Qt::ApplicationShortcut);
        connect(shortcut, &QShortcut::activated, this, slot);
    };
    key(QKeySequence(Qt::Key_Right), [this] { m_playlist.next(); });
    key(QKeySequence(Qt::Key_Left), [this] { m_playlist.previous(); });
    key(QKeySequence(Qt::Key_Space), [this] {
        m_playlist.setPaused(!m_playlist.isPaused());
        refresh();
    });
    key(QKeySequence(Qt::CTRL | Qt::Key_Q), [] { QApplication::quit(); });

    connect(session, &ConsoleSession::problemReported, this, &WallWindow::report);
    connect(session, &ConsoleSession::fleetEventsChanged, this, [this] {
        if (m_stack->currentWidget() == m_events) {
            m_events->setEvents(m_session->fleetEvents(), m_wallClock());
        } else if (m_stack->currentWidget() == m_jobPage) {
            m_jobPage->setEvents(m_session->fleetEvents());
        }
    });
    connect(session, &ConsoleSession::topologyChanged, m_events, &EventsBoard::setTopology);
    m_events->setTopology(session->topology());
    // The header says what the map shows from the first drawn frame: refreshed as soon as anything it names changes.
    connect(session, &ConsoleSession::shownChanged, this, [this](const ShownState &, ShownState::Changes changes) {
        if ((changes & ShownState::Frame) && !m_refreshQueued) {
            m_refreshQueued = true;
            QTimer::singleShot(0, this, [this] {
                m_refreshQueued = false;
                refresh();
            });
        }
    });
    connect(m_session, &ConsoleSession::metricsChanged, this, &WallWindow::refresh);
    connect(session, &ConsoleSession::topologyChanged, this, &WallWindow::refresh);
    connect(m_summaryPage, &SummaryPage::errorOccurred, this, &WallWindow::report);
    connect(session->replay(), &ReplayController::modeChanged, this, [this](ReplayController::Mode mode) {
        // A replay page that caught up with now plays its minutes again.
        const WallPage &page = m_playlist.currentPage();
        if (page.kind == WallPage::Kind::Replay && mode == ReplayController::Mode::Live) {
            QTimer::singleShot(0, this, [this] {
                if (m_playlist.currentPage().kind == WallPage::Kind::Replay
                    && m_session->replay()->mode() == ReplayController::Mode::Live) {
                    showReplay(m_playlist.currentPage());
                }
            });
        }
    });
    connect(session->jobWatch(), &JobWatch::reportChanged, this, [this] {
        if (m_playlist.currentPage().kind == WallPage::Kind::Job) {
            m_reshowing = true;
            showPage(m_playlist.current()); // the report, and its goodput in the title
            m_reshowing = false;
            refresh();
        }
    });
    connect(session->jobWatch(), &JobWatch::problemChanged, m_jobPage, &JobPage::setProblem);
    connect(&m_playlist, &WallPlaylist::pageChanged, this, &WallWindow::onPageChanged);
    // Once a second: the clock shows seconds, and on a software renderer every repaint recomposites the GL map.
    m_refreshTimer.setInterval(1000);
    connect(&m_refreshTimer, &QTimer::timeout, this, &WallWindow::refresh);
    m_refreshTimer.start();

    const QScreen *screen = this->screen();
    applyFonts(screen != nullptr ? screen->geometry().height() : 1080);
    m_playlist.setPages(std::move(pages));
}

HeatmapView *WallWindow::heatmap() const
{
    return m_map->heatmap();
}

Navigation *WallWindow::navigation() const
{
    return m_map->navigation();
}

QPixmap WallWindow::grabWithMap()
{
    // Where the map draws through OpenGL, QWidget::grab renders its GL image over what its overlay painter drew
    // (redirected into the pixmap beneath it), so the labels would be lost: draw the map as it shows on top.
    QPixmap shot = grab();
    if (m_stack->currentWidget() == m_map) {
        QPainter painter(&shot);
        HeatmapView *view = m_map->heatmap();
        painter.drawImage(QRect(view->mapTo(this, QPoint(0, 0)), view->size()), view->grabMap());
    }
    return shot;
}

void WallWindow::openMapView(const ViewState &view)
{
    m_map->openView(view);
}

bool WallWindow::showOnScreen(int screenIndex)
{
    if (!m_screensFollowed) {
        // A display switched off and on, or plugged again, comes back as a new screen: fill the chosen one again.
        m_screensFollowed = true;
        auto again = [this] { QTimer::singleShot(0, this, [this] { showOnScreen(m_screenIndex); }); };
        connect(qApp, &QGuiApplication::screenAdded, this, again);
        connect(qApp, &QGuiApplication::screenRemoved, this, again);
        connect(qApp, &QGuiApplication::primaryScreenChanged, this, again);
    }
    m_screenIndex = screenIndex;
    const QList<QScreen *> screens = QGuiApplication::screens();
    bool found = screenIndex >= 0 && screenIndex < screens.size();
    QScreen *screen = found ? screens[screenIndex] : QGuiApplication::primaryScreen();
    if (!found) {
        report(tr("There is no screen %1 (this display has %n screen(s)): showing on the primary screen", nullptr,
            static_cast<int>(screens.size()))
                   .arg(screenIndex));
    }
    setWindowFlag(Qt::FramelessWindowHint);
    if (screen != nullptr) { // none at all while every output is off: stay as we are until one comes
        setScreen(screen);
        setGeometry(screen->geometry());
        applyFonts(screen->geometry().height());
    }
    // Nobody points at a wall: no cursor over it, whatever the widget under it would show. Once: it is a stack.
    if (!m_cursorHidden) {
        m_cursorHidden = true;
        QApplication::setOverrideCursor(Qt::BlankCursor);
    }
    showFullScreen();
    return found;
}

void WallWindow::applyFonts(int screenHeight)
{
    // Sized by the screen, not by points: a 4K wall gets twice the type of a 1080p one, and the smallest text is
    // still about 1/45 of the height (24 px at 1080p), readable from several metres.
    const double scale = std::max(1.0, screenHeight / 1080.0);
    QFont font = this->font();
    font.setPixelSize(static_cast<int>(std::lround(24 * scale)));
    setFont(font);
    m_header->setLineHeight(static_cast<int>(std::lround(92 * scale)));
    m_map->heatmap()->setLabelScale(1.6 * scale);
    m_summary->setBaseFont(scaledFont(font, 0.85));
    m_summary->setDark(true);
}

void WallWindow::report(const QString &message)
{
    m_problem = message;
    m_problemClock.start();
    qCWarning(lcWall, "%s", qPrintable(message));
    // Shown by the next refresh, soon, rather than from here: a report can come from inside showPage or refresh.
    if (!m_refreshQueued) {
        m_refreshQueued = true;
        QTimer::singleShot(0, this, [this] {
            m_refreshQueued = false;
            refresh();
        });
    }
}

void WallWindow::refreshHealth()
{
    // The desk's health strip, on the header: counted once per frame shown (a million bytes), the anomalous GPUs
    // from the events.
    const FramePtr frame = m_session->shownFrame();
    if (frame != m_healthFrame) {
        m_healthFrame = frame;
        m_healthCounts = frame ? HealthStrip::count(*frame) : HealthStrip::Counts {};
    }
    HealthStrip::Counts counts = m_healthCounts;
    counts[HealthStrip::Anomalous] = static_cast<uint32_t>(m_session->anomalousGpus().size());
    // The problems page's tally first, in its words (it counts while hidden); then the GPUs, by state.
    std::vector<WallHeader::HealthCount> shown = HealthStrip::wallCounts(m_problemsPage->tally());
    for (int g = 0; g < HealthStrip::GroupCount; ++g) {
        const auto group = static_cast<HealthStrip::Group>(g);
        shown.push_back({ HealthStrip::groupName(group), counts[static_cast<size_t>(g)],
            HealthStrip::groupColour(group), g == 0 ? tr("GPUs:") : QString() });
    }
    m_header->setHealth(frame ? shown : std::vector<WallHeader::HealthCount> {});
}

QString WallWindow::metricLabel(const QString &id) const
{
    // For people: "GPU temperature (°C)", never the metric's id.
    for (const auto &m : m_session->metrics()) {
        if (m.id == id) {
            return m.unit.isEmpty() ? m.name : QStringLiteral("%1 (%2)").arg(m.name, m.unit);
        }
    }
    return tr("waiting for the backend's metrics");
}

QString WallWindow::metricOrDefault(const WallPage &page, int index)
{
    const QString id = page.metric.isEmpty() ? defaultMetric : page.metric;
    const auto &metrics = m_session->metrics();
    if (metrics.empty() || id == QLatin1String(AlertLayer::metricId)
        || std::any_of(metrics.begin(), metrics.end(), [&id](const MetricInfo &m) { return m.id == id; })) {
        return id; // not known yet, or known; the alerts layer is offered once the alerts arrive (Display waits)
    }
    report(tr("Playlist page %1: this backend has no metric \"%2\"; showing %3 instead")
               .arg(index + 1)
               .arg(id, metrics.front().id));
    return metrics.front().id;
}

void WallWindow::onPageChanged(int index)
{
    showPage(index);
    refresh();
}

void WallWindow::showPage(int index)
{
    m_waiting = false;
    const WallPage page = m_playlist.pages()[static_cast<size_t>(index)];
    if (!m_reshowing) { // a page shown again (each job report, each second while waiting) is not a new page
        qCInfo(lcWall, "page %d: %s", index + 1, qPrintable(WallPage::kindName(page.kind)));
    }
    if (page.kind != WallPage::Kind::Replay && m_session->replay()->mode() != ReplayController::Mode::Live) {
        m_session->replay()->goLive();
    }
    if (page.kind != WallPage::Kind::Job) {
        m_session->jobWatch()->stop(); // asked again only while a job's page is up
    }
    switch (page.kind) {
    case WallPage::Kind::Fleet:
        showMapPage(page, false);
        break;
    case WallPage::Kind::HottestRow:
        showMapPage(page, true);
        break;
    case WallPage::Kind::View:
        if (const auto view = ViewState::parse(page.view); view) {
            openMapView(*view);
            m_title = tr("View · %1").arg(metricLabel(view->metric.isEmpty() ? defaultMetric : view->metric));
            m_waiting = m_session->metrics().empty();
        } else {
            report(tr("Playlist page %1: not a view string").arg(index + 1));
            m_title = tr("View");
        }
        m_stack->setCurrentWidget(m_map);
        break;
    case WallPage::Kind::Replay:
        showReplay(page);
        m_stack->setCurrentWidget(m_map);
        break;
    case WallPage::Kind::Summary: {
        m_title = tr("Executive summary");
        m_stack->setCurrentWidget(m_summaryPage); // which asks when what it shows is old (SummaryPage)
        break;
    }
    case WallPage::Kind::Problems:
        m_title = tr("Problems · what is wrong now, and what it hits");
        m_stack->setCurrentWidget(m_problemsPage); // which reads the problems while shown (ProblemsPage)
        break;
    case WallPage::Kind::Job:
        showJobPage(page);
        break;
    case WallPage::Kind::Events:
        m_title = tr("Events · the last hour");
        m_events->setEvents(m_session->fleetEvents(), m_wallClock());
        m_events->setLiveFrame(m_session->latestFrame());
        m_stack->setCurrentWidget(m_events);
        break;
    }
}

void WallWindow::showMapPage(const WallPage &page, bool hottest)
{
    const QString metric = metricOrDefault(page, m_playlist.current());
    ViewState view;
    view.metric = metric;
    m_title = tr("Whole fleet · %1").arg(metricLabel(metric));
    // Shown again once the metrics' names (and for the hottest row, a frame) have arrived.
    m_waiting = m_session->metrics().empty();
    const TopologyPtr topology = m_session->topology();
    // The newest live frame, not the one the map shows (which may be a replayed or loaded past one).
    const FramePtr frame = m_session->latestFrame();
    if (hottest) {
        const HottestRow row = topology ? hottestRow(*topology, frame.get(), metric) : HottestRow();
        const int best = row.row;
        if (best >= 0) {
            view.place = Place::row(static_cast<uint32_t>(best)).toText();
            const QString unit = [&] {
                for (const auto &m : m_session->metrics()) {
                    if (m.id == metric) {
                        return m.unit;
                    }
                }
                return QString();
            }();
            m_title = tr("Hottest row · %1 · p99 %2 %3")
                          .arg(Place::row(static_cast<uint32_t>(best)).name(*topology))
                          .arg(static_cast<double>(row.p99), 0, 'f', 1)
                          .arg(unit);
            if (m_session->isStale()) {
                m_title
                    += tr(" · as of %1")
                           .arg(QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs).toString(QStringLiteral("HH:mm")));
            }
        } else {
            m_title = tr("Hottest row · waiting for data");
            m_waiting = true;
        }
    }
    openMapView(view);
    m_stack->setCurrentWidget(m_map);
}

void WallWindow::showJobPage(const WallPage &page)
{
    // The job named, or the worst running one as of this listing; watched while its page is up (JobWatch asks
    // again every 5 s), its report handed over as it comes (reportChanged).
    // Shown again (a report came, a listing was awaited), the page keeps its job while it is listed: the worst job
    // of a later listing waits for the page's next turn.
    const JobsPtr jobs = m_session->jobs();
    JobWatch *watch = m_session->jobWatch();
    const Job *job = nullptr;
    if (jobs && m_reshowing && watch->isWatching()) {
        const auto kept = std::find_if(
            jobs->jobs.begin(), jobs->jobs.end(), [watch](const Job &j) { return j.id == watch->jobId(); });
        job = kept != jobs->jobs.end() ? &*kept : nullptr;
    }
    if (job == nullptr && jobs) {
        job = jobForWallPage(page, *jobs);
    }
    m_stack->setCurrentWidget(m_jobPage);
    m_jobPage->setTopology(m_session->topology());
    if (job == nullptr) {
        m_title
            = page.job.isEmpty() ? tr("Job · no running job") : tr("Job %1 · not listed by the backend").arg(page.job);
        watch->stop();
        m_jobPage->setReport(nullptr);
        m_jobPage->setProblem(!jobs ? tr("waiting for the backend's jobs") : m_title);
        m_waiting = true; // the next listing may name it
        return;
    }
    if (!watch->isWatching() || watch->jobId() != job->id) {
        watch->watch(job->id, job->name);
    }
    const JobReportPtr report = watch->report();
    m_jobPage->setReport(report && report->job.id == job->id ? report : nullptr);
    m_jobPage->setProblem(watch->problem());
    m_jobPage->setEvents(m_session->fleetEvents());
    m_jobPage->setAlerts(m_session->alerts()->board());
    m_title = tr("Job %1 #%2 · %3 · %L4 GPUs").arg(job->name).arg(job->id).arg(job->owner).arg(job->gpus.size());
    if (report && report->job.id == job->id) {
        m_title += tr(" · goodput %1%").arg(report->goodput * 100, 0, 'f', 1);
    }
}

void WallWindow::showReplay(const WallPage &page)
{
    if (!m_reshowing) { // waiting for more to be recorded, the view is already open
        ViewState view;
        view.metric = metricOrDefault(page, m_playlist.current());
        openMapView(view);
    }
    const FlightRecorder &recorder = m_session->recorder();
    if (recorder.sampleTimes().size() < 2) {
        m_title = tr("Replay · nothing recorded yet");
        m_waiting = true;
        return;
    }
    // Anchored on what was recorded, not on the clock: after an outage longer than the replay, or with a backend
    // whose clock differs, the last minutes recorded are still there to play. Too short a span to be worth playing
    // (under three seconds at this speed) waits rather than restarting many times a second.
    const qint64 until = recorder.latestMs();
    const qint64 from = std::max<qint64>(recorder.earliestMs(), until - page.replayMinutes * qint64(60000));
    if (static_cast<double>(until - from) < 3000.0 * page.replaySpeed) {
        m_title = tr("Replay · too little recorded yet");
        m_waiting = true;
        return;
    }
    m_session->replay()->seek(from);
    m_session->replay()->play(page.replaySpeed);
    m_title = tr("Replay · last %1 min at %2×").arg(page.replayMinutes).arg(page.replaySpeed);
}

void WallWindow::refresh()
{
    if (m_waiting) {
        m_reshowing = true;
        showPage(m_playlist.current()); // at most once a second
        m_reshowing = false;
    }
    const qint64 now = m_wallClock();
    m_header->setClock(now);
    const qint64 sample = m_session->lastLiveSampleMs();
    const bool stale = m_session->isStale();
    const qint64 silentMs = m_session->msSinceNewData();
    if (stale != m_header->isStale()) {
        // In the log too: a wall's outages are worth a line each for whoever reads it the next morning.
        if (stale) {
            qCWarning(lcWall, "data stale: no new data since %s",
                qPrintable(QDateTime::fromMSecsSinceEpoch(sample).toString(Qt::ISODateWithMs)));
        } else {
            qCInfo(lcWall, "data fresh again");
        }
    }
    m_header->setData(sample, silentMs, stale);
    refreshHealth();
    refreshMapNotes(stale);
    QString title = m_title;
    if (m_playlist.currentPage().kind == WallPage::Kind::Replay
        && m_session->replay()->mode() != ReplayController::Mode::Live) {
        title += QStringLiteral(" · ")
            + QDateTime::fromMSecsSinceEpoch(m_session->replay()->position()).toString(QStringLiteral("HH:mm:ss"));
    }
    m_header->setTitle(m_playlist.isPaused() ? tr("%1 · paused").arg(title) : title);
    m_header->setPlaylist(static_cast<int>(m_playlist.pages().size()), m_playlist.current(), m_playlist.progress(),
        m_playlist.isPaused());
    {
        // The quiet line under the title: what is shown, from where, and what comes next.
        const TopologyPtr topology = m_session->topology();
        const auto &pages = m_playlist.pages();
        const WallPage &next = pages[static_cast<size_t>((m_playlist.current() + 1) % static_cast<int>(pages.size()))];
        QString status = topology ? tr("%L1 GPUs").arg(topology->gpuCount) : tr("no fleet yet");
        status += tr(" · backend %1").arg(m_session->address());
        status += m_playlist.isPaused()
            ? tr(" · paused (Space resumes)")
            : tr(" · next: %1 in %2 s").arg(WallPage::kindName(next.kind)).arg((m_playlist.remainingMs() + 999) / 1000);
        m_header->setStatusLine(status);
    }

    // The banner: stale data first, then the worst open incident, then whatever went wrong last, for half a minute.
    if (stale) {
        const qint64 age = silentMs / 1000;
        // The client's own detail names the gRPC error in full: too much for a wall, and it is in the log.
        const QString why = m_session->connectionState() == TelemetryClient::State::Live
            ? tr("the backend sends nothing new")
            : tr("backend %1 unreachable, retrying").arg(m_session->address());
        m_header->setBanner(tr("No new data for %1 s: the map shows the last known state · %2").arg(age).arg(why),
            WallHeader::Tone::Critical);
    } else if (sample == 0 && m_session->connectionState() != TelemetryClient::State::Live) {
        m_header->setBanner(m_session->connectionDetail(), WallHeader::Tone::Warning);
    } else if (const QString lead = m_problemsPage->leadIncident(); !lead.isEmpty()) {
        // What is wrong, and why, where the room reads first: the worst shared incident (the health strip's counts
        // give way to it; the problems page lists them all).
        // The NOC's alerts gone old are said after it: with an incident open the room must still know that the
        // alerts it counts are not Alertmanager's newest.
        const bool alertsOld = !m_problemsPage->alertsNote().isEmpty();
        m_header->setBanner(alertsOld ? lead + tr(" · NOC alerts are old") : lead,
            m_problemsPage->leadSeverity() == EventSeverity::Critical ? WallHeader::Tone::Critical
                                                                      : WallHeader::Tone::Warning);
    } else if (const QString alerts = m_problemsPage->alertsNote(); !alerts.isEmpty()) {
        // The NOC's alerts shown are the last ones read: a quiet board would read as all clear.
        m_header->setBanner(alerts, WallHeader::Tone::Warning);
    } else if (!m_problem.isEmpty() && m_problemClock.isValid() && m_problemClock.elapsed() < problemShownMs) {
        m_header->setBanner(m_problem, WallHeader::Tone::Warning);
    } else {
        m_header->setBanner({}, WallHeader::Tone::Info);
    }
    if (m_stack->currentWidget() == m_events) {
        m_events->setEvents(m_session->fleetEvents(), now);
        m_events->setLiveFrame(m_session->latestFrame());
    }
}

void WallWindow::refreshMapNotes(bool stale)
{
    // Stale data gets the pattern and a note that stays the same while it lasts (the header counts the seconds, so
    // the GL map is not repainted each second for it).
    const FramePtr frame = m_map->heatmap()->frame();
    const QString when
        = frame ? QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs).toString(QStringLiteral("HH:mm:ss")) : QString();
    m_map->showDataNote(stale && frame, tr("No new data since %1").arg(when));
}

} // namespace fleetscope
