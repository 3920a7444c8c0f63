// SPDX-License-Identifier: Apache-2.0
// Load on one fleetscope-backend process (simulated 102,400 GPUs, a frame a second), started as an operator would:
// - 100 consoles' streams through the real client library (TelemetryClient) while 5 clients subscribe and never
//   read: every console gets every frame (no sequence skipped, none late by an interval), each stalled client is cut
//   with RESOURCE_EXHAUSTED and a reason, and the backend's resident memory stays under 1.5x what it was once warm.
// - 2,000 subscribes started and then cancelled at once, and 2,000 bad requests: each call ends with a status (the
//   documented one for each bad request), and the backend's threads and memory come back to where they rested.
// Memory, threads and CPU time are read from /proc/PID. The window runs FLEETSCOPE_LOAD_S seconds (default 20, for
// CI; docs/RELIABILITY.md has the 60 s run); FLEETSCOPE_LOAD_GPUS and FLEETSCOPE_LOAD_STREAMS change the size.
#include "client/telemetryclient.h"
#include "common/heap.h"
#include "core/framesource.h"
#include "core/metriccatalog.h"
#include "service/heaptrim.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <limits>
#include <map>
#include <memory>
#include <vector>

using namespace fleetscope;
using namespace std::chrono_literals;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;

namespace {
int setting(const char *variable, int fallback)
{
    bool ok = false;
    const int value = qEnvironmentVariableIntValue(variable, &ok);
    return ok && value > 0 ? value : fallback;
}
const int gpuCount = setting("FLEETSCOPE_LOAD_GPUS", 102400);
const int fastStreams = setting("FLEETSCOPE_LOAD_STREAMS", 100);
const int windowS = setting("FLEETSCOPE_LOAD_S", 20);
constexpr int stalledStreams = 5;
constexpr int stormCalls = 2000;
constexpr int intervalMs = 1000;

// What /proc says of a process.
struct ProcessSample
{
    double residentMiB = 0;
    double anonymousMiB = 0; // of residentMiB, the heap's and the stacks' (not the program's files)
    int threads = 0;
    double cpuSeconds = 0; // user + system
    int openFiles = 0;
};

ProcessSample sample(qint64 pid)
{
    ProcessSample s;
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (status.open(QIODevice::ReadOnly)) {
        for (const QByteArray &line : status.readAll().split('\n')) {
            if (line.startsWith("VmRSS:")) {
                s.residentMiB = line.mid(6).trimmed().split(' ').constFirst().toDouble() / 1024.0;
            } else if (line.startsWith("RssAnon:")) {
                s.anonymousMiB = line.mid(8).trimmed().split(' ').constFirst().toDouble() / 1024.0;
            } else if (line.startsWith("Threads:")) {
                s.threads = line.mid(8).trimmed().toInt();
            }
        }
    }
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (stat.open(QIODevice::ReadOnly)) {
        const QByteArray line = stat.readAll();
        // Fields after the command's closing parenthesis: state is the 3rd field, utime the 14th, stime the 15th.
        const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
        if (fields.size() > 12) {
            s.cpuSeconds = (fields[11].toDouble() + fields[12].toDouble()) / static_cast<double>(sysconf(_SC_CLK_TCK));
        }
    }
    s.openFiles = static_cast<int>(
        QDir(QStringLiteral("/proc/%1/fd").arg(pid)).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).size());
    return s;
}

// A channel on a connection of its own: gRPC shares one connection between channels with the same arguments in a
// process, whereas the clients here stand for separate machines.
std::unique_ptr<pb::Telemetry::Stub> stubOnItsOwnConnection(const QString &address, int n)
{
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(16 << 20);
    args.SetInt("fleetscope.test.connection", n);
    return pb::Telemetry::NewStub(
        grpc::CreateCustomChannel(address.toStdString(), grpc::InsecureChannelCredentials(), args));
}

double percentile(std::vector<double> values, double p)
{
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1, static_cast<size_t>(p * static_cast<double>(values.size())))];
}

void *tag(size_t call, int what)
{
    return reinterpret_cast<void *>(call * 4 + static_cast<size_t>(what));
}

// A console's stream as this test watches it: the frames the client decoded against the sequences it showed.
struct Console
{
    std::unique_ptr<TelemetryClient> client;
    bool counting = false;
    uint64_t firstSequence = 0; // the first frame shown in the window
    quint64 receivedAtFirst = 0; // the client's count of decoded frames when it was shown (at least up to it)
    int leftLive = 0; // times the client left the live state in the window
};
} // namespace

class TestLoad : public QObject
{
    Q_OBJECT

    QProcess m_backend;
    QByteArray m_backendLog; // its standard error
    QString m_address;
    ProcessSample m_started;
    double m_idleCpuPerFrame = 0;

    // The newest sample time the backend holds, from a one-GPU QueryRange (cheap, and no stream of its own).
    int64_t newestSampleMs(pb::Telemetry::Stub &stub)
    {
        pb::QueryRangeRequest request;
        request.add_metric_ids(be::metricCatalog().front().key);
        request.set_first_gpu(0);
        request.set_gpu_count(1);
        const int64_t now = QDateTime::currentMSecsSinceEpoch();
        request.set_from_ms(now - 10 * intervalMs);
        request.set_to_ms(now + 10 * intervalMs);
        request.set_step_ms(intervalMs / 4);
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 10s);
        auto reader = stub.QueryRange(&context, request);
        pb::QueryRangePart part;
        int64_t newest = 0;
        while (reader->Read(&part)) {
            for (const int64_t t : part.sample_times_ms()) {
                newest = std::max(newest, t);
            }
        }
        return reader->Finish().ok() ? newest : 0;
    }

    // What the backend's heap held in use at its last trim after calls ended with none under way (HeapTrim's report),
    // after its log was `from` bytes long; -1 if it has reported none since.
    double lastHeapInUseMiB(qsizetype from) const
    {
        const QByteArray marker("(0 under way), heap trimmed: ");
        const qsizetype at = m_backendLog.lastIndexOf(marker);
        if (at < from || at < 0) {
            return -1;
        }
        const qsizetype start = at + marker.size();
        const qsizetype end = m_backendLog.indexOf(" MiB in use", start);
        bool ok = false;
        const double mib = end > start ? m_backendLog.mid(start, end - start).toDouble(&ok) : -1;
        return ok ? mib : -1;
    }

    // Subscribe streams the backend has logged as cut since its log was `from` bytes long.
    int subscribesCut(qsizetype from) const
    {
        return static_cast<int>(m_backendLog.mid(from).count(": Subscribe frame "));
    }

private Q_SLOTS:
    void initTestCase()
    {
        // The gate's per-client limits would refuse most of the storm from this one address (past 256 streams, past
        // 1,000 calls at once); raised here so that 2,000 streams really are opened. tst_security tests the limits.
        connect(&m_backend, &QProcess::readyReadStandardError, this,
            [this] { m_backendLog += m_backend.readAllStandardError(); });
        m_backend.start(QStringLiteral(FLEETSCOPE_BIN_DIR "/fleetscope-backend"),
            { QStringLiteral("--no-config"), QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
                QStringLiteral("--gpus"), QString::number(gpuCount), QStringLiteral("--interval-ms"),
                QString::number(intervalMs), QStringLiteral("--max-streams-per-client"), QStringLiteral("8192"),
                QStringLiteral("--max-calls-per-second"), QStringLiteral("100000") });
        QVERIFY(m_backend.waitForStarted(10000));
        QByteArray out;
        auto listening = [&] {
            out += m_backend.readAllStandardOutput();
            const qsizetype at = out.indexOf("listening on ");
            return at >= 0 && out.indexOf('\n', at) > at;
        };
        QTRY_VERIFY_WITH_TIMEOUT(listening(), 60000);
        const qsizetype at = out.indexOf("listening on ") + 13;
        m_address = QString::fromUtf8(out.mid(at, out.indexOf('\n', at) - at)).trimmed();

        // What the backend costs with no stream: CPU time over five frames.
        auto stub = stubOnItsOwnConnection(m_address, -1);
        const int64_t first = newestSampleMs(*stub);
        QVERIFY(first > 0);
        const ProcessSample before = sample(m_backend.processId());
        int64_t newest = first;
        QTRY_VERIFY_WITH_TIMEOUT((newest = newestSampleMs(*stub)) >= first + 5 * intervalMs, 60000);
        const ProcessSample after = sample(m_backend.processId());
        m_idleCpuPerFrame = (after.cpuSeconds - before.cpuSeconds) / (static_cast<double>(newest - first) / intervalMs);
        m_started = after;
        qInfo("backend at %d GPUs, no stream: %.1f MiB resident, %d threads, %.3f CPU s a frame", gpuCount,
            after.residentMiB, after.threads, m_idleCpuPerFrame);
    }

    void consolesKeepUpAndStalledClientsAreCut()
    {
        const qint64 pid = m_backend.processId();
        std::vector<Console> consoles(static_cast<size_t>(fastStreams));
        bool inWindow = false;
        std::vector<double> lagsMs;
        for (auto &console : consoles) {
            console.client = std::make_unique<TelemetryClient>();
            auto *c = &console;
            connect(c->client.get(), &TelemetryClient::frameReady, this, [c, &inWindow, &lagsMs](const FramePtr &f) {
                if (!inWindow) {
                    return;
                }
                lagsMs.push_back(static_cast<double>(QDateTime::currentMSecsSinceEpoch() - f->sampleTimeMs));
                if (!c->counting) {
                    c->counting = true;
                    c->firstSequence = f->sequence;
                    c->receivedAtFirst = c->client->framesReceived();
                }
            });
            connect(
                c->client.get(), &TelemetryClient::stateChanged, this, [c, &inWindow](TelemetryClient::State state) {
                    c->leftLive += inWindow && state != TelemetryClient::State::Live;
                });
        }
        auto newestShown = [&consoles](size_t count) {
            uint64_t least = std::numeric_limits<uint64_t>::max();
            for (size_t i = 0; i < count; ++i) {
                const auto &latest = consoles[i].client->latestFrame();
                least = std::min<uint64_t>(least, latest ? latest->sequence : 0);
            }
            return least;
        };
        // Ten consoles at a time, each ten live before the next start: the window measures streaming. (All 100 at
        // once is a herd of 100 topology fetches of 6 MB; docs/RELIABILITY.md says what that does.)
        for (size_t first = 0; first < consoles.size(); first += 10) {
            const size_t end = std::min(consoles.size(), first + 10);
            for (size_t i = first; i < end; ++i) {
                consoles[i].client->start(m_address);
            }
            QTRY_VERIFY_WITH_TIMEOUT(newestShown(end) > 0, 120000);
        }
        const size_t all = consoles.size();
        // Warm: the backend holds as many recent frames as its budget allows (256 MiB: 35 at 102,400 GPUs), so that
        // its memory from here on is what streams cost, not history filling up.
        const size_t frameBytes
            = static_cast<size_t>(gpuCount) * (static_cast<size_t>(be::MetricId::Count) * sizeof(float) + 1);
        const uint64_t heldFrames = be::FrameSource::Options().frameMemoryBudget / frameBytes;
        QTRY_VERIFY_WITH_TIMEOUT(newestShown(all) > heldFrames + 2, static_cast<int>(heldFrames + 60) * intervalMs);

        const ProcessSample warm = sample(pid);
        const qsizetype logAtStart = m_backendLog.size();
        inWindow = true;
        // The stalled clients send their request and never read.
        struct Stalled
        {
            std::unique_ptr<pb::Telemetry::Stub> stub;
            grpc::ClientContext context;
            std::unique_ptr<grpc::ClientReader<pb::FramePart>> call;
        };
        std::vector<Stalled> stalled(stalledStreams);
        QElapsedTimer clock;
        clock.start();
        for (size_t i = 0; i < stalled.size(); ++i) {
            auto &s = stalled[i];
            s.stub = stubOnItsOwnConnection(m_address, static_cast<int>(i));
            s.context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(windowS + 120));
            s.call = s.stub->Subscribe(&s.context, pb::SubscribeRequest());
        }
        double allCutAfterS = -1;

        // The window: memory sampled every second.
        double peakMiB = warm.residentMiB;
        int peakFiles = warm.openFiles;
        QTimer sampler;
        connect(&sampler, &QTimer::timeout, this, [&] {
            const auto s = sample(pid);
            peakMiB = std::max(peakMiB, s.residentMiB);
            peakFiles = std::max(peakFiles, s.openFiles);
            if (allCutAfterS < 0 && subscribesCut(logAtStart) == stalledStreams) {
                allCutAfterS = static_cast<double>(clock.elapsed()) / 1000.0;
            }
        });
        sampler.start(intervalMs);
        QTimer end;
        end.setSingleShot(true);
        QSignalSpy ended(&end, &QTimer::timeout);
        end.start(windowS * 1000);
        QVERIFY(ended.wait(windowS * 1000 + 10000));
        const ProcessSample last = sample(pid);
        const double windowSeconds = static_cast<double>(clock.elapsed()) / 1000.0;
        inWindow = false;

        // Every console got every frame of the window: the client decoded as many frames as the sequences advanced.
        // receivedAtFirst counts at least the frames up to the first one shown, so a skipped frame cannot hide.
        for (auto &c : consoles) {
            c.client->stop(); // joins its session: no frame decoded after this
        }
        QCoreApplication::sendPostedEvents(); // the last frame decoded is shown
        int skipped = 0;
        int behind = 0;
        int leftLive = 0;
        uint64_t framesEach = std::numeric_limits<uint64_t>::max();
        for (const auto &c : consoles) {
            QVERIFY(c.counting);
            const uint64_t sequences = c.client->latestFrame()->sequence - c.firstSequence;
            const quint64 decoded = c.client->framesReceived() - c.receivedAtFirst;
            skipped += sequences > decoded ? 1 : 0;
            behind += sequences + 2 < static_cast<uint64_t>(windowS) ? 1 : 0;
            leftLive += c.leftLive > 0 ? 1 : 0;
            framesEach = std::min<uint64_t>(framesEach, sequences);
        }
        const double lagP50 = percentile(lagsMs, 0.5);
        const double lagP99 = percentile(lagsMs, 0.99);
        const double lagMax = percentile(lagsMs, 1.0);
        const double cpuPerFrame = (last.cpuSeconds - warm.cpuSeconds) / (windowSeconds * 1000.0 / intervalMs);
        const double perStreamMs = (cpuPerFrame - m_idleCpuPerFrame) * 1000.0 / fastStreams;
        const double partBytes = static_cast<double>(gpuCount) * (4 * sizeof(float) + 1);
        qInfo("%d consoles x %d GPUs x 4 metrics, %.0f s: every console >= %llu frames, %d skipped a frame, %d fell "
              "behind, %d left live; frame shown %.0f ms after its sample time (median), %.0f ms (99th "
              "percentile), %.0f ms (most)",
            fastStreams, gpuCount, windowSeconds, static_cast<unsigned long long>(framesEach), skipped, behind,
            leftLive, lagP50, lagP99, lagMax);
        qInfo("backend: resident %.1f MiB warm, %.1f MiB at most in the window (%.2fx), %.1f MiB at the end; %d open "
              "files at most; CPU %.3f s a frame with the streams, %.3f s without: %.2f ms a stream a frame (%.2f MB "
              "sent each)",
            warm.residentMiB, peakMiB, peakMiB / warm.residentMiB, last.residentMiB, peakFiles, cpuPerFrame,
            m_idleCpuPerFrame, perStreamMs, partBytes / 1e6);
        const double scale = 1048576.0 / gpuCount;
        qInfo("on paper, 100 consoles at 1,048,576 GPUs: %.1f CPU s a frame for the streams (%.1f cores at 1 Hz), "
              "%.0f MB/s (%.1f Gbit/s) out",
            perStreamMs * scale * 100 / 1000.0, perStreamMs * scale * 100 / 1000.0, partBytes * scale * 100 / 1e6,
            partBytes * scale * 100 * 8 / 1e9);

        QCOMPARE(skipped, 0);
        QCOMPARE(behind, 0);
        QCOMPARE(leftLive, 0);
        QVERIFY2(lagP99 < intervalMs, qPrintable(QString::number(lagP99)));
        QVERIFY2(peakMiB < 1.5 * warm.residentMiB, qPrintable(QString::number(peakMiB / warm.residentMiB)));

        // Every stalled client was cut, and when it reads at last it gets what it had been sent, then the reason.
        QTRY_COMPARE_WITH_TIMEOUT(subscribesCut(logAtStart), stalledStreams, 60000);
        qInfo("%d stalled clients: all cut %.1f s after they subscribed", stalledStreams,
            allCutAfterS < 0 ? static_cast<double>(clock.elapsed()) / 1000.0 : allCutAfterS);
        std::string reason;
        for (auto &s : stalled) {
            pb::FramePart part;
            int parts = 0;
            while (parts < 1000 && s.call->Read(&part)) {
                ++parts;
            }
            QVERIFY2(parts < 1000, "a stalled stream goes on");
            const auto status = s.call->Finish();
            QCOMPARE(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
            QVERIFY2(QByteArray::fromStdString(status.error_message()).contains("took nothing for"),
                status.error_message().c_str());
            reason = status.error_message();
        }
        qInfo("a stalled client's status: RESOURCE_EXHAUSTED, '%s'", reason.c_str());
    }

    void aStormLeavesTheBackendAsItWas()
    {
        const qint64 pid = m_backend.processId();
        // At rest: the consoles' calls have ended (a synchronous server's threads end with them), and HeapTrim gave
        // their memory back. After a trim resident memory climbs again with no call under way: each new frame faults
        // in pages the trim gave back while the one it replaces leaves its own free but resident (up to 10 MB a
        // second here). Rest is the least over 12 s; after the storms the memory is sampled until it is as low.
        QTRY_VERIFY_WITH_TIMEOUT(sample(pid).threads <= m_started.threads + 2, 60000);
        // History keeps growing meanwhile, one frame a minute (FrameSource's coarse frames, 11 MB each at 102,400
        // GPUs, up to 512 MiB): what it holds more after the storms is allowed for, counted from the newest frame.
        auto frameStub = stubOnItsOwnConnection(m_address, -1);
        const int64_t restNewestMs = newestSampleMs(*frameStub);
        QVERIFY(restNewestMs > 0);
        // Time since then by the clock, not by asking: a call every look would keep HeapTrim's quiet rule from ever
        // trimming what the storms' last calls freed (frames come at wall-clock rate, the frame before rest's newest).
        QElapsedTimer sinceRest;
        sinceRest.start();
        ProcessSample rest = sample(pid);
        {
            QTimer sampler;
            connect(&sampler, &QTimer::timeout, this, [&] {
                const auto s = sample(pid);
                if (s.residentMiB < rest.residentMiB) {
                    rest = s;
                }
            });
            sampler.start(100);
            QTimer end;
            end.setSingleShot(true);
            QSignalSpy ended(&end, &QTimer::timeout);
            end.start(12000);
            QVERIFY(ended.wait(20000));
        }

        constexpr int connections = 20;
        std::vector<std::unique_ptr<pb::Telemetry::Stub>> stubs;
        for (int i = 0; i < connections; ++i) {
            stubs.push_back(stubOnItsOwnConnection(m_address, 100 + i));
        }
        // What the heap holds in use, as HeapTrim reports it after calls end with none under way: 64 ListJobs at once,
        // ended, are enough of a burst for it to trim and say so. Asked at rest and again after the storms.
        const auto heapInUseAfterABurst = [&]() -> double {
            m_backendLog
                += m_backend.readAllStandardError(); // a report of the storms' end already sent is not this one
            const qsizetype before = m_backendLog.size();
            grpc::CompletionQueue burst;
            constexpr size_t burstCalls = 64;
            std::vector<grpc::ClientContext> contexts(burstCalls);
            std::vector<pb::ListJobsResponse> answers(burstCalls);
            std::vector<grpc::Status> statuses(burstCalls);
            std::vector<std::unique_ptr<grpc::ClientAsyncResponseReader<pb::ListJobsResponse>>> readers;
            for (size_t i = 0; i < burstCalls; ++i) {
                contexts[i].set_deadline(std::chrono::system_clock::now() + 30s);
                readers.push_back(frameStub->AsyncListJobs(&contexts[i], pb::ListJobsRequest(), &burst));
                readers.back()->Finish(&answers[i], &statuses[i], tag(i, 0));
            }
            void *got = nullptr;
            bool ok = false;
            const auto deadline = std::chrono::system_clock::now() + 60s;
            size_t answered = 0;
            while (answered < burstCalls && burst.AsyncNext(&got, &ok, deadline) == grpc::CompletionQueue::GOT_EVENT) {
                ++answered;
            }
            burst.Shutdown();
            while (burst.Next(&got, &ok)) { }
            double mib = -1;
            if (answered == burstCalls) {
                (void)QTest::qWaitFor([&] { return (mib = lastHeapInUseMiB(before)) > 0; }, 30000);
            }
            if (mib < 0) {
                qWarning("no heap report after %zu of %zu calls answered; the backend's log ends: %s", answered,
                    burstCalls, m_backendLog.right(600).constData());
            }
            return mib;
        };
        const double restInUseMiB = heapInUseAfterABurst();
        QVERIFY(restInUseMiB > 0);

        grpc::CompletionQueue queue;
        auto drain = [&queue](int events, std::vector<int> *counts, int timeoutS) {
            void *got = nullptr;
            bool ok = false;
            const auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(timeoutS);
            for (int n = 0; n < events; ++n) {
                if (queue.AsyncNext(&got, &ok, deadline) != grpc::CompletionQueue::GOT_EVENT) {
                    return false;
                }
                ++(*counts)[reinterpret_cast<size_t>(got) % 4];
            }
            return true;
        };

        // 2,000 subscribes, open at once (each has had its headers from the backend, which sends them with the first
        // frame), then cancelled at once.
        struct Call
        {
            grpc::ClientContext context;
            std::unique_ptr<grpc::ClientAsyncReader<pb::FramePart>> reader;
            grpc::Status status;
        };
        std::vector<Call> calls(stormCalls);
        QElapsedTimer clock;
        clock.start();
        for (size_t i = 0; i < calls.size(); ++i) {
            auto &c = calls[i];
            c.context.set_deadline(std::chrono::system_clock::now() + 300s);
            c.reader = stubs[i % connections]->PrepareAsyncSubscribe(&c.context, pb::SubscribeRequest(), &queue);
            c.reader->StartCall(tag(i, 0));
            c.reader->ReadInitialMetadata(tag(i, 1));
        }
        std::vector<int> counts(4);
        QVERIFY(drain(2 * stormCalls, &counts, 240));
        const double openS = static_cast<double>(clock.elapsed()) / 1000.0;
        const ProcessSample open = sample(pid);
        for (auto &c : calls) {
            c.context.TryCancel();
        }
        for (size_t i = 0; i < calls.size(); ++i) {
            calls[i].reader->Finish(&calls[i].status, tag(i, 2));
        }
        QVERIFY(drain(stormCalls, &counts, 120));
        std::map<grpc::StatusCode, int> codes;
        for (const auto &c : calls) {
            ++codes[c.status.error_code()];
        }
        qInfo("%d subscribes open after %.1f s: backend %.1f MiB resident, %d threads (at rest %.1f MiB, %d threads); "
              "ended %d CANCELLED, %d RESOURCE_EXHAUSTED (cut as stalled)",
            stormCalls, openS, open.residentMiB, open.threads, rest.residentMiB, rest.threads,
            codes[grpc::StatusCode::CANCELLED], codes[grpc::StatusCode::RESOURCE_EXHAUSTED]);
        // Each ended with a status, cancelled by the client or cut by the backend while it waited to be cancelled.
        QCOMPARE(codes[grpc::StatusCode::CANCELLED] + codes[grpc::StatusCode::RESOURCE_EXHAUSTED], stormCalls);
        QVERIFY(open.threads > rest.threads + stormCalls / 2); // they were open at once: a thread each

        // 2,000 bad requests at once, of every kind, each answered with its documented status.
        pb::ListMetricsResponse catalogue;
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 10s);
            QVERIFY(stubs[0]->ListMetrics(&context, pb::ListMetricsRequest(), &catalogue).ok());
        }
        const std::string knownMetric = catalogue.metrics(0).id();
        const int64_t now = QDateTime::currentMSecsSinceEpoch();
        constexpr int64_t int64Max = std::numeric_limits<int64_t>::max();
        struct Bad
        {
            const char *what;
            grpc::StatusCode expected;
            std::function<void(
                pb::Telemetry::Stub &, grpc::ClientContext *, grpc::CompletionQueue *, grpc::Status *, void *)>
                start;
        };
        // The calls' readers must outlive their completion; held here.
        std::vector<std::shared_ptr<void>> held;
        auto keep = [&held](auto call) { held.push_back(std::shared_ptr<void>(std::move(call))); };
        auto subscribeWith = [&](pb::SubscribeRequest request) {
            return [request, &keep](pb::Telemetry::Stub &stub, grpc::ClientContext *context, grpc::CompletionQueue *q,
                       grpc::Status *status, void *t) {
                auto call = stub.PrepareAsyncSubscribe(context, request, q);
                call->StartCall(nullptr);
                call->Finish(status, t);
                keep(std::move(call));
            };
        };
        auto queryWith = [&](pb::QueryRangeRequest request) {
            return [request, &keep](pb::Telemetry::Stub &stub, grpc::ClientContext *context, grpc::CompletionQueue *q,
                       grpc::Status *status, void *t) {
                auto call = stub.PrepareAsyncQueryRange(context, request, q);
                call->StartCall(nullptr);
                call->Finish(status, t);
                keep(std::move(call));
            };
        };
        std::vector<std::unique_ptr<pb::Summary>> summaries;
        auto summaryWith = [&](pb::GetSummaryRequest request) {
            return [request, &keep, &summaries](pb::Telemetry::Stub &stub, grpc::ClientContext *context,
                       grpc::CompletionQueue *q, grpc::Status *status, void *t) {
                summaries.push_back(std::make_unique<pb::Summary>());
                auto call = stub.PrepareAsyncGetSummary(context, request, q);
                call->StartCall();
                call->Finish(summaries.back().get(), status, t);
                keep(std::move(call));
            };
        };
        auto eventsWith = [&](pb::StreamEventsRequest request) {
            return [request, &keep](pb::Telemetry::Stub &stub, grpc::ClientContext *context, grpc::CompletionQueue *q,
                       grpc::Status *status, void *t) {
                auto call = stub.PrepareAsyncStreamEvents(context, request, q);
                call->StartCall(nullptr);
                call->Finish(status, t);
                keep(std::move(call));
            };
        };
        std::vector<Bad> kinds;
        {
            pb::SubscribeRequest r;
            r.add_metric_ids("no_such_metric");
            kinds.push_back({ "Subscribe, an unknown metric", grpc::StatusCode::INVALID_ARGUMENT, subscribeWith(r) });
            for (int i = 0; i < 100000; ++i) {
                r.add_metric_ids(knownMetric);
            }
            kinds.push_back({ "Subscribe, one metric 100,000 times and an unknown one",
                grpc::StatusCode::INVALID_ARGUMENT, subscribeWith(r) });
        }
        {
            pb::SubscribeRequest r;
            r.add_metric_ids(std::string(5 << 20, 'x'));
            kinds.push_back(
                { "Subscribe, 5 MiB of metric id", grpc::StatusCode::RESOURCE_EXHAUSTED, subscribeWith(r) });
        }
        {
            pb::SubscribeRequest r;
            r.set_topology_generation(12345);
            kinds.push_back(
                { "Subscribe, another topology generation", grpc::StatusCode::FAILED_PRECONDITION, subscribeWith(r) });
        }
        {
            pb::SubscribeRequest r;
            r.set_resume_after_sequence(std::numeric_limits<uint64_t>::max() - 1);
            kinds.push_back({ "Subscribe, resume after 2^64 - 2", grpc::StatusCode::OUT_OF_RANGE, subscribeWith(r) });
        }
        {
            pb::QueryRangeRequest r;
            r.set_from_ms(0);
            r.set_to_ms(int64Max);
            r.set_step_ms(1);
            kinds.push_back(
                { "QueryRange over the whole int64 range", grpc::StatusCode::RESOURCE_EXHAUSTED, queryWith(r) });
            r.set_from_ms(std::numeric_limits<int64_t>::min());
            kinds.push_back({ "QueryRange from int64's least", grpc::StatusCode::INVALID_ARGUMENT, queryWith(r) });
            r.set_from_ms(now);
            r.set_to_ms(now - 1000);
            kinds.push_back({ "QueryRange reversed", grpc::StatusCode::INVALID_ARGUMENT, queryWith(r) });
            r.set_to_ms(now);
            r.set_step_ms(0);
            kinds.push_back({ "QueryRange with step 0", grpc::StatusCode::INVALID_ARGUMENT, queryWith(r) });
            r.set_step_ms(1000);
            for (uint32_t g = 0; g < 500000; ++g) {
                r.add_gpus(g);
            }
            kinds.push_back(
                { "QueryRange, 500,000 GPU indices past the fleet", grpc::StatusCode::INVALID_ARGUMENT, queryWith(r) });
        }
        {
            pb::GetSummaryRequest r;
            r.set_from_ms(now + 3600000);
            r.set_to_ms(now + 7200000);
            kinds.push_back({ "GetSummary of the next hour", grpc::StatusCode::FAILED_PRECONDITION, summaryWith(r) });
            r.set_from_ms(now);
            r.set_to_ms(now - 3600000);
            kinds.push_back({ "GetSummary reversed", grpc::StatusCode::INVALID_ARGUMENT, summaryWith(r) });
        }
        {
            pb::StreamEventsRequest r;
            r.set_since_ms(-1);
            kinds.push_back(
                { "StreamEvents since before the epoch", grpc::StatusCode::INVALID_ARGUMENT, eventsWith(r) });
        }
        std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
        std::vector<grpc::Status> statuses(stormCalls);
        std::vector<size_t> kindOf(stormCalls);
        for (size_t i = 0; i < static_cast<size_t>(stormCalls); ++i) {
            // The large requests (a megabyte and more each) 40 times each, the rest of their turns the first kind.
            size_t k = i % kinds.size();
            if ((k == 1 || k == 2 || k == 9) && i >= 40 * kinds.size()) {
                k = 0;
            }
            kindOf[i] = k;
            contexts.push_back(std::make_unique<grpc::ClientContext>());
            contexts.back()->set_deadline(std::chrono::system_clock::now() + 120s);
            kinds[k].start(*stubs[i % connections], contexts.back().get(), &queue, &statuses[i], tag(i, 3));
        }
        // StartCall's own events (null tags) come with the ends.
        void *got = nullptr;
        bool ok = false;
        const auto deadline = std::chrono::system_clock::now() + 180s;
        int finished = 0;
        while (finished < stormCalls && queue.AsyncNext(&got, &ok, deadline) == grpc::CompletionQueue::GOT_EVENT) {
            finished += got != nullptr ? 1 : 0;
        }
        QCOMPARE(finished, stormCalls);
        std::map<size_t, int> wrong;
        std::map<size_t, int> each;
        for (size_t i = 0; i < static_cast<size_t>(stormCalls); ++i) {
            ++each[kindOf[i]];
            if (statuses[i].error_code() != kinds[kindOf[i]].expected || statuses[i].error_message().empty()) {
                if (wrong[kindOf[i]]++ == 0) {
                    qWarning("%s: status %d '%s'", kinds[kindOf[i]].what, statuses[i].error_code(),
                        statuses[i].error_message().c_str());
                }
            }
        }
        for (const auto &[k, n] : each) {
            qInfo("%5d x %s: %d answered otherwise", n, kinds[k].what, wrong[k]);
        }
        QVERIFY(wrong.empty() || std::all_of(wrong.begin(), wrong.end(), [](const auto &w) { return w.second == 0; }));
        held.clear();
        contexts.clear();
        calls.clear();
        stubs.clear(); // the storms' 20 connections closed: their clients have gone

        // Back to rest: the handlers' threads are gone, what the program uses is where it was (a leak would show here),
        // and the resident memory is within what glibc may keep for the next calls.
        ProcessSample settled;
        double historyMiB = 0;
        double inUseMiB = -1;
        QElapsedTimer settling;
        settling.start();
        const auto report = qScopeGuard([&] {
            qInfo("%.0f s after the storms: %.1f MiB resident (%.2fx rest; anonymous %.1f MiB, %.1f at rest), heap "
                  "%.1f MiB in use (%.1f at rest; history grown by at most %.1f MiB since), %d threads (%d at rest)",
                static_cast<double>(settling.elapsed()) / 1000.0, settled.residentMiB,
                settled.residentMiB / rest.residentMiB, settled.anonymousMiB, rest.anonymousMiB, inUseMiB, restInUseMiB,
                historyMiB, settled.threads, rest.threads);
        });
        const double frameMiB = static_cast<double>(gpuCount)
            * (static_cast<double>(be::MetricId::Count) * sizeof(float) + 1) / (1024.0 * 1024.0);
        const auto coarseEveryMs = static_cast<double>(be::FrameSource::Options().coarseEvery.count());
        // What glibc may keep at the tops of the backend's thread arenas, which malloc_trim does not give back
        // (HeapTrim::keepFreedMemoryUntilTrimmed, docs/RELIABILITY.md).
        const double arenaTopsMiB = be::HeapTrim::maxArenas * static_cast<double>(heap::largestKeptBuffer) / (1 << 20);
        auto settledDown = [&] {
            settled = sample(pid);
            const int64_t newestMs = restNewestMs + sinceRest.elapsed();
            // The coarse frames kept since rest: one per whole minute passed, and one more for where the minute fell.
            historyMiB = (std::floor(static_cast<double>(newestMs - restNewestMs) / coarseEveryMs) + 1) * frameMiB;
            return settled.residentMiB < 1.1 * rest.residentMiB + historyMiB + arenaTopsMiB;
        };
        QTRY_VERIFY_WITH_TIMEOUT(settledDown(), 60000);
        // The heap comes back to what it used at rest plus the history kept since (counted after each burst, from
        // the newest frame before rest's report) within 16 MiB: gRPC gives the cancelled calls' buffers back as their
        // connections close, some seconds after the storms (130 MiB still in use at the first look in one run of
        // three); a leak, of 3 KiB a call over the storms' 6,000, would not come back.
        const auto heapBack = [&] {
            inUseMiB = heapInUseAfterABurst();
            historyMiB = (std::floor(static_cast<double>(sinceRest.elapsed()) / coarseEveryMs) + 1) * frameMiB;
            qInfo("%.0f s after the storms: heap %.1f MiB in use", static_cast<double>(settling.elapsed()) / 1000.0,
                inUseMiB);
            return inUseMiB > 0 && inUseMiB < restInUseMiB + historyMiB + 16.0;
        };
        const bool heapCameBack = QTest::qWaitFor(heapBack, 60000); // each look is a burst: once it passes, no more
        QVERIFY2(heapCameBack, "the heap in use did not come back to rest's plus the history kept since within 60 s");
        QTRY_VERIFY_WITH_TIMEOUT((settled = sample(pid)).threads <= rest.threads + 16, 30000);
        queue.Shutdown();
        while (queue.Next(&got, &ok)) { }
    }

    void cleanupTestCase()
    {
        if (m_backend.state() == QProcess::Running) {
            ::kill(static_cast<pid_t>(m_backend.processId()), SIGTERM);
            QVERIFY(m_backend.waitForFinished(30000));
            QCOMPARE(m_backend.exitStatus(), QProcess::NormalExit);
        }
    }
};

QTEST_GUILESS_MAIN(TestLoad)
#include "tst_load.moc"
