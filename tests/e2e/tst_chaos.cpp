// SPDX-License-Identifier: Apache-2.0
// Chaos with real processes on loopback (issue 17). A console's session (ConsoleSession, what the desk and the wall
// draw from, without a window) streams from a fleetscope-backend process that is killed with SIGKILL and started
// again on the same port 20 times: each time the session must say "stale" within three intervals, be fresh again by
// itself, never show a frame older than one already shown, and keep its memory flat. Then a real Prometheus under a
// backend run with --source prometheus is killed and started again: the backend keeps serving and says its upstream
// fails, the session goes stale, and is fresh again once Prometheus scrapes anew. Figures in docs/RELIABILITY.md.
#include "../backend/testing/prometheusprocess.h"
#include "../realparts.h"
#include "app/consolesession.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <functional>
#include <memory>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

using namespace fleetscope;
using namespace fleetscope::testing;

namespace {

constexpr int backendRestarts = 20; // the figure
constexpr int prometheusRestarts = 2;
constexpr int intervalMs = 100; // the simulated backend's frames
constexpr int scrapeIntervalMs = 500; // Prometheus' scrapes, and so the Prometheus-backed backend's frames
// Staleness is due three intervals after the last new sample arrived, which is at or before the kill; this much more
// is allowed for the test's own polling and a busy shared machine.
constexpr int staleSlackMs = 500;

// The resident set of this process (the console's side), in KiB.
long residentKiB()
{
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (!statm.open(QIODevice::ReadOnly)) {
        return -1;
    }
    const QList<QByteArray> fields = statm.readAll().split(' ');
    return fields.size() > 1 ? fields.at(1).toLong() * (sysconf(_SC_PAGESIZE) / 1024) : -1;
}

// Runs the event loop until condition holds: the milliseconds it took, or -1 once timeoutMs have passed.
qint64 waitUntil(const std::function<bool()> &condition, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    while (!condition()) {
        if (clock.elapsed() > timeoutMs) {
            return -1;
        }
        QTest::qWait(10);
    }
    return clock.elapsed();
}

void sigkill(QProcess &process)
{
    if (process.state() != QProcess::NotRunning) {
        ::kill(static_cast<pid_t>(process.processId()), SIGKILL);
        process.waitForFinished(10000);
    }
}

qint64 median(std::vector<qint64> values)
{
    if (values.empty()) {
        return -1;
    }
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
    return values[values.size() / 2];
}

// A fleetscope-backend process, its log (stderr) appended to a file; killed with SIGKILL when the test leaves.
class Backend
{
public:
    explicit Backend(QString log)
        : m_log(std::move(log))
    { }
    ~Backend() { sigkill(m_process); }
    Backend(const Backend &) = delete;
    Backend &operator=(const Backend &) = delete;

    // Starts it listening on listen (port 0: a free one); the address it says it listens on, or empty.
    QString start(const QStringList &arguments, const QString &listen)
    {
        m_process.setStandardErrorFile(m_log, QIODevice::Append);
        m_process.start(QStringLiteral(FLEETSCOPE_BIN_DIR "/fleetscope-backend"),
            QStringList { QStringLiteral("--no-config") } + arguments
                + QStringList { QStringLiteral("--listen"), listen });
        QByteArray seen;
        const QByteArray address = waitForLine(m_process, "listening on ", 20000, &seen);
        if (address.isEmpty()) {
            qWarning("fleetscope-backend did not start: %s; its log:\n%s", seen.constData(), log().constData());
        }
        return QString::fromUtf8(address);
    }
    QProcess &process() { return m_process; }
    QByteArray log() const
    {
        QFile file(m_log);
        return file.open(QIODevice::ReadOnly) ? file.readAll().right(4000) : QByteArray();
    }

private:
    QString m_log;
    QProcess m_process;
};

// What the session showed: every frame shown's sample time against the newest before it.
struct ShownFrames
{
    int count = 0;
    int backwards = 0;
    qint64 newestMs = 0;
    QString firstBackwards;

    void watch(ConsoleSession *session, QObject *context)
    {
        QObject::connect(session, &ConsoleSession::shownChanged, context,
            [this](const ShownState &state, ShownState::Changes changes) {
                if (!(changes & ShownState::Frame)) {
                    return;
                }
                const FramePtr &shown = state.frame;
                ++count;
                if (shown->sampleTimeMs < newestMs) {
                    if (backwards++ == 0) {
                        firstBackwards = QStringLiteral("frame %1 at %2 ms shown after one at %3 ms")
                                             .arg(shown->sequence)
                                             .arg(shown->sampleTimeMs)
                                             .arg(newestMs);
                    }
                }
                newestMs = std::max<qint64>(newestMs, shown->sampleTimeMs);
            });
    }
};

std::unique_ptr<ConsoleSession> makeSession()
{
    ConsoleSession::Options options;
    options.recordMinutes = 1; // the flight recorder full early, so that its growth is not taken for a leak
    return std::make_unique<ConsoleSession>(options);
}

// Fresh: a sample newer than afterMs has arrived and the session does not call it stale.
bool freshAfter(const ConsoleSession &session, qint64 afterMs)
{
    return session.lastLiveSampleMs() > afterMs && !session.isStale();
}

// Series of one metric that Prometheus holds now, -1 when it does not answer.
int seriesCount(int port, const QByteArray &metric)
{
    const QByteArray body = httpGet(port, "/api/v1/query?query=" + metric, 2000);
    const QJsonObject answer = QJsonDocument::fromJson(body).object();
    if (answer.value(QStringLiteral("status")).toString() != QLatin1String("success")) {
        return -1;
    }
    return static_cast<int>(
        answer.value(QStringLiteral("data")).toObject().value(QStringLiteral("result")).toArray().size());
}

QByteArray prometheusConfig(int exporterPort)
{
    return "global:\n"
           "  scrape_interval: "
        + QByteArray::number(scrapeIntervalMs)
        + "ms\n"
          "  scrape_timeout: "
        + QByteArray::number(scrapeIntervalMs)
        + "ms\n"
          "scrape_configs:\n"
          "  - job_name: dcgm\n"
          "    static_configs:\n"
          "      - targets: ['127.0.0.1:"
        + QByteArray::number(exporterPort) + "']\n";
}

} // namespace

class TestChaos : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // The backend SIGKILLed and started again on the same port, 20 times, while the session streams.
    void backendKilledAndRestarted()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        Backend backend(dir.filePath(QStringLiteral("backend.log")));
        const QStringList arguments = { QStringLiteral("--gpus"), QStringLiteral("64"), QStringLiteral("--interval-ms"),
            QString::number(intervalMs) };
        const QString address = backend.start(arguments, QStringLiteral("127.0.0.1:0"));
        QVERIFY(!address.isEmpty());

        ShownFrames shown; // declared before the session, which may signal while it goes
        auto session = makeSession();
        shown.watch(session.get(), this);
        session->connectTo(address);
        QVERIFY2(waitUntil([&] { return freshAfter(*session, 0) && shown.count >= 10; }, 30000) >= 0,
            qPrintable(session->connectionDetail()));
        // The interval the session learnt (the median gap between samples): the backend's, unless a busy machine
        // coalesced frames.
        const qint64 interval = session->liveIntervalMs();
        QVERIFY2(interval >= intervalMs && interval <= 4 * intervalMs, qPrintable(QString::number(interval)));

        std::vector<qint64> toStale;
        std::vector<qint64> toFresh; // from the restart
        std::vector<qint64> outage; // from the kill
        long residentAfterFirst = 0;
        for (int cycle = 1; cycle <= backendRestarts; ++cycle) {
            const QString where = QStringLiteral("cycle %1").arg(cycle);
            // (A busy machine may hold a frame past three intervals: fresh again first, by itself.)
            QVERIFY2(waitUntil([&] { return !session->isStale(); }, 10000) >= 0, qPrintable(where));
            const qint64 learnt = session->liveIntervalMs();
            QVERIFY2(learnt >= intervalMs && learnt <= 4 * intervalMs, qPrintable(where));

            QElapsedTimer sinceKill;
            sinceKill.start();
            sigkill(backend.process());
            const qint64 deadAtMs = QDateTime::currentMSecsSinceEpoch();
            QCOMPARE(backend.process().exitStatus(), QProcess::CrashExit);

            const qint64 stale = waitUntil([&] { return session->isStale(); }, static_cast<int>(3 * learnt) + 10000);
            QVERIFY2(stale >= 0, qPrintable(where + QStringLiteral(": never stale")));
            const qint64 staleAfter = sinceKill.elapsed();
            QVERIFY2(staleAfter <= 3 * learnt + staleSlackMs,
                qPrintable(QStringLiteral("%1: stale %2 ms after the kill; three intervals are %3 ms")
                               .arg(where)
                               .arg(staleAfter)
                               .arg(3 * learnt)));
            QVERIFY2(session->msSinceNewData() > 3 * learnt, qPrintable(where + QStringLiteral(": stale too early")));
            // Frames already on their way when it died may still have come; none sampled after its death.
            const qint64 lastBefore = session->lastLiveSampleMs();
            QVERIFY2(lastBefore <= deadAtMs, qPrintable(where + QStringLiteral(": a frame sampled after the kill")));
            toStale.push_back(staleAfter);

            QElapsedTimer sinceRestart;
            sinceRestart.start();
            QCOMPARE(backend.start(arguments, address), address);
            const qint64 fresh
                = waitUntil([&] { return freshAfter(*session, lastBefore) && shown.newestMs > lastBefore; }, 30000);
            QVERIFY2(fresh >= 0,
                qPrintable(where + QStringLiteral(": not fresh again 30 s after the restart; the client says: ")
                    + session->connectionDetail()));
            toFresh.push_back(sinceRestart.elapsed());
            outage.push_back(sinceKill.elapsed());
            if (cycle == 1) {
                residentAfterFirst = residentKiB();
            }
        }
        QVERIFY(session->connectionState() == TelemetryClient::State::Live);
        QVERIFY2(shown.backwards == 0, qPrintable(shown.firstBackwards));
        const long residentAtEnd = residentKiB();
        QVERIFY(residentAfterFirst > 0 && residentAtEnd > 0);
        qInfo("%d SIGKILLs of the backend, frames every %d ms (learnt %lld ms), %d frames shown, none out of order",
            backendRestarts, intervalMs, static_cast<long long>(interval), shown.count);
        qInfo("kill to stale: median %lld ms, max %lld ms (three intervals: %lld ms)",
            static_cast<long long>(median(toStale)),
            static_cast<long long>(*std::max_element(toStale.begin(), toStale.end())),
            static_cast<long long>(3 * interval));
        qInfo("restart to fresh: median %lld ms, max %lld ms; kill to fresh: median %lld ms, max %lld ms",
            static_cast<long long>(median(toFresh)),
            static_cast<long long>(*std::max_element(toFresh.begin(), toFresh.end())),
            static_cast<long long>(median(outage)),
            static_cast<long long>(*std::max_element(outage.begin(), outage.end())));
        qInfo("console RSS after the first cycle %ld KiB, after the last %ld KiB (x%.3f)", residentAfterFirst,
            residentAtEnd, static_cast<double>(residentAtEnd) / static_cast<double>(residentAfterFirst));
        // Flat: a leak of a connection's worth (a thread, a channel, a stream) per restart would show here.
        QVERIFY2(static_cast<double>(residentAtEnd) < 1.5 * static_cast<double>(residentAfterFirst),
            qPrintable(QStringLiteral("RSS %1 KiB after the first cycle, %2 KiB after the last")
                           .arg(residentAfterFirst)
                           .arg(residentAtEnd)));
    }

    // A real Prometheus SIGKILLed and started again under a backend that reads it (--source prometheus).
    void prometheusKilledUnderTheBackend()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT(
                "the prometheus binary is not installed (Debian package 'prometheus'; scripts/common.sh installs "
                "it for CI): the upstream's outage is not tested here");
        }
        QTemporaryDir dir;
        QVERIFY(dir.isValid());

        // The fleet's dcgm-exporter page, from a simulated backend.
        constexpr int gpus = 16;
        Backend exporter(dir.filePath(QStringLiteral("exporter.log")));
        QVERIFY(!exporter
                     .start({ QStringLiteral("--gpus"), QString::number(gpus), QStringLiteral("--exporter-listen"),
                                QStringLiteral("127.0.0.1:0") },
                         QStringLiteral("127.0.0.1:0"))
                     .isEmpty());
        const QByteArray exporterAddress = waitForLine(exporter.process(), "exporter listening on ", 20000);
        const int exporterPort = exporterAddress.mid(exporterAddress.lastIndexOf(':') + 1).toInt();
        QVERIFY2(exporterPort > 0, exporterAddress.constData());

        const QString config = dir.filePath(QStringLiteral("prometheus.yml"));
        QVERIFY(writeFile(config, prometheusConfig(exporterPort)));
        const QString data = dir.filePath(QStringLiteral("data"));
        const int port = freePort();
        QVERIFY(port > 0);
        ProcessGuard upstream;
        QVERIFY2(
            startPrometheus(&upstream, prometheus, config, data, port), qPrintable(upstream.process.errorString()));
        QVERIFY2(waitUntil([&] { return seriesCount(port, "DCGM_FI_DEV_GPU_TEMP") == gpus; }, 30000) >= 0,
            upstream.process.readAll().constData());

        Backend served(dir.filePath(QStringLiteral("served.log")));
        const QString address
            = served.start({ QStringLiteral("--source"), QStringLiteral("prometheus"),
                               QStringLiteral("--prometheus-url"), QStringLiteral("http://127.0.0.1:%1").arg(port),
                               QStringLiteral("--interval-ms"), QString::number(scrapeIntervalMs) },
                QStringLiteral("127.0.0.1:0"));
        QVERIFY(!address.isEmpty());

        ShownFrames shown;
        QStringList said; // the client's states, as a person reads them
        auto session = makeSession();
        shown.watch(session.get(), this);
        connect(session.get(), &ConsoleSession::connectionChanged, this,
            [&said](TelemetryClient::State, const QString &detail) { said << detail; });
        session->connectTo(address);
        QVERIFY2(waitUntil([&] { return freshAfter(*session, 0) && shown.count >= 5; }, 30000) >= 0,
            qPrintable(session->connectionDetail()));

        std::vector<qint64> toStale;
        std::vector<qint64> toFresh;
        for (int cycle = 1; cycle <= prometheusRestarts; ++cycle) {
            const QString where = QStringLiteral("Prometheus cycle %1").arg(cycle);
            QVERIFY2(waitUntil([&] { return !session->isStale(); }, 10000) >= 0, qPrintable(where));
            const qint64 learnt = session->liveIntervalMs();
            said.clear();

            QElapsedTimer sinceKill;
            sinceKill.start();
            sigkill(upstream.process);
            QVERIFY2(waitUntil([&] { return session->isStale(); }, static_cast<int>(3 * learnt) + 10000) >= 0,
                qPrintable(where + QStringLiteral(": never stale")));
            const qint64 staleAfter = sinceKill.elapsed();
            QVERIFY2(staleAfter <= 3 * learnt + staleSlackMs,
                qPrintable(QStringLiteral("%1: stale %2 ms after the kill; three intervals are %3 ms")
                               .arg(where)
                               .arg(staleAfter)
                               .arg(3 * learnt)));
            toStale.push_back(staleAfter);
            const qint64 lastBefore = session->lastLiveSampleMs();
            // The backend is still there, and it is what tells the console why no data comes.
            const auto upstreamSaid = [&said] {
                return std::any_of(said.cbegin(), said.cend(),
                    [](const QString &s) { return s.contains(QLatin1String("upstream telemetry source failing")); });
            };
            QVERIFY2(waitUntil(upstreamSaid, 15000) >= 0, qPrintable(where + QStringLiteral(": ") + said.join(u'|')));
            QCOMPARE(served.process().state(), QProcess::Running);
            QCOMPARE(session->lastLiveSampleMs(), lastBefore); // nothing new while Prometheus is away

            QElapsedTimer sinceRestart;
            sinceRestart.start();
            QVERIFY(startPrometheus(&upstream, prometheus, config, data, port));
            const qint64 fresh
                = waitUntil([&] { return freshAfter(*session, lastBefore) && shown.newestMs > lastBefore; }, 40000);
            QVERIFY2(fresh >= 0,
                qPrintable(where + QStringLiteral(": not fresh 40 s after Prometheus restarted; the client says: ")
                    + session->connectionDetail() + QStringLiteral("; the backend's log:\n")
                    + QString::fromUtf8(served.log())));
            toFresh.push_back(sinceRestart.elapsed());
        }
        QCOMPARE(served.process().state(), QProcess::Running);
        QVERIFY2(shown.backwards == 0, qPrintable(shown.firstBackwards));
        qInfo("%d SIGKILLs of Prometheus (scrapes every %d ms), %d frames shown, none out of order", prometheusRestarts,
            scrapeIntervalMs, shown.count);
        QStringList fresh;
        for (const qint64 ms : toFresh) {
            fresh << QString::number(ms);
        }
        qInfo("kill to stale: max %lld ms (three intervals: %lld ms); Prometheus restart to fresh: %s ms",
            static_cast<long long>(*std::max_element(toStale.begin(), toStale.end())),
            static_cast<long long>(3 * session->liveIntervalMs()), qPrintable(fresh.join(QStringLiteral(", "))));

        // The backend ends cleanly when asked.
        served.process().terminate();
        QVERIFY(served.process().waitForFinished(10000));
        QCOMPARE(served.process().exitStatus(), QProcess::NormalExit);
        QCOMPARE(served.process().exitCode(), 0);
    }
};

QTEST_GUILESS_MAIN(TestChaos)
#include "tst_chaos.moc"
