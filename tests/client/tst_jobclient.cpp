// SPDX-License-Identifier: Apache-2.0
// JobClient against a real backend in the test (BackendServer over a simulated fleet whose frames the fleet's
// analytics judge, on 127.0.0.1 with an ephemeral port): GetJob of a running job answers its account, decoded
// against the fleet with nothing dropped (the backend's encoder and the console's decoder agree on the bounds); by
// name as by id; an unknown job fails in the backend's words; without a fleet nothing is asked.
#include "client/jobclient.h"
#include "client/topologydecode.h"
#include "service/backendserver.h"
#include "service/frameencoder.h"
#include "sim/simulatedfleet.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

#include <chrono>
#include <memory>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace std::chrono_literals;

class TestJobClient : public QObject
{
    Q_OBJECT

    be::SimulationOptions m_options;
    std::unique_ptr<be::BackendServer> m_server;
    TopologyPtr m_topology;
    QString m_address;

    // A running job the backend has accounted for over a few frames, or none.
    be::JobInfo runningJob() const
    {
        for (const auto &job : m_server->source().jobs()) {
            if (job.endMs == 0 && job.gpuCount >= 8) {
                return job;
            }
        }
        return {};
    }

    // Asks until the account has band points (the backend accounts from the frames it judges), at most 60 s.
    JobReportPtr askUntilBanded(JobClient *client, uint64_t id, const QString &name = {})
    {
        QSignalSpy ready(client, &JobClient::reportReady);
        QSignalSpy failed(client, &JobClient::requestFailed);
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < 60000) {
            const quint64 request = client->getJob(id, name);
            if (!ready.wait(20000)) {
                qWarning("no report: %s", failed.isEmpty() ? "no answer" : qPrintable(failed.last().at(1).toString()));
                return nullptr;
            }
            const auto report = ready.last().at(0).value<JobReportPtr>();
            if (report->requestId != request) {
                qWarning("the report is tagged %llu, the request was %llu", report->requestId, request);
                return nullptr;
            }
            if (!report->band.empty()) {
                return report;
            }
            // Ask again once the next frame was judged (the accounts grow a band point a frame).
            const auto latest = m_server->source().latest();
            m_server->source().waitForFrameAfter(latest ? latest->sequence : 0, std::chrono::milliseconds(5000));
        }
        return nullptr;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_options.gpuCount = 512;
        m_options.seed = 3;
        m_options.interval = 100ms;
        m_options.history = 1h;
        m_server = std::make_unique<be::BackendServer>(be::simulatedSource(m_options));
        std::string error;
        QVERIFY2(m_server->start("127.0.0.1:0", &error), error.c_str());
        QTRY_VERIFY_WITH_TIMEOUT(m_server->source().latest() && m_server->source().latest()->sequence >= 3, 60000);
        QString why;
        m_topology = decodeTopology(
            be::encodeTopology(be::SimulatedFleet::shapeOf(m_options), be::SimulatedFleet::generationOf(m_options)),
            &why);
        QVERIFY2(m_topology, qPrintable(why));
        m_address = QString::fromStdString(m_server->listeningAddress());
    }

    void cleanupTestCase() { m_server->stop(); }

    void aRunningJobsAccount()
    {
        const be::JobInfo job = runningJob();
        QVERIFY2(job.id != 0, "the simulated fleet runs no job");
        JobClient client(m_address);
        client.setTopology(m_topology);
        QSignalSpy errors(&client, &JobClient::errorOccurred);
        QElapsedTimer timer;
        timer.start();
        const JobReportPtr report = askUntilBanded(&client, job.id);
        QVERIFY(report);
        qInfo("job %llu (%d GPUs): an account with %zu band points, %zu spans, %zu losses, %zu stragglers in %lld ms",
            static_cast<unsigned long long>(job.id), static_cast<int>(report->job.gpus.size()), report->band.size(),
            report->phases.size(), report->losses.size(), report->stragglers.size(), timer.elapsed());
        QVERIFY2(report->problems.isEmpty(), qPrintable(report->problems.join(QStringLiteral("; "))));
        QCOMPARE(errors.count(), 0);
        QCOMPARE(report->job.id, job.id);
        QCOMPARE(report->job.name, QString::fromStdString(job.name));
        QCOMPARE(report->job.gpus, job.gpuList());
        QCOMPARE(report->topologyGeneration, m_topology->generation);
        QVERIFY2(report->goodput >= 0 && report->goodput <= 1, qPrintable(QString::number(report->goodput)));
        QVERIFY(report->gpuHours > 0);
        QVERIFY(report->productiveGpuHours <= report->gpuHours);
        QVERIFY(report->asOfMs >= report->watchedFromMs);
        QVERIFY(report->watchedFromMs >= job.startMs);
        QVERIFY(report->phase != JobPhase::Unwatched);
        QVERIFY(!report->phases.empty());
        QCOMPARE(report->phases.back().toMs, report->asOfMs);
        for (const auto &point : report->band) {
            QVERIFY(point.timeMs >= report->watchedFromMs && point.timeMs <= report->asOfMs);
            QVERIFY(point.reporting <= report->job.gpus.size());
        }
        QVERIFY(report->band.back().reporting > 0);
    }

    void byNameAsById()
    {
        const be::JobInfo job = runningJob();
        QVERIFY(job.id != 0);
        JobClient client(m_address);
        client.setTopology(m_topology);
        const JobReportPtr report = askUntilBanded(&client, 0, QString::fromStdString(job.name));
        QVERIFY(report);
        QCOMPARE(report->job.id, job.id);
    }

    void anUnknownJobFailsInTheBackendsWords()
    {
        JobClient client(m_address);
        client.setTopology(m_topology);
        QSignalSpy ready(&client, &JobClient::reportReady);
        QSignalSpy failed(&client, &JobClient::requestFailed);
        const quint64 request = client.getJob(987654321);
        QVERIFY(failed.wait(60000));
        QCOMPARE(failed.first().at(0).toULongLong(), request);
        const QString message = failed.first().at(1).toString();
        QCOMPARE(message, QStringLiteral("no job 987654321 is running or ended within the hour"));
        QCOMPARE(ready.count(), 0);

        const quint64 byName = client.getJob(0, QStringLiteral("no-such-job"));
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 2, 60000);
        QCOMPARE(failed.last().at(0).toULongLong(), byName);
        QVERIFY2(failed.last().at(1).toString().contains(QStringLiteral("no job named")),
            qPrintable(failed.last().at(1).toString()));
    }

    // Indices can only be checked against a fleet: without one nothing goes out.
    void withoutAFleetNothingIsAsked()
    {
        JobClient client(m_address);
        QSignalSpy failed(&client, &JobClient::requestFailed);
        const quint64 request = client.getJob(runningJob().id);
        QVERIFY(failed.wait(10000));
        QCOMPARE(failed.first().at(0).toULongLong(), request);
        QCOMPARE(failed.first().at(1).toString(), QStringLiteral("the fleet is not known yet"));
        QCOMPARE(client.pendingRequests(), 0);
    }
};

QTEST_GUILESS_MAIN(TestJobClient)
#include "tst_jobclient.moc"
