// SPDX-License-Identifier: Apache-2.0
// The console put together, against the real simulator backend (started beside the test as the console starts it):
// drill-down by click and keys, back and forward, search, a job's blast radius, rollups, view strings, the flight
// recorder filling up. Needs an X display with OpenGL (Xvfb + Mesa in CI).
#include "app/consolesession.h"
#include "app/deskexports.h"
#include "app/embeddedbackend.h"
#include "app/healthstrip.h"
#include "app/mainwindow.h"
#include "app/pages/problemspage.h"
#include "app/problemsmodel.h"
#include "app/wallwindow.h"
#include "client/historyclient.h"
#include "client/telemetryclient.h"
#include "jobs/background.h"
#include "model/flightrecorder.h"
#include "model/navigation.h"
#include "model/replaycontroller.h"
#include "tests/app/firstpainttesting.h"
#include "tests/model/fulldisktesting.h"
#include "widgets/detail/detailpanel.h"
#include "widgets/heatmap/colorlegend.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/navigation/breadcrumbbar.h"
#include "widgets/navigation/breadcrumbmodel.h"
#include "widgets/navigation/rollupmodel.h"
#include "widgets/search/searchbox.h"
#include "widgets/summary/summaryview.h"
#include "widgets/timeline/timelinebar.h"
#include "widgets/wall/wallheader.h"

#include <QApplication>
#include <QClipboard>
#include <QDateTime>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QLocale>
#include <QMenuBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <sys/resource.h>
#include <unistd.h>

using namespace fleetscope;

class TestMainWindow : public QObject
{
    Q_OBJECT

    std::unique_ptr<MainWindow> m_window;
    std::unique_ptr<EmbeddedBackend> m_backend;

    TopologyPtr topology() { return m_window->session()->topology(); }

    // Another desk on the same backend, started as a user would start it: without a view, so the last one opens.
    std::unique_ptr<MainWindow> secondWindow()
    {
        ConsoleOptions options;
        options.animated = false;
        options.restoreLastView = true;
        auto window = std::make_unique<MainWindow>(options);
        window->connectTo(m_backend->address());
        window->show();
        return window;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings in a test location: no last view from elsewhere
        ConsoleOptions options;
        options.gpus = 2048;
        options.animated = false; // zooms land at once
        options.restoreLastView = false;
        options.windowSize = QSize(1400, 900);
        m_window = std::make_unique<MainWindow>(options);
        // Ten minutes of history before the console connects: older than anything its recorder will hold.
        m_backend = std::make_unique<EmbeddedBackend>(
            options.gpus, 1, QStringList { QStringLiteral("--history"), QStringLiteral("10m") });
        connect(m_backend.get(), &EmbeddedBackend::ready, m_window.get(), &MainWindow::connectTo);
        m_backend->start();
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        m_window->activateWindow(); // window shortcuts (Alt+Left/Right) need the active window
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
        QTRY_VERIFY_WITH_TIMEOUT(m_window->heatmap()->frame() != nullptr, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->searchBox()->isEnabled(), 30000);
    }

    void cleanupTestCase()
    {
        m_window.reset();
        m_backend.reset();
    }

    // The simulator the console starts for itself yields the cores to the window (nice over the console's), as
    // the console's own background threads do; the GUI thread keeps its priority.
    void theEmbeddedSimulatorRunsBelowTheWindow()
    {
        const qint64 pid = m_backend->processId();
        QVERIFY(pid > 0);
        const int console = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
        QCOMPARE(getpriority(PRIO_PROCESS, static_cast<id_t>(pid)), std::min(19, console + backgroundNice));
        QVERIFY(!runsInBackground());
    }

    // A click on a GPU opens it in the detail panel and goes one level down towards it, each click one more level;
    // Esc goes up; Alt+Left and Alt+Right go back and forward; the breadcrumbs follow.
    void clicksAndKeysDrillDownAndBack()
    {
        HeatmapView *view = m_window->heatmap();
        Navigation *nav = m_window->navigation();
        QCOMPARE(nav->current(), Place::fleet());
        const int gpu = 1234;
        const Place row = placeOfGpu(*topology(), gpu, Place::Level::Row);
        const Place rack = placeOfGpu(*topology(), gpu, Place::Level::Rack);
        const Place node = placeOfGpu(*topology(), gpu, Place::Level::Node);

        QVERIFY(!m_window->detailPanel()->isVisible()); // the map first: no detail until something is chosen
        QTest::mouseClick(view, Qt::LeftButton, {}, view->cellRect(gpu).center().toPoint());
        QCOMPARE(m_window->detailPanel()->gpu(), gpu);
        QVERIFY(m_window->detailPanel()->isVisible());
        QCOMPARE(nav->current(), row);
        // The map zoomed to the row: the GPU is still under a point of its cell, the row fills the width.
        QCOMPARE(view->gpuAt(view->cellRect(gpu).center()), gpu);
        QTest::mouseClick(view, Qt::LeftButton, {}, view->cellRect(gpu).center().toPoint());
        QCOMPARE(nav->current(), rack);
        QVERIFY(view->cellRect(gpu).width() > 20); // a rack of 8 x 8 GPUs fills most of the map
        view->setFocus();
        QTest::keyClick(view, Qt::Key_Return);
        QCOMPARE(nav->current(), node);
        QCOMPARE(m_window->detailPanel()->node(), static_cast<int>(node.index));
        QTest::keyClick(view, Qt::Key_Return);
        QCOMPARE(nav->current(), Place::gpu(gpu));
        // The breadcrumbs: fleet > row > rack > node > GPU.
        QCOMPARE(m_window->findChild<BreadcrumbBar *>()->model()->rowCount(), 5);

        QTest::keyClick(view, Qt::Key_Escape);
        QCOMPARE(nav->current(), node);
        QTest::keyClick(view, Qt::Key_Backspace);
        QCOMPARE(nav->current(), rack);
        QTest::keyClick(m_window.get(), Qt::Key_Left, Qt::AltModifier);
        QCOMPARE(nav->current(), node);
        QTest::keyClick(m_window.get(), Qt::Key_Right, Qt::AltModifier);
        QCOMPARE(nav->current(), rack);
        // The rollups list the rack's nodes.
        QCOMPARE(m_window->rollups()->rowCount(), static_cast<int>(rack.children(*topology()).size()));
        nav->goTo(Place::fleet());
        QVERIFY(view->isFitted());
        QCOMPARE(m_window->rollups()->rowCount(), static_cast<int>(topology()->rows.size()));
    }

    // Typing a hostname and Enter opens that node; a job id outlines the job's GPUs (its blast radius).
    void searchOpensHostsAndOutlinesJobs()
    {
        SearchBox *search = m_window->searchBox();
        const auto &node = topology()->nodes[37];
        search->setFocus();
        search->clear();
        QTest::keyClicks(search, node.hostname);
        QTest::keyClick(search, Qt::Key_Return);
        QVERIFY2(m_window->navigation()->current() == Place::node(37),
            qPrintable(m_window->navigation()->current().toText() + QLatin1Char(' ') + node.hostname));

        QTRY_VERIFY_WITH_TIMEOUT(m_window->session()->jobs() != nullptr, 30000);
        const JobsPtr jobs = m_window->session()->jobs();
        const Job *running = nullptr;
        for (const auto &job : jobs->jobs) {
            if (job.isRunning()) {
                running = &job;
                break;
            }
        }
        QVERIFY(running != nullptr);
        search->setFocus();
        search->clear();
        QTest::keyClicks(search, QStringLiteral("job:%1").arg(running->id));
        QTest::keyClick(search, Qt::Key_Return);
        QVERIFY2(m_window->statusBar()->currentMessage().contains(QStringLiteral("#%1").arg(running->id)),
            qPrintable(m_window->statusBar()->currentMessage()));
        QCOMPARE(m_window->heatmap()->markedGpuCount(), running->gpus.size());
        // Another result clears the outline.
        search->setFocus();
        search->clear();
        QTest::keyClicks(search, topology()->rows[1].name);
        QTest::keyClick(search, Qt::Key_Return);
        QCOMPARE(m_window->heatmap()->markedGpuCount(), size_t(0));
        QCOMPARE(m_window->navigation()->current(), Place::row(1));
    }

    // The console's own layer: the fleet's driver / VBIOS versions (the simulated fleet is mid-rollout), in the metric
    // list, drawn by category with the GPUs off their job's or rack's versions outlined, named in the tooltip, and
    // among the problems; leaving the layer takes its outlines away.
    void theVersionLayer()
    {
        ConsoleSession *session = m_window->session();
        QTRY_VERIFY_WITH_TIMEOUT(!session->versionDrift().isUniform(), 30000);
        const VersionDrift &drift = session->versionDrift();
        const auto &metrics = session->metrics();
        const auto layer = std::find_if(metrics.begin(), metrics.end(),
            [](const MetricInfo &m) { return m.id == QLatin1String(VersionDrift::metricId); });
        QVERIFY(layer != metrics.end());
        QCOMPARE(layer->categories.size(), static_cast<qsizetype>(drift.versions.size()));
        QVERIFY(!drift.flaggedGpus.empty());

        session->setMetric(QString::fromLatin1(VersionDrift::metricId));
        QTRY_VERIFY_WITH_TIMEOUT(m_window->heatmap()->frame()
                && m_window->heatmap()->frame()->plane(QString::fromLatin1(VersionDrift::metricId)) != nullptr,
            10000);
        const MetricPlane *plane = m_window->heatmap()->frame()->plane(QString::fromLatin1(VersionDrift::metricId));
        const uint32_t flagged = drift.flaggedGpus.front();
        const int version = drift.versionOfNode[topology()->nodeOfGpu[flagged]];
        QCOMPARE(plane->values[flagged], float(drift.categoryOf(version)));
        QCOMPARE(m_window->heatmap()->markedGpuCount(), drift.flaggedGpus.size());
        QVERIFY2(m_window->heatmap()
                     ->describeGpu(static_cast<int>(flagged))
                     .contains(drift.versions[static_cast<size_t>(version)].label()),
            qPrintable(m_window->heatmap()->describeGpu(static_cast<int>(flagged))));
        const auto problems = session->problems(QDateTime::currentMSecsSinceEpoch());
        QVERIFY(std::any_of(
            problems.begin(), problems.end(), [](const Problem &p) { return p.kind == Problem::Kind::Drift; }));

        session->setMetric(QStringLiteral("gpu_temp"));
        QCOMPARE(m_window->heatmap()->markedGpuCount(), size_t(0));
    }

    // "Copy view" puts a string on the clipboard that describes the view; opening a string brings its view back.
    void viewStringsRoundTrip()
    {
        Navigation *nav = m_window->navigation();
        nav->goTo(Place::rack(5));
        m_window->heatmap()->setSelectedGpu(5 * 64 + 3);
        const ViewState before = m_window->currentView();
        QCOMPARE(before.place, QStringLiteral("rack:5"));
        QCOMPARE(before.selectedGpu, 5 * 64 + 3);
        QVERIFY(before.zoom > 0);
        for (QAction *action : m_window->findChildren<QAction *>()) {
            if (action->text() == QStringLiteral("&Copy view")) {
                action->trigger();
            }
        }
        const QString text = QApplication::clipboard()->text();
        const auto parsed = ViewState::parse(text);
        QVERIFY2(parsed.has_value(), qPrintable(text));
        QCOMPARE(parsed->place, before.place);
        QCOMPARE(parsed->selectedGpu, before.selectedGpu);

        nav->goTo(Place::fleet());
        m_window->heatmap()->setSelectedGpu(-1);
        m_window->openView(*parsed);
        QCOMPARE(nav->current(), Place::rack(5));
        QCOMPARE(m_window->heatmap()->selectedGpu(), 5 * 64 + 3);
        const ViewState after = m_window->currentView();
        QVERIFY(std::abs(after.zoom - before.zoom) < 1e-6);
        QVERIFY(std::abs(after.centreX - before.centreX) < 1e-6);

        ViewState compact = after;
        compact.arrangement = QStringLiteral("compact");
        compact.place = QStringLiteral("fleet");
        compact.zoom = 0;
        m_window->openView(compact);
        QCOMPARE(m_window->heatmap()->arrangement(), HeatmapView::Arrangement::Compact);
        QCOMPARE(nav->current(), Place::fleet());
        compact.arrangement = QStringLiteral("floor");
        m_window->openView(compact);
    }

    // Dragging the timeline back shows the recorded moment under a replay banner, not the stale pattern; LIVE
    // returns; two moments compared show their difference with the diverging map.
    void timelineReplaysAndCompares()
    {
        QTRY_VERIFY_WITH_TIMEOUT(m_window->recorder().frameCount() >= 3, 30000);
        const auto times = m_window->recorder().sampleTimes();
        const qint64 target = times[times.size() - 3];
        m_window->replay()->seek(target + 1); // between two frames: the one at or before, decoded on a worker
        HeatmapView *view = m_window->heatmap();
        QTRY_COMPARE_WITH_TIMEOUT(view->frame()->sampleTimeMs, target, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(!view->replayNote().isEmpty(), 5000);
        QVERIFY(view->staleNote().isEmpty());
        // Live frames keep arriving but do not replace the replayed one.
        const quint64 before = m_window->session()->latestFrame()->sequence;
        QTRY_VERIFY_WITH_TIMEOUT(m_window->session()->latestFrame()->sequence > before, 10000);
        QCOMPARE(view->frame()->sampleTimeMs, target);

        const FramePtr older = m_window->recorder().frameAt(times.front());
        const FramePtr newer = m_window->recorder().frameAt(target);
        Q_EMIT m_window->timeline()->compareRequested(times.front(), target);
        // Decoded and subtracted on a worker: shown when it is done.
        QTRY_VERIFY_WITH_TIMEOUT(view->metric().id.endsWith(QStringLiteral(":diff")), 10000);
        QCOMPARE(view->metric().colourMap, QStringLiteral("coolwarm"));
        const auto *olderPlane = older->plane(QStringLiteral("gpu_temp"));
        const auto *newerPlane = newer->plane(QStringLiteral("gpu_temp"));
        for (size_t g : { size_t(0), size_t(777), size_t(2047) }) {
            const float expected = newerPlane->values[g] - olderPlane->values[g];
            const float shown = view->frame()->planes[0].values[g];
            QVERIFY(std::isnan(expected) ? std::isnan(shown) : shown == expected);
        }

        m_window->replay()->goLive();
        QTRY_VERIFY_WITH_TIMEOUT(view->replayNote().isEmpty(), 5000);
        QCOMPARE(view->metric().id, QStringLiteral("gpu_temp"));
        QTRY_VERIFY_WITH_TIMEOUT(view->frame()->sampleTimeMs > target, 10000);
    }

    // A console started without a view on its command line opens where the last one was closed.
    void theLastViewIsRestored()
    {
        QSettings().setValue(QStringLiteral("lastView"), QStringLiteral("fs1;p=rack:2;g=130"));
        const auto window = secondWindow();
        MainWindow &second = *window;
        QTRY_VERIFY_WITH_TIMEOUT(second.heatmap()->frame() != nullptr, 30000);
        QTRY_COMPARE(second.navigation()->current(), Place::rack(2));
        QCOMPARE(second.heatmap()->selectedGpu(), 130);
        // The docks follow the view opened before the fleet was known: the rack's rollups, the GPU's detail.
        QCOMPARE(second.rollups()->rowCount(), static_cast<int>(Place::rack(2).children(*topology()).size()));
        QCOMPARE(second.detailPanel()->gpu(), 130);
        QVERIFY(second.detailPanel()->isVisible());
        // Closing it keeps its view for the next start.
        second.navigation()->goTo(Place::row(1));
        second.close();
        QCOMPARE(QSettings().value(QStringLiteral("lastView")).toString(), second.currentView().toString());
        QVERIFY(second.currentView().toString().contains(QStringLiteral("p=row:1")));
    }

    // A problem activated in the Problems dock shows it on the map: the place it is at, its GPUs outlined when it is
    // more than one GPU's, and the status bar says which.
    void aProblemChosenIsShownOnTheMap()
    {
        auto *problems = m_window->findChild<ProblemsPage *>();
        QVERIFY(problems != nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(problems->model()->rowCount() > 0, 30000);
        const Problem problem = *problems->model()->problemAt(0);
        auto *table = problems->findChild<QTableView *>();
        QVERIFY(table != nullptr);
        m_window->navigation()->goTo(Place::fleet());
        Q_EMIT table->activated(problems->model()->index(0, 0));
        // Its GPU, its node, or the smallest place holding its GPUs (a rack's, a job's folded line, an incident's).
        const Place expected = problem.gpu >= 0 ? Place::gpu(static_cast<uint32_t>(problem.gpu))
            : problem.node >= 0                 ? Place::node(static_cast<uint32_t>(problem.node))
                                                : smallestPlaceHolding(problem.gpus, *topology());
        QCOMPARE(m_window->navigation()->current(), expected);
        QCOMPARE(m_window->heatmap()->markedGpuCount(), problem.gpu >= 0 ? size_t(0) : problem.gpus.size());
        QVERIFY2(m_window->statusBar()->currentMessage().startsWith(ProblemsModel::summary(problem)),
            qPrintable(m_window->statusBar()->currentMessage()));
        m_window->heatmap()->setMarkedGpus({});
        m_window->navigation()->goTo(Place::fleet());
    }

    // An incident chosen in the Problems dock: its GPUs outlined (as a job's blast radius), the map at the smallest
    // place holding them, incidentChosen with its GPUs as runs, and the status bar names its cause.
    void anIncidentChosenOutlinesItsGpus()
    {
        auto *problems = m_window->findChild<ProblemsPage *>();
        QVERIFY(problems != nullptr);
        const TopologyPtr fleet = topology();
        const GpuRange rack = Place::rack(1).gpuRange(*fleet);
        QVERIFY(rack.count >= 16);
        auto incident = std::make_shared<Incident>();
        incident->id = 77;
        // Rack 1's first PDU: the domain highlighted around the GPUs hit.
        QVERIFY(!fleet->racks[1].domains.empty());
        incident->domain = fleet->racks[1].domains[0];
        incident->cause = QStringLiteral("power");
        incident->evidence = QStringLiteral("both nodes on PDU r01-k02-a lost power within 2 s");
        incident->gpuRuns = { { rack.first, 4 }, { rack.first + 24, 4 } }; // its 1st node's and its 4th's (on a alone)
        incident->gpuCount = 8;
        FleetEvent open;
        open.kind = EventKind::IncidentOpen;
        open.severity = EventSeverity::Critical;
        open.timeMs = QDateTime::currentMSecsSinceEpoch();
        open.text = QStringLiteral("PDU r01-k02-a tripped: 8 GPUs down");
        open.incident = incident;
        ProblemBoard board;
        board.add(open);
        problems->model()->setProblems(
            board.open(open.timeMs, fleet.get(), nullptr), fleet, m_window->session()->jobs(), open.timeMs);
        QCOMPARE(problems->model()->problemAt(0)->kind, Problem::Kind::Incident);
        QSignalSpy chosen(problems, &ProblemsPage::incidentChosen);
        m_window->navigation()->goTo(Place::fleet());
        auto *table = problems->findChild<QTableView *>();
        QVERIFY(table != nullptr);
        Q_EMIT table->activated(problems->model()->index(0, 0));
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen[0][0].value<quint64>(), quint64 { 77 });
        const auto runs = chosen[0][1].value<std::vector<std::pair<uint32_t, uint32_t>>>();
        QCOMPARE(runs, incident->gpuRuns);
        QCOMPARE(m_window->navigation()->current(), Place::rack(1));
        QCOMPARE(m_window->heatmap()->markedGpuCount(), size_t { 8 });
        QVERIFY2(m_window->statusBar()->currentMessage().startsWith(QStringLiteral("POWER · PDU r01-k02-a tripped")),
            qPrintable(m_window->statusBar()->currentMessage()));
        // The GPUs the PDU powers: the rack's, but for its 8th node, corded to the other PDU alone.
        const size_t powered = rack.count - fleet->nodes[fleet->racks[1].firstNode + 7].gpuCount;
        QCOMPARE(m_window->heatmap()->domainGpuCount(), powered);
        const QString domain = fleet->domainName(fleet->racks[1].domains[0]) % QStringLiteral(": ")
            % QString::number(powered) % QStringLiteral(" GPUs; 8 hit");
        QVERIFY2(m_window->statusBar()->currentMessage().contains(domain),
            qPrintable(m_window->statusBar()->currentMessage()));
        auto *legend = m_window->findChild<ColorLegend *>();
        QVERIFY(legend != nullptr);
        QVERIFY2(legend->domainNote().startsWith(domain), qPrintable(legend->domainNote()));
        m_window->heatmap()->setMarkedGpus({});
        QCOMPARE(m_window->heatmap()->domainGpuCount(), size_t { 0 });
        QCOMPARE(legend->domainNote(), QString());
        m_window->navigation()->goTo(Place::fleet());
        problems->refresh();
    }

    // The Problems dock's count and the health strip say the GPUs critical in one unit, from one count of the frame
    // shown: "… · 3 GPUs critical now" above the dock, "GPUs: 3 critical" in the status bar.
    void theDockAndTheHealthStripAgree()
    {
        auto *problems = m_window->findChild<ProblemsPage *>();
        auto *strip = m_window->findChild<HealthStrip *>();
        QVERIFY(problems != nullptr && strip != nullptr);
        QLabel *count = nullptr;
        for (QLabel *label : problems->findChildren<QLabel *>()) {
            count = label->text().contains(QStringLiteral("GPUs critical now")) ? label : count;
        }
        QVERIFY(count != nullptr);
        QTRY_VERIFY2(
            count->text().endsWith(QStringLiteral("%L1 GPUs critical now").arg(strip->counts()[HealthStrip::Critical])),
            qPrintable(count->text()));
        problems->refresh();
        QVERIFY(count->text().startsWith(tallyText(problems->tally())));
    }

    // A view names the size of the fleet it was made on: opened on another fleet (a last view from a console started
    // with another --gpus, a string from another site), its place, GPU and zoom are left out and the status bar says
    // why; on the same fleet they apply, and views without it (written before) apply as they are.
    void aViewOfAnotherFleetLeavesItsIndexesOut()
    {
        QVERIFY(m_window->currentView().toString().contains(QStringLiteral("n=2048")));
        QSettings().setValue(QStringLiteral("lastView"), QStringLiteral("fs1;n=1024;p=rack:2;g=130;z=9@20,20"));
        const auto window = secondWindow();
        MainWindow &second = *window;
        QTRY_VERIFY_WITH_TIMEOUT(second.heatmap()->frame() != nullptr, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(
            second.statusBar()->currentMessage().contains(QStringLiteral("a fleet of 1,024 GPUs (this one has 2,048)")),
            10000);
        QCOMPARE(second.navigation()->current(), Place::fleet());
        QCOMPARE(second.heatmap()->selectedGpu(), -1);
        QCOMPARE(second.currentView().zoom, 0.0);
        // In a window of the default width the message reads in full: the fleet's size and the frame rate make room
        // while it is shown (the data's age and the health counts stay), and come back after it.
        QStatusBar *bar = second.statusBar();
        const auto fleetSize = [bar]() -> QLabel * {
            for (QLabel *label : bar->findChildren<QLabel *>()) {
                if (label->text().contains(QStringLiteral(" GPUs · "))) {
                    return label;
                }
            }
            return nullptr;
        };
        const auto room = [bar] { // left of the first widget shown beside the message
            int left = bar->width();
            for (QWidget *w : bar->findChildren<QWidget *>(QString(), Qt::FindDirectChildrenOnly)) {
                left = w->isVisible() ? std::min(left, w->x()) : left;
            }
            return left;
        };
        QVERIFY(fleetSize() != nullptr);
        QCOMPARE(second.width(), 1280);
        QTRY_VERIFY2(bar->fontMetrics().horizontalAdvance(bar->currentMessage()) < room(),
            qPrintable(QStringLiteral("%1 px of room for %2")
                           .arg(room())
                           .arg(bar->fontMetrics().horizontalAdvance(bar->currentMessage()))));
        QVERIFY(!fleetSize()->isVisible());
        QCOMPARE(bar->toolTip(), bar->currentMessage());
        bar->clearMessage();
        QTRY_VERIFY(fleetSize()->isVisible());
        QVERIFY(bar->toolTip().isEmpty());

        const auto same = ViewState::parse(QStringLiteral("fs1;n=2048;p=rack:2;g=130"));
        QVERIFY(same.has_value());
        second.openView(*same);
        QCOMPARE(second.navigation()->current(), Place::rack(2));
        QCOMPARE(second.heatmap()->selectedGpu(), 130);
    }

    // A time older than the recorder comes from the backend's history (QueryRange), with a progress indicator, and
    // the view string then names that time.
    void olderTimesComeFromTheBackend()
    {
        QTRY_VERIFY_WITH_TIMEOUT(m_window->recorder().frameCount() >= 1, 30000);
        const qint64 target = m_window->recorder().earliestMs() - 5 * 60 * 1000;
        m_window->goToTime(target);
        QVERIFY(m_window->isLoadingHistory());
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isLoadingHistory(), 30000);
        const FramePtr shown = m_window->heatmap()->frame();
        QVERIFY(shown->sampleTimeMs <= target);
        QVERIFY(shown->sampleTimeMs > target - 2 * 60 * 1000); // the history holds a frame a minute
        QVERIFY(
            !m_window->heatmap()->replayNote().isEmpty() || m_window->replay()->mode() != ReplayController::Mode::Live);

        // The same values as an independent query for that time.
        HistoryClient independent(m_backend->address());
        independent.setTopology(topology());
        RangeRequest request;
        request.metricIds = { QStringLiteral("gpu_temp") };
        request.gpus = { 0, 1000, 2047 };
        request.fromMs = target;
        request.toMs = target;
        request.stepMs = 1000;
        QSignalSpy ready(&independent, &HistoryClient::rangeReady);
        independent.queryRange(request);
        QVERIFY(ready.wait(20000));
        const auto result = ready.first().at(0).value<RangeResultPtr>();
        const RangeSeries *series = result->find(QStringLiteral("gpu_temp"));
        QVERIFY(series != nullptr && series->rows() == 1);
        QCOMPARE(series->sampleTimes.front(), shown->sampleTimeMs);
        for (size_t c = 0; c < request.gpus.size(); ++c) {
            const float mine = shown->plane(QStringLiteral("gpu_temp"))->values[request.gpus[c]];
            QVERIFY(std::isnan(mine) ? std::isnan(series->at(0, c)) : mine == series->at(0, c));
        }
        const ViewState view = m_window->currentView();
        QVERIFY(!view.live);
        QCOMPARE(view.timeMs, shown->sampleTimeMs);
        m_window->replay()->goLive();
        QTRY_VERIFY_WITH_TIMEOUT(m_window->heatmap()->frame()->sampleTimeMs > target + 60000, 10000);
    }

    // The executive summary opens from the View menu and fills from the backend.
    void summaryOpensAndFills()
    {
        QSignalSpy refreshed(m_window->summary(), &SummaryView::refreshed);
        m_window->showSummary(true);
        QVERIFY(refreshed.wait(60000));
        QCOMPARE(m_window->summary()->figures().gpus, topology()->gpuCount);
        QVERIFY(m_window->summary()->figures().dayUtilisation > 0);
        // A GPU chosen in the summary's offender lists drills the map to it; one outside the fleet is ignored.
        m_window->navigation()->goTo(Place::fleet());
        Q_EMIT m_window->summary()->gpuChosen(topology()->gpuCount);
        QVERIFY(m_window->isSummaryShown());
        QCOMPARE(m_window->navigation()->current(), Place::fleet());
        Q_EMIT m_window->summary()->gpuChosen(21);
        QVERIFY(!m_window->isSummaryShown());
        QCOMPARE(m_window->navigation()->current(), Place::gpu(21));
        m_window->navigation()->goTo(Place::fleet());
        // File > Export has both offender lists.
        QStringList exports;
        for (QAction *action : m_window->menuBar()->actions().constFirst()->menu()->actions()) {
            exports << action->text().remove(QLatin1Char('&'));
        }
        QVERIFY2(exports.contains(QStringLiteral("Export the repeat offenders (lasting score) as CSV…")),
            qPrintable(exports.join(QLatin1Char('|'))));
        QVERIFY(exports.contains(QStringLiteral("Export the offenders (most failures) as CSV…")));
        // Back to the map as the next tests expect it (the summary's page hides the detail the drill opened).
        m_window->showSummary(true);
        m_window->showSummary(false);
    }

    // An export on a full disk says why in the status bar and leaves the file of that name as it was: the values of
    // a place (written on the export pool) and the summary's offenders (on the GUI thread). Before, both were written
    // in place, truncated first; the summary's flush and close were not checked, so it left an empty file and said
    // "Saved". With space again, both are written and said to be.
    void exportsOnAFullDiskSayWhy()
    {
        m_window->navigation()->goTo(Place::fleet());
        DeskExports *exports = m_window->exports();
        QSignalSpy finished(exports, &DeskExports::finished);
        QStringList messages;
        {
            fulldisktesting::FullDisk disk;
            QVERIFY(disk.keep(QStringLiteral("values.csv"), "yesterday's values"));
            QVERIFY(disk.keep(QStringLiteral("offenders.csv"), "last week's offenders"));
            QVERIFY2(disk.fill(), qPrintable(disk.problem()));
            exports->exportValuesTo(disk.path(QStringLiteral("values.csv")));
            QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
            messages << m_window->statusBar()->currentMessage();
            exports->exportOffendersTo(disk.path(QStringLiteral("offenders.csv")));
            QCOMPARE(finished.count(), 2);
            messages << m_window->statusBar()->currentMessage();
            disk.undo();
            for (const QString &message : std::as_const(messages)) {
                QVERIFY2(message.startsWith(QStringLiteral("Could not export: ")), qPrintable(message));
                QVERIFY2(message.contains(disk.expectedError()), qPrintable(message));
            }
            QCOMPARE(disk.contents(QStringLiteral("values.csv")), QByteArray("yesterday's values"));
            QCOMPARE(disk.contents(QStringLiteral("offenders.csv")), QByteArray("last week's offenders"));
            QCOMPARE(disk.names(), (QStringList { QStringLiteral("offenders.csv"), QStringLiteral("values.csv") }));
        }
        QTemporaryDir dir;
        const QString values = dir.filePath(QStringLiteral("values.csv"));
        exports->exportValuesTo(values);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 3, 30000);
        QCOMPARE(m_window->statusBar()->currentMessage(),
            QStringLiteral("Saved %1 (%2 GPUs)").arg(values, QLocale().toString(topology()->gpuCount)));
        const QString offenders = dir.filePath(QStringLiteral("offenders.csv"));
        exports->exportOffendersTo(offenders);
        QVERIFY2(m_window->statusBar()->currentMessage().startsWith(QStringLiteral("Saved ") + offenders),
            qPrintable(m_window->statusBar()->currentMessage()));
        QFile written(offenders);
        QVERIFY(written.open(QIODevice::ReadOnly));
        QCOMPARE(written.readAll(), m_window->summary()->offendersCsv());
    }

    // A view string with a time older than the recorder, opened as the console starts (before the fleet and its
    // catalogue are known), goes to that time once they are, from the backend's history, rather than staying live
    // with "Not connected".
    void aSharedViewWithATimeOpensAtThatTime()
    {
        const qint64 target = QDateTime::currentMSecsSinceEpoch() - 5 * 60 * 1000; // the backend holds 10 minutes
        ConsoleOptions options;
        options.animated = false;
        options.restoreLastView = false;
        options.view = QStringLiteral("fs1;n=2048;m=gpu_temp;t=%1")
                           .arg(QDateTime::fromMSecsSinceEpoch(target, Qt::UTC).toString(Qt::ISODate));
        QVERIFY(ViewState::parse(options.view).has_value());
        MainWindow window(options);
        QSignalSpy messages(window.session(), &ConsoleSession::message);
        window.connectTo(m_backend->address());
        window.show();
        QTRY_VERIFY_WITH_TIMEOUT(window.heatmap()->frame() != nullptr
                && window.heatmap()->frame()->sampleTimeMs <= target + 1000 && !window.isLoadingHistory(),
            30000);
        QVERIFY(window.heatmap()->frame()->sampleTimeMs > target - 2 * 60 * 1000);
        QVERIFY(window.replay()->mode() != ReplayController::Mode::Live);
        for (const auto &message : std::as_const(messages)) {
            QVERIFY2(!message.at(0).toString().startsWith(QStringLiteral("Not connected")),
                qPrintable(message.at(0).toString()));
        }
    }

    // The desk closing right after exports were asked writes them all: the user chose them.
    void exportsAskedBeforeClosingAreWritten()
    {
        auto window = secondWindow();
        QTRY_VERIFY_WITH_TIMEOUT(window->heatmap()->frame() != nullptr, 30000);
        window->navigation()->goTo(Place::fleet());
        QTemporaryDir dir;
        QStringList files;
        for (int k = 0; k < 3; ++k) {
            files << dir.filePath(QStringLiteral("values-%1.csv").arg(k));
            window->exports()->exportValuesTo(files.back());
        }
        window.reset();
        for (const QString &file : std::as_const(files)) {
            QFile written(file);
            QVERIFY2(written.open(QIODevice::ReadOnly), qPrintable(file));
            QVERIFY(written.readAll().count('\n') > topology()->gpuCount);
        }
    }

    // Menus by desktop convention, and the backend names its version for the About box.
    void menusAndAbout()
    {
        QStringList menus;
        for (QAction *menu : m_window->menuBar()->actions()) {
            menus << menu->text().remove(QLatin1Char('&'));
        }
        QCOMPARE(menus,
            (QStringList {
                QStringLiteral("File"), QStringLiteral("View"), QStringLiteral("Go"), QStringLiteral("Help") }));
        QCOMPARE(topology()->backendVersion, QStringLiteral(FLEETSCOPE_VERSION));
    }

    // The executive summary is a page of its own: it does not squeeze the map, and the map's docks step aside.
    void summaryIsAPageOfItsOwn()
    {
        const QSize mapSize = m_window->heatmap()->size();
        m_window->showSummary(true);
        QVERIFY(m_window->isSummaryShown());
        QTRY_VERIFY(m_window->summary()->isVisible());
        QVERIFY(!m_window->heatmap()->isVisible());
        QVERIFY(m_window->summary()->width() > m_window->width() / 2);
        m_window->showSummary(false);
        QTRY_VERIFY(m_window->heatmap()->isVisible());
        QTRY_COMPARE(m_window->heatmap()->size(), mapSize);
    }

    // The session outlives any one window: a wall over the desk's session draws the same frames, and the desk is
    // left as it was (no reshaping, no full screen).
    void aSecondWindowOverTheSameSession()
    {
        WallPage fleet;
        fleet.kind = WallPage::Kind::Fleet;
        fleet.seconds = 600;
        {
            WallWindow wall(m_window->session(), { fleet }, false);
            wall.resize(900, 600);
            wall.show();
            QVERIFY(QTest::qWaitForWindowExposed(&wall));
            QTRY_VERIFY_WITH_TIMEOUT(wall.heatmap()->frame() != nullptr, 20000);
            // Both maps follow the session: within a frame or two they show the same sample.
            QTRY_VERIFY_WITH_TIMEOUT(
                wall.heatmap()->frame()->sampleTimeMs == m_window->heatmap()->frame()->sampleTimeMs, 10000);
            QTRY_VERIFY(wall.header()->title().contains(QStringLiteral("GPU temperature")));
            QVERIFY(!m_window->isFullScreen());
            QVERIFY(m_window->menuBar()->isVisible());
        }
        // The desk goes on after the wall has gone.
        const qint64 before = m_window->heatmap()->frame()->sampleTimeMs;
        QTRY_VERIFY_WITH_TIMEOUT(m_window->heatmap()->frame()->sampleTimeMs > before, 10000);
    }

    // A desk shown is painted into its backing store before it is mapped (app/firstpaint.h), so that the first paint
    // after mapping finds the memory touched and the fonts loaded: right after show(), before any event, the store
    // already holds what the window draws.
    void aWindowIsPaintedBeforeItIsMapped()
    {
        if (QGuiApplication::platformName() != QLatin1String("xcb")) {
            QSKIP("prepared on X11 only");
        }
        ConsoleOptions options;
        options.animated = false;
        options.restoreLastView = false;
        options.windowSize = QSize(800, 600);
        MainWindow window(options, m_window->session());
        window.show(); // no event processed after it: Qt has not painted the window yet
        const QString why = firstpainttesting::storeHoldsTheWindow(window);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    // Every frame received goes to the flight recorder.
    void framesAreRecorded()
    {
        QTRY_VERIFY_WITH_TIMEOUT(m_window->recorder().frameCount() >= 3, 30000);
        const FramePtr latest = m_window->session()->latestFrame();
        QTRY_VERIFY_WITH_TIMEOUT(m_window->recorder().latestMs() >= latest->sampleTimeMs, 10000);
        const FramePtr recorded = m_window->recorder().frameAt(latest->sampleTimeMs);
        QVERIFY(recorded != nullptr);
        QCOMPARE(recorded->sampleTimeMs, latest->sampleTimeMs);
        QCOMPARE(recorded->planes.size(), latest->planes.size());
        QVERIFY(std::memcmp(recorded->planes[0].values.data(), latest->planes[0].values.data(),
                    latest->planes[0].values.size() * sizeof(float))
            == 0);
    }
};

int main(int argc, char *argv[])
{
    HeatmapView::requestSurfaceFormat();
    QApplication app(argc, argv);
    TestMainWindow test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_mainwindow.moc"
