// SPDX-License-Identifier: Apache-2.0
// The wall (--wall) over a real backend process: the playlist's pages in order with a test clock, each showing what
// it names (the hottest row checked against p99s computed here from the frame); the stale banner within three
// intervals of the backend stopping, the last state kept with the stale pattern, the playlist and replays going on
// without it; and everything back to fresh when the backend returns on the same port, untouched. Nothing ever opens
// a dialog. Needs an X display with OpenGL (Xvfb + Mesa in CI).
#include "app/consolesession.h"
#include "app/pages/problemspage.h"
#include "app/pages/summarypage.h"
#include "app/wallwindow.h"
#include "model/navigation.h"
#include "model/replaycontroller.h"
#include "tests/app/backendprocesstesting.h"
#include "tests/app/firstpainttesting.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/summary/summaryview.h"
#include "widgets/wall/eventsboard.h"
#include "widgets/wall/problemsboard.h"
#include "widgets/wall/wallheader.h"

#include <QAction>
#include <QApplication>
#include <QDateTime>
#include <QMenuBar>
#include <QScreen>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace fleetscope;

namespace {
constexpr int intervalMs = 500;

// A backend process, started again on the same address after an outage.
bool startBackend(backendprocesstesting::BackendProcess *backend, const QString &listen)
{
    return backend->start({ QStringLiteral("--listen"), listen, QStringLiteral("--gpus"), QStringLiteral("2048"),
        QStringLiteral("--interval-ms"), QString::number(intervalMs), QStringLiteral("--history"),
        QStringLiteral("2h") });
}

// The last minute at twice real time: worth playing once 6 s are recorded.
WallPage replayPage()
{
    WallPage p;
    p.kind = WallPage::Kind::Replay;
    p.seconds = 10;
    p.replayMinutes = 1;
    p.replaySpeed = 2;
    return p;
}

WallPage page(WallPage::Kind kind, int seconds = 10)
{
    WallPage p;
    p.kind = kind;
    p.seconds = seconds;
    return p;
}
} // namespace

class TestWall : public QObject
{
    Q_OBJECT

    qint64 m_now = 0; // the playlist's clock
    backendprocesstesting::BackendProcess m_backend;
    std::unique_ptr<ConsoleSession> m_session;
    std::unique_ptr<WallWindow> m_window; // the wall: a window of its own over the session
    WallWindow *m_wall = nullptr;
    int m_dialogs = 0;

    void nextPage()
    {
        m_now += m_wall->playlist()->currentPage().seconds * 1000;
        m_wall->playlist()->tick();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(startBackend(&m_backend, QStringLiteral("127.0.0.1:0")));
        ConsoleSession::Options options;
        options.recordMinutes = 5;
        m_session = std::make_unique<ConsoleSession>(options);
        m_window = std::make_unique<WallWindow>(m_session.get(),
            std::vector<WallPage> { page(WallPage::Kind::Fleet), page(WallPage::Kind::HottestRow),
                page(WallPage::Kind::Summary), page(WallPage::Kind::Events), page(WallPage::Kind::Problems),
                replayPage() },
            false, [this] { return m_now; });
        m_wall = m_window.get();
        // Any dialog at all, at any time, fails the test.
        connect(qApp, &QApplication::focusChanged, this,
            [this] { m_dialogs += QApplication::activeModalWidget() != nullptr; });
        m_session->connectTo(m_backend.address());
        QVERIFY(m_wall->showOnScreen(0));
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        QTRY_VERIFY_WITH_TIMEOUT(m_window->heatmap()->frame() != nullptr, 60000);
    }

    void cleanupTestCase()
    {
        QCOMPARE(m_dialogs, 0);
        QCOMPARE(QApplication::activeModalWidget(), nullptr);
        m_window.reset();
        m_session.reset();
        m_backend.stop();
    }

    void fullScreenWithoutChromeOrCursor()
    {
        QVERIFY(m_window->isFullScreen());
        QVERIFY(m_window->windowFlags().testFlag(Qt::FramelessWindowHint));
        QVERIFY(QApplication::overrideCursor() != nullptr);
        QCOMPARE(QApplication::overrideCursor()->shape(), Qt::BlankCursor);
        // No menus, and no key reaches an action (exports open file dialogs); the header is large type.
        QVERIFY(m_window->findChildren<QMenuBar *>().isEmpty());
        for (QAction *action : m_window->findChildren<QAction *>()) {
            QVERIFY2(!action->isEnabled() || action->shortcut().isEmpty(), qPrintable(action->text()));
        }
        QVERIFY(m_wall->header()->height() >= 80);
        QVERIFY(m_window->heatmap()->labelScale() >= 1.5);
        QTRY_VERIFY(!m_wall->header()->clockText().isEmpty());
        QTRY_VERIFY(m_wall->header()->dataText().startsWith(QStringLiteral("data as of ")));
        QVERIFY(!m_wall->header()->isStale());
        // The health strip in the header: the problems page's tally (counted while the page is hidden) in its words,
        // then after "GPUs:" the frame's counts. The last ones may not fit beside the tally.
        QTRY_VERIFY(m_wall->header()->health().size() >= 6);
        const auto &health = m_wall->header()->health();
        const size_t gpus = health.size() - 5;
        QCOMPARE(health[gpus].label, QStringLiteral("critical"));
        QCOMPARE(health[gpus].caption, QStringLiteral("GPUs:"));
        QCOMPARE(health[gpus + 4].label, QStringLiteral("anomalous"));
        const ProblemTally tally = m_wall->problemsPage()->tally();
        QCOMPARE(health.size(), tally.incidents > 0 ? size_t { 7 } : size_t { 6 });
        QCOMPARE(health[gpus - 1].count, tally.others);
        // (The page's words for none are "No open problems"; the header's count is then 0, dimmed.)
        QVERIFY2(tally.incidents + tally.others == 0
                || tallyText(tally).contains(
                    QStringLiteral("%1 %2").arg(health[gpus - 1].count).arg(health[gpus - 1].label)),
            qPrintable(tallyText(tally)));
        // (Frames keep coming: compared with the frame shown at the time, until they agree.)
        const auto offlineShown = [this] {
            uint32_t offline = 0;
            const FramePtr frame = m_session->shownFrame();
            for (uint8_t byte : frame ? frame->health : std::vector<uint8_t>()) {
                offline += fleetscope::health::stateOf(byte) == fleetscope::health::Offline ? 1 : 0;
            }
            return offline;
        };
        QTRY_VERIFY(m_wall->header()->health()[gpus + 2].count == offlineShown());
        m_wall->header()->repaint();
        QVERIFY(m_wall->header()->healthShown() >= static_cast<int>(gpus) + 1); // the tally and the GPUs critical
    }

    // As the desk (app/firstpaint.h): shown on its screen, the wall is painted into its backing store at the screen's
    // size before it is mapped, so that its first paint there is a short one.
    void aWallIsPaintedBeforeItIsMapped()
    {
        if (QGuiApplication::platformName() != QLatin1String("xcb")) {
            QSKIP("prepared on X11 only");
        }
        WallWindow wall(m_session.get(), { page(WallPage::Kind::Fleet) }, false, [this] { return m_now; });
        QVERIFY(wall.showOnScreen(0)); // no event processed after it: Qt has not painted the window yet
        QCOMPARE(wall.size(), QGuiApplication::primaryScreen()->geometry().size());
        const QString why = firstpainttesting::storeHoldsTheWindow(wall);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    void aScreenThatDoesNotExistIsABannerNotADialog()
    {
        QVERIFY(!m_wall->showOnScreen(7));
        QTRY_VERIFY2(
            m_wall->header()->banner().contains(QStringLiteral("no screen 7")), qPrintable(m_wall->header()->banner()));
        QVERIFY(m_window->isFullScreen());
    }

    void pagesInTurnShowWhatTheyName()
    {
        auto *playlist = m_wall->playlist();
        QCOMPARE(playlist->current(), 0);
        QCOMPARE(m_wall->stack()->currentWidget(), m_window->heatmap()->parentWidget());
        QTRY_COMPARE(m_wall->header()->title(), QStringLiteral("Whole fleet · GPU temperature (°C)"));
        QCOMPARE(m_window->navigation()->current(), Place::fleet());
        QCOMPARE(m_window->heatmap()->metric().id, QStringLiteral("gpu_temp"));

        nextPage(); // the hottest row, by p99 of the temperature, computed here from the frame shown
        QCOMPARE(playlist->current(), 1);
        const TopologyPtr topology = m_session->topology();
        const FramePtr frame = m_window->heatmap()->frame();
        const MetricPlane *temp = frame->plane(QStringLiteral("gpu_temp"));
        QVERIFY(temp != nullptr);
        uint32_t hottest = 0;
        float hottestP99 = -1;
        for (uint32_t r = 0; r < topology->rows.size(); ++r) {
            const GpuRange range = Place::row(r).gpuRange(*topology);
            std::vector<float> values;
            for (uint32_t g = range.first; g < range.end(); ++g) {
                if (!std::isnan(temp->values[g])) {
                    values.push_back(temp->values[g]);
                }
            }
            std::sort(values.begin(), values.end());
            const float p99 = values[static_cast<size_t>(std::lround(0.99 * static_cast<double>(values.size() - 1)))];
            if (p99 > hottestP99) {
                hottestP99 = p99;
                hottest = r;
            }
        }
        QCOMPARE(m_window->navigation()->current(), Place::row(hottest));
        QVERIFY2(m_wall->header()->title().contains(Place::row(hottest).name(*topology)),
            qPrintable(m_wall->header()->title()));

        nextPage();
        QCOMPARE(m_wall->stack()->currentWidget(), static_cast<QWidget *>(m_wall->summaryPage()));
        QCOMPARE(m_wall->header()->title(), QStringLiteral("Executive summary"));
        QVERIFY(m_window->summary()->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(m_window->summary()->hasData(), 30000);

        nextPage();
        QCOMPARE(m_wall->stack()->currentWidget(), m_wall->events());
        // Two hours of simulated history: the last hour's warnings and failures are listed, newest first.
        QTRY_VERIFY_WITH_TIMEOUT(!m_wall->events()->rowTexts().isEmpty(), 30000);
        QCOMPARE(m_wall->events()->rowTexts().size(),
            static_cast<qsizetype>(std::count_if(m_session->fleetEvents().begin(), m_session->fleetEvents().end(),
                [](const FleetEvent &e) { return e.severity != FleetEvent::Severity::Info; })));

        nextPage();
        QCOMPARE(m_wall->stack()->currentWidget(), static_cast<QWidget *>(m_wall->problemsPage()));
        QVERIFY(m_wall->header()->title().startsWith(QStringLiteral("Problems")));
        // The open problems as the session ranks them, one row each, from the real backend's events, but for
        // information (the simulated fleet's rollout), which stays on the desk.
        // (The wall's clock is the real one: only the playlist's is the test's.)
        auto open = m_session->problems(QDateTime::currentMSecsSinceEpoch());
        const auto information = std::remove_if(
            open.begin(), open.end(), [](const Problem &p) { return p.severity == EventSeverity::Info; });
        QVERIFY(information != open.end()); // the rollout's racks
        open.erase(information, open.end());
        const QStringList rows = m_wall->problems()->rowTexts();
        QCOMPARE(rows.size(), static_cast<qsizetype>(open.size()));
        for (qsizetype i = 0; i < rows.size(); ++i) {
            const Problem &p = open[static_cast<size_t>(i)];
            // An incident's row starts with its cause ("COOLING · …"), any other's with its place.
            const QString start = p.kind == Problem::Kind::Incident ? incidentCauseLabel(p) + QStringLiteral(" · ")
                                                                    : problemPlace(p, m_session->topology().get());
            QVERIFY2(rows[i].startsWith(start), qPrintable(rows[i]));
        }
        // The page's headline and the header's counts are one tally.
        QCOMPARE(m_wall->problems()->headline(), tallyText(tallyProblems(open)));
        QVERIFY(!m_wall->problems()->grab().isNull());

        // The replay plays the recorder's minutes again; wait for some to be recorded.
        QTRY_VERIFY_WITH_TIMEOUT(m_session->recorder().latestMs() - m_session->recorder().earliestMs() >= 7000, 30000);
        nextPage();
        QCOMPARE(m_wall->stack()->currentWidget(), m_window->heatmap()->parentWidget());
        QCOMPARE(m_session->replay()->mode(), ReplayController::Mode::Playing);
        QVERIFY(m_wall->header()->title().startsWith(QStringLiteral("Replay")));

        nextPage(); // round again; live again
        QCOMPARE(playlist->current(), 0);
        QCOMPARE(m_session->replay()->mode(), ReplayController::Mode::Live);
    }

    void staleWithinThreeIntervalsOfAnOutageAndFreshAfterIt()
    {
        QTRY_VERIFY_WITH_TIMEOUT(!m_wall->header()->isStale() && m_wall->header()->banner().isEmpty(), 40000);
        const QString address = m_backend.address();
        // The interval the console learned (the median gap between samples): the backend's, give or take the jitter
        // of its clock readings (a median gap of 499 ms at 500 under ThreadSanitizer), unless frames were coalesced on
        // a loaded machine.
        const qint64 interval = m_session->liveIntervalMs();
        QVERIFY2(interval >= intervalMs * 9 / 10 && interval <= 4 * intervalMs, qPrintable(QString::number(interval)));
        m_backend.stop();
        QElapsedTimer outage;
        outage.start();
        // Not before three intervals of silence; within them, plus the wall's one-second refresh and slack for a
        // loaded CI machine.
        QTRY_VERIFY_WITH_TIMEOUT(m_wall->header()->isStale(), static_cast<int>(3 * interval) + 1000 + 3000);
        QVERIFY2(m_session->msSinceNewData() > 3 * interval, "stale before three intervals");
        const qint64 lastBefore = m_session->lastLiveSampleMs();
        QVERIFY2(m_wall->header()->banner().startsWith(QStringLiteral("No new data for")),
            qPrintable(m_wall->header()->banner()));
        QCOMPARE(m_wall->header()->bannerTone(), WallHeader::Tone::Critical);
        QVERIFY(m_wall->header()->dataText().startsWith(QStringLiteral("DATA ")));
        // The map keeps the last known state, patterned, with its own note.
        QVERIFY(m_window->heatmap()->frame() != nullptr);
        QTRY_VERIFY(m_window->heatmap()->staleNote().startsWith(QStringLiteral("No new data since")));

        // The playlist keeps cycling, and the replay plays from the flight recorder with no backend.
        const int before = m_wall->playlist()->current();
        nextPage();
        QCOMPARE(m_wall->playlist()->current(), (before + 1) % 6);
        while (m_wall->playlist()->currentPage().kind != WallPage::Kind::Replay) {
            nextPage();
        }
        QSignalSpy shown(m_session->replay(), &ReplayController::frameToShow);
        QCOMPARE(m_session->replay()->mode(), ReplayController::Mode::Playing);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 2, 10000);
        nextPage(); // back to the fleet, live and stale
        QTRY_VERIFY(m_window->heatmap()->staleNote().startsWith(QStringLiteral("No new data since")));

        QCOMPARE(m_session->lastLiveSampleMs(), lastBefore); // nothing new came in, nothing made up

        // Back on the same port: the client reconnects on its own (backoff capped at 10 s) and the banner goes.
        QVERIFY(startBackend(&m_backend, address));
        QTRY_VERIFY_WITH_TIMEOUT(!m_wall->header()->isStale(), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(m_wall->header()->banner().isEmpty(), 5000);
        QVERIFY(m_window->heatmap()->staleNote().isEmpty());
        QVERIFY(m_wall->header()->dataText().startsWith(QStringLiteral("data as of ")));
        qInfo("outage to fresh again: %lld ms", static_cast<long long>(outage.elapsed()));
    }

    // A view page copied on a fleet of another size (the string says how many GPUs it was made on): the wall shows
    // the fleet and says why in its banner, where the desk says it in its status bar.
    void aViewOfAnotherFleetSaysSoInTheBanner()
    {
        WallPage view = page(WallPage::Kind::View);
        view.view = QStringLiteral("fs1;n=7;p=rack:1");
        WallWindow wall(m_session.get(), { view }, false, [this] { return m_now; });
        QVERIFY(wall.showOnScreen(0));
        QVERIFY(QTest::qWaitForWindowExposed(&wall));
        QTRY_VERIFY_WITH_TIMEOUT(
            wall.header()->banner().contains(QStringLiteral("a fleet of 7 GPUs (this one has")), 10000);
        QCOMPARE(wall.navigation()->current(), Place::fleet()); // not the rack the string names
    }
};

QTEST_MAIN(TestWall)
#include "tst_wall.moc"
