// SPDX-License-Identifier: Apache-2.0
// A client that subscribes and never reads is cut with RESOURCE_EXHAUSTED and a reason, once its stream has taken
// nothing for the stall limit; a client beside it that reads every frame is not. The service over a simulated fleet,
// with a short limit, on loopback; each client on a connection of its own, as separate consoles are.
#include "service/telemetryservice.h"
#include "sim/simulatedfleet.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QElapsedTimer>
#include <QScopeGuard>
#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>

using namespace std::chrono_literals;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;

namespace {
constexpr auto stallLimit = 1s;

// A channel of its own: gRPC shares one connection between channels with the same arguments, and a connection's
// window is shared by its streams.
std::unique_ptr<pb::Telemetry::Stub> stubOnItsOwnConnection(int port, const char *name)
{
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(16 << 20);
    args.SetString("fleetscope.test.connection", name);
    return pb::Telemetry::NewStub(
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args));
}
} // namespace

class TestStallWatch : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aClientThatStopsReadingIsCutWithAReason()
    {
        be::SimulationOptions fleet;
        fleet.gpuCount = 10240;
        fleet.interval = 100ms;
        auto source = be::simulatedSource(fleet);
        be::TelemetryService service(*source, nullptr, stallLimit);
        grpc::ServerBuilder builder;
        int port = 0;
        builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
        builder.RegisterService(&service);
        auto server = builder.BuildAndStart();
        QVERIFY(server && port != 0);

        // The reader takes every part as it comes, on a thread of its own, until the test cancels it.
        auto readerStub = stubOnItsOwnConnection(port, "reader");
        grpc::ClientContext readerContext;
        std::atomic<uint64_t> framesRead { 0 };
        grpc::Status readerStatus;
        std::thread reader([&] {
            auto stream = readerStub->Subscribe(&readerContext, pb::SubscribeRequest());
            pb::FramePart part;
            while (stream->Read(&part)) {
                framesRead += part.part_index() + 1 == part.part_count() ? 1 : 0;
            }
            readerStatus = stream->Finish();
        });
        const auto stopReader = qScopeGuard([&] {
            if (reader.joinable()) {
                readerContext.TryCancel();
                reader.join();
            }
        });

        // The stalled client's call is started (the request sent) and nothing read: flow control soon holds the
        // server's writes back.
        auto stalledStub = stubOnItsOwnConnection(port, "stalled");
        grpc::ClientContext stalledContext;
        stalledContext.set_deadline(std::chrono::system_clock::now() + 60s);
        QElapsedTimer clock;
        clock.start();
        auto stalled = stalledStub->Subscribe(&stalledContext, pb::SubscribeRequest());
        QTRY_COMPARE_WITH_TIMEOUT(service.stalledStreamsCut(), uint64_t(1), 30000);
        QVERIFY(clock.elapsed() >= stallLimit / 1ms);

        // When it reads at last, it gets what it had been sent, then the reason: the stream ended there.
        pb::FramePart part;
        int parts = 0;
        while (parts < 1000 && stalled->Read(&part)) {
            ++parts;
        }
        QVERIFY2(parts < 1000, "the stalled stream goes on");
        const auto status = stalled->Finish();
        QCOMPARE(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        QVERIFY2(QByteArray::fromStdString(status.error_message()).contains("took nothing for 1 s"),
            status.error_message().c_str());

        // The reader went on meanwhile and goes on after, never cut.
        const uint64_t readAtCut = framesRead;
        QVERIFY(readAtCut > 0);
        QTRY_VERIFY_WITH_TIMEOUT(framesRead >= readAtCut + 5, 10000);
        QCOMPARE(service.stalledStreamsCut(), uint64_t(1));
        readerContext.TryCancel();
        reader.join();
        QCOMPARE(readerStatus.error_code(), grpc::StatusCode::CANCELLED);

        server->Shutdown(std::chrono::system_clock::now() + 1s);
        server->Wait();
        source->stop();
    }
};

QTEST_GUILESS_MAIN(TestStallWatch)
#include "tst_stallwatch.moc"
