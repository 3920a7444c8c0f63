// SPDX-License-Identifier: Apache-2.0
#include "app/wallmode.h"

#include "widgets/wall/eventsboard.h"
#include "widgets/style/fontscale.h"
#include "widgets/heatmap/heatmapview.h"
#include "app/mainwindow.h"
#include "model/replaycontroller.h"
#include "model/rollup.h"
#include "widgets/summary/summaryview.h"

#include <QApplication>
#include <QDateTime>
#include <QLoggingCategory>
#include <QScreen>
#include <QShortcut>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <cmath>

Q_LOGGING_CATEGORY(lcWall, "fleetscope.wall")

namespace fleetscope {

namespace {
const QString defaultMetric = QStringLiteral("gpu_temp");
constexpr qint64 problemShownMs = 30000;
constexpr qint64 summaryRefreshMs = 5 * 60 * 1000;

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

WallMode::WallMode(
    MainWindow *window, std::vector<WallPage> pages, WallPlaylist::Clock clock, std::function<qint64()> wallClock)
    : QObject(window)
    , m_window(window)
    , m_playlist(std::move(clock))
    , m_wallClock(wallClock ? std::move(wallClock) : [] { return QDateTime::currentMSecsSinceEpoch(); })
{
    m_summaryPage = window->enterWallMode();
    window->summary()->useWallLayout();
    QWidget *map = window->takeCentralWidget();
    auto *central = new QWidget(window);
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_header = new WallHeader(central);
    layout->addWidget(m_header);
    m_stack = new QStackedWidget(central);
    m_mapPage = map;
    m_stack->addWidget(map);
    m_stack->addWidget(m_summaryPage);
    m_events = new EventsBoard(m_stack);
    m_stack->addWidget(m_events);
    layout->addWidget(m_stack, 1);
    window->setCentralWidget(central);
    window->setPalette(wallPalette());
    window->setAutoFillBackground(true);

    // Keys for whoever stands at the wall with a keyboard: next, previous, pause. No mouse needed, none shown.
    auto key = [this, window](QKeySequence sequence, auto slot) {
        auto *shortcut = new QShortcut(sequence, window);
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

    connect(window, &MainWindow::problemReported, this, &WallMode::report);
    connect(window, &MainWindow::fleetEventsChanged, this, [this] {
        if (m_stack->currentWidget() == m_events) {
            m_events->setEvents(m_window->fleetEvents(), m_wallClock());
        }
    });
    connect(window->client(), &TelemetryClient::topologyChanged, m_events, &EventsBoard::setTopology);
    m_events->setTopology(window->client()->topology());
    connect(window->summary(), &SummaryView::errorOccurred, this, &WallMode::report);
    connect(window->summary(), &SummaryView::refreshed, this, [this] { m_summaryClock.start(); });
    connect(window->replay(), &ReplayController::modeChanged, this, [this](ReplayController::Mode mode) {
        // A replay page that caught up with now plays its minutes again.
        const WallPage &page = m_playlist.currentPage();
        if (page.kind == WallPage::Kind::Replay && mode == ReplayController::Mode::Live) {
            QTimer::singleShot(0, this, [this] {
                if (m_playlist.currentPage().kind == WallPage::Kind::Replay
                    && m_window->replay()->mode() == ReplayController::Mode::Live) {
                    showReplay(m_playlist.currentPage());
                }
            });
        }
    });
    connect(&m_playlist, &WallPlaylist::pageChanged, this, &WallMode::onPageChanged);
    // Once a second: the clock shows seconds, and on a software renderer every repaint recomposites the GL map.
    m_refreshTimer.setInterval(1000);
    connect(&m_refreshTimer, &QTimer::timeout, this, &WallMode::refresh);
    m_refreshTimer.start();

    const QScreen *screen = window->screen();
    applyFonts(screen != nullptr ? screen->geometry().height() : 1080);
    m_playlist.setPages(std::move(pages));
}

bool WallMode::showOnScreen(int screenIndex)
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
    m_window->setWindowFlag(Qt::FramelessWindowHint);
    if (screen != nullptr) { // none at all while every output is off: stay as we are until one comes
        m_window->setScreen(screen);
        m_window->setGeometry(screen->geometry());
        applyFonts(screen->geometry().height());
    }
    // Nobody points at a wall: no cursor over it, whatever the widget under it would show. Once: it is a stack.
    if (!m_cursorHidden) {
        m_cursorHidden = true;
        QApplication::setOverrideCursor(Qt::BlankCursor);
    }
    m_window->showFullScreen();
    return found;
}

void WallMode::applyFonts(int screenHeight)
{
    // Sized by the screen, not by points: a 4K wall gets twice the type of a 1080p one, and the smallest text is
    // still about 1/45 of the height (24 px at 1080p), readable from several metres.
    const double scale = std::max(1.0, screenHeight / 1080.0);
    QFont font = m_window->font();
    font.setPixelSize(static_cast<int>(std::lround(24 * scale)));
    m_window->setFont(font);
    m_header->setLineHeight(static_cast<int>(std::lround(92 * scale)));
    m_window->heatmap()->setLabelScale(1.6 * scale);
    m_window->summary()->setBaseFont(scaledFont(font, 0.85));
    m_window->summary()->setDark(true);
}

void WallMode::report(const QString &message)
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

QString WallMode::metricName(const QString &id) const
{
    for (const auto &m : m_window->client()->metrics()) {
        if (m.id == id) {
            return m.unit.isEmpty() ? m.name : QStringLiteral("%1 (%2)").arg(m.name, m.unit);
        }
    }
    return id;
}

QString WallMode::metricOrDefault(const WallPage &page, int index)
{
    const QString id = page.metric.isEmpty() ? defaultMetric : page.metric;
    const auto &metrics = m_window->client()->metrics();
    if (metrics.empty()
        || std::any_of(metrics.begin(), metrics.end(), [&id](const MetricInfo &m) { return m.id == id; })) {
        return id; // not known yet, or known
    }
    report(tr("Playlist page %1: this backend has no metric \"%2\"; showing %3 instead")
               .arg(index + 1)
               .arg(id, metrics.front().id));
    return metrics.front().id;
}

void WallMode::onPageChanged(int index)
{
    showPage(index);
    refresh();
}

void WallMode::showPage(int index)
{
    m_waiting = false;
    const WallPage page = m_playlist.pages()[static_cast<size_t>(index)];
    qCInfo(lcWall, "page %d: %s", index + 1, qPrintable(WallPage::kindName(page.kind)));
    if (page.kind != WallPage::Kind::Replay && m_window->replay()->mode() != ReplayController::Mode::Live) {
        m_window->replay()->goLive();
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
            m_window->openView(*view);
            m_title = tr("View · %1").arg(metricName(view->metric.isEmpty() ? defaultMetric : view->metric));
        } else {
            report(tr("Playlist page %1: not a view string").arg(index + 1));
            m_title = tr("View");
        }
        m_stack->setCurrentWidget(m_mapPage);
        break;
    case WallPage::Kind::Replay:
        showReplay(page);
        m_stack->setCurrentWidget(m_mapPage);
        break;
    case WallPage::Kind::Summary: {
        m_title = tr("Executive summary");
        const qint64 now = m_wallClock();
        // Every five minutes at most; until one has succeeded (the backend away), each time the page comes round.
        if (!m_window->summary()->hasData() || !m_summaryClock.isValid()
            || m_summaryClock.elapsed() >= summaryRefreshMs) {
            m_window->summary()->refresh(now);
        }
        m_stack->setCurrentWidget(m_summaryPage);
        break;
    }
    case WallPage::Kind::Events:
        m_title = tr("Events · what is wrong now");
        m_events->setEvents(m_window->fleetEvents(), m_wallClock());
        m_events->setLiveFrame(m_window->client()->latestFrame());
        m_stack->setCurrentWidget(m_events);
        break;
    }
}

void WallMode::showMapPage(const WallPage &page, bool hottestRow)
{
    const QString metric = metricOrDefault(page, m_playlist.current());
    ViewState view;
    view.metric = metric;
    m_title = tr("Whole fleet · %1").arg(metricName(metric));
    // Shown again once the metrics' names (and for the hottest row, a frame) have arrived.
    m_waiting = m_window->client()->metrics().empty();
    const TopologyPtr topology = m_window->client()->topology();
    // The newest live frame, not the one the map shows (which may be a replayed or loaded past one).
    const FramePtr frame = m_window->client()->latestFrame();
    if (hottestRow) {
        // The row with the highest 99th percentile: a row with a few hot GPUs outranks one evenly warm, which is
        // what an operator walking to the floor wants to see.
        int best = -1;
        float bestP99 = -std::numeric_limits<float>::infinity();
        if (topology && frame) {
            const auto rows = computeRollups(*topology, Place::fleet(), frame.get(), metric);
            for (size_t i = 0; i < rows.size(); ++i) {
                if (!std::isnan(rows[i].p99) && rows[i].p99 > bestP99) {
                    bestP99 = rows[i].p99;
                    best = static_cast<int>(i);
                }
            }
        }
        if (best >= 0) {
            view.place = Place::row(static_cast<uint32_t>(best)).toText();
            const QString unit = [&] {
                for (const auto &m : m_window->client()->metrics()) {
                    if (m.id == metric) {
                        return m.unit;
                    }
                }
                return QString();
            }();
            m_title = tr("Hottest row · %1 · p99 %2 %3")
                          .arg(Place::row(static_cast<uint32_t>(best)).name(*topology))
                          .arg(static_cast<double>(bestP99), 0, 'f', 1)
                          .arg(unit);
            if (m_window->isStale()) {
                m_title
                    += tr(" · as of %1")
                           .arg(QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs).toString(QStringLiteral("HH:mm")));
            }
        } else {
            m_title = tr("Hottest row · waiting for data");
            m_waiting = true;
        }
    }
    m_window->openView(view);
    m_stack->setCurrentWidget(m_mapPage);
}

void WallMode::showReplay(const WallPage &page)
{
    if (!m_reshowing) { // waiting for more to be recorded, the view is already open
        ViewState view;
        view.metric = metricOrDefault(page, m_playlist.current());
        m_window->openView(view);
    }
    const FlightRecorder &recorder = m_window->recorder();
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
    m_window->replay()->seek(from);
    m_window->replay()->play(page.replaySpeed);
    m_title = tr("Replay · last %1 min at %2×").arg(page.replayMinutes).arg(page.replaySpeed);
}

void WallMode::refresh()
{
    if (!m_window) {
        return;
    }
    if (m_waiting) {
        m_reshowing = true;
        showPage(m_playlist.current()); // at most once a second
        m_reshowing = false;
    }
    const qint64 now = m_wallClock();
    m_header->setClock(now);
    const qint64 sample = m_window->lastLiveSampleMs();
    const bool stale = m_window->isStale();
    const qint64 silentMs = m_window->msSinceNewData();
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
    QString title = m_title;
    if (m_playlist.currentPage().kind == WallPage::Kind::Replay
        && m_window->replay()->mode() != ReplayController::Mode::Live) {
        title += QStringLiteral(" · ")
            + QDateTime::fromMSecsSinceEpoch(m_window->replay()->position()).toString(QStringLiteral("HH:mm:ss"));
    }
    m_header->setTitle(m_playlist.isPaused() ? tr("%1 · paused").arg(title) : title);
    m_header->setPlaylist(static_cast<int>(m_playlist.pages().size()), m_playlist.current(), m_playlist.progress(),
        m_playlist.isPaused());
    {
        // The quiet line under the title: what is shown, from where, and what comes next.
        const TopologyPtr topology = m_window->client()->topology();
        const auto &pages = m_playlist.pages();
        const WallPage &next = pages[static_cast<size_t>((m_playlist.current() + 1) % static_cast<int>(pages.size()))];
        QString status = topology ? tr("%L1 GPUs").arg(topology->gpuCount) : tr("no fleet yet");
        status += tr(" · backend %1").arg(m_window->client()->address());
        status += m_playlist.isPaused()
            ? tr(" · paused (Space resumes)")
            : tr(" · next: %1 in %2 s").arg(WallPage::kindName(next.kind)).arg((m_playlist.remainingMs() + 999) / 1000);
        m_header->setStatusLine(status);
    }

    // The banner: stale data first, then whatever went wrong last, for half a minute.
    const TelemetryClient *client = m_window->client();
    if (stale) {
        const qint64 age = silentMs / 1000;
        // The client's own detail names the gRPC error in full: too much for a wall, and it is in the log.
        const QString why = client->state() == TelemetryClient::State::Live
            ? tr("the backend sends nothing new")
            : tr("backend %1 unreachable, retrying").arg(client->address());
        m_header->setBanner(tr("No new data for %1 s: the map shows the last known state · %2").arg(age).arg(why),
            WallHeader::Tone::Critical);
    } else if (sample == 0 && client->state() != TelemetryClient::State::Live) {
        m_header->setBanner(client->stateDetail(), WallHeader::Tone::Warning);
    } else if (!m_problem.isEmpty() && m_problemClock.isValid() && m_problemClock.elapsed() < problemShownMs) {
        m_header->setBanner(m_problem, WallHeader::Tone::Warning);
    } else {
        m_header->setBanner({}, WallHeader::Tone::Info);
    }
    if (m_stack->currentWidget() == m_events) {
        m_events->setEvents(m_window->fleetEvents(), now);
        m_events->setLiveFrame(m_window->client()->latestFrame());
    }
}

} // namespace fleetscope
