// SPDX-License-Identifier: Apache-2.0
// The remote-write receiver over real HTTP with crafted requests and real senders' shapes: its start, its door, every
// bad input answered as the protocol says, counted, and nothing already held lost. How pushed samples become frames
// and what the decoder refuses: tst_windowfolder.
#include "backendoptions.h"
#include "core/clock.h"
#include "remotewrite/remotewritedecoder.h"
#include "remotewrite/remotewritesource.h"
#include "remotewritesender.h"
#include "tests/backend/testing/prometheusprocess.h"
#include "tests/backend/testing/rawhttp.h"
#include "tests/backend/testing/testcertificates.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QFile>
#include <QHostAddress>
#include <QNetworkProxy>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace fleetscope::testing;

namespace {

// node-a and node-b, eight GPUs each, sampled at t: each GPU's temperature is temp + its index on the node.
std::vector<PushedSeries> twoNodesAt(int64_t t, double temp)
{
    std::vector<PushedSeries> series;
    for (const char *host : { "node-a", "node-b" }) {
        for (int g = 0; g < 8; ++g) {
            series.push_back(dcgmSeries("DCGM_FI_DEV_GPU_TEMP", host, g, t, temp + g));
        }
    }
    return series;
}

// A push as a remote-write sender writes it, byte for byte.
QByteArray rawPush(const std::string &body)
{
    return "POST /api/v1/write HTTP/1.1\r\nHost: receiver\r\nContent-Encoding: snappy\r\n"
           "Content-Type: application/x-protobuf\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\nContent-Length: "
        + QByteArray::number(static_cast<qsizetype>(body.size())) + "\r\n\r\n" + QByteArray::fromStdString(body);
}

// Starts source on a free loopback port with twoNodesAt's layout from a topology file (so that its first push ends
// the start), windows of 1 s published as they end; pushes until it has started.
bool startWithTwoNodes(be::RemoteWriteSource &source, be::RemoteWriteSource::Options options, const QString &dir,
    std::string *error, const PushDoor &door = {})
{
    const QString topology = dir + QStringLiteral("/topology.json");
    if (!writeFile(topology,
            R"({"site": "test", "gpusPerNode": 8, "halls": [{"name": "h", "rows": [{"name": "r", "racks": [)"
            R"({"name": "k", "hosts": ["node-a", "node-b"]}]}]}]})")) {
        *error = "cannot write the topology file";
        return false;
    }
    const int port = freePort();
    options.listen = "127.0.0.1:" + std::to_string(port);
    options.topologyFile = topology.toStdString();
    options.windowMs = 1000;
    options.delayMs = 0;
    options.startTimeout = std::chrono::seconds(20);
    bool started = false;
    std::thread starter([&] { started = source.start(options, error); });
    QDeadlineTimer deadline(20000);
    while (!deadline.hasExpired() && push(port, writeBody(twoNodesAt(be::nowUnixMs(), 40)), {}, door).status != 204) {
        QTest::qWait(20); // the listener comes up on the starter thread
    }
    starter.join();
    return started;
}

} // namespace

class TestRemoteWrite : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // A sender whose connection the receiver shut while it was still writing (a body refused unread) must see an
    // error, not die of SIGPIPE: as senders do, the tests' own client ignores it.
    void initTestCase() { std::signal(SIGPIPE, SIG_IGN); }

    // A second receiver on a port in use does not start (with httplib's default SO_REUSEPORT it did, and the pushes
    // were split between the two); the first, still waiting for its first pushes, stops when asked.
    void aPortInUseIsRefused()
    {
        const int port = freePort();
        QVERIFY(port > 0);
        be::RemoteWriteSource first([](const std::string &) {});
        be::RemoteWriteSource::Options options;
        options.listen = "127.0.0.1:" + std::to_string(port);
        options.startTimeout = std::chrono::seconds(5);
        std::atomic<bool> done { false };
        std::thread starter([&] {
            std::string error;
            first.start(options, &error);
            done = true;
        });
        const auto joinStarter = qScopeGuard([&] { starter.join(); });
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                QTcpSocket probe;
                probe.setProxy(QNetworkProxy::NoProxy); // as rawhttp.h connectTo
                probe.connectToHost(QHostAddress::LocalHost, static_cast<quint16>(port));
                return probe.waitForConnected(200);
            }(),
            5000);
        be::RemoteWriteSource second([](const std::string &) {});
        std::string error;
        QElapsedTimer timer;
        timer.start();
        QVERIFY(!second.start(options, &error));
        QVERIFY2(error.find("cannot listen") != std::string::npos, error.c_str());
        QVERIFY(timer.elapsed() < 4000); // refused at once, not after waiting for pushes
        QVERIFY(!done);
    }

    // A current exporter (4.8.3+: the node label is hostname) scraped every 500 ms: the receiver learns the interval
    // from the samples, chooses the profile from the series pushed and says so, and reads the GPUs by hostname.
    void learnsIntervalAndProfile()
    {
        const int port = freePort();
        QVERIFY(port > 0);
        std::mutex logMutex;
        std::string log;
        be::RemoteWriteSource source([&](const std::string &line) {
            std::lock_guard lock(logMutex);
            log += line + '\n';
        });
        be::RemoteWriteSource::Options options;
        options.listen = "127.0.0.1:" + std::to_string(port);
        options.delayMs = 0;
        options.startTimeout = std::chrono::seconds(30);
        std::atomic<bool> done { false };
        bool started = false;
        std::string error;
        std::thread starter([&] {
            started = source.start(options, &error);
            done = true;
        });
        const int64_t t0 = 1'800'000'000'000;
        auto scrape = [](int64_t t, double temp) {
            std::vector<PushedSeries> series;
            for (const char *host : { "gb-1", "gb-2" }) {
                for (int g = 0; g < 4; ++g) {
                    series.push_back(dcgmSeries("DCGM_FI_DEV_GPU_TEMP", host, g, t, temp + g, {}, "hostname"));
                    series.push_back(dcgmSeries("DCGM_FI_DEV_POWER_USAGE", host, g, t, 700, {}, "hostname"));
                }
            }
            return series;
        };
        // Scrapes 1.5 s apart in sample time, pushed as fast as the receiver takes them until it has learnt enough.
        for (int64_t k = 0; !done; ++k) {
            push(port, writeBody(scrape(t0 + k * 1500, 40)));
            QTest::qWait(20);
        }
        starter.join();
        QVERIFY2(started, error.c_str());
        QCOMPARE(source.windowMs(), int64_t { 1500 });
        QCOMPARE(source.shape().gpuCount, 8U);
        QCOMPARE(source.shape().nodes[1].hostname, std::string("gb-2"));
        {
            std::lock_guard lock(logMutex);
            QVERIFY2(log.find("dcgm-exporter profile 4.8.3+ (label hostname) chosen from the series pushed")
                    != std::string::npos,
                log.c_str());
            QVERIFY2(log.find("windows of 1500 ms (the scrape interval the samples show)") != std::string::npos,
                log.c_str());
        }
        // Live samples by hostname reach the frames.
        std::shared_ptr<be::Frame> frame;
        const auto now = [] {
            return std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
        };
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                push(port, writeBody(scrape(now(), 60)));
                while (auto f = source.poll()) {
                    frame = f;
                }
                return frame != nullptr;
            }(),
            5000);
        QCOMPARE(frame->plane(be::MetricId::GpuTemp)[5], 61.0F); // gb-2, GPU 1
        QCOMPARE(frame->plane(be::MetricId::Power)[5], 700.0F);
    }

    // What a push teaches besides the GPUs, through the receiver itself: infiniband_exporter's uplink series pushed
    // during the discovery cable the GPUs (a bad one and a storage host's ignored and logged), and NVLink's two CRC
    // counters become one nvlink_errors, their increases summed.
    void uplinksAndNvlinkCountersFromPushes()
    {
        const int port = freePort();
        QVERIFY(port > 0);
        std::mutex logMutex;
        std::string log;
        be::RemoteWriteSource source([&](const std::string &line) {
            std::lock_guard lock(logMutex);
            log += line + '\n';
        });
        be::RemoteWriteSource::Options options;
        options.listen = "127.0.0.1:" + std::to_string(port);
        options.delayMs = 0;
        options.windowMs = 1000;
        options.startTimeout = std::chrono::seconds(30);
        std::atomic<bool> done { false };
        bool started = false;
        std::string error;
        std::thread starter([&] {
            started = source.start(options, &error);
            done = true;
        });
        auto uplink = [](const std::string &hca, const std::string &leaf, const std::string &port, int64_t t) {
            return PushedSeries { { { "__name__", "infiniband_hca_uplink_info" }, { "hca", hca }, { "port", "1" },
                                      { "uplink", leaf }, { "uplink_port", port }, { "uplink_type", "SW" },
                                      { "instance", "ib-exporter:9315" } },
                { { t, 1 } } };
        };
        auto scrape = [&](int64_t t, double flit, double data) {
            std::vector<PushedSeries> series;
            for (const char *host : { "gb-1", "gb-2" }) {
                for (int g = 0; g < 2; ++g) {
                    series.push_back(dcgmSeries("DCGM_FI_DEV_GPU_TEMP", host, g, t, 40, {}, "hostname"));
                    series.push_back(
                        dcgmSeries("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", host, g, t, flit, {}, "hostname"));
                    series.push_back(
                        dcgmSeries("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", host, g, t, data, {}, "hostname"));
                    series.push_back(uplink(std::string(host) + " mlx5_" + std::to_string(g),
                        "su1-l" + std::to_string(g), host == std::string("gb-1") ? "1" : "2", t));
                }
            }
            series.push_back(uplink("storage-1 mlx5_0", "su1-l0", "30", t));
            series.push_back(uplink("gb-1 mlx5_0", "su1-l0", "0", t)); // port 0: refused, the other kept
            return series;
        };
        for (int64_t k = 0; !done; ++k) {
            push(port, writeBody(scrape(be::nowUnixMs(), 10, 3)));
            QTest::qWait(50);
        }
        starter.join();
        QVERIFY2(started, error.c_str());
        const auto &shape = source.shape();
        QCOMPARE(shape.gpuCount, 4U);
        QCOMPARE(shape.gpuLinks.size(), size_t { 4 });
        for (uint32_t g = 0; g < 4; ++g) {
            const auto &link = shape.gpuLinks[g];
            QVERIFY(link.leaf < shape.domains.size());
            QCOMPARE(shape.domains[link.leaf].name, "su1-l" + std::to_string(g % 2));
            QCOMPARE(shape.domains[link.leaf].kind, be::DomainKind::LeafSwitch);
            QCOMPARE(link.port, g < 2 ? 1U : 2U);
        }
        {
            std::lock_guard lock(logMutex);
            QVERIFY2(log.find("4 GPUs' leaf switch and port from infiniband_hca_uplink_info (2 leaf switches")
                    != std::string::npos,
                log.c_str());
            QVERIFY2(log.find("series ignored: hca's host is not a node") != std::string::npos, log.c_str());
            QVERIFY2(log.find("series ignored: uplink_port or port") != std::string::npos, log.c_str());
        }
        // The counters as they were, in a window after the start; then both rise, flow-control by 4, data by 2, on
        // every GPU: the frame sums the increases.
        std::shared_ptr<be::Frame> frame;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                push(port, writeBody(scrape(be::nowUnixMs(), 10, 3)));
                while (auto f = source.poll()) {
                    frame = f;
                }
                return frame != nullptr && frame->plane(be::MetricId::NvlinkErrors)[3] == 0.0F;
            }(),
            10000);
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                push(port, writeBody(scrape(be::nowUnixMs(), 14, 5)));
                while (auto f = source.poll()) {
                    frame = f;
                }
                return frame != nullptr && frame->plane(be::MetricId::NvlinkErrors)[3] == 6.0F;
            }(),
            10000);
        for (uint32_t g = 0; g < 4; ++g) {
            QCOMPARE(frame->plane(be::MetricId::NvlinkErrors)[g], 6.0F);
        }
    }

    // A sender cannot steer the start: samples 10 ms apart do not make frames faster than one a second, and a new
    // hostname every push does not keep the discovery open for ever (it did, until the start failed after 120 s and
    // systemd restarted the backend in a loop): at startTimeout the receiver serves the GPUs it has learnt.
    void discoveryCannotBeSteered()
    {
        const int port = freePort();
        be::RemoteWriteSource source([](const std::string &) {});
        be::RemoteWriteSource::Options options;
        options.listen = "127.0.0.1:" + std::to_string(port);
        options.startTimeout = std::chrono::seconds(3);
        std::atomic<bool> done { false };
        bool started = false;
        std::string error;
        std::thread starter([&] {
            started = source.start(options, &error);
            done = true;
        });
        const int64_t t0 = 1'800'000'000'000;
        std::vector<std::string> hosts;
        for (int64_t k = 0; !done; ++k) {
            hosts.push_back("steer-" + std::to_string(k));
            std::vector<PushedSeries> series;
            for (const auto &host : hosts) {
                series.push_back(dcgmSeries("DCGM_FI_DEV_GPU_TEMP", host, 0, t0 + k * 10, 40));
            }
            push(port, writeBody(series));
            QTest::qWait(100);
        }
        starter.join();
        QVERIFY2(started, error.c_str());
        QCOMPARE(source.windowMs(), be::RemoteWriteSource::minimumLearntIntervalMs);
        QVERIFY(source.shape().gpuCount >= 10);
        QVERIFY(source.shape().gpuCount <= hosts.size());

        // With a topology file nothing is discovered: a sender of other hosts does not set the interval, and with
        // none learnt by startTimeout the windows are the fallback's.
        QTemporaryDir dir;
        const QString topology = dir.filePath(QStringLiteral("topology.json"));
        QVERIFY(writeFile(topology,
            R"({"site": "test", "gpusPerNode": 8, "halls": [{"name": "h", "rows": [{"name": "r", "racks": [)"
            R"({"name": "k", "hosts": ["node-a", "node-b"]}]}]}]})"));
        be::RemoteWriteSource filed([](const std::string &) {});
        options.listen = "127.0.0.1:" + std::to_string(freePort());
        options.topologyFile = topology.toStdString();
        done = false;
        std::thread second([&] {
            started = filed.start(options, &error);
            done = true;
        });
        const int filedPort = std::stoi(options.listen.substr(options.listen.rfind(':') + 1));
        for (int64_t k = 0; !done; ++k) {
            // The stranger's samples a second apart, node-a's always the same one: no interval to learn from the
            // file's.
            push(filedPort,
                writeBody({ dcgmSeries("DCGM_FI_DEV_GPU_TEMP", "stranger", 0, t0 + k * 1000, 40),
                    dcgmSeries("DCGM_FI_DEV_GPU_TEMP", "node-a", 0, t0, 40) }));
            QTest::qWait(100);
        }
        second.join();
        QVERIFY2(started, error.c_str());
        QCOMPARE(filed.windowMs(), be::RemoteWriteSource::fallbackIntervalMs);
        QCOMPARE(filed.shape().gpuCount, 16U);
    }

    // The receiver over HTTP: it learns the layout from the first pushes, then takes good requests (204), refuses bad
    // ones (400/413 with the reason), counts and logs what it cannot use (GPUs not in the topology, ten times more
    // series than the fleet), answers 503 while the frames are behind, and the frames keep what it held.
    void receiverOverHttp()
    {
        const int port = freePort();
        QVERIFY(port > 0);
        std::mutex logMutex;
        std::vector<std::string> logLines;
        be::RemoteWriteSource source([&](const std::string &line) {
            std::lock_guard lock(logMutex);
            logLines.push_back(line);
        });
        be::RemoteWriteSource::Options options;
        options.listen = "127.0.0.1:" + std::to_string(port);
        options.windowMs = 1000;
        options.delayMs = 0;
        options.maxOpenWindows = 3;
        options.startTimeout = std::chrono::seconds(30);
        options.dropLogInterval = std::chrono::milliseconds(200);
        bool started = false;
        std::string error;
        std::thread starter([&] { started = source.start(options, &error); });
        // Two nodes of eight GPUs push; once no new GPU has come for 2 s, the layout is theirs.
        const auto now = [] {
            return std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
        };
        auto fleetAt = [](int64_t t, double temp) {
            std::vector<PushedSeries> series;
            for (const char *host : { "node-a", "node-b" }) {
                for (int g = 0; g < 8; ++g) {
                    series.push_back(dcgmSeries("DCGM_FI_DEV_GPU_TEMP", host, g, t, temp + g));
                }
            }
            return series;
        };
        QDeadlineTimer learning(20000);
        PushReply reply;
        while (!learning.hasExpired()) {
            reply = push(port, writeBody(fleetAt(now(), 40)));
            if (reply.status == 204) {
                break;
            }
            QTest::qWait(50); // the listener comes up on the starter thread
        }
        QCOMPARE(reply.status, 204);
        starter.join();
        QVERIFY2(started, error.c_str());
        QCOMPARE(source.shape().gpuCount, 16U);
        QCOMPARE(source.windowMs(), int64_t { 1000 });

        // Good requests, then their frame (the window the start fell in is not published: it misses what came
        // while the layout was learnt).
        std::shared_ptr<be::Frame> frame;
        auto frameFrom = [&](int64_t from) {
            while (auto f = source.poll()) {
                frame = f;
            }
            return frame && frame->sampleTimeMs >= from;
        };
        const uint32_t first = source.shape().nodes[0].firstGpu;
        QTRY_VERIFY_WITH_TIMEOUT(push(port, writeBody(fleetAt(now(), 50))).status == 204 && frameFrom(0), 5000);
        QCOMPARE(frame->plane(be::MetricId::GpuTemp)[first], 50.0F);
        QVERIFY(source.stats().samples.beforeStart > 0);
        // Two pushes in the same millisecond are duplicates; nothing else was dropped.
        const auto taken = source.stats().samples;
        QCOMPARE(taken.dropped(), taken.duplicate);

        // Bad requests: refused with the reason, counted; a body over the limit is 413.
        reply = push(port, std::string(64, '\xff'));
        QCOMPARE(reply.status, 400);
        QVERIFY2(QString::fromStdString(reply.body).contains(QStringLiteral("snappy")), reply.body.c_str());
        reply = push(port, writeBody(fleetAt(now(), 50)), { { "Content-Encoding", "gzip" } });
        QCOMPARE(reply.status, 400);
        QVERIFY2(QString::fromStdString(reply.body).contains(QStringLiteral("snappy")), reply.body.c_str());
        // Over the limit: 413 from its Content-Length, unread; a sender still writing its body may see the connection
        // shut instead (the edge closes it after the answer, and the kernel resets a socket closed with bytes unread).
        reply = push(port, std::string((size_t { 100 } << 20U), 'x'));
        QVERIFY2(reply.status == 413 || reply.status == 0, qPrintable(QString::number(reply.status)));

        // GPUs not in the topology, ten times more series than the fleet: taken (204), counted, logged.
        std::vector<PushedSeries> strangers;
        for (int n = 0; n < 20; ++n) {
            for (int g = 0; g < 8; ++g) {
                strangers.push_back(dcgmSeries("DCGM_FI_DEV_GPU_TEMP", "stranger-" + std::to_string(n), g, now(), 99));
            }
        }
        QCOMPARE(push(port, writeBody(strangers)).status, 204);
        QCOMPARE(source.stats().unknownGpuSeries, uint64_t { 160 });
        // The two 400s are the receiver's; the 413 never reached it: it was answered from Content-Length, the body
        // unread.
        QCOMPARE(source.stats().refused, uint64_t { 2 });

        // Nothing held was lost: the next frame still has the fleet's values.
        const int64_t t2 = now();
        QCOMPARE(push(port, writeBody(fleetAt(t2, 60))).status, 204);
        QTRY_VERIFY_WITH_TIMEOUT(frameFrom(t2), 5000);
        QCOMPARE(frame->plane(be::MetricId::GpuTemp)[first], 60.0F);
        QCOMPARE(frame->plane(be::MetricId::GpuTemp)[first + 9], 61.0F); // node-b, GPU 1
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                source.poll(); // logs what it could not use, at most every dropLogInterval
                std::lock_guard lock(logMutex);
                for (const auto &line : logLines) {
                    if (line.find("160 series of GPUs not in the topology (e.g. stranger-") != std::string::npos) {
                        return true;
                    }
                }
                return false;
            }(),
            15000);

        // Frames not keeping up (nobody polls; at most three windows open): 503, so that the sender retries.
        QTRY_COMPARE_WITH_TIMEOUT(
            push(port, writeBody({ dcgmSeries("DCGM_FI_DEV_GPU_TEMP", "node-a", 0, now() + 900, 1) })).status, 503,
            5000);
        QVERIFY(source.stats().overloaded >= 1);
        QVERIFY(frameFrom(t2)); // and once polled, it goes on
        QCOMPARE(push(port, writeBody(fleetAt(now(), 70))).status, 204);
    }

    // The finding this door was rebuilt for: with eight connections open that sent nothing, a valid push got no
    // answer in 20 s at the default four threads. Now 64 silent sockets and 64 slow readers (pushes whose answers
    // they never read) hold descriptors, not threads, and a push beside them is answered within 2 s and taken.
    void silentSocketsDoNotStallPushes()
    {
        QTemporaryDir dir;
        be::RemoteWriteSource source([](const std::string &) {});
        std::string error;
        QVERIFY2(startWithTwoNodes(source, {}, dir.path(), &error), error.c_str());
        const int port = source.port();
        std::vector<std::unique_ptr<QTcpSocket>> held;
        const QByteArray bad = rawPush(std::string(64, '\xff')); // answered 400 with a reason, never read
        for (int i = 0; i < 64; ++i) {
            held.push_back(connectFrom("127.0.0.2", port));
            QVERIFY(held.back());
            held.push_back(connectFrom("127.0.0.3", port));
            QVERIFY(held.back());
            held.back()->setReadBufferSize(1);
            held.back()->write(bad + bad + bad);
        }
        QTRY_VERIFY_WITH_TIMEOUT(source.httpLoad().connections >= 128, 10000);
        const uint64_t before = source.stats().requests;
        const int64_t t = be::nowUnixMs() + 1;
        QElapsedTimer timer;
        timer.start();
        const auto reply = push(port, writeBody(twoNodesAt(t, 60)));
        const qint64 ms = timer.elapsed();
        QCOMPARE(reply.status, 204);
        QVERIFY2(ms < 2000, qPrintable(QString::number(ms)));
        QVERIFY(source.stats().requests > before);
        qInfo("a push answered in %lld ms beside 64 silent sockets and 64 slow readers", ms);
    }

    // A sender that trickles its body in has requestTimeout from its head, however steadily it sends: then its
    // connection is shut (the edge cannot answer in the middle of a body), and a whole push meanwhile is taken at once.
    void slowSenderIsTimedOut()
    {
        QTemporaryDir dir;
        be::RemoteWriteSource source([](const std::string &) {});
        be::RemoteWriteSource::Options options;
        options.threads = 1;
        options.requestTimeout = std::chrono::milliseconds(800);
        std::string error;
        QVERIFY2(startWithTwoNodes(source, options, dir.path(), &error), error.c_str());
        const int port = source.port();
        const uint64_t before = source.stats().requests;
        const std::string body = writeBody(twoNodesAt(be::nowUnixMs(), 50));
        const QByteArray raw = rawPush(body);
        qsizetype sent = raw.indexOf("\r\n\r\n") + 4 + 8;
        QTcpSocket slow;
        QVERIFY(connectTo(slow, port));
        QElapsedTimer sinceHead;
        sinceHead.start();
        slow.write(raw.left(sent));
        QVERIFY(slow.waitForBytesWritten(5000));
        // A whole push is taken meanwhile, on the one thread.
        QCOMPARE(push(port, body).status, 204);
        QCOMPARE(source.stats().requests, before + 1);
        // Eight bytes every 100 ms until shut.
        QDeadlineTimer giveUp(10000);
        while (slow.state() == QAbstractSocket::ConnectedState && !giveUp.hasExpired() && sent < raw.size()) {
            slow.write(raw.mid(sent, 8));
            sent += 8;
            slow.waitForDisconnected(100);
        }
        QCOMPARE(slow.state(), QAbstractSocket::UnconnectedState);
        QVERIFY2(sinceHead.elapsed() < 4000, "each piece the sender trickled in gave it more time");
        QVERIFY2(sent < raw.size(), "the push was sent whole before the time-out: trickle slower");
        QCOMPARE(source.stats().requests, before + 1);
        QVERIFY(source.stats().timedOut >= 1);
    }

    // The door of a receiver on TLS with a token file (--remote-write-tls-cert/-key, --remote-write-token-file): a
    // push without the token, or with another, is answered 401 with WWW-Authenticate before its body is read and
    // never reaches the receiver; one with it is taken. The options say the same, and a routable address without
    // them is refused at start.
    void pushesNeedTheirToken()
    {
        TestCertificates certs;
        QVERIFY2(certs.make(), qPrintable(certs.error()));
        const QString tokens = certs.write(QStringLiteral("tokens"), "# senders\nvmagent-7f3a\n");
        QVERIFY(!tokens.isEmpty());
        QFile::setPermissions(tokens, QFile::ReadOwner | QFile::WriteOwner);
        const auto parsed = be::parseBackendOptions({ "--source", "remote-write", "--remote-write-tls-cert",
            certs.crt(QStringLiteral("server")).toStdString(), "--remote-write-tls-key",
            certs.key(QStringLiteral("server")).toStdString(), "--remote-write-token-file", tokens.toStdString() });
        QVERIFY2(parsed.error.empty(), parsed.error.c_str());
        auto options = parsed.options.remoteWrite;
        std::string error;
        QVERIFY2(be::attachTokenFile(&options.security, &error), error.c_str());
        QTemporaryDir dir;
        be::RemoteWriteSource source([](const std::string &) {});
        const PushDoor door { certs.crt(QStringLiteral("ca")).toStdString(), "vmagent-7f3a" };
        QVERIFY2(startWithTwoNodes(source, options, dir.path(), &error, door), error.c_str());
        const int port = source.port();
        const uint64_t before = source.stats().requests;
        const std::string body = writeBody(twoNodesAt(be::nowUnixMs() + 1, 50));
        for (const std::string token : { "", "vmagent-guess" }) {
            const auto refused = push(port, body, {}, { door.caFile, token });
            QCOMPARE(refused.status, 401);
        }
        QCOMPARE(push(port, body).status, 0); // plain HTTP to a TLS door: no answer
        QCOMPARE(source.stats().requests, before);
        QVERIFY(source.stats().unauthorized >= 2);
        QCOMPARE(push(port, body, {}, door).status, 204);
        QCOMPARE(source.stats().requests, before + 1);

        // The rule at start, through the options: a routable address without TLS and a token is refused; with them, or
        // with --insecure-listen, it is not (checked by parsing; starting one would listen on every interface).
        for (const auto &args : std::vector<std::vector<std::string>> {
                 { "--source", "remote-write", "--remote-write-token-file", tokens.toStdString() },
                 { "--source", "remote-write", "--remote-write-client-ca",
                     certs.crt(QStringLiteral("ca")).toStdString() } }) {
            const auto r = be::parseBackendOptions(args);
            QVERIFY2(r.error.find("--remote-write-tls-cert") != std::string::npos, r.error.c_str());
        }
        be::RemoteWriteSource open([](const std::string &) {});
        be::RemoteWriteSource::Options routable;
        routable.listen = "0.0.0.0:0";
        routable.startTimeout = std::chrono::milliseconds(100);
        QVERIFY(!open.start(routable, &error));
        QVERIFY2(error.find("--remote-write-listen: 0.0.0.0:0 is not a loopback address") != std::string::npos
                && error.find("--remote-write-token-file") != std::string::npos,
            error.c_str());
        QVERIFY(be::parseBackendOptions({ "--source", "remote-write", "--insecure-listen" })
                    .options.remoteWrite.security.insecureListen);
        // Said out loud at start, as for the gRPC door.
        const auto insecure = be::parseBackendOptions(
            { "--source", "remote-write", "--remote-write-listen", "0.0.0.0:9201", "--insecure-listen" });
        QVERIFY(std::any_of(insecure.warnings.begin(), insecure.warnings.end(), [](const std::string &w) {
            return w.find("0.0.0.0:9201") != std::string::npos && w.find("push made-up values") != std::string::npos;
        }));
    }

    // A body over the limit is refused from its Content-Length (413 and closed) before a byte of it has been sent, so
    // unread; the receiver never sees it. A body at the limit is read and handed on.
    void bodyOverTheLimitIsRefusedUnread()
    {
        QTemporaryDir dir;
        be::RemoteWriteSource source([](const std::string &) {});
        be::RemoteWriteSource::Options options;
        options.limits.maxBodyBytes = 1 << 20U;
        std::string error;
        QVERIFY2(startWithTwoNodes(source, options, dir.path(), &error), error.c_str());
        const int port = source.port();
        const uint64_t requestsBefore = source.stats().requests;
        for (const QByteArray &length : { QByteArray("1000000000000"), QByteArray::number((1 << 20U) + 1) }) {
            QTcpSocket socket;
            QVERIFY(connectTo(socket, port));
            socket.write("POST /api/v1/write HTTP/1.1\r\nHost: receiver\r\nContent-Encoding: snappy\r\n"
                         "Content-Length: "
                + length + "\r\n\r\n");
            const auto refused = readResponse(socket, QDeadlineTimer(10000));
            QVERIFY(refused.complete);
            QCOMPARE(refused.status, 413);
            QVERIFY(refused.head.contains("\r\nConnection: close"));
            QTRY_COMPARE_WITH_TIMEOUT(socket.state(), QAbstractSocket::UnconnectedState, 5000);
        }
        QCOMPARE(source.stats().requests, requestsBefore);
        const auto atTheLimit = fleetscope::testing::request(port, rawPush(std::string(1 << 20U, 'x')));
        QCOMPARE(atTheLimit.status, 400); // read whole, and not snappy
        QCOMPARE(source.stats().requests, requestsBefore + 1);
        QCOMPARE(push(port, writeBody(twoNodesAt(be::nowUnixMs(), 50))).status, 204);
    }
};

QTEST_GUILESS_MAIN(TestRemoteWrite)
#include "tst_remotewrite.moc"
