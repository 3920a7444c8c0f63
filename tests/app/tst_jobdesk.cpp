// SPDX-License-Identifier: Apache-2.0
// The job page from every entry point, over a real backend serving a simulated fleet in this process: Find
// "job:<id>" and "job:<name>", the detail panel's "Open job page", J on a GPU of a job (its tooltip says so), a
// problem's context menu, a double-click on a job's block by job, and a wall playlist's job page (by name, and the
// running job with the lowest goodput), each opening the page of the right job; the page's clicks select a GPU, replay
// a time and show an incident in the Problems dock. Needs an X display (Xvfb in CI).
#include "app/consolesession.h"
#include "app/mainwindow.h"
#include "app/pages/jobdesk.h"
#include "app/pages/mappage.h"
#include "app/pages/problemspage.h"
#include "app/problemsmodel.h"
#include "app/session/jobwatch.h"
#include "app/wallwindow.h"
#include "model/navigation.h"
#include "model/problems.h"
#include "model/replaycontroller.h"
#include "service/backendserver.h"
#include "sim/simulatedfleet.h"
#include "widgets/detail/detailjobs.h"
#include "widgets/detail/detailpanel.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/job/jobpage.h"
#include "widgets/search/searchbox.h"
#include "widgets/wall/wallheader.h"

#include <QAction>
#include <QApplication>
#include <QDateTime>
#include <QDockWidget>
#include <QMenu>
#include <QMouseEvent>
#include <QPushButton>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTest>
#include <QTimer>

#include <chrono>
#include <memory>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace std::chrono_literals;

class TestJobDesk : public QObject
{
    Q_OBJECT

    std::unique_ptr<be::BackendServer> m_server;
    std::unique_ptr<MainWindow> m_window;

    TopologyPtr topology() const { return m_window->session()->topology(); }

    // Running jobs of at least two GPUs, whose name no other job listed shares (so that Find by name has one answer).
    std::vector<Job> runningJobs() const
    {
        std::vector<Job> found;
        const JobsPtr jobs = m_window->session()->jobs();
        for (const Job &job : jobs->jobs) {
            const auto named = std::count_if(
                jobs->jobs.begin(), jobs->jobs.end(), [&job](const Job &other) { return other.name == job.name; });
            if (job.isRunning() && job.gpus.size() >= 2 && named == 1) {
                found.push_back(job);
            }
        }
        return found;
    }

    // The job page open on that job: the dock shown, the session watching it, its GPUs outlined on the map; the
    // backend's account of it handed to the page once GetJob answers (or the page told why not).
    bool opened(const Job &job)
    {
        JobDesk *desk = m_window->jobDesk();
        JobWatch *watch = m_window->session()->jobWatch();
        if (!QTest::qWaitFor(
                [&] { return desk->isVisible() && watch->isWatching() && watch->jobId() == job.id; }, 60000)) {
            qWarning("job desk: shown %d, watching %llu (%d), expected %llu", desk->isVisible(),
                static_cast<unsigned long long>(watch->jobId()), watch->isWatching(),
                static_cast<unsigned long long>(job.id));
            return false;
        }
        if (!desk->windowTitle().contains(job.name) || m_window->heatmap()->markedGpuCount() != job.gpus.size()) {
            qWarning("job desk: title '%s', %zu GPUs outlined of %zu", qPrintable(desk->windowTitle()),
                m_window->heatmap()->markedGpuCount(), job.gpus.size());
            return false;
        }
        if (!QTest::qWaitFor(
                [&] {
                    const JobReportPtr report = desk->page()->report();
                    return (report && report->job.id == job.id) || !watch->problem().isEmpty();
                },
                60000)) {
            qWarning("job desk: neither a report nor a problem for job %llu", static_cast<unsigned long long>(job.id));
            return false;
        }
        const JobReportPtr report = desk->page()->report();
        qInfo("job %llu %s: %s", static_cast<unsigned long long>(job.id), qPrintable(job.name),
            report ? qPrintable(QStringLiteral("report, goodput %1").arg(report->goodput))
                   : qPrintable(watch->problem()));
        return true;
    }

    // Closes the page (the watch stops) and clears the outline, so that the next entry point is seen opening it.
    void closePage()
    {
        m_window->jobDesk()->close();
        QVERIFY(!m_window->jobDesk()->isVisible());
        QVERIFY(!m_window->session()->jobWatch()->isWatching());
        m_window->heatmap()->setMarkedGpus({});
        m_window->navigation()->goTo(Place::fleet());
    }

    void find(const QString &text)
    {
        SearchBox *search = m_window->searchBox();
        search->setFocus();
        search->clear();
        QTest::keyClicks(search, text);
        QTest::keyClick(search, Qt::Key_Return);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        be::SimulationOptions o;
        o.gpuCount = 1024;
        o.seed = 7;
        o.interval = 250ms;
        o.history = 10min;
        m_server = std::make_unique<be::BackendServer>(be::simulatedSource(o));
        std::string error;
        QVERIFY2(m_server->start("127.0.0.1:0", &error), error.c_str());
        ConsoleOptions options;
        options.animated = false;
        options.restoreLastView = false;
        options.windowSize = QSize(1400, 900);
        m_window = std::make_unique<MainWindow>(options);
        m_window->connectTo(QString::fromStdString(m_server->listeningAddress()));
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
        QTRY_VERIFY_WITH_TIMEOUT(m_window->heatmap()->frame() != nullptr, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->searchBox()->isEnabled(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->session()->jobs() != nullptr, 60000);
        QVERIFY(runningJobs().size() >= 3);
        QVERIFY(!m_window->jobDesk()->isVisible()); // the map first
    }

    void cleanupTestCase()
    {
        m_window.reset();
        m_server.reset();
    }

    void findById()
    {
        const Job job = runningJobs()[0];
        find(QStringLiteral("job:%1").arg(job.id));
        QVERIFY(opened(job));
        QVERIFY2(m_window->statusBar()->currentMessage().contains(QStringLiteral("#%1").arg(job.id)),
            qPrintable(m_window->statusBar()->currentMessage()));
        closePage();
    }

    void findByName()
    {
        const Job job = runningJobs()[1];
        find(QStringLiteral("job:%1").arg(job.name));
        QVERIFY(opened(job));
        closePage();
    }

    // The detail panel's "Open job page": the selected GPU's running job.
    void detailPanelLink()
    {
        const Job job = runningJobs()[2];
        const uint32_t gpu = job.gpus[1];
        m_window->navigation()->goTo(Place::gpu(gpu));
        QCOMPARE(m_window->detailPanel()->gpu(), static_cast<int>(gpu));
        QPushButton *open = m_window->detailPanel()->jobs()->openButton();
        QTRY_VERIFY(open->isEnabled());
        QCOMPARE(m_window->detailPanel()->jobs()->jobToOpen(), job.id);
        QTest::mouseClick(open, Qt::LeftButton);
        QVERIFY(opened(job));
        closePage();
    }

    // J on the GPU under the cursor, whose tooltip names its job and says so.
    void jKeyOnAGpu()
    {
        const Job job = runningJobs()[0];
        HeatmapView *view = m_window->heatmap();
        const uint32_t gpu = job.gpus.back();
        QVERIFY2(view->describeGpu(static_cast<int>(gpu)).contains(QStringLiteral("J: job page")),
            qPrintable(view->describeGpu(static_cast<int>(gpu))));
        view->setFocus();
        QTest::mouseMove(view, view->cellRect(static_cast<int>(gpu)).center().toPoint());
        QCOMPARE(view->gpuAt(view->cellRect(static_cast<int>(gpu)).center()), static_cast<int>(gpu));
        QTest::keyClick(view, Qt::Key_J);
        QVERIFY(opened(job));
        closePage();
    }

    // A problem that hits a job: its context menu opens the job's page.
    void problemContextMenu()
    {
        const Job job = runningJobs()[1];
        const TopologyPtr fleet = topology();
        auto incident = std::make_shared<Incident>();
        incident->id = 4242;
        incident->cause = QStringLiteral("network");
        incident->evidence = QStringLiteral("two GPUs of one job lost their links within 2 s");
        incident->gpuRuns = { { job.gpus[0], 1 }, { job.gpus[1], 1 } };
        incident->gpuCount = 2;
        FleetEvent event;
        event.kind = EventKind::IncidentOpen;
        event.severity = EventSeverity::Critical;
        event.timeMs = QDateTime::currentMSecsSinceEpoch();
        event.text = QStringLiteral("links down: 2 GPUs");
        event.incident = incident;
        ProblemBoard board;
        board.add(event);
        ProblemsPage *problems = m_window->problemsPage();
        const JobsPtr jobs = m_window->session()->jobs();
        problems->model()->setProblems(board.open(event.timeMs, fleet.get(), jobs.get()), fleet, jobs, event.timeMs);
        const Problem *problem = problems->model()->problemAt(0);
        QVERIFY(problem != nullptr);
        QCOMPARE(problem->jobIds, std::vector<uint64_t> { job.id });
        auto *table = problems->findChild<QTableView *>();
        QVERIFY(table != nullptr);
        QString offered;
        QTimer::singleShot(0, this, [&] {
            auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
            if (menu == nullptr) {
                return;
            }
            for (QAction *action : menu->actions()) {
                if (action->text().startsWith(QStringLiteral("Open job page"))) {
                    offered = action->text();
                    action->trigger();
                }
            }
            menu->close();
        });
        Q_EMIT table->customContextMenuRequested(table->visualRect(problems->model()->index(0, 0)).center());
        QCOMPARE(offered, QStringLiteral("Open job page (%1)").arg(job.name));
        QVERIFY(opened(job));
        closePage();
        problems->refresh();
    }

    // By job, each job is a block: a double-click on one opens its page (the layout maps the point to a GPU, the
    // listing the GPU to its job); elsewhere a double-click still zooms.
    void byJobDoubleClick()
    {
        HeatmapView *view = m_window->heatmap();
        view->setArrangement(HeatmapView::Arrangement::ByJob);
        QTRY_VERIFY_WITH_TIMEOUT(!view->isLayoutPending(), 60000);
        const Job job = runningJobs()[2];
        const QPointF at = view->cellRect(static_cast<int>(job.gpus[0])).center();
        const int gpu = view->gpuAt(at);
        QVERIFY(gpu >= 0);
        const Job *running = m_window->session()->jobs()->runningJobOn(static_cast<uint32_t>(gpu));
        QVERIFY(running != nullptr);
        QCOMPARE(running->id, job.id);
        QMouseEvent doubleClick(
            QEvent::MouseButtonDblClick, at, view->mapToGlobal(at), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(view, &doubleClick);
        QVERIFY(opened(job));
        closePage();
        view->setArrangement(HeatmapView::Arrangement::FloorPlan);
        QTRY_VERIFY_WITH_TIMEOUT(!view->isLayoutPending(), 60000);
    }

    // The page's clicks: a GPU is selected and shown, a time replayed, an incident shown in the Problems dock.
    void thePagesClicks()
    {
        const Job job = runningJobs()[0];
        m_window->jobDesk()->openJob(job.id);
        QVERIFY(opened(job));
        JobPage *page = m_window->jobDesk()->page();
        Q_EMIT page->gpuActivated(job.gpus[1]);
        QCOMPARE(m_window->navigation()->current(), Place::gpu(job.gpus[1]));
        QCOMPARE(m_window->heatmap()->selectedGpu(), static_cast<int>(job.gpus[1]));
        QCOMPARE(m_window->detailPanel()->gpu(), static_cast<int>(job.gpus[1]));

        const qint64 back = m_window->session()->latestFrame()->sampleTimeMs - 60000;
        Q_EMIT page->timeActivated(back);
        QTRY_VERIFY_WITH_TIMEOUT(m_window->replay()->mode() != ReplayController::Mode::Live, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isLoadingHistory() && m_window->heatmap()->frame()
                && m_window->heatmap()->frame()->sampleTimeMs <= back + 1000,
            60000);
        QVERIFY(m_window->heatmap()->frame()->sampleTimeMs > back - 2 * 60 * 1000);
        m_window->replay()->goLive();

        // An incident the job's timeline names, open among the problems: chosen there, its GPUs outlined.
        const TopologyPtr fleet = topology();
        auto incident = std::make_shared<Incident>();
        incident->id = 99;
        incident->cause = QStringLiteral("power");
        incident->gpuRuns = { { job.gpus[0], 1 }, { job.gpus[1], 1 } };
        incident->gpuCount = 2;
        FleetEvent event;
        event.kind = EventKind::IncidentOpen;
        event.severity = EventSeverity::Critical;
        event.timeMs = QDateTime::currentMSecsSinceEpoch();
        event.text = QStringLiteral("PDU tripped");
        event.incident = incident;
        ProblemBoard board;
        board.add(event);
        ProblemsPage *problems = m_window->problemsPage();
        const JobsPtr jobs = m_window->session()->jobs();
        problems->model()->setProblems(board.open(event.timeMs, fleet.get(), jobs.get()), fleet, jobs, event.timeMs);
        const Problem problem = *problems->model()->problemAt(0);
        QCOMPARE(problem.kind, Problem::Kind::Incident);
        QSignalSpy chosen(problems, &ProblemsPage::incidentChosen);
        Q_EMIT page->incidentActivated(99);
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen[0][0].value<quint64>(), quint64 { 99 });
        QCOMPARE(m_window->heatmap()->markedGpuCount(), problem.gpu >= 0 ? size_t(0) : problem.gpus.size());
        QVERIFY(m_window->findChild<QDockWidget *>(QStringLiteral("problems"))->isVisible());
        // One no longer open: said, nothing chosen.
        Q_EMIT page->incidentActivated(123456789);
        QCOMPARE(chosen.size(), 1);
        QVERIFY2(m_window->statusBar()->currentMessage().contains(QStringLiteral("no longer open")),
            qPrintable(m_window->statusBar()->currentMessage()));
        closePage();
    }

    // A wall's job page: the job page in wall mode, the job named in the header; without a job named, the running
    // job with the lowest goodput (ties: the most stragglers).
    void wallJobPage()
    {
        const Job named = runningJobs()[1];
        WallPage byName;
        byName.kind = WallPage::Kind::Job;
        byName.job = named.name;
        WallPage worst;
        worst.kind = WallPage::Kind::Job;
        qint64 now = 1000;
        WallWindow wall(m_window->session(), { byName, worst }, false, [&now] { return now; });
        wall.resize(1280, 720);
        wall.show();
        QVERIFY(QTest::qWaitForWindowExposed(&wall));
        QCOMPARE(wall.stack()->currentWidget(), wall.jobPage());
        JobWatch *watch = m_window->session()->jobWatch();
        QTRY_VERIFY_WITH_TIMEOUT(watch->isWatching() && watch->jobId() == named.id, 60000);
        QTRY_VERIFY2_WITH_TIMEOUT(
            wall.header()->title().contains(named.name), qPrintable(wall.header()->title()), 60000);
        QVERIFY(wall.header()->title().contains(QStringLiteral("#%1").arg(named.id)));
        QTRY_VERIFY_WITH_TIMEOUT(
            (wall.jobPage()->report() && wall.jobPage()->report()->job.id == named.id) || !watch->problem().isEmpty(),
            60000);

        wall.playlist()->next(); // chosen from the listing of now
        // The worst running job, as this listing says.
        const JobsPtr jobs = m_window->session()->jobs();
        const Job *expected = nullptr;
        for (const Job &job : jobs->jobs) {
            if (!job.isRunning()) {
                continue;
            }
            const bool known = job.goodput >= 0;
            const bool expectedKnown = expected != nullptr && expected->goodput >= 0;
            if (expected == nullptr || (known && !expectedKnown)
                || (known == expectedKnown
                    && (known && job.goodput != expected->goodput ? job.goodput < expected->goodput
                            : job.stragglerCount != expected->stragglerCount
                            ? job.stragglerCount > expected->stragglerCount
                            : job.gpus.size() != expected->gpus.size() ? job.gpus.size() > expected->gpus.size()
                                                                       : job.id < expected->id))) {
                expected = &job;
            }
        }
        QVERIFY(expected != nullptr);
        qInfo("the worst running job: %s #%llu, goodput %.3f, %u stragglers", qPrintable(expected->name),
            static_cast<unsigned long long>(expected->id), expected->goodput, expected->stragglerCount);
        QCOMPARE(wall.stack()->currentWidget(), wall.jobPage());
        QTRY_VERIFY_WITH_TIMEOUT(watch->jobId() == expected->id, 60000);
        QVERIFY2(wall.header()->title().contains(expected->name), qPrintable(wall.header()->title()));
        wall.close();
    }
};

int main(int argc, char *argv[])
{
    HeatmapView::requestSurfaceFormat();
    QApplication app(argc, argv);
    TestJobDesk test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_jobdesk.moc"
