// SPDX-License-Identifier: Apache-2.0
// A hostile client, written from the .proto alone: requests whose every field is at an edge (repeated entries,
// indices past the fleet, times at the ends of int64, strings of a megabyte), against the real backend on loopback.
// Each answer must be the documented status with a message that says what was wrong, or an answer within the
// contract's 4 MiB parts, and the backend must stay responsive and stop promptly afterwards.
#include "service/backendserver.h"
#include "service/telemetryservice.h"
#include "sim/simulatedfleet.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QTest>

#include <chrono>
#include <limits>
#include <string>

using namespace std::chrono_literals;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;

namespace {
constexpr size_t fourMiB = 4U << 20U;

struct Backend
{
    std::unique_ptr<be::BackendServer> server;
    std::unique_ptr<pb::Telemetry::Stub> stub;
};

Backend start(const be::SimulationOptions &options)
{
    Backend b;
    b.server = std::make_unique<be::BackendServer>(be::simulatedSource(options));
    std::string error;
    if (!b.server->start("127.0.0.1:0", &error)) {
        qFatal("backend did not start: %s", error.c_str());
    }
    // Larger than the contract allows, so that an oversized answer arrives and is seen as such.
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    b.stub = pb::Telemetry::NewStub(
        grpc::CreateCustomChannel(b.server->listeningAddress(), grpc::InsecureChannelCredentials(), args));
    return b;
}

be::SimulationOptions fleet(uint32_t gpus, std::chrono::hours history = 0h)
{
    be::SimulationOptions o;
    o.gpuCount = gpus;
    o.seed = 17;
    o.interval = 100ms;
    o.history = history;
    return o;
}

// Stops the backend and says how long that took: every call must have ended by then, so a call still working for a
// client that has gone shows here.
std::chrono::milliseconds timeToStop(Backend &b)
{
    const auto started = std::chrono::steady_clock::now();
    b.server->stop();
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
}

std::vector<pb::QueryRangePart> queryRange(pb::Telemetry::Stub &stub, const pb::QueryRangeRequest &request,
    grpc::Status *status, std::chrono::seconds deadline = 30s)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    auto reader = stub.QueryRange(&context, request);
    std::vector<pb::QueryRangePart> parts;
    pb::QueryRangePart part;
    while (reader->Read(&part)) {
        parts.push_back(part);
    }
    *status = reader->Finish();
    return parts;
}

QByteArray describe(const grpc::Status &status)
{
    return QByteArray::number(int(status.error_code())) + ": " + QByteArray::fromStdString(status.error_message());
}
} // namespace

class TestHostileClient : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // A long answer of one GPU and one metric: every part under 4 MiB with its times, the rows all there.
    void queryRangePartsStayUnder4MiB()
    {
        auto b = start(fleet(64, 1h));
        const int64_t to = b.server->source().latest()->sampleTimeMs;
        const int64_t rows = 1500000;
        pb::QueryRangeRequest q;
        q.add_metric_ids("gpu_temp");
        q.add_gpus(5);
        q.set_from_ms(to - (rows - 1));
        q.set_to_ms(to);
        q.set_step_ms(1);
        grpc::Status status;
        const auto parts = queryRange(*b.stub, q, &status, 60s);
        QVERIFY2(status.ok(), describe(status).constData());
        QVERIFY(parts.size() > 1);
        int64_t expected = q.from_ms();
        for (const auto &part : parts) {
            QVERIFY2(part.ByteSizeLong() < fourMiB, qPrintable(QString::number(part.ByteSizeLong())));
            QCOMPARE(part.values().size(), size_t(part.times_ms_size()) * sizeof(float));
            for (const int64_t t : part.times_ms()) {
                QCOMPARE(t, expected++);
            }
        }
        QCOMPARE(expected, to + 1);
    }

    // A client that asks for a large answer and goes after its first part: the call ends promptly, so that the
    // backend stops at once rather than at its shutdown deadline.
    void queryRangeStopsWhenTheClientGoesAway()
    {
        auto b = start(fleet(64, 6h));
        const int64_t to = b.server->source().latest()->sampleTimeMs;
        pb::QueryRangeRequest q;
        q.add_metric_ids("gpu_temp");
        q.add_gpus(5);
        q.set_from_ms(to - int64_t(be::TelemetryService::maxRangeValues) + 1); // the most one query may ask
        q.set_to_ms(to);
        q.set_step_ms(1);
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 30s);
            auto reader = b.stub->QueryRange(&context, q);
            pb::QueryRangePart part;
            QVERIFY(reader->Read(&part));
            QVERIFY(part.times_ms_size() > 0);
            context.TryCancel();
            QCOMPARE(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
        }
        const auto stopping = timeToStop(b);
        QVERIFY2(stopping < 900ms, qPrintable(QString::number(stopping.count())));
    }
};

QTEST_GUILESS_MAIN(TestHostileClient)
#include "tst_hostileclient.moc"
