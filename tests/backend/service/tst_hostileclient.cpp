// SPDX-License-Identifier: Apache-2.0
// A hostile client, written from the .proto alone: requests whose every field is at an edge (repeated entries,
// indices past the fleet, times at the ends of int64, strings of a megabyte), against the real backend on loopback.
// Each answer must be the documented status with a message that says what was wrong, or an answer within the
// contract's 4 MiB parts, and the backend must stay responsive and stop promptly afterwards.
#include "servedbackend.h"
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
constexpr int64_t int64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t int64Max = std::numeric_limits<int64_t>::max();

int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

using Backend = fleetscope::testing::ServedBackend;

// Larger than the contract allows, so that an oversized answer arrives and is seen as such.
Backend start(const be::SimulationOptions &options)
{
    return fleetscope::testing::serveSimulation(options, 64 << 20);
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

// The first frame of a subscription (all its parts) and the call's status once cancelled, or the error it ended
// with.
std::vector<pb::FramePart> firstFrame(
    pb::Telemetry::Stub &stub, const pb::SubscribeRequest &request, grpc::Status *status)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 30s);
    auto reader = stub.Subscribe(&context, request);
    std::vector<pb::FramePart> parts;
    pb::FramePart part;
    while (reader->Read(&part)) {
        parts.push_back(part);
        if (part.part_index() + 1 == part.part_count()) {
            context.TryCancel();
            break;
        }
    }
    *status = reader->Finish();
    if (!parts.empty() && status->error_code() == grpc::StatusCode::CANCELLED) {
        *status = grpc::Status::OK;
    }
    return parts;
}

grpc::Status summary(pb::Telemetry::Stub &stub, int64_t from, int64_t to, pb::Summary *out)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 20s);
    pb::GetSummaryRequest request;
    request.set_from_ms(from);
    request.set_to_ms(to);
    return stub.GetSummary(&context, request, out);
}

bool mentions(const grpc::Status &status, const std::string &text)
{
    return status.error_message().find(text) != std::string::npos;
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
    // One metric id 400,000 times is one metric: one plane per part, not 400,000.
    void subscribeCollapsesRepeatedMetricIds()
    {
        auto b = start(fleet(64));
        pb::SubscribeRequest request;
        for (int i = 0; i < 400000; ++i) {
            request.add_metric_ids("gpu_temp");
        }
        request.add_metric_ids("power");
        request.add_metric_ids("gpu_temp");
        grpc::Status status;
        const auto parts = firstFrame(*b.stub, request, &status);
        QVERIFY2(status.ok(), describe(status).constData());
        QCOMPARE(parts.size(), size_t(1));
        QCOMPARE(parts[0].planes_size(), 2); // in the order first asked for
        QCOMPARE(parts[0].planes(0).metric_id(), std::string("gpu_temp"));
        QCOMPARE(parts[0].planes(1).metric_id(), std::string("power"));
        QVERIFY(parts[0].ByteSizeLong() < 4096);
    }

    // Repeated metrics and GPUs of a QueryRange are asked for once: one part per distinct metric, each GPU one
    // column, in the order first named.
    void queryRangeCollapsesRepeatedMetricsAndGpus()
    {
        auto b = start(fleet(64));
        QTRY_VERIFY_WITH_TIMEOUT(b.server->source().latest()->sequence >= 2, 10000);
        pb::QueryRangeRequest q;
        for (int i = 0; i < 100000; ++i) {
            q.add_metric_ids("power");
            q.add_gpus(7);
        }
        q.add_metric_ids("gpu_temp");
        for (const uint32_t g : { 3U, 7U, 3U, 63U }) {
            q.add_gpus(g);
        }
        q.set_to_ms(b.server->source().latest()->sampleTimeMs);
        q.set_from_ms(q.to_ms() - 100);
        q.set_step_ms(100);
        grpc::Status status;
        const auto parts = queryRange(*b.stub, q, &status);
        QVERIFY2(status.ok(), describe(status).constData());
        QCOMPARE(parts.size(), size_t(2));
        QCOMPARE(parts[0].metric_id(), std::string("power"));
        QCOMPARE(parts[1].metric_id(), std::string("gpu_temp"));
        for (const auto &part : parts) {
            QCOMPARE(
                std::vector<uint32_t>(part.gpus().begin(), part.gpus().end()), std::vector<uint32_t>({ 7, 3, 63 }));
            QCOMPARE(part.values().size(), size_t(part.times_ms_size()) * 3 * sizeof(float));
            QVERIFY(part.times_ms_size() >= 1);
        }
    }

    // GPU indices past the fleet, as a list or as a range: INVALID_ARGUMENT naming the field and the limit.
    void queryRangeGpusOutsideTheFleet_data()
    {
        QTest::addColumn<std::vector<uint32_t>>("gpus");
        QTest::addColumn<uint32_t>("first");
        QTest::addColumn<uint32_t>("count");
        QTest::addColumn<QString>("field");
        QTest::newRow("one past") << std::vector<uint32_t> { 0, 64 } << 0U << 0U << QStringLiteral("gpus[1]");
        QTest::newRow("largest") << std::vector<uint32_t> { 0xFFFFFFFFU } << 0U << 0U << QStringLiteral("gpus[0]");
        QTest::newRow("range past the end") << std::vector<uint32_t> {} << 60U << 5U << QStringLiteral("first_gpu");
        QTest::newRow("range wraps uint32")
            << std::vector<uint32_t> {} << 0xFFFFFFFFU << 2U << QStringLiteral("first_gpu");
        QTest::newRow("first past the end") << std::vector<uint32_t> {} << 64U << 0U << QStringLiteral("first_gpu");
    }
    void queryRangeGpusOutsideTheFleet()
    {
        QFETCH(std::vector<uint32_t>, gpus);
        QFETCH(uint32_t, first);
        QFETCH(uint32_t, count);
        QFETCH(QString, field);
        auto b = start(fleet(64));
        pb::QueryRangeRequest q;
        *q.mutable_gpus() = { gpus.begin(), gpus.end() };
        q.set_first_gpu(first);
        q.set_gpu_count(count);
        q.set_to_ms(nowMs());
        q.set_from_ms(q.to_ms() - 1000);
        q.set_step_ms(100);
        grpc::Status status;
        queryRange(*b.stub, q, &status);
        QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        QVERIFY2(mentions(status, field.toStdString()) && mentions(status, "64 GPUs"), describe(status).constData());
    }

    // More distinct GPUs than one row of one metric can carry in a 4 MiB part: refused with the limit.
    void queryRangeOfMoreGpusThanAPartHoldsIsRefused()
    {
        auto options = fleet(be::TelemetryService::maxRangeGpus + 4096);
        options.interval = 1000ms;
        options.frameMemoryBudget = 1;
        options.coarseMemoryBudget = 1;
        auto b = start(options);
        pb::QueryRangeRequest q;
        q.add_metric_ids("gpu_temp");
        q.set_to_ms(b.server->source().latest()->sampleTimeMs);
        q.set_from_ms(q.to_ms());
        q.set_step_ms(1000);
        grpc::Status status;
        queryRange(*b.stub, q, &status);
        QCOMPARE(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        QVERIFY2(mentions(status, std::to_string(be::TelemetryService::maxRangeGpus)), describe(status).constData());

        q.set_gpu_count(be::TelemetryService::maxRangeGpus); // the most allowed: one part under 4 MiB
        const auto parts = queryRange(*b.stub, q, &status);
        QVERIFY2(status.ok(), describe(status).constData());
        QCOMPARE(parts.size(), size_t(1));
        QCOMPARE(parts[0].gpus_size(), int(be::TelemetryService::maxRangeGpus));
        QVERIFY(parts[0].ByteSizeLong() < fourMiB);
    }

    // Times at the ends of int64, before the epoch or far in the future: refused at once, without arithmetic that
    // overflows (the whole int64 range once kept a core busy for good, and the backend then could not stop); a
    // range reaching into the future ends at the latest time there can be data for.
    void queryRangeTimesAtTheEdges_data()
    {
        QTest::addColumn<int64_t>("from");
        QTest::addColumn<int64_t>("to");
        QTest::addColumn<int64_t>("step");
        QTest::addColumn<int>("code");
        QTest::addColumn<QByteArray>("says");
        const int64_t now = nowMs();
        const int invalid = int(grpc::StatusCode::INVALID_ARGUMENT);
        const int exhausted = int(grpc::StatusCode::RESOURCE_EXHAUSTED);
        QTest::newRow("whole int64, step 1") << int64Min << int64Max << int64_t(1) << invalid << QByteArray("from_ms");
        QTest::newRow("whole int64, step 2") << int64Min << int64Max << int64_t(2) << invalid << QByteArray("from_ms");
        QTest::newRow("whole int64, largest step")
            << int64Min << int64Max << int64Max << invalid << QByteArray("from_ms");
        const int ok = int(grpc::StatusCode::OK);
        QTest::newRow("epoch to int64 max") << int64_t(0) << int64Max << (int64_t(1) << 40) << ok << QByteArray();
        QTest::newRow("until a day ahead") << now - 60000 << now + 86400000 << int64_t(1000) << ok << QByteArray();
        QTest::newRow("from a day ahead")
            << now + 86400000 << now + 86400000 << int64_t(1000) << invalid << QByteArray("from_ms");
        QTest::newRow("before the epoch")
            << int64_t(-1000) << now << int64_t(3600000) << invalid << QByteArray("from_ms");
        QTest::newRow("negative step") << now - 1000 << now << int64_t(-1) << invalid << QByteArray("step_ms");
        QTest::newRow("smallest step") << now - 1000 << now << int64Min << invalid << QByteArray("step_ms");
        QTest::newRow("reversed") << now << now - 1 << int64_t(1) << invalid << QByteArray("to_ms");
        QTest::newRow("epoch to now, 1 ms")
            << int64_t(0) << now << int64_t(1) << exhausted << QByteArray("limit of 20000000");
    }
    void queryRangeTimesAtTheEdges()
    {
        QFETCH(int64_t, from);
        QFETCH(int64_t, to);
        QFETCH(int64_t, step);
        QFETCH(int, code);
        QFETCH(QByteArray, says);
        auto b = start(fleet(64));
        pb::QueryRangeRequest q;
        q.add_gpus(0);
        q.set_from_ms(from);
        q.set_to_ms(to);
        q.set_step_ms(step);
        grpc::Status status;
        const auto parts = queryRange(*b.stub, q, &status, 5s);
        QVERIFY2(
            int(status.error_code()) == code && mentions(status, says.toStdString()), describe(status).constData());
        // Rows only up to the latest time there can be data for.
        const int64_t latest = nowMs() + be::TelemetryService::clockAllowanceMs;
        for (const auto &part : parts) {
            for (const int64_t t : part.times_ms()) {
                QVERIFY(t <= latest);
            }
        }
        QVERIFY(timeToStop(b) < 900ms);
    }

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

    // A summary of a range the source holds no frame of (the future) is FAILED_PRECONDITION, never an answer whose
    // from_ms is after its to_ms; times before the epoch and reversed ranges are INVALID_ARGUMENT.
    void summaryTimes()
    {
        auto b = start(fleet(64, 1h));
        const int64_t latest = b.server->source().latest()->sampleTimeMs;
        const int64_t now = nowMs();
        pb::Summary s;
        grpc::Status status = summary(*b.stub, now + 3600000, now + 7200000, &s);
        QVERIFY2(status.error_code() == grpc::StatusCode::FAILED_PRECONDITION, describe(status).constData());
        status = summary(*b.stub, now + 3600000, int64Max, &s);
        QVERIFY2(status.error_code() == grpc::StatusCode::FAILED_PRECONDITION, describe(status).constData());
        status = summary(*b.stub, now + 3600000, 0, &s); // to_ms 0 is now: reversed
        QVERIFY2(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT && mentions(status, "to_ms"),
            describe(status).constData());
        status = summary(*b.stub, int64Min, int64Max, &s);
        QVERIFY2(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT && mentions(status, "from_ms"),
            describe(status).constData());
        status = summary(*b.stub, now, now - 1, &s);
        QVERIFY2(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT, describe(status).constData());

        // Ranges that hold frames: what they cover is never reversed.
        for (const auto &[from, to] : std::vector<std::pair<int64_t, int64_t>> {
                 { now - 1800000, 0 }, { 0, 0 }, { now - 60000, int64Max }, { latest, latest }, { 1, 2 } }) {
            status = summary(*b.stub, from, to, &s);
            if (from == 1) {
                QVERIFY2(status.error_code() == grpc::StatusCode::FAILED_PRECONDITION, describe(status).constData());
                continue;
            }
            QVERIFY2(status.ok(), describe(status).constData());
            QVERIFY(s.frames() >= 1);
            QVERIFY2(s.from_ms() <= s.to_ms(), qPrintable(QStringLiteral("%1 > %2").arg(s.from_ms()).arg(s.to_ms())));
        }
    }

    void streamEventsTimes()
    {
        auto b = start(fleet(64));
        for (const int64_t since : { int64_t(-1), int64Min, nowMs() + 3600000, int64Max }) {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 5s);
            pb::StreamEventsRequest request;
            request.set_since_ms(since);
            auto reader = b.stub->StreamEvents(&context, request);
            pb::Event e;
            QVERIFY(!reader->Read(&e));
            const auto status = reader->Finish();
            QVERIFY2(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT && mentions(status, "since_ms"),
                describe(status).constData());
        }
    }

    // A megabyte of metric id is refused, and the message echoes only its start: a status message travels in a
    // header, which a client limits to a few kilobytes.
    void longStringsAreNotEchoedWhole()
    {
        auto b = start(fleet(64));
        const std::string id = "gpu_temp" + std::string(1 << 20, 'x');
        {
            pb::SubscribeRequest request;
            request.add_metric_ids("power");
            request.add_metric_ids(id);
            grpc::Status status;
            firstFrame(*b.stub, request, &status);
            QVERIFY2(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT, describe(status).left(200).constData());
            QVERIFY2(mentions(status, "metric_ids[1]") && mentions(status, "gpu_tempxxx"),
                describe(status).left(200).constData());
            QVERIFY(status.error_message().size() < 1024);
        }
        {
            pb::QueryRangeRequest q;
            q.add_metric_ids(id);
            q.add_gpus(0);
            q.set_to_ms(nowMs());
            q.set_from_ms(q.to_ms() - 1000);
            q.set_step_ms(100);
            grpc::Status status;
            queryRange(*b.stub, q, &status);
            QVERIFY2(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT, describe(status).left(200).constData());
            QVERIFY(status.error_message().size() < 1024);
        }
    }
};

QTEST_GUILESS_MAIN(TestHostileClient)
#include "tst_hostileclient.moc"
