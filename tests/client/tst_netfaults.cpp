// SPDX-License-Identifier: Apache-2.0
// The live stream through a TCP proxy that puts network faults between the client and a real backend
// (tests/client/faultproxy.h): a delay, a reset, a blackhole, half-open and half-closed connections. For each fault the
// client must say that the connection is lost (Reconnecting, with the reason: what the console's status bar shows)
// within a stated time, and, once the network heals, reconnect and stream again without anyone touching it, never a
// frame out of order. The keepalive is shortened to 1 s + 1 s so that the suite takes seconds; the console's own is
// 10 s + 5 s, and its detection times scale with it (docs/RELIABILITY.md, "Network faults").
#include "client/telemetryclient.h"
#include "faultproxy.h"
#include "service/backendserver.h"
#include "sim/simulatedfleet.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QTest>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace std::chrono_literals;

namespace {

constexpr TelemetryClient::Keepalive shortKeepalive { 1000, 1000 };
// Scheduling, the stream's status and the queued call to the client's thread, on a loaded machine (two cores shared
// with builds, or a sanitizer).
constexpr int marginMs = 1500;
// A fault only keepalive can see: the probe goes at most keepalive time after the last word from the backend, and the
// connection is given up keepalive timeout later.
constexpr int keepaliveBoundMs = shortKeepalive.timeMs + shortKeepalive.timeoutMs + marginMs;
// A fault the socket reports (RST, FIN): at once.
constexpr int socketBoundMs = 1000;

// A backend, the proxy in front of it and a client streaming through the proxy, with what the client said and sent.
struct Rig
{
    std::unique_ptr<be::BackendServer> backend;
    std::unique_ptr<testing::FaultProxy> proxy;
    std::unique_ptr<TelemetryClient> client;
    std::chrono::milliseconds interval { 100 };
    QElapsedTimer clock; // all times below are on it, ms

    int losses = 0; // times the client went from Live to Reconnecting
    qint64 lostAtMs = -1;
    qint64 silentBeforeLossMs = -1; // from the last frame to the loss
    QString lostDetail;
    qint64 liveAtMs = -1;
    int frames = 0;
    qint64 lastFrameAtMs = -1;
    uint64_t lastSequence = 0;
    int outOfOrder = 0;
    std::vector<std::pair<qint64, qint64>> lags; // per frame: arrival on the clock, arrival minus sample time

    bool start(std::chrono::milliseconds sourceInterval)
    {
        interval = sourceInterval;
        be::SimulationOptions options;
        options.gpuCount = 256;
        options.seed = 17;
        options.interval = sourceInterval;
        backend = std::make_unique<be::BackendServer>(be::simulatedSource(options));
        std::string error;
        if (!backend->start("127.0.0.1:0", &error)) {
            qWarning("backend did not start: %s", error.c_str());
            return false;
        }
        proxy = std::make_unique<testing::FaultProxy>(static_cast<uint16_t>(backend->port()));
        if (!proxy->start()) {
            qWarning("proxy did not start: %s", strerror(errno));
            return false;
        }
        client = std::make_unique<TelemetryClient>();
        client->setKeepalive(shortKeepalive);
        clock.start();
        QObject::connect(client.get(), &TelemetryClient::stateChanged, client.get(),
            [this](TelemetryClient::State state, const QString &detail) {
                if (state == TelemetryClient::State::Reconnecting && lostAtMs < liveAtMs) {
                    ++losses;
                    lostAtMs = clock.elapsed();
                    silentBeforeLossMs = lostAtMs - lastFrameAtMs;
                    lostDetail = detail;
                    qInfo("%lld ms: %s", static_cast<long long>(lostAtMs), qPrintable(detail));
                } else if (state == TelemetryClient::State::Live) {
                    liveAtMs = clock.elapsed();
                }
            });
        QObject::connect(client.get(), &TelemetryClient::frameReady, client.get(), [this](const FramePtr &frame) {
            // The same frame again is not out of order: resuming after frame 0 cannot be asked for (0 means a fresh
            // subscription, which starts with the newest frame), so a client back before the backend's second frame
            // is sent frame 0 again.
            if (frames > 0 && frame->sequence < lastSequence) {
                ++outOfOrder;
                qWarning("frame %llu after frame %llu", static_cast<unsigned long long>(frame->sequence),
                    static_cast<unsigned long long>(lastSequence));
            }
            lastSequence = frame->sequence;
            ++frames;
            lastFrameAtMs = clock.elapsed();
            lags.emplace_back(lastFrameAtMs, QDateTime::currentMSecsSinceEpoch() - frame->sampleTimeMs);
        });
        client->start(QString::fromStdString(proxy->address()));
        return true;
    }

    bool live() const { return client->state() == TelemetryClient::State::Live; }

    ~Rig()
    {
        client.reset(); // cancels its calls and joins its threads while the proxy and the backend still answer
        proxy.reset();
        if (backend) {
            backend->stop();
        }
    }
};

// One fault, as measured: from the fault and from the last frame to the client saying so, and from the heal to the
// next frame.
struct Measured
{
    const char *fault;
    qint64 detectedMs;
    qint64 silentMs;
    qint64 boundMs;
    qint64 recoveredMs;
    QString detail;
};

} // namespace

class NetFaultsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void delayKeepsTheStreamLiveAndInOrder();
    void resetIsNoticedAtOnce();
    void blackholeIsNoticedByKeepalive();
    void halfOpenTowardsClientIsNoticedByKeepalive();
    void halfOpenTowardsServerIsNoticedByKeepalive();
    void halfClosedTowardsClientIsNoticedAtOnce();
    void blackholeAfterAQuietStreamIsNoticedByKeepalive();
    void cleanupTestCase();

private:
    // Waits until the client is live and `frames` more frames have come, with no loss meanwhile.
    void streamFor(Rig &rig, int frames);
    // Puts the fault on, waits for the client to say the connection is lost (within boundMs of the fault, and for a
    // fault only keepalive can see within keepaliveBoundMs of the last frame), heals the network and waits for a newer
    // frame through a new connection (within recoveryBoundMs).
    void faultAndHeal(
        Rig &rig, const char *name, const std::function<void()> &fault, qint64 boundMs, qint64 recoveryBoundMs = 5000);

    Rig m_rig;
    std::vector<Measured> m_measured;
};

void NetFaultsTest::initTestCase()
{
    QVERIFY(m_rig.start(100ms));
    streamFor(m_rig, 5);
}

void NetFaultsTest::streamFor(Rig &rig, int frames)
{
    const int losses = rig.losses;
    QVERIFY2(QTest::qWaitFor([&rig] { return rig.live(); }, 10000), qPrintable(rig.client->stateDetail()));
    const int from = rig.frames;
    const auto enough = [&] { return rig.frames >= from + frames || rig.losses != losses; };
    QVERIFY2(QTest::qWaitFor(enough, static_cast<int>(frames * rig.interval.count()) + 10000),
        qPrintable(QStringLiteral("%1 of %2 frames").arg(rig.frames - from).arg(frames)));
    QVERIFY2(rig.losses == losses, qPrintable(QStringLiteral("lost with no fault: %1").arg(rig.lostDetail)));
    QCOMPARE(rig.outOfOrder, 0);
}

void NetFaultsTest::faultAndHeal(
    Rig &rig, const char *name, const std::function<void()> &fault, qint64 boundMs, qint64 recoveryBoundMs)
{
    const int losses = rig.losses;
    const int accepted = rig.proxy->accepted();
    const uint64_t sequence = rig.lastSequence;
    const qint64 faultAt = rig.clock.elapsed();
    fault();

    // Waited for longer than the bound, so that a slow detection is measured and reported rather than only failed.
    const int frames = rig.frames;
    QVERIFY2(QTest::qWaitFor([&] { return rig.losses != losses; }, static_cast<int>(boundMs) + 10000),
        qPrintable(QStringLiteral("%1: still %2 after %3 ms; %4 frames since the fault, the last %5 ms ago")
                       .arg(QLatin1String(name), rig.client->stateDetail())
                       .arg(rig.clock.elapsed() - faultAt)
                       .arg(rig.frames - frames)
                       .arg(rig.clock.elapsed() - rig.lastFrameAtMs)));
    const qint64 detected = rig.lostAtMs - faultAt;
    const qint64 silent = rig.silentBeforeLossMs;
    qInfo("%s: noticed %lld ms after the fault (bound %lld ms), %lld ms after the last frame (%d frames came after "
          "the fault): %s",
        name, static_cast<long long>(detected), static_cast<long long>(boundMs), static_cast<long long>(silent),
        rig.frames - frames, qPrintable(rig.lostDetail));
    QVERIFY2(detected <= boundMs,
        qPrintable(QStringLiteral("%1: noticed after %2 ms, bound %3 ms")
                       .arg(QLatin1String(name))
                       .arg(detected)
                       .arg(boundMs)));
    // Where frames come more often than the keepalive time, the last frame is the backend's last word: from it the
    // fault is the keepalive's alone to see. (On a quiet stream the last word is the answer to the last ping.)
    if (rig.interval.count() < shortKeepalive.timeMs) {
        QVERIFY2(silent <= keepaliveBoundMs,
            qPrintable(QStringLiteral("%1: noticed %2 ms after the last frame, bound %3 ms")
                           .arg(QLatin1String(name))
                           .arg(silent)
                           .arg(keepaliveBoundMs)));
    }
    // What the status bar shows: where, why, and that it is retrying.
    QVERIFY2(rig.lostDetail.contains(QString::fromStdString(rig.proxy->address()))
            && rig.lostDetail.contains(QLatin1String("retrying")),
        qPrintable(rig.lostDetail));

    const qint64 healAt = rig.clock.elapsed();
    rig.proxy->heal();
    const auto recovered = [&] { return rig.live() && rig.lastFrameAtMs > healAt && rig.lastSequence > sequence; };
    QVERIFY2(QTest::qWaitFor(recovered, static_cast<int>(recoveryBoundMs) + 10000),
        qPrintable(QStringLiteral("%1: not streaming again: %2").arg(QLatin1String(name), rig.client->stateDetail())));
    const qint64 recoveredMs = rig.lastFrameAtMs - healAt;
    qInfo("%s: streaming again %lld ms after the network healed", name, static_cast<long long>(recoveredMs));
    QVERIFY2(recoveredMs <= recoveryBoundMs,
        qPrintable(QStringLiteral("%1: recovered after %2 ms, bound %3 ms")
                       .arg(QLatin1String(name))
                       .arg(recoveredMs)
                       .arg(recoveryBoundMs)));
    QVERIFY2(rig.proxy->accepted() > accepted, "the client came back over a new connection");
    QCOMPARE(rig.outOfOrder, 0);
    m_measured.push_back({ name, detected, silent, boundMs, recoveredMs, rig.lostDetail });
}

void NetFaultsTest::delayKeepsTheStreamLiveAndInOrder()
{
    // 150 ms each way: a round trip of 300 ms, well inside the keepalive's timeout. Frames arrive late, in order, and
    // the connection is not given up.
    constexpr qint64 delayMs = 150;
    const qint64 delayedFrom = m_rig.clock.elapsed() + 2 * delayMs; // frames in flight before the delay are not late
    m_rig.proxy->setDelay(std::chrono::milliseconds(delayMs));
    streamFor(m_rig, 30); // three keepalive periods
    if (QTest::currentTestFailed()) {
        return;
    }
    std::vector<qint64> lags;
    for (const auto &[at, lag] : m_rig.lags) {
        if (at >= delayedFrom) {
            lags.push_back(lag);
        }
    }
    QVERIFY(lags.size() >= 10);
    std::sort(lags.begin(), lags.end());
    qInfo("delayed by %lld ms each way: frames %lld to %lld ms after their sample time (median %lld)",
        static_cast<long long>(delayMs), static_cast<long long>(lags.front()), static_cast<long long>(lags.back()),
        static_cast<long long>(lags[lags.size() / 2]));
    QVERIFY2(lags.front() >= delayMs, "every frame passed through the delay");
    m_rig.proxy->heal();
    streamFor(m_rig, 5);
}

void NetFaultsTest::resetIsNoticedAtOnce()
{
    faultAndHeal(
        m_rig, "reset (RST both ends)", [this] { m_rig.proxy->resetConnections(); }, socketBoundMs);
}

void NetFaultsTest::blackholeIsNoticedByKeepalive()
{
    streamFor(m_rig, 5);
    faultAndHeal(
        m_rig, "blackhole (both ways)", [this] { m_rig.proxy->blackhole(); }, keepaliveBoundMs);
}

void NetFaultsTest::halfOpenTowardsClientIsNoticedByKeepalive()
{
    // The backend's frames and its answers to the pings stop; the client's pings still reach it.
    streamFor(m_rig, 5);
    faultAndHeal(
        m_rig, "half-open (backend to console stopped)",
        [this] { m_rig.proxy->halfOpen(testing::FaultProxy::ToClient); }, keepaliveBoundMs);
}

void NetFaultsTest::halfOpenTowardsServerIsNoticedByKeepalive()
{
    // The client's pings stop; the backend's frames go on for a TCP window (64 KiB: about 14 frames, 1.4 s of this
    // stream), and from the last of them on it is the blackhole's case.
    streamFor(m_rig, 5);
    faultAndHeal(
        m_rig, "half-open (console to backend stopped)",
        [this] { m_rig.proxy->halfOpen(testing::FaultProxy::ToServer); }, keepaliveBoundMs + 2500);
}

void NetFaultsTest::halfClosedTowardsClientIsNoticedAtOnce()
{
    streamFor(m_rig, 5);
    faultAndHeal(
        m_rig, "half-closed (FIN to the console)", [this] { m_rig.proxy->closeTowardsClient(); }, socketBoundMs);
}

void NetFaultsTest::blackholeAfterAQuietStreamIsNoticedByKeepalive()
{
    // A backend whose frames come seldom (a Prometheus source at a long scrape interval): the connection is silent
    // for several keepalive periods between frames, so the client's pings are all that crosses it. They must go on
    // (gRPC stops a client's pings after two without data unless told otherwise), and the backend must accept them
    // (by default it answers a ping every few seconds without data with GOAWAY "too_many_pings").
    Rig quiet;
    QVERIFY(quiet.start(8s));
    QVERIFY2(QTest::qWaitFor([&quiet] { return quiet.frames > 0; }, 10000), qPrintable(quiet.client->stateDetail()));
    // Five keepalive periods of silence: the stream carries nothing now but the client's pings and their answers.
    const qint64 quietFrom = quiet.lastFrameAtMs;
    QVERIFY(QTest::qWaitFor(
        [&] { return quiet.clock.elapsed() - quietFrom >= 5 * shortKeepalive.timeMs || quiet.losses > 0; }, 10000));
    QVERIFY2(quiet.losses == 0, qPrintable(QStringLiteral("lost with no fault: %1").arg(quiet.lostDetail)));
    QCOMPARE(quiet.frames, 1);
    faultAndHeal(
        quiet, "blackhole after 5 s of quiet stream", [&quiet] { quiet.proxy->blackhole(); }, keepaliveBoundMs,
        8000 + 3000);
}

void NetFaultsTest::cleanupTestCase()
{
    qInfo("keepalive %d ms + %d ms:", shortKeepalive.timeMs, shortKeepalive.timeoutMs);
    for (const auto &m : std::as_const(m_measured)) {
        qInfo("  %-40s noticed %5lld ms after the fault (bound %5lld), %5lld ms after the last frame; streaming "
              "again %5lld ms after healing",
            m.fault, static_cast<long long>(m.detectedMs), static_cast<long long>(m.boundMs),
            static_cast<long long>(m.silentMs), static_cast<long long>(m.recoveredMs));
    }
}

QTEST_GUILESS_MAIN(NetFaultsTest)
#include "tst_netfaults.moc"
