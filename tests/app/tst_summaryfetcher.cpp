// SPDX-License-Identifier: Apache-2.0
// SummaryFetcher: one refresh is 33 GetSummary calls in flight together on gRPC's pool, not 33 threads; a refresh
// supersedes the one before it. Against a listener that accepts connections and never answers, and a real backend.
#include "app/session/summaryfetcher.h"
#include "service/backendserver.h"
#include "sim/simulatedfleet.h"

#include <QDateTime>
#include <QDir>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace std::chrono_literals;

namespace {
int threadCount()
{
    return static_cast<int>(
        QDir(QStringLiteral("/proc/self/task")).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size());
}

// The kernel completes connections to it; nobody ever reads or writes.
int silentListener(int *port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 || ::listen(fd, 8) != 0
        || ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) != 0) {
        return -1;
    }
    *port = ntohs(address.sin_port);
    return fd;
}
} // namespace

class TestSummaryFetcher : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void aRefreshAddsNoThreadPerCall()
    {
        int port = 0;
        const int fd = silentListener(&port);
        QVERIFY(fd >= 0);
        SummaryClient client(QStringLiteral("127.0.0.1:%1").arg(port));
        client.setDeadline(1500ms);
        SummaryFetcher fetcher;
        fetcher.setClient(&client);
        QSignalSpy fetched(&fetcher, &SummaryFetcher::fetched);
        QSignalSpy errors(&fetcher, &SummaryFetcher::errorOccurred);
        fetcher.refresh(QDateTime::currentMSecsSinceEpoch()); // once, so that gRPC's own threads are in the baseline
        QVERIFY(fetched.wait(10000));
        fetched.clear();
        errors.clear();

        const int before = threadCount();
        int peak = before;
        QTimer sampler;
        connect(&sampler, &QTimer::timeout, this, [&] { peak = std::max(peak, threadCount()); });
        sampler.start(5);
        fetcher.refresh(QDateTime::currentMSecsSinceEpoch());
        peak = std::max(peak, threadCount());
        QCOMPARE(client.pendingRequests(), 2 + SummaryFetcher::dayBuckets + SummaryFetcher::weekBuckets);
        QVERIFY(fetched.wait(10000));
        sampler.stop();
        qInfo("threads: %d before a summary refresh, at most %d during it", before, peak);
        QVERIFY2(peak - before <= 4, qPrintable(QStringLiteral("%1 more threads").arg(peak - before)));
        // The day and the week failed at their deadline and say so; the buckets are left out.
        QCOMPARE(errors.count(), 2);
        QVERIFY2(errors.first().at(0).toString().contains(QStringLiteral("in time")),
            qPrintable(errors.first().at(0).toString()));
        const auto result = fetched.first().at(0).value<SummaryFetch>();
        QVERIFY(!result.day && !result.week && result.dayTrend.empty() && result.weekTrend.empty());
        ::close(fd);
    }

    void aNewRefreshSupersedesTheOneInFlight()
    {
        be::SimulationOptions o;
        o.gpuCount = 256;
        o.seed = 3;
        o.interval = 100ms;
        o.history = 3h;
        be::BackendServer server(be::simulatedSource(o));
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        QTRY_VERIFY_WITH_TIMEOUT(server.source().latest() && server.source().latest()->sequence >= 3, 20000);
        SummaryClient client(QString::fromStdString(server.listeningAddress()));
        SummaryFetcher fetcher;
        fetcher.setClient(&client);
        QSignalSpy fetched(&fetcher, &SummaryFetcher::fetched);
        const int64_t now = server.source().latest()->sampleTimeMs;
        fetcher.refresh(now - 3600 * 1000);
        fetcher.refresh(now);
        QVERIFY(fetched.wait(20000));
        QTRY_COMPARE_WITH_TIMEOUT(client.pendingRequests(), 0, 10000);
        QCOMPARE(fetched.count(), 1);
        const auto result = fetched.first().at(0).value<SummaryFetch>();
        QVERIFY(result.day && result.week);
        QCOMPARE(result.day->requestedToMs, now); // the second refresh's, not the first's
        QVERIFY(!result.dayTrend.empty());
        QCOMPARE(result.dayTrend.back().endMs, now);
        QVERIFY(!fetcher.isFetching());
    }
};

QTEST_GUILESS_MAIN(TestSummaryFetcher)
#include "tst_summaryfetcher.moc"
