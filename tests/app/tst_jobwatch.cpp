// SPDX-License-Identifier: Apache-2.0
// JobWatch over a real JobClient and a real backend in the test (a simulated fleet judged by the fleet's analytics,
// on 127.0.0.1 with an ephemeral port): a watched job is asked again and again; watching another job drops what was
// coming for the one before; a backend gone leaves the last report with the problem said; and, without a client, the
// report is kept and marked old. The session's watch follows its connection.
#include "app/consolesession.h"
#include "app/session/jobwatch.h"
#include "client/jobclient.h"
#include "client/topologydecode.h"
#include "service/backendserver.h"
#include "service/frameencoder.h"
#include "sim/simulatedfleet.h"

#include <QSignalSpy>
#include <QTest>

#include <chrono>
#include <memory>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace std::chrono_literals;

class TestJobWatch : public QObject
{
    Q_OBJECT

    be::SimulationOptions m_options;
    std::unique_ptr<be::BackendServer> m_server;
    TopologyPtr m_topology;
    std::vector<uint64_t> m_running; // two running jobs

    std::unique_ptr<be::BackendServer> startServer()
    {
        auto server = std::make_unique<be::BackendServer>(be::simulatedSource(m_options));
        std::string error;
        if (!server->start("127.0.0.1:0", &error)) {
            qWarning("%s", error.c_str());
            return nullptr;
        }
        return server;
    }

    std::unique_ptr<JobClient> clientOf(const be::BackendServer &server)
    {
        auto client = std::make_unique<JobClient>(QString::fromStdString(server.listeningAddress()));
        client->setTopology(m_topology);
        return client;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_options.gpuCount = 512;
        m_options.seed = 5;
        m_options.interval = 100ms;
        m_options.history = 30min;
        m_server = startServer();
        QVERIFY(m_server);
        QTRY_VERIFY_WITH_TIMEOUT(m_server->source().latest() && m_server->source().latest()->sequence >= 3, 60000);
        QString why;
        m_topology = decodeTopology(
            be::encodeTopology(be::SimulatedFleet::shapeOf(m_options), be::SimulatedFleet::generationOf(m_options)),
            &why);
        QVERIFY2(m_topology, qPrintable(why));
        for (const auto &job : m_server->source().jobs()) {
            if (job.endMs == 0 && m_running.size() < 2) {
                m_running.push_back(job.id);
            }
        }
        QCOMPARE(m_running.size(), size_t(2));
    }

    void cleanupTestCase() { m_server->stop(); }

    void aWatchedJobIsAskedAgain()
    {
        const auto client = clientOf(*m_server);
        JobWatch watch;
        QCOMPARE(JobWatch::refreshMs, 5000);
        watch.setRefreshInterval(100);
        watch.setClient(client.get());
        QSignalSpy changed(&watch, &JobWatch::reportChanged);
        watch.watch(m_running[0]);
        QVERIFY(watch.isWatching());
        QCOMPARE(watch.jobId(), m_running[0]);
        QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 3, 60000);
        QVERIFY2(watch.problem().isEmpty(), qPrintable(watch.problem()));
        const auto first = changed.first().at(0).value<JobReportPtr>();
        const auto last = changed.last().at(0).value<JobReportPtr>();
        QVERIFY(first && last);
        QVERIFY(last->requestId != first->requestId); // asked again, not the same answer handed twice
        QCOMPARE(last->job.id, m_running[0]);
        QCOMPARE(watch.report(), last);

        watch.stop();
        QVERIFY(!watch.isWatching());
        QTRY_COMPARE_WITH_TIMEOUT(client->pendingRequests(), 0, 60000);
        const int answered = changed.count();
        QVERIFY(!QTest::qWaitFor([&] { return changed.count() > answered; }, 1000)); // no ask after stop
        QCOMPARE(watch.report(), changed.last().at(0).value<JobReportPtr>()); // kept
    }

    // The answer still coming for the job watched before is not the new job's, nor is its report.
    void watchingAnotherJobDropsTheOldAnswers()
    {
        const auto client = clientOf(*m_server);
        JobWatch watch;
        watch.setRefreshInterval(100);
        watch.setClient(client.get());
        QSignalSpy changed(&watch, &JobWatch::reportChanged);
        watch.watch(m_running[0]);
        QTRY_VERIFY_WITH_TIMEOUT(watch.report() != nullptr, 60000);
        QCOMPARE(watch.report()->job.id, m_running[0]);

        changed.clear();
        watch.watch(m_running[0]); // in flight now
        watch.watch(m_running[1]);
        QCOMPARE(watch.report(), nullptr); // the other job's is gone at once
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.first().at(0).value<JobReportPtr>(), nullptr);
        QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 4, 60000);
        for (int i = 1; i < changed.count(); ++i) {
            const auto report = changed.at(i).at(0).value<JobReportPtr>();
            QVERIFY(report);
            QCOMPARE(report->job.id, m_running[1]);
        }

        // By name, as the page asks for a job named in a view.
        const QString name = watch.report()->job.name;
        watch.watch(0, name);
        QCOMPARE(watch.report(), nullptr);
        QCOMPARE(watch.jobName(), name);
        QTRY_VERIFY_WITH_TIMEOUT(watch.report() != nullptr, 60000);
        QCOMPARE(watch.report()->job.id, m_running[1]);
    }

    void aStoppedBackendLeavesTheReportWithTheProblemSaid()
    {
        auto server = startServer();
        QVERIFY(server);
        QTRY_VERIFY_WITH_TIMEOUT(server->source().latest() && server->source().latest()->sequence >= 3, 60000);
        const auto client = clientOf(*server);
        JobWatch watch;
        watch.setRefreshInterval(100);
        watch.setClient(client.get());
        QSignalSpy problems(&watch, &JobWatch::problemChanged);
        watch.watch(m_running[0]);
        QTRY_VERIFY_WITH_TIMEOUT(watch.report() != nullptr, 60000);
        const JobReportPtr report = watch.report();
        QVERIFY(watch.problem().isEmpty());

        server->stop();
        server.reset();
        QTRY_VERIFY_WITH_TIMEOUT(!watch.problem().isEmpty(), 60000);
        qInfo("with the backend gone: %s", qPrintable(watch.problem()));
        QVERIFY2(watch.problem().contains(QStringLiteral("backend")), qPrintable(watch.problem()));
        QVERIFY(watch.report() != nullptr);
        QCOMPARE(watch.report()->job.id, m_running[0]);
        QVERIFY(!problems.isEmpty());

        // No client at all: nothing is asked, the report is kept and said to be old.
        watch.setClient(nullptr);
        QVERIFY2(watch.problem().startsWith(QStringLiteral("not connected")), qPrintable(watch.problem()));
        QVERIFY(watch.report() != nullptr);
    }

    // A reconnect: the watch asks its new client at once, and the old client's answers are no longer its.
    void aNewClientIsAskedAtOnce()
    {
        const auto first = clientOf(*m_server);
        const auto second = clientOf(*m_server);
        JobWatch watch;
        watch.setRefreshInterval(600000); // the new client's answer comes from the ask setClient makes
        watch.setClient(first.get());
        watch.watch(m_running[0]);
        QCOMPARE(first->pendingRequests(), 1);
        watch.setClient(second.get());
        QCOMPARE(second->pendingRequests(), 1);
        QSignalSpy changed(&watch, &JobWatch::reportChanged);
        QVERIFY(changed.wait(60000));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(watch.report()->job.id, m_running[0]);
        QTRY_COMPARE_WITH_TIMEOUT(first->pendingRequests(), 0, 60000);
        QCOMPARE(changed.count(), 1); // nothing from the first client's cancelled ask
    }

    // The session's watch: over its connection of the moment, asked again as the fleet the live stream brings
    // arrives; a reconnect re-points it.
    void theSessionsWatchFollowsItsConnection()
    {
        ConsoleSession session(ConsoleSession::Options {});
        JobWatch *watch = session.jobWatch();
        watch->watch(m_running[0]);
        QVERIFY2(watch->problem().startsWith(QStringLiteral("not connected")), qPrintable(watch->problem()));
        const QString address = QString::fromStdString(m_server->listeningAddress());
        session.connectTo(address);
        QTRY_VERIFY_WITH_TIMEOUT(watch->report() != nullptr, 60000);
        QVERIFY(session.topology());
        QCOMPARE(watch->report()->job.id, m_running[0]);
        QCOMPARE(watch->report()->topologyGeneration, session.topology()->generation);
        QVERIFY2(watch->problem().isEmpty(), qPrintable(watch->problem()));

        const JobReportPtr before = watch->report();
        session.connectTo(address);
        QTRY_VERIFY_WITH_TIMEOUT(watch->report() != before, 60000);
        QCOMPARE(watch->report()->job.id, m_running[0]);
    }
};

QTEST_GUILESS_MAIN(TestJobWatch)
#include "tst_jobwatch.moc"
