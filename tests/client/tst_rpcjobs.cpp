// SPDX-License-Identifier: Apache-2.0
// The calls in flight (RpcJobs) through SummaryClient and HistoryClient, against a real backend on 127.0.0.1 with an
// ephemeral port and against a listener that accepts connections and never answers.
#include "client/historyclient.h"
#include "client/rpcjobs.h"
#include "client/summaryclient.h"
#include "service/backendserver.h"
#include "sim/simulatedfleet.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

using namespace fleetscope;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using namespace std::chrono_literals;

namespace {

constexpr int refreshRequests = 33; // what SummaryView asks for: 24 hourly + 7 daily buckets, the day, the week

int threadCount()
{
    return static_cast<int>(
        QDir(QStringLiteral("/proc/self/task")).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size());
}

// Takes connections (the kernel completes them) and never reads or writes: every call to it hangs.
class SilentListener
{
public:
    SilentListener()
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0
            || ::listen(m_fd, 8) != 0 || ::getsockname(m_fd, reinterpret_cast<sockaddr *>(&address), &length) != 0) {
            return;
        }
        m_port = ntohs(address.sin_port);
    }
    ~SilentListener()
    {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    SilentListener(const SilentListener &) = delete;
    SilentListener &operator=(const SilentListener &) = delete;
    bool ok() const { return m_port != 0; }
    QString address() const { return QStringLiteral("127.0.0.1:%1").arg(m_port); }

private:
    int m_fd = -1;
    int m_port = 0;
};

std::unique_ptr<be::BackendServer> startBackend()
{
    be::SimulationOptions o;
    o.gpuCount = 512;
    o.seed = 5;
    o.interval = 100ms;
    o.history = 10min;
    auto server = std::make_unique<be::BackendServer>(be::simulatedSource(o));
    std::string error;
    if (!server->start("127.0.0.1:0", &error)) {
        qWarning("backend did not start: %s", error.c_str());
        return nullptr;
    }
    return server;
}

RangeRequest lastMinutes(int gpus)
{
    RangeRequest request;
    for (int g = 0; g < gpus; ++g) {
        request.gpus.push_back(static_cast<uint32_t>(g));
    }
    request.toMs = QDateTime::currentMSecsSinceEpoch();
    request.fromMs = request.toMs - 5 * 60 * 1000;
    request.stepMs = 1000;
    return request;
}

} // namespace

class TestRpcJobs : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // The old clients started a std::thread per request: 33 more threads for one refresh. Now the calls share the
    // client's one completion-queue thread (and gRPC's pool, started once per process).
    void aRefreshRunsOnABoundedNumberOfThreads()
    {
        SilentListener silent;
        QVERIFY(silent.ok());
        SummaryClient client(silent.address());
        client.setDeadline(1500ms);
        QSignalSpy failed(&client, &SummaryClient::requestFailed);
        // Once, so that what gRPC starts per process (its pool, its timer) is in the baseline.
        client.requestSummary(0, 1000);
        QVERIFY(failed.wait(10000));
        failed.clear();
        const int before = threadCount();

        int peak = before;
        QTimer sampler;
        connect(&sampler, &QTimer::timeout, this, [&] { peak = std::max(peak, threadCount()); });
        sampler.start(5);
        for (int i = 0; i < refreshRequests; ++i) {
            client.requestSummary(0, 1000);
        }
        peak = std::max(peak, threadCount());
        QCOMPARE(client.pendingRequests(), refreshRequests);
        // All in flight until their deadline, sampled all along.
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), refreshRequests, 15000);
        sampler.stop();
        qInfo("threads: %d before a refresh of %d requests, at most %d during it", before, refreshRequests, peak);
        QVERIFY2(peak - before <= 4, qPrintable(QStringLiteral("%1 more threads").arg(peak - before)));
    }

    void aSilentBackendFailsAtTheDeadline()
    {
        SilentListener silent;
        QVERIFY(silent.ok());
        SummaryClient summaries(silent.address());
        summaries.setDeadline(600ms);
        HistoryClient history(silent.address());
        history.setDeadline(600ms);
        QSignalSpy summaryFailed(&summaries, &SummaryClient::requestFailed);
        QSignalSpy historyFailed(&history, &HistoryClient::requestFailed);
        QElapsedTimer clock;
        clock.start();
        const quint64 summaryId = summaries.requestSummary(0, 1000);
        const quint64 rangeId = history.queryRange(lastMinutes(4));
        QTRY_VERIFY_WITH_TIMEOUT(summaryFailed.count() == 1 && historyFailed.count() == 1, 10000);
        QVERIFY2(clock.elapsed() >= 550, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(summaryFailed.first().at(0).toULongLong(), summaryId);
        QCOMPARE(historyFailed.first().at(0).toULongLong(), rangeId);
        for (const QString &message :
            { summaryFailed.first().at(1).toString(), historyFailed.first().at(1).toString() }) {
            QVERIFY2(message.contains(QStringLiteral("in time")), qPrintable(message));
        }
        QCOMPARE(summaries.pendingRequests(), 0);
        QCOMPARE(history.pendingRequests(), 0);
    }

    void aCancelledRequestDeliversNothing()
    {
        auto server = startBackend();
        QVERIFY(server);
        SummaryClient client(QString::fromStdString(server->listeningAddress()));
        QSignalSpy ready(&client, &SummaryClient::summaryReady);
        QSignalSpy failed(&client, &SummaryClient::requestFailed);
        const int64_t now = QDateTime::currentMSecsSinceEpoch();
        std::vector<quint64> cancelled;
        for (int i = 0; i < 8; ++i) {
            cancelled.push_back(client.requestSummary(now - 60000, now));
        }
        for (const quint64 id : cancelled) {
            client.cancel(id);
        }
        const quint64 kept = client.requestSummary(now - 60000, now);
        QTRY_COMPARE_WITH_TIMEOUT(client.pendingRequests(), 0, 10000);
        QCOMPARE(failed.count(), 0); // a cancel is not a failure
        QCOMPARE(ready.count(), 1);
        QCOMPARE(ready.first().at(0).value<SummaryPtr>()->requestId, kept);
    }

    void destroyingAClientWithCallsInFlightNeitherHangsNorCrashes()
    {
        SilentListener silent;
        QVERIFY(silent.ok());
        auto server = startBackend();
        QVERIFY(server);
        for (const QString &address : { silent.address(), QString::fromStdString(server->listeningAddress()) }) {
            auto summaries = std::make_unique<SummaryClient>(address); // the default deadline: 30 s
            auto history = std::make_unique<HistoryClient>(address);
            const int64_t now = QDateTime::currentMSecsSinceEpoch();
            for (int i = 0; i < refreshRequests; ++i) {
                summaries->requestSummary(now - 3600 * 1000, now);
            }
            history->queryRange(lastMinutes(512));
            history->streamEvents({}, now - 3600 * 1000); // open-ended: only a cancel ends it
            QCOMPARE(summaries->pendingRequests(), refreshRequests);
            bool delivered = false;
            connect(summaries.get(), &SummaryClient::summaryReady, this, [&] { delivered = true; });
            QElapsedTimer clock;
            clock.start();
            summaries.reset();
            history.reset();
            QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
            // Whatever was queued for them went with them.
            QCoreApplication::processEvents();
            QCoreApplication::sendPostedEvents();
            QVERIFY(!delivered);
        }
    }

    // A result goes to its receiver through a QPointer: once the receiver is gone it is dropped, not run.
    void aResultForADeletedReceiverIsDropped()
    {
        auto server = startBackend();
        QVERIFY(server);
        auto channel = grpc::CreateChannel(server->listeningAddress(), grpc::InsecureChannelCredentials());
        RpcJobs jobs;
        auto start = [&](QObject *receiver, bool *ran) {
            pb::GetSummaryRequest request;
            request.set_to_ms(QDateTime::currentMSecsSinceEpoch());
            request.set_from_ms(request.to_ms() - 60000);
            return jobs.unary<pb::GetSummaryRequest, pb::Summary>(
                receiver, 10s, request,
                [channel](grpc::ClientContext *context, const pb::GetSummaryRequest &r, grpc::CompletionQueue *cq) {
                    return pb::Telemetry::NewStub(channel)->PrepareAsyncGetSummary(context, r, cq);
                },
                [ran](quint64, const grpc::Status &status, pb::Summary &) -> std::function<void()> {
                    const bool ok = status.ok();
                    return [ran, ok] { *ran = ok; };
                });
        };
        auto kept = std::make_unique<QObject>();
        auto deleted = std::make_unique<QObject>();
        bool keptRan = false;
        bool deletedRan = false;
        start(kept.get(), &keptRan);
        start(deleted.get(), &deletedRan);
        deleted.reset();
        QTRY_COMPARE_WITH_TIMEOUT(jobs.pending(), 0, 10000);
        QVERIFY(keptRan); // the same call with its receiver alive does deliver
        QVERIFY(!deletedRan);
        QCOMPARE(jobs.running(), 0);
    }
};

QTEST_GUILESS_MAIN(TestRpcJobs)
#include "tst_rpcjobs.moc"
