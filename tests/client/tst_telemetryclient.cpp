// SPDX-License-Identifier: Apache-2.0
// The client against a real backend on 127.0.0.1 with an ephemeral port, and against a fake one that misbehaves.
#include "client/telemetryclient.h"
#include "service/backendserver.h"
#include "service/frameencoder.h"
#include "sim/simulatedfleet.h"
#include "sim/simulator.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDateTime>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

using namespace fleetscope;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<be::BackendServer> startBackend(
    uint32_t gpus, uint64_t seed, int port = 0, std::chrono::milliseconds interval = 100ms)
{
    be::SimulationOptions options;
    options.gpuCount = gpus;
    options.seed = seed;
    options.interval = interval;
    auto server = std::make_unique<be::BackendServer>(be::simulatedSource(options));
    std::string error;
    if (!server->start("127.0.0.1:" + std::to_string(port), &error)) {
        qWarning("backend did not start: %s", error.c_str());
        return nullptr;
    }
    return server;
}

QString addressOf(const be::BackendServer &server)
{
    return QString::fromStdString(server.listeningAddress());
}

// What the simulator produced for this seed at this sequence, computed independently of the server.
std::shared_ptr<be::Frame> expectedFrame(uint32_t gpus, uint64_t seed, uint64_t sequence, double stepSeconds = 0.1)
{
    be::Simulator sim(gpus, seed, stepSeconds);
    for (uint64_t i = 0; i < sequence; ++i) {
        sim.step();
    }
    return sim.snapshot();
}

// A backend that sends one bad frame (a short plane, or stamped years ahead), then a good one, then keeps the stream
// open.
class MisbehavingBackend final : public fleetscope::telemetry::v1::Telemetry::Service
{
public:
    enum class Fault { ShortPlane, FromTheFuture, ManyShortPlanes };
    explicit MisbehavingBackend(Fault fault = Fault::ShortPlane)
        : m_fault(fault)
    { }

    grpc::Status GetTopology(grpc::ServerContext * /*context*/, const pb::GetTopologyRequest * /*request*/,
        grpc::ServerWriter<pb::TopologyPart> *writer) override
    {
        for (const auto &part : be::encodeTopology(m_sim.shape(), generation)) {
            writer->Write(part);
        }
        return grpc::Status::OK;
    }
    grpc::Status ListMetrics(grpc::ServerContext * /*context*/, const pb::ListMetricsRequest * /*request*/,
        pb::ListMetricsResponse *response) override
    {
        be::fillMetricCatalog(response);
        return grpc::Status::OK;
    }
    grpc::Status Subscribe(grpc::ServerContext *context, const pb::SubscribeRequest * /*request*/,
        grpc::ServerWriter<pb::FramePart> *writer) override
    {
        const int64_t now = QDateTime::currentMSecsSinceEpoch();
        m_sim.step();
        auto frame = m_sim.snapshot();
        frame->sampleTimeMs = now;
        auto bad = be::encodeFrame(*frame, { be::MetricId::GpuTemp }, generation);
        if (m_fault == Fault::FromTheFuture) {
            bad[0].set_sample_time_ms(now + int64_t { 10 } * 365 * 24 * 3600 * 1000);
        } else {
            bad[0].mutable_planes(0)->mutable_values()->resize(15 * sizeof(float));
        }
        for (int i = 0; i < (m_fault == Fault::ManyShortPlanes ? manyBadParts : 1); ++i) {
            writer->Write(bad[0]);
        }
        m_sim.step();
        frame = m_sim.snapshot();
        frame->sampleTimeMs = now + 1000;
        writer->Write(be::encodeFrame(*frame, { be::MetricId::GpuTemp }, generation)[0]);
        // Keep the stream open (so the client does not reconnect and see the bad frame again) until released.
        m_released.wait();
        return context->IsCancelled() ? grpc::Status::CANCELLED : grpc::Status::OK;
    }
    void release()
    {
        std::call_once(m_releasedOnce, [this] { m_release.set_value(); });
    }
    static constexpr uint64_t generation = 5;
    static constexpr int manyBadParts = 5000;

private:
    Fault m_fault;
    be::Simulator m_sim { 16, 1 };
    std::once_flag m_releasedOnce;
    std::promise<void> m_release;
    std::shared_future<void> m_released { m_release.get_future().share() };
};

// A backend written from the .proto alone that streams bytes which are no FramePart (a truncated varint), then good
// parts, and keeps the stream open: the client's Read() stops at the bad bytes while the stream stays open.
// Subscribe is served on gRPC's async API, every step of it taken from the completion queue on one thread of the
// fake's: on the callback API gRPC's own objects for the call are touched by several of its threads, ordered inside its
// library, which ThreadSanitizer cannot see.
class UnparseableBackend final : public pb::Telemetry::WithRawMethod_Subscribe<pb::Telemetry::Service>
{
public:
    UnparseableBackend()
    {
        std::vector<std::string> messages { std::string("\x08\xff", 2) };
        for (const auto &part : be::encodeFrame(*m_sim.snapshot(), { be::MetricId::GpuTemp }, generation)) {
            messages.push_back(part.SerializeAsString());
        }
        for (const auto &m : messages) {
            grpc::Slice slice(m);
            m_buffers.emplace_back(&slice, 1);
        }
    }
    ~UnparseableBackend() override { stop(); }

    grpc::Status GetTopology(grpc::ServerContext * /*context*/, const pb::GetTopologyRequest * /*request*/,
        grpc::ServerWriter<pb::TopologyPart> *writer) override
    {
        for (const auto &part : be::encodeTopology(m_sim.shape(), generation)) {
            writer->Write(part);
        }
        return grpc::Status::OK;
    }
    grpc::Status ListMetrics(grpc::ServerContext * /*context*/, const pb::ListMetricsRequest * /*request*/,
        pb::ListMetricsResponse *response) override
    {
        be::fillMetricCatalog(response);
        return grpc::Status::OK;
    }

    // Serves on a free loopback port; false if the server could not start.
    bool start(int *port)
    {
        grpc::ServerBuilder builder;
        builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), port);
        builder.RegisterService(this);
        m_queue = builder.AddCompletionQueue();
        m_server = builder.BuildAndStart();
        if (m_server) {
            m_thread = std::thread([this] { serve(); });
        }
        return m_server != nullptr;
    }
    void stop()
    {
        if (!m_server) {
            return;
        }
        m_server->Shutdown(std::chrono::system_clock::now() + 5s);
        m_queue->Shutdown();
        m_thread.join();
        m_server.reset();
    }

    static constexpr uint64_t generation = 6;
    std::atomic<int> subscribes { 0 };

private:
    // One Subscribe at a time: writes the messages in order, then holds the stream open until the call is cancelled.
    // A client's next Subscribe waits in the server until it is asked for.
    void serve()
    {
        char requested = 0;
        char wrote = 0;
        char ended = 0;
        for (;;) {
            grpc::ServerContext context;
            grpc::ByteBuffer request;
            grpc::ServerAsyncWriter<grpc::ByteBuffer> writer(&context);
            context.AsyncNotifyWhenDone(&ended);
            RequestSubscribe(&context, &request, &writer, m_queue.get(), m_queue.get(), &requested);
            int outstanding = 2; // the request and the notice of the call's end
            size_t next = 0;
            void *tag = nullptr;
            bool ok = false;
            while (outstanding > 0) {
                if (!m_queue->Next(&tag, &ok)) {
                    return; // shut down and drained
                }
                --outstanding;
                if (tag == &requested && !ok) {
                    // The server is shutting down (no call, so no notice of its end): nothing more may be asked of
                    // the queue, which is drained until it is shut down too.
                    while (m_queue->Next(&tag, &ok)) { }
                    return;
                }
                if ((tag == &requested || tag == &wrote) && ok && next < m_buffers.size()) {
                    if (tag == &requested) {
                        ++subscribes;
                    }
                    writer.Write(m_buffers[next++], &wrote);
                    ++outstanding;
                }
            }
        }
    }

    be::Simulator m_sim { 16, 1 };
    std::vector<grpc::ByteBuffer> m_buffers;
    std::unique_ptr<grpc::ServerCompletionQueue> m_queue;
    std::unique_ptr<grpc::Server> m_server;
    std::thread m_thread;
};

// A backend whose topology stream never ends: its header (16 GPUs, one part announced), then parts of one node each
// until the client cuts the stream (or 100,000 of them). Before the client bounded the stream by its header, it read
// them for the 20 s of its deadline, into memory.
class EndlessTopologyBackend final : public fleetscope::telemetry::v1::Telemetry::Service
{
public:
    grpc::Status GetTopology(grpc::ServerContext *context, const pb::GetTopologyRequest * /*request*/,
        grpc::ServerWriter<pb::TopologyPart> *writer) override
    {
        auto parts = be::encodeTopology(be::FleetShape::forGpuCount(16), 3);
        writer->Write(parts[0]);
        pb::TopologyPart more;
        more.set_generation(3);
        *more.add_nodes() = parts[0].nodes(0);
        for (uint32_t i = 1; i <= 100000 && !context->IsCancelled(); ++i) {
            more.set_part_index(i);
            if (!writer->Write(more)) {
                break;
            }
            ++written;
        }
        cut = context->IsCancelled();
        return grpc::Status::OK;
    }
    std::atomic<int> written { 0 };
    std::atomic<bool> cut { false };
};

// A backend whose topology is one part of 6 MiB (a node's model name of that size): past the contract's 4 MiB, which
// the console once took up to 16 MiB of (and each byte of empty entries cost its parser fifty), though the topology's
// own bounds (16 MiB and 256 bytes a GPU) would have let it through.
class OversizedTopologyBackend final : public fleetscope::telemetry::v1::Telemetry::Service
{
public:
    grpc::Status GetTopology(grpc::ServerContext * /*context*/, const pb::GetTopologyRequest * /*request*/,
        grpc::ServerWriter<pb::TopologyPart> *writer) override
    {
        auto parts = be::encodeTopology(be::FleetShape::forGpuCount(16), 4);
        parts[0].mutable_nodes(0)->set_model(std::string(6 << 20, 'm'));
        writer->Write(parts[0]);
        return grpc::Status::OK;
    }
    grpc::Status ListMetrics(grpc::ServerContext * /*context*/, const pb::ListMetricsRequest * /*request*/,
        pb::ListMetricsResponse *response) override
    {
        be::fillMetricCatalog(response);
        return grpc::Status::OK;
    }
};

// A fake backend's server on a free loopback port.
std::unique_ptr<grpc::Server> startFake(grpc::Service *service, int *port)
{
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), port);
    builder.RegisterService(service);
    return builder.BuildAndStart();
}

} // namespace

Q_DECLARE_METATYPE(MisbehavingBackend::Fault)

class TestTelemetryClient : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void framesMatchTheSimulator()
    {
        auto server = startBackend(2048, 7);
        QVERIFY(server);
        TelemetryClient client;
        QSignalSpy topologies(&client, &TelemetryClient::topologyChanged);
        QSignalSpy frames(&client, &TelemetryClient::frameReady);
        client.start(addressOf(*server));
        QCOMPARE(client.state(), TelemetryClient::State::Connecting);
        QVERIFY(frames.wait(10000));
        QCOMPARE(topologies.count(), 1);
        QCOMPARE(client.state(), TelemetryClient::State::Live);
        QCOMPARE(client.topology()->gpuCount, 2048U);
        QVERIFY(!client.metrics().empty());
        QCOMPARE(client.metrics().front().id, QStringLiteral("gpu_temp"));
        QCOMPARE(client.metrics().front().unit, QStringLiteral("°C"));

        const auto frame = frames.last().at(0).value<FramePtr>();
        QVERIFY(frame);
        const auto expected = expectedFrame(2048, 7, frame->sequence);
        for (const auto &[id, key] : { std::pair { be::MetricId::GpuTemp, "gpu_temp" },
                 std::pair { be::MetricId::Power, "power" }, std::pair { be::MetricId::GpuUtil, "gpu_util" } }) {
            const MetricPlane *plane = frame->plane(QString::fromLatin1(key));
            QVERIFY2(plane, key);
            QVERIFY2(plane->values == expected->plane(id), key);
        }
        QVERIFY(frame->health == expected->health);
        // The sample's own time, close to now.
        QVERIFY(std::abs(QDateTime::currentMSecsSinceEpoch() - frame->sampleTimeMs) < 10000);

        // Later frames keep coming, in order.
        QVERIFY(frames.wait(5000));
        QVERIFY(frames.last().at(0).value<FramePtr>()->sequence > frame->sequence);
    }

    void largeFramesArriveInPartsAndReassemble()
    {
        // 100,000 GPUs: two parts per frame on the wire.
        auto server = startBackend(100000, 3, 0, 200ms);
        QVERIFY(server);
        TelemetryClient client;
        client.setMetrics({ QStringLiteral("power") });
        QSignalSpy frames(&client, &TelemetryClient::frameReady);
        client.start(addressOf(*server));
        QVERIFY(frames.wait(20000));
        const auto frame = frames.last().at(0).value<FramePtr>();
        QCOMPARE(frame->planes.size(), size_t(1));
        const auto expected = expectedFrame(100000, 3, frame->sequence, 0.2);
        QVERIFY(frame->plane(QStringLiteral("power"))->values == expected->plane(be::MetricId::Power));
    }

    void reconnectsWhenTheBackendComesBack()
    {
        auto server = startBackend(1024, 1);
        QVERIFY(server);
        const int port = server->port();
        TelemetryClient client;
        QSignalSpy frames(&client, &TelemetryClient::frameReady);
        client.start(addressOf(*server));
        QVERIFY(frames.wait(10000));

        server.reset(); // the backend goes away
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), TelemetryClient::State::Reconnecting, 10000);
        QVERIFY(client.stateDetail().contains(QStringLiteral("127.0.0.1:%1").arg(port)));
        QVERIFY(client.latestFrame()); // what we had is kept

        server = startBackend(1024, 1, port); // and comes back on the same port
        QVERIFY(server);
        frames.clear();
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), TelemetryClient::State::Live, 20000);
        QVERIFY(frames.wait(10000));
    }

    void unreachableBackendKeepsRetryingWithBackoff()
    {
        // Bind and close a port so that nothing listens there.
        int port = 0;
        {
            auto probe = startBackend(8, 1);
            QVERIFY(probe);
            port = probe->port();
        }
        TelemetryClient client;
        QSignalSpy states(&client, &TelemetryClient::stateChanged);
        client.start(QStringLiteral("127.0.0.1:%1").arg(port));
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), TelemetryClient::State::Reconnecting, 10000);
        const int firstDelay = client.nextRetryDelayMs();
        QTRY_VERIFY_WITH_TIMEOUT(client.nextRetryDelayMs() > firstDelay, 10000);
        QVERIFY(client.stateDetail().contains(QStringLiteral("retrying")));
        QVERIFY(!client.latestFrame());
    }

    // A frame with a short plane, or stamped years ahead (which once made every later frame look old: stale for good,
    // refused by the recorder): dropped with the reason, and the next one shown.
    void badFrameIsDroppedAndTheNextOneShown_data()
    {
        QTest::addColumn<MisbehavingBackend::Fault>("fault");
        QTest::addColumn<QString>("reason");
        QTest::newRow("short plane") << MisbehavingBackend::Fault::ShortPlane
                                     << QStringLiteral("has 15 values, expected 16");
        QTest::newRow("from the future") << MisbehavingBackend::Fault::FromTheFuture
                                         << QStringLiteral("ahead of this console's clock");
    }
    void badFrameIsDroppedAndTheNextOneShown()
    {
        QFETCH(MisbehavingBackend::Fault, fault);
        QFETCH(QString, reason);
        MisbehavingBackend service(fault);
        int port = 0;
        const auto server = startFake(&service, &port);
        QVERIFY(server && port != 0);
        // Declared after the server so that it runs first: a blocked handler would stall the server's shutdown.
        const auto releaseOnExit = qScopeGuard([&service] { service.release(); });

        TelemetryClient client;
        QSignalSpy errors(&client, &TelemetryClient::errorOccurred);
        QSignalSpy frames(&client, &TelemetryClient::frameReady);
        client.setMetrics({ QStringLiteral("gpu_temp") });
        client.start(QStringLiteral("127.0.0.1:%1").arg(port));
        QVERIFY(frames.wait(10000));
        QCOMPARE(frames.count(), 1);
        QCOMPARE(frames.first().at(0).value<FramePtr>()->sequence, 2U);
        QCOMPARE(client.framesRejected(), 1U);
        QCOMPARE(errors.count(), 1);
        QVERIFY2(errors.first().at(0).toString().contains(reason), qPrintable(errors.first().at(0).toString()));
        client.stop();
    }

    // A stream of 5,000 bad parts, then a good one: each is dropped and counted, but said coalesced (one message at
    // once, the rest with their count a second later), not 5,000 errors posted to the GUI thread.
    void manyBadFramesAreSaidCoalesced()
    {
        MisbehavingBackend service(MisbehavingBackend::Fault::ManyShortPlanes);
        int port = 0;
        const auto server = startFake(&service, &port);
        QVERIFY(server && port != 0);
        const auto releaseOnExit = qScopeGuard([&service] { service.release(); });

        TelemetryClient client;
        QSignalSpy errors(&client, &TelemetryClient::errorOccurred);
        QSignalSpy frames(&client, &TelemetryClient::frameReady);
        client.setMetrics({ QStringLiteral("gpu_temp") });
        client.start(QStringLiteral("127.0.0.1:%1").arg(port));
        QVERIFY(frames.wait(20000));
        QCOMPARE(frames.first().at(0).value<FramePtr>()->sequence, 2U);
        QCOMPARE(client.framesRejected(), quint64 { MisbehavingBackend::manyBadParts });
        // Every rejected part is in the count of what was said, in at most three messages (the burst may cross a
        // second).
        static const QRegularExpression more(QStringLiteral("\\(and (\\d+) more like it in the last 1 s\\)"));
        const auto said = [&errors] {
            quint64 sum = 0;
            for (const auto &arguments : std::as_const(errors)) {
                const auto match = more.match(arguments.at(0).toString());
                sum += 1 + (match.hasMatch() ? match.captured(1).toULongLong() : 0);
            }
            return sum;
        };
        QTRY_COMPARE_WITH_TIMEOUT(said(), quint64 { MisbehavingBackend::manyBadParts }, 5000);
        QVERIFY2(errors.count() <= 3, qPrintable(QString::number(errors.count())));
        QVERIFY2(errors.first().at(0).toString().contains(QStringLiteral("has 15 values, expected 16")),
            qPrintable(errors.first().at(0).toString()));
        client.stop();
    }

    // A topology stream past the parts its header announced is cut at the first part past them, with the reason,
    // instead of being read for the 20 s of its deadline.
    void anEndlessTopologyStreamIsCut()
    {
        EndlessTopologyBackend service;
        int port = 0;
        const auto server = startFake(&service, &port);
        QVERIFY(server && port != 0);
        TelemetryClient client;
        QSignalSpy errors(&client, &TelemetryClient::errorOccurred);
        client.start(QStringLiteral("127.0.0.1:%1").arg(port));
        QTRY_VERIFY_WITH_TIMEOUT(errors.count() >= 1, 10000);
        QVERIFY2(errors.first().at(0).toString().contains(QStringLiteral("goes on past the 1 parts")),
            qPrintable(errors.first().at(0).toString()));
        QTRY_VERIFY_WITH_TIMEOUT(service.cut, 10000);
        QVERIFY(service.written < 100000);
        QVERIFY(client.stateDetail().contains(QStringLiteral("inconsistent topology")));
        client.stop();
    }

    // A message past maxReceiveMessageBytes is refused by the channel: the session ends saying so, no topology taken.
    void aMessagePastTheContractsSizeIsRefused()
    {
        OversizedTopologyBackend service;
        int port = 0;
        const auto server = startFake(&service, &port);
        QVERIFY(server && port != 0);
        TelemetryClient client;
        QSignalSpy topologies(&client, &TelemetryClient::topologyChanged);
        client.start(QStringLiteral("127.0.0.1:%1").arg(port));
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), TelemetryClient::State::Reconnecting, 10000);
        QVERIFY2(client.stateDetail().contains(QStringLiteral("larger than max")), qPrintable(client.stateDetail()));
        QCOMPARE(topologies.count(), 0);
        client.stop();
    }

    // A part that does not parse, on a stream the backend keeps open, once left the session waiting in the stream's
    // finish for good: it must end the session with a reason, and the client reconnect.
    void unparseablePartEndsTheSessionAndTheClientReconnects()
    {
        UnparseableBackend service;
        int port = 0;
        QVERIFY(service.start(&port) && port != 0);

        TelemetryClient client;
        QSignalSpy states(&client, &TelemetryClient::stateChanged);
        client.setMetrics({ QStringLiteral("gpu_temp") });
        client.start(QStringLiteral("127.0.0.1:%1").arg(port));
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), TelemetryClient::State::Reconnecting, 15000);
        QVERIFY2(client.stateDetail().contains(QStringLiteral("could not be read")), qPrintable(client.stateDetail()));
        QVERIFY(!client.latestFrame()); // nothing after the bad bytes was taken from that stream
        QTRY_VERIFY_WITH_TIMEOUT(service.subscribes >= 2, 15000);
        client.stop();
        service.stop();
    }

    // While the GUI thread is busy, frames pile up in the client: it delivers only the newest, once.
    void busyReceiverGetsTheLatestFrameOnly()
    {
        auto server = startBackend(1024, 2, 0, 50ms);
        QVERIFY(server);
        TelemetryClient client;
        QSignalSpy frames(&client, &TelemetryClient::frameReady);
        client.start(addressOf(*server));
        QVERIFY(frames.wait(10000));
        const uint64_t shown = frames.last().at(0).value<FramePtr>()->sequence;
        frames.clear();
        // Keep this thread busy (no event processing) until the worker has decoded five more frames.
        const quint64 before = client.framesReceived();
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (client.framesReceived() < before + 5 && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::yield();
        }
        QVERIFY(client.framesReceived() >= before + 5);
        QCoreApplication::processEvents();
        QCOMPARE(frames.count(), 1);
        const auto delivered = frames.first().at(0).value<FramePtr>();
        QVERIFY(delivered->sequence >= shown + 5);
        QCOMPARE(client.latestFrame(), delivered);
    }

    // Jobs are listed while connected (and decoded on the jobs worker); each running job's GPUs point back to it, and
    // a changed listing is handed over again.
    void jobsAreListedAndRefreshed()
    {
        auto server = startBackend(4096, 9);
        QVERIFY(server);
        TelemetryClient client;
        client.setJobsPollInterval(200);
        QSignalSpy jobsSpy(&client, &TelemetryClient::jobsChanged);
        client.start(addressOf(*server));
        QVERIFY(jobsSpy.wait(10000));
        const auto jobs = jobsSpy.last().at(0).value<JobsPtr>();
        QVERIFY(jobs);
        QCOMPARE(client.jobs(), jobs);
        QCOMPARE(jobs->topologyGeneration, client.topology()->generation);
        int running = 0;
        size_t busy = 0;
        for (const auto &job : jobs->jobs) {
            QVERIFY(!job.name.isEmpty());
            QVERIFY(!job.gpus.empty());
            if (job.isRunning()) {
                ++running;
                busy += job.gpus.size();
                for (uint32_t g : job.gpus) {
                    QCOMPARE(jobs->runningJobOn(g), &job);
                }
            }
        }
        QVERIFY(running > 0);
        QVERIFY(busy > 0 && busy <= 4096);
        // Listed again, and handed over when the listing changed: the simulator's start and checkpoint times are its
        // clock's, converted to wall-clock milliseconds at each listing, so its listings differ by a few ms.
        QVERIFY(jobsSpy.wait(5000));
    }
};

QTEST_GUILESS_MAIN(TestTelemetryClient)
#include "tst_telemetryclient.moc"
