// SPDX-License-Identifier: Apache-2.0
// How the Prometheus source polls a fake Prometheus HTTP API: at the pace of the fleet's scrapes; every kind of bad
// answer, slow or unreachable server keeps the last good frame and is said once; through FrameSource and the gRPC
// service, where subscribers share one poll and a failing upstream ends their streams with its reason.
#include "analytics/fleetanalytics.h"
#include "core/framesource.h"
#include "service/backendserver.h"
#include "tests/backend/prometheus/prometheussourcetesting.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QElapsedTimer>
#include <QTcpServer>
#include <QTest>

#include <cstring>

using namespace fleetscope::backend;
using namespace fleetscope::backend::testing;
namespace pb = fleetscope::telemetry::v1;
using namespace std::chrono_literals;

class TestPrometheusPolling : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The poll follows the scrape interval one host's samples show: once known, the next poll waits for that host's
    // next scrape instead of asking every (configured) interval for data that has not changed.
    void pollsFollowTheScrapeInterval()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        std::vector<std::string> log;
        auto source = startSource(fake, &log);
        QVERIFY(source);
        const std::string refQuery = PrometheusSource::sampleTimeQuery(hostnameProfile, source->hostSelector({ 0 }));
        QVERIFY(contains(refQuery, "node-1")); // the layout's first host
        const auto now = std::chrono::steady_clock::now();
        QCOMPARE(source->nextPollAt(now), now); // nothing known yet: as scheduled
        const int64_t nowMs
            = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
        // Scrapes 15 s apart, the last one just now.
        for (int k = 3; k >= 0; --k) {
            const double t = static_cast<double>(nowMs - k * 15000) / 1000.0;
            fake.set(
                refQuery, { 200, vectorAnswer({ { {}, {}, QByteArray::number(t, 'f', 3).toStdString(), {} } }), 0 });
            answerTimestamp(fake, t);
            source->poll();
        }
        QCOMPARE(source->scrapeIntervalMs(), int64_t { 15000 });
        bool said = false;
        for (const auto &line : log) {
            said |= contains(line, "the fleet is scraped every 15000 ms (host node-1)");
        }
        QVERIFY(said);
        const auto scheduled = std::chrono::steady_clock::now() + 1000ms;
        const auto next = source->nextPollAt(scheduled);
        // The next scrape lands about 15 s after the last one (plus up to a second for the server): not at 1 s.
        QVERIFY(next - scheduled > 10s);
        QVERIFY(next - std::chrono::steady_clock::now() <= 15s);
    }

    void badAnswersKeepTheLastGoodFrame_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("delayMs");
        QTest::addColumn<QString>("expected");
        const QByteArray good = vectorAnswer(metricSeries(MetricId::GpuTemp));
        QTest::newRow("truncated JSON") << 200 << good.left(good.size() * 2 / 3) << 0 << QStringLiteral("truncated");
        QTest::newRow("HTTP 500 text") << 500 << QByteArray("internal server error") << 0
                                       << QStringLiteral("HTTP 500: internal server error");
        QTest::newRow("HTTP 422 Prometheus error")
            << 422
            << QByteArray(
                   R"({"status":"error","errorType":"execution","error":"query timed out in expression evaluation"})")
            << 0 << QStringLiteral("HTTP 422: upstream error execution: query timed out");
        QTest::newRow("status error") << 200
                                      << QByteArray(R"({"status":"error","errorType":"internal","error":"boom"})") << 0
                                      << QStringLiteral("upstream error internal: boom");
        QTest::newRow("matrix") << 200
                                << QByteArray(R"({"status":"success","data":{"resultType":"matrix","result":[]}})") << 0
                                << QStringLiteral("expected an instant vector");
        QTest::newRow("not JSON") << 200 << QByteArray("<html>proxy error</html>") << 0 << QStringLiteral("malformed");
        // Found by fuzz_promjson (fuzz/regressions/promjson): a "data" that is not an object was iterated as an
        // empty simdjson object, which simdjson does not allow (an assertion, undefined behaviour without one).
        QTest::newRow("data null")
            << 200 << QByteArray(R"({"status":"success","data":null})") << 0
            << QStringLiteral("malformed or truncated JSON (The JSON element does not have the requested type");
        QTest::newRow("slow answer") << 200 << good << 3000
                                     << QStringLiteral(
                                            "timed out waiting for the answer (a poll's queries have 500 ms together)");
        std::vector<Series> many;
        for (int i = 0; i < 10; ++i) {
            for (const auto &s : metricSeries(MetricId::GpuTemp)) {
                many.push_back({ s.host + "-" + std::to_string(i), s.gpu, s.value, {} });
            }
        }
        QTest::newRow("10x series") << 200 << vectorAnswer(many) << 0
                                    << QStringLiteral("more than 128 series for a topology of 32 GPUs");
    }

    void badAnswersKeepTheLastGoodFrame()
    {
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        QFETCH(int, delayMs);
        QFETCH(QString, expected);
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        std::vector<std::string> log;
        auto source = startSource(fake, &log, 500ms);
        QVERIFY(source);
        QVERIFY(source->poll());

        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp), { status, body, delayMs });
        answerTimestamp(fake, 1700000001.5);
        QElapsedTimer timer;
        timer.start();
        QVERIFY(!source->poll());
        QVERIFY2(timer.elapsed() < 2500, "the time-out did not cut the slow answer short");
        const std::string error = source->upstreamError();
        QVERIFY2(contains(error, expected.toStdString().c_str()), error.c_str());
        QVERIFY2(contains(error, "DCGM_FI_DEV_GPU_TEMP"), error.c_str()); // which query failed
        if (delayMs > 0) {
            // Out of time: how far it got, how long the set would need, and what to set.
            QVERIFY2(contains(error, "the poll had done 1 of its ") && contains(error, "so it needs about")
                    && contains(error, "set --prometheus-timeout-ms"),
                error.c_str());
        }
        QCOMPARE(log.back(), "prometheus: " + error + "; keeping the last good frame");
        // Logged once while it persists, not once a poll.
        const size_t lines = log.size();
        QVERIFY(!source->poll());
        QCOMPARE(log.size(), lines);

        // Healthy again: frames resume.
        answerFleet(fake, 1700000002.5);
        auto frame = source->poll();
        QVERIFY(frame);
        QCOMPARE(frame->sampleTimeMs, int64_t { 1700000002500 });
        QVERIFY(source->upstreamError().empty());
        QCOMPARE(log.back(), std::string("prometheus: answering again"));
    }

    void unreachableServer()
    {
        FakePrometheus fake;
        answerFleet(fake);
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        QTcpServer closed; // a port nobody listens on any more
        QVERIFY(closed.listen(QHostAddress::LocalHost));
        const auto port = closed.serverPort();
        closed.close();
        PrometheusSource other;
        std::string error;
        PrometheusSource::Options options;
        options.url = "http://127.0.0.1:" + std::to_string(port);
        options.timeout = 500ms;
        QVERIFY(!other.start(options, &error));
        QVERIFY2(contains(error, "cannot connect"), error.c_str());
        options.url = "ftp://example.invalid";
        QVERIFY(!other.start(options, &error));
        QVERIFY2(contains(error, "ftp://example.invalid"), error.c_str());
    }

    // Through FrameSource: the ticker polls, a failing upstream keeps the last good frame and is reported.
    void frameSourceKeepsServing()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        auto poller = startSource(fake, nullptr, 500ms);
        QVERIFY(poller);
        FrameSource::Options options;
        options.interval = 50ms;
        FrameSource source(std::move(poller), options);
        QCOMPARE(source.latest()->health[0], fleetscope::health::NoData); // before the first poll
        QTRY_COMPARE(source.latest()->sequence, uint64_t { 1 });
        QCOMPARE(source.latest()->sampleTimeMs, int64_t { 1700000000500 });

        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp), { 500, "down", 0 });
        answerTimestamp(fake, 1700000001.5);
        QTRY_VERIFY(contains(source.upstreamError(), "HTTP 500"));
        QCOMPARE(source.latest()->sequence, uint64_t { 1 });
        QCOMPARE(source.latest()->plane(MetricId::GpuTemp)[3], expectedValue(MetricId::GpuTemp, 3));

        answerFleet(fake, 1700000002.5);
        QTRY_COMPARE(source.latest()->sampleTimeMs, int64_t { 1700000002500 });
        // New frames again (one more may come from a poll that saw the fake's answers half replaced).
        QVERIFY(source.latest()->sequence >= 2);
        QVERIFY(source.upstreamError().empty());
    }

    // The whole backend: two consoles subscribe over gRPC and share one upstream poll per interval; a failing
    // upstream ends their streams with UNAVAILABLE and its reason.
    void grpcSubscribersShareOnePoll()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        auto poller = startSource(fake, nullptr, 500ms);
        QVERIFY(poller);
        FrameSource::Options options;
        options.interval = 100ms;
        BackendServer server(judgedSource(std::move(poller), options));
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        QTRY_COMPARE(server.source().latest()->sequence, uint64_t { 1 });

        auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(server.listeningAddress(), grpc::InsecureChannelCredentials()));
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 5s);
            auto reader = stub->GetTopology(&context, pb::GetTopologyRequest());
            pb::TopologyPart part;
            QVERIFY(reader->Read(&part));
            QCOMPARE(part.gpu_count(), fleetGpus);
            QCOMPARE(part.nodes(3).hostname(), std::string("node-10"));
            QCOMPARE(part.nodes(0).gpu_uuids(2), uuidOf(2));
            QCOMPARE(part.rows(0).site(), std::string("fleet"));
            while (reader->Read(&part)) { }
            QVERIFY(reader->Finish().ok());
        }
        const int pollsBefore = fake.requests(PrometheusSource::sampleTimeQuery(hostnameProfile));
        const int tempBefore = fake.requests(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp));
        std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
        std::vector<std::unique_ptr<grpc::ClientReader<pb::FramePart>>> readers;
        pb::SubscribeRequest request;
        request.add_metric_ids("gpu_temp");
        for (int i = 0; i < 2; ++i) {
            contexts.push_back(std::make_unique<grpc::ClientContext>());
            contexts.back()->set_deadline(std::chrono::system_clock::now() + 20s);
            readers.push_back(stub->Subscribe(contexts.back().get(), request));
        }
        // Both get frame 1, then frames 2 and 3 as the upstream gets new samples.
        for (int step = 1; step <= 3; ++step) {
            if (step > 1) {
                answerTimestamp(fake, 1700000000.5 + step - 1);
            }
            for (auto &reader : readers) {
                pb::FramePart part;
                QVERIFY(reader->Read(&part));
                QCOMPARE(part.sequence(), uint64_t(step));
                QCOMPARE(part.sample_time_ms(), int64_t { 1700000000500 } + (step - 1) * 1000);
                float v = 0;
                std::memcpy(&v, part.planes(0).values().data() + 5 * sizeof(float), sizeof(float));
                QCOMPARE(v, expectedValue(MetricId::GpuTemp, 5));
            }
        }
        // Value queries ran once per new sample (2), whatever the number of subscribers.
        QCOMPARE(fake.requests(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp)) - tempBefore, 2);
        QVERIFY(fake.requests(PrometheusSource::sampleTimeQuery(hostnameProfile)) > pollsBefore);

        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp), { 500, "down", 0 });
        answerTimestamp(fake, 1700000010.5);
        for (auto &reader : readers) {
            pb::FramePart part;
            while (reader->Read(&part)) { }
            const auto status = reader->Finish();
            QCOMPARE(status.error_code(), grpc::StatusCode::UNAVAILABLE);
            QVERIFY2(contains(status.error_message(), "HTTP 500"), status.error_message().c_str());
            QVERIFY2(contains(status.error_message(), "newest frame held is 3"), status.error_message().c_str());
        }
        server.stop();
    }
};

QTEST_GUILESS_MAIN(TestPrometheusPolling)
#include "tst_prometheus_polling.moc"
