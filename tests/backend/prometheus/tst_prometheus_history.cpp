// SPDX-License-Identifier: Apache-2.0
// History from a Prometheus-compatible server: QueryRange asks the fake's range API for the hosts of the GPUs asked
// for and maps the series to GPUs as the live path does; selectors escaped; bad range answers refused with their
// reason; a step too fine for the server coarsened; times at the ends of int64.
#include "analytics/fleetanalytics.h"
#include "core/framesource.h"
#include "service/backendserver.h"
#include "tests/backend/prometheus/prometheussourcetesting.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

using namespace fleetscope::backend;
using namespace fleetscope::backend::testing;
namespace pb = fleetscope::telemetry::v1;
using namespace std::chrono_literals;

namespace {

float floatAt(const std::string &values, size_t index)
{
    float v = 0;
    std::memcpy(&v, values.data() + index * sizeof(float), sizeof(float));
    return v;
}

// QueryRange over gRPC: the parts of each metric concatenated, and the call's status.
struct RangeResult
{
    grpc::Status status;
    std::map<std::string, std::vector<int64_t>> times;
    std::map<std::string, std::vector<int64_t>> sampleTimes;
    std::map<std::string, std::string> values;
    std::vector<uint32_t> gpus;
};

RangeResult queryRange(BackendServer &server, const pb::QueryRangeRequest &request)
{
    auto stub
        = pb::Telemetry::NewStub(grpc::CreateChannel(server.listeningAddress(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 20s);
    auto reader = stub->QueryRange(&context, request);
    RangeResult out;
    pb::QueryRangePart part;
    while (reader->Read(&part)) {
        out.times[part.metric_id()].insert(
            out.times[part.metric_id()].end(), part.times_ms().begin(), part.times_ms().end());
        out.sampleTimes[part.metric_id()].insert(
            out.sampleTimes[part.metric_id()].end(), part.sample_times_ms().begin(), part.sample_times_ms().end());
        out.values[part.metric_id()] += part.values();
        out.gpus.assign(part.gpus().begin(), part.gpus().end());
    }
    out.status = reader->Finish();
    return out;
}

} // namespace

class TestPrometheusHistory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // History of the fabric and the facility: their series name no GPU and carry no node label, so the whole fleet's
    // are asked for; a NIC's points go to its GPU's column (its node from the scrape target), a rack's to the
    // column of every asked-for GPU of the rack; port states read 1 (ACTIVE) or 0.
    void fabricAndFacilityHistory()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        auto poller = startSource(fake, nullptr);
        QVERIFY(poller);
        const std::vector<uint32_t> gpus
            = { static_cast<uint32_t>(denseIndex("node-10", 7)), static_cast<uint32_t>(denseIndex("node-2", 1)) };
        const std::string selector = R"({Hostname=~"node-2|node-10"})";
        const int64_t t0 = 1700000000000;
        auto t = [&](int k) { return t0 + 1000 * k; };
        fake.setRange(PrometheusSource::sampleTimeQuery(hostnameProfile, selector),
            { 200, matrixAnswer({ { {}, {}, { { t(0), "1699999999.750" }, { t(1), "1700000000.750" } }, {} } }), 0 });
        fake.setRange(*PrometheusSource::queryFor(hostnameProfile, MetricId::RailLinkState),
            { 200,
                matrixAnswer({
                    { {}, {}, { { t(0), "4" }, { t(1), "1" } },
                        R"(,"instance":"node-10:9100","device":"mlx5_7","port":"1")" },
                    { {}, {}, { { t(0), "4" }, { t(1), "4" } },
                        R"(,"instance":"node-2:9100","device":"mlx5_1","port":"1")" },
                    { {}, {}, { { t(0), "1" } }, R"(,"instance":"node-2:9100","device":"mlx5_2","port":"1")" },
                    { {}, {}, { { t(0), "1" } }, R"(,"instance":"node-2:9100","device":"mlx5_9","port":"1")" },
                }),
                0 });
        fake.setRange(*PrometheusSource::queryFor(hostnameProfile, MetricId::CoolantFlow),
            { 200,
                matrixAnswer({ { {}, {}, { { t(0), "90" }, { t(1), "42.5" } }, R"(,"rack":"auto-r01-k01")" },
                    { {}, {}, { { t(0), "1" } }, R"(,"rack":"elsewhere")" } }),
                0 });
        FrameSource::Options options;
        options.interval = 100ms;
        BackendServer server(judgedSource(std::move(poller), options));
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        pb::QueryRangeRequest request;
        request.add_metric_ids("rail_link_state");
        request.add_metric_ids("coolant_flow");
        for (const uint32_t g : gpus) {
            request.add_gpus(g);
        }
        request.set_from_ms(t(0));
        request.set_to_ms(t(1) + 500);
        request.set_step_ms(1000);
        const auto result = queryRange(server, request);
        QVERIFY2(result.status.ok(), result.status.error_message().c_str());
        // Rows x columns: node-10/7, then node-2/1.
        const auto &links = result.values.at("rail_link_state");
        QCOMPARE(links.size(), size_t { 2 * 2 * sizeof(float) });
        QCOMPARE(floatAt(links, 0), 1.0F);
        QCOMPARE(floatAt(links, 1), 1.0F);
        QCOMPARE(floatAt(links, 2), 0.0F);
        QCOMPARE(floatAt(links, 3), 1.0F);
        const auto &flow = result.values.at("coolant_flow");
        QCOMPARE(floatAt(flow, 0), 90.0F);
        QCOMPARE(floatAt(flow, 1), 90.0F);
        QCOMPARE(floatAt(flow, 2), 42.5F);
        QCOMPARE(floatAt(flow, 3), 42.5F);
    }

    // QueryRange in Prometheus mode asks the server's range API, one query per metric plus one for the sample times,
    // only for the hosts of the GPUs asked for, and maps its series to GPUs as the live path does.
    void queryRangeFromTheUpstream()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        auto poller = startSource(fake, nullptr);
        QVERIFY(poller);
        const std::vector<uint32_t> gpus
            = { static_cast<uint32_t>(denseIndex("node-10", 7)), static_cast<uint32_t>(denseIndex("node-2", 1)) };
        const std::string selector = R"({Hostname=~"node-2|node-10"})";
        QCOMPARE(poller->hostSelector(gpus), selector);
        const int64_t t0 = 1700000000000;
        auto t = [&](int k) { return t0 + 1000 * k; };
        // No sample at all at t(2): that row is left out.
        fake.setRange(PrometheusSource::sampleTimeQuery(hostnameProfile, selector),
            { 200,
                matrixAnswer({ { {}, {},
                    { { t(0), "1699999999.750" }, { t(1), "1700000000.750" }, { t(3), "1700000002.750" },
                        { t(4), "1700000003.750" } },
                    {} } }),
                0 });
        fake.setRange(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp, selector),
            { 200,
                matrixAnswer({
                    { "node-2", "1",
                        { { t(0), "50" }, { t(1), "9223372036854775794" }, { t(3), "52" }, { t(4), "53" } }, {} },
                    { "node-2", "0", { { t(0), "40" }, { t(1), "41" } }, {} }, // same host, not asked for
                    { "stranger", "0", { { t(0), "99" } }, {} }, // not in the topology: ignored
                    // A GPU's series change when a job's pod labels come and go: both fill its column.
                    { "node-10", "7", { { t(0), "70" }, { t(1), "71" } }, R"(,"namespace":"ml","pod":"train-llm-3")" },
                    { "node-10", "7", { { t(2), "72" }, { t(4), "74" } }, {} },
                    { "node-2", "1", { { t(0), "98" } }, {} }, // a second series for a GPU: ignored
                }),
                0 });
        fake.setRange(*PrometheusSource::queryFor(hostnameProfile, MetricId::EccDbe, selector),
            { 200, matrixAnswer({ { "node-10", "7", { { t(4), "1" } }, {} } }), 0 });
        FrameSource::Options options;
        options.interval = 100ms;
        BackendServer server(judgedSource(std::move(poller), options));
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());

        pb::QueryRangeRequest request;
        request.add_metric_ids("gpu_temp");
        request.add_metric_ids("ecc_dbe");
        for (const uint32_t g : gpus) {
            request.add_gpus(g);
        }
        request.set_from_ms(t(0));
        request.set_to_ms(t(4) + 500);
        request.set_step_ms(1000);
        const auto result = queryRange(server, request);
        QVERIFY2(result.status.ok(), result.status.error_message().c_str());
        QCOMPARE(result.gpus, gpus);
        const std::vector<int64_t> times = { t(0), t(1), t(3), t(4) };
        QCOMPARE(result.times.at("gpu_temp"), times);
        QCOMPARE(result.sampleTimes.at("gpu_temp"),
            (std::vector<int64_t> { t(0) - 250, t(1) - 250, t(3) - 250, t(4) - 250 }));
        QCOMPARE(result.times.at("ecc_dbe"), times);
        const auto &temp = result.values.at("gpu_temp");
        QCOMPARE(temp.size(), times.size() * 2 * sizeof(float));
        const float nan = std::nanf("");
        // Rows x columns: node-10/7 first (as asked), then node-2/1; a sentinel and a missing point are no value.
        const std::vector<float> expected = { 70, 50, 71, nan, nan, 52, 74, 53 };
        for (size_t i = 0; i < expected.size(); ++i) {
            const float got = floatAt(temp, i);
            QVERIFY2(std::isnan(expected[i]) ? std::isnan(got) : got == expected[i],
                qPrintable(QStringLiteral("value %1: %2").arg(i).arg(static_cast<double>(got))));
        }
        const auto &dbe = result.values.at("ecc_dbe");
        QCOMPARE(floatAt(dbe, 6), 1.0F);
        QVERIFY(std::isnan(floatAt(dbe, 7)));
        QVERIFY(std::isnan(floatAt(dbe, 0)));
        // The range asked for: the request's times (the end on the grid), step in seconds.
        QCOMPARE(fake.lastRange(PrometheusSource::sampleTimeQuery(hostnameProfile, selector)),
            (QStringList {
                QStringLiteral("1700000000.000"), QStringLiteral("1700000004.000"), QStringLiteral("1.000") }));
        QCOMPARE(fake.lastRange(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp, selector)),
            (QStringList {
                QStringLiteral("1700000000.000"), QStringLiteral("1700000004.000"), QStringLiteral("1.000") }));

        // The health state is this backend's own: no history upstream, and a clear refusal.
        pb::QueryRangeRequest health = request;
        health.clear_metric_ids();
        health.add_metric_ids("health");
        const auto refused = queryRange(server, health);
        QCOMPARE(refused.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        QVERIFY2(
            contains(refused.status.error_message(), "no history upstream"), refused.status.error_message().c_str());
        server.stop();
    }

    // The hosts' matcher is a regular expression inside a PromQL string: both escaped.
    void hostSelectorEscapes()
    {
        FakePrometheus fake; // no answer to discovery: the file's layout stands
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("topology.json"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        // Hosts "gpu-1.dc.example" and a|b(c)\"d (a backslash and a double quote in it); written without raw
        // strings, which moc misreads around escaped quotes.
        file.write("{\"halls\": [{\"name\": \"h\", \"rows\": [{\"name\": \"r\", \"racks\": [{\"name\": \"k\", "
                   "\"hosts\": [\"gpu-1.dc.example\", \"a|b(c)\\\\\\\"d\"]}]}]}]}");
        file.close();
        auto source = startSource(fake, nullptr, 500ms, path.toStdString());
        QVERIFY(source);
        QCOMPARE(source->shape().nodes[1].hostname, std::string("a|b(c)\\\"d"));
        // No series to choose a profile from: the newest one, whose node label is hostname.
        QCOMPARE(source->hostSelector({ 3, 0 }), std::string("{hostname=~\"gpu-1\\\\.dc\\\\.example\"}"));
        QCOMPARE(source->hostSelector({ 8, 0 }),
            std::string("{hostname=~\"gpu-1\\\\.dc\\\\.example|a\\\\|b\\\\(c\\\\)\\\\\\\\\\\"d\"}"));
    }

    void badRangeAnswers_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("delayMs");
        QTest::addColumn<QString>("expected");
        const QByteArray good = matrixAnswer({ { "node-1", "0", { { 1700000000000, "50" } }, {} } });
        QTest::newRow("truncated JSON") << 200 << good.left(good.size() / 2) << 0 << QStringLiteral("truncated");
        QTest::newRow("HTTP 500 text") << 500 << QByteArray("internal server error") << 0
                                       << QStringLiteral("HTTP 500: internal server error");
        QTest::newRow("HTTP 422 Prometheus error")
            << 422
            << QByteArray(R"({"status":"error","errorType":"execution","error":"exceeded maximum resolution of )"
                          R"(11,000 points per timeseries"})")
            << 0 << QStringLiteral("HTTP 422: upstream error execution: exceeded maximum resolution");
        QTest::newRow("vector") << 200 << vectorAnswer(metricSeries(MetricId::GpuTemp)) << 0
                                << QStringLiteral("has no \"values\" (an instant query's vector?)");
        QTest::newRow("values before labels")
            << 200
            << QByteArray(R"({"status":"success","data":{"resultType":"matrix","result":[{"values":[],"metric":{}}]}})")
            << 0 << QStringLiteral("come before its");
        QTest::newRow("bad value") << 200 << matrixAnswer({ { "node-1", "0", { { 1700000000000, "hot" } }, {} } }) << 0
                                   << QStringLiteral("'hot' is not a number");
        QTest::newRow("slow answer") << 200 << good << 3000
                                     << QStringLiteral("timed out waiting for the answer (a range query has 500 ms)");
    }

    void badRangeAnswers()
    {
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        QFETCH(int, delayMs);
        QFETCH(QString, expected);
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        auto poller = std::make_unique<PrometheusSource>([](const std::string &) {});
        PrometheusSource::Options sourceOptions;
        sourceOptions.url = fake.url();
        sourceOptions.historyTimeout = 500ms;
        std::string error;
        QVERIFY2(poller->start(sourceOptions, &error), error.c_str());
        const std::string selector = poller->hostSelector({ 0 });
        fake.setRange(PrometheusSource::sampleTimeQuery(hostnameProfile, selector),
            { 200, matrixAnswer({ { {}, {}, { { 1700000000000, "1700000000" } }, {} } }), 0 });
        fake.setRange(
            *PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp, selector), { status, body, delayMs });
        FrameSource::Options options;
        options.interval = 100ms;
        BackendServer server(judgedSource(std::move(poller), options));
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        pb::QueryRangeRequest request;
        request.add_metric_ids("gpu_temp");
        request.add_gpus(0);
        request.set_from_ms(1700000000000);
        request.set_to_ms(1700000000000);
        request.set_step_ms(1000);
        QElapsedTimer timer;
        timer.start();
        const auto result = queryRange(server, request);
        QVERIFY2(timer.elapsed() < 2500, "the time-out did not cut the slow answer short");
        QCOMPARE(result.status.error_code(), grpc::StatusCode::UNAVAILABLE);
        const std::string &message = result.status.error_message();
        QVERIFY2(contains(message, expected.toStdString().c_str()), message.c_str());
        QVERIFY2(contains(message, "upstream telemetry source failing: range query 'DCGM_FI_DEV_GPU_TEMP{"),
            message.c_str());
        server.stop();
    }

    // A step too fine for the server's point limit is coarsened on the same grid: every k-th time asked for.
    void aFineStepIsCoarsened()
    {
        FakePrometheus fake;
        answerFleet(fake);
        auto source = std::make_unique<PrometheusSource>([](const std::string &) {});
        PrometheusSource::Options options;
        options.url = fake.url();
        options.maxRangePoints = 5;
        std::string error;
        QVERIFY2(source->start(options, &error), error.c_str());
        HistoryProvider::Range range;
        range.fromMs = 1700000000000;
        range.toMs = range.fromMs + 9000; // 10 times a second apart: 4 when 3 s apart
        range.stepMs = 1000;
        range.gpus = { 3 };
        const std::string query = PrometheusSource::sampleTimeQuery(hostnameProfile, source->hostSelector(range.gpus));
        std::vector<std::pair<int64_t, std::string>> points;
        for (int k = 0; k < 4; ++k) {
            points.emplace_back(range.fromMs + 3000 * k, std::to_string(1700000000 + 3 * k));
        }
        fake.setRange(query, { 200, matrixAnswer({ { {}, {}, points, {} } }), 0 });
        std::vector<int64_t> times;
        std::vector<int64_t> sampleTimes;
        QVERIFY2(source->rangeTimes(&range, &times, &sampleTimes, &error), error.c_str());
        QCOMPARE(range.stepMs, int64_t { 3000 });
        QCOMPARE(times,
            (std::vector<int64_t> { range.fromMs, range.fromMs + 3000, range.fromMs + 6000, range.fromMs + 9000 }));
        QCOMPARE(sampleTimes, times);
        QCOMPARE(fake.lastRange(query).value(2), QStringLiteral("3.000"));
    }

    // Times at the ends of int64, from a caller and from the upstream. A range of every millisecond of int64's
    // positive times had (to - from) / step + 1 rows overflow to a negative count (a vector of 2^63 rows: the test
    // died); now it is coarsened to maxRangePoints. A point the upstream stamps past the year 9999 (1e19 s, or -1e19
    // s) became LLONG_MIN through llround, which the grid's offset then subtracted from (undefined); now the answer
    // is refused as broken. From before 1970 is refused as the service refuses it (std::abs(INT64_MIN) before).
    void timesAtTheEndsOfInt64()
    {
        constexpr int64_t most = std::numeric_limits<int64_t>::max();
        FakePrometheus fake;
        answerFleet(fake);
        auto source = std::make_unique<PrometheusSource>([](const std::string &) {});
        PrometheusSource::Options options;
        options.url = fake.url();
        options.maxRangePoints = 5;
        std::string error;
        QVERIFY2(source->start(options, &error), error.c_str());
        const std::vector<uint32_t> gpus { 3 };
        const std::string query = PrometheusSource::sampleTimeQuery(hostnameProfile, source->hostSelector(gpus));
        fake.setRange(query, { 200, matrixAnswer({}), 0 });

        HistoryProvider::Range range;
        range.fromMs = 0;
        range.toMs = most;
        range.stepMs = 1;
        range.gpus = gpus;
        std::vector<int64_t> times;
        std::vector<int64_t> sampleTimes;
        QVERIFY2(source->rangeTimes(&range, &times, &sampleTimes, &error), error.c_str());
        // 2^63 - 1 gaps of 1 ms in at most 4: every 2^61-th.
        QCOMPARE(range.stepMs, int64_t { 1 } << 61);
        QCOMPARE(fake.lastRange(query),
            (QStringList { QStringLiteral("0.000"), QStringLiteral("6917529027641081.856"),
                QStringLiteral("2305843009213693.952") }));
        QVERIFY(times.empty());

        range.fromMs = std::numeric_limits<int64_t>::min();
        range.toMs = 1700000000000;
        range.stepMs = 1000;
        QVERIFY(!source->rangeTimes(&range, &times, &sampleTimes, &error));
        QVERIFY2(contains(error, "need 0 <= from <= to"), error.c_str());

        // The upstream's points: one on the grid, then one stamped 1e19 s, and one -1e19 s.
        range.fromMs = 1700000000000;
        range.toMs = range.fromMs + 2000;
        range.stepMs = 1000;
        fake.setRange(query, { 200, matrixAnswer({ { {}, {}, { { range.fromMs, "1700000000" } }, {} } }), 0 });
        QVERIFY2(source->rangeTimes(&range, &times, &sampleTimes, &error), error.c_str());
        QCOMPARE(times, std::vector<int64_t> { range.fromMs });
        for (const char *stamp : { "1e19", "-1e19" }) {
            const std::string body = std::string(R"({"status":"success","data":{"resultType":"matrix","result":[)")
                + R"({"metric":{},"values":[[1700000000,"1700000000"],[)" + stamp + R"(,"1700000000"]]}]}})";
            fake.setRange(query, { 200, QByteArray::fromStdString(body), 0 });
            error.clear();
            QVERIFY(!source->rangeTimes(&range, &times, &sampleTimes, &error));
            QVERIFY2(contains(error, "is not a time (beyond the year 9999"), error.c_str());
        }
    }
    // The frames the anomaly detector learns from at the start: the store's last 30 minutes, a frame a minute, each
    // with the newest sample at its time (a row repeating an older one, while the store had none newer, gives no
    // frame; the newest of all is the first poll's); the series mapped to GPUs and values as a poll maps them; the
    // jobs their labels show, with a start between two frames as an event; the first frame numbered after them.
    void theDetectorLearnsFromTheStore()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        std::vector<std::string> log;
        auto poller = startSource(fake, &log);
        QVERIFY(poller);
        const int64_t now = 1700000100000; // a whole minute: the grid's rows fall on whole minutes
        const int64_t from = now - 30 * 60000;
        auto t = [&](int k) { return from + int64_t { k } * 60000; };
        auto seconds
            = [](int64_t ms) { return QByteArray::number(static_cast<double>(ms) / 1000.0, 'f', 3).toStdString(); };
        fake.setRange(PrometheusSource::sampleTimeQuery(hostnameProfile),
            { 200,
                matrixAnswer({ { {}, {},
                    { { t(26), seconds(t(26) - 250) }, { t(27), seconds(t(26) - 250) }, { t(28), seconds(t(28) - 250) },
                        { t(29), seconds(t(29) - 250) }, { t(30), seconds(t(30) - 250) } },
                    {} } }),
                0 });
        std::vector<RangeSeries> temps;
        for (uint32_t g = 0; g < gpusPerHost; ++g) {
            temps.push_back({ "node-1", std::to_string(g),
                { { t(26), "50" }, { t(27), "50" }, { t(28), "51" }, { t(29), "52" }, { t(30), "53" } },
                R"(,"namespace":"ml","pod":"train-llm-0")" });
            // node-2's GPUs join a job between the second and third frames.
            temps.push_back({ "node-2", std::to_string(g), { { t(26), "60" }, { t(27), "60" }, { t(28), "61" } }, {} });
            temps.push_back({ "node-2", std::to_string(g), { { t(29), "62" }, { t(30), "63" } },
                R"(,"namespace":"ml","pod":"eval-7")" });
        }
        temps.push_back({ "stranger", "0", { { t(28), "99" } }, {} }); // not in the topology: ignored
        temps.push_back({ "node-3", "0", { { t(28), "9223372036854775794" } }, {} }); // DCGM's blank: no data
        fake.setRange(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp), { 200, matrixAnswer(temps), 0 });
        fake.setRange(*PrometheusSource::queryFor(hostnameProfile, MetricId::RailLinkState),
            { 200,
                matrixAnswer({ { {}, {}, { { t(26), "4" }, { t(28), "1" }, { t(29), "1" } },
                    R"(,"instance":"node-10:9100","device":"mlx5_7","port":"1")" } }),
                0 });
        // Every other metric: an empty answer (the store has no such series).
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            const auto id = static_cast<MetricId>(m);
            if (const auto q = PrometheusSource::queryFor(hostnameProfile, id);
                q && id != MetricId::GpuTemp && id != MetricId::RailLinkState) {
                fake.setRange(*q, { 200, matrixAnswer({}), 0 });
            }
        }

        const auto past = poller->pastFrames(now, 60000ms, 1000);
        QCOMPARE(past.frames.size(), size_t { 3 });
        const std::vector<int64_t> sampleTimes = { t(26) - 250, t(28) - 250, t(29) - 250 };
        const std::vector<std::string> temp1 = { "50", "51", "52" };
        for (size_t f = 0; f < 3; ++f) {
            const auto &frame = *past.frames[f];
            QCOMPARE(frame.sampleTimeMs, sampleTimes[f]);
            QCOMPARE(frame.sequence, uint64_t { f });
            const auto &temp = frame.plane(MetricId::GpuTemp);
            QCOMPARE(temp[static_cast<size_t>(denseIndex("node-1", 3))], std::stof(temp1[f]));
            QCOMPARE(temp[static_cast<size_t>(denseIndex("node-2", 5))], 60.0F + static_cast<float>(f));
            QVERIFY(std::isnan(temp[static_cast<size_t>(denseIndex("node-3", 0))]));
            QVERIFY(std::isnan(temp[static_cast<size_t>(denseIndex("node-10", 0))]));
            // node-exporter's state id as the plane holds it; a GPU without data is graded so.
            const float link = frame.plane(MetricId::RailLinkState)[static_cast<size_t>(denseIndex("node-10", 7))];
            QCOMPARE(link, f == 0 ? 1.0F : 0.0F);
            QCOMPARE(frame.health[static_cast<size_t>(denseIndex("node-1", 0))], uint8_t { fleetscope::health::Ok });
            QCOMPARE(
                frame.health[static_cast<size_t>(denseIndex("node-10", 0))], uint8_t { fleetscope::health::NoData });
        }
        QCOMPARE(past.jobs.size(), size_t { 2 });
        std::map<std::string, JobInfo> jobs;
        for (const auto &j : past.jobs) {
            jobs[j.name] = j;
        }
        QCOMPARE(jobs.at("train-llm").startMs, sampleTimes[0]);
        QCOMPARE(jobs.at("train-llm").gpuList().size(), size_t { gpusPerHost });
        QCOMPARE(jobs.at("eval").startMs, sampleTimes[2]);
        QCOMPARE(jobs.at("eval").gpuList().front(), static_cast<uint32_t>(denseIndex("node-2", 0)));
        QCOMPARE(past.events.size(), size_t { 1 });
        QVERIFY(past.events.front().event.kind == FleetEvent::Kind::JobStart);
        QCOMPARE(past.events.front().timeMs, sampleTimes[2]);
        // The source's own jobs are those of the last frame, and its first frame comes after them.
        QCOMPARE(poller->jobs().size(), size_t { 2 });
        QCOMPARE(poller->firstFrame()->sequence, uint64_t { 3 });
        QVERIFY(std::any_of(log.begin(), log.end(), [](const std::string &line) {
            return contains(line, "the anomaly detector learns from 3 frames of the 30 minutes before the start");
        }));
        // A store without samples then: nothing, said so.
        FakePrometheus empty;
        answerFleet(empty, 1700000000.5);
        log.clear();
        auto cold = startSource(empty, &log);
        QVERIFY(cold);
        empty.setRange(PrometheusSource::sampleTimeQuery(hostnameProfile), { 200, matrixAnswer({}), 0 });
        QVERIFY(cold->pastFrames(now, 60000ms, 1000).frames.empty());
        QVERIFY(std::any_of(log.begin(), log.end(), [](const std::string &line) {
            return contains(line, "the store holds no samples of the 30 minutes before the start");
        }));
        QCOMPARE(cold->firstFrame()->sequence, uint64_t { 0 });
    }

    // The warm-up's bounds: an answer too big, too slow, malformed, with more series than the fleet could have or
    // more points than times asked for, leaves the detector cold (no frames, no jobs) with a line saying why; the
    // warm-up's time is bounded whatever the store does.
    void theWarmUpIsBounded_data()
    {
        QTest::addColumn<QByteArray>("temps");
        QTest::addColumn<int>("delayMs");
        QTest::addColumn<int>("maxBytes");
        QTest::addColumn<QString>("why");
        const int64_t from = 1700000100000 - 30 * 60000;
        auto points = [&](int count) {
            std::vector<std::pair<int64_t, std::string>> out;
            for (int k = 0; k < count; ++k) {
                out.emplace_back(from + int64_t { k } * 60000, "50");
            }
            return out;
        };
        const QByteArray healthy = matrixAnswer({ { "node-1", "0", points(31), {} } });
        QTest::newRow("malformed") << QByteArray(
            "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{")
                                   << 0 << 0 << QStringLiteral("range query 'DCGM_FI_DEV_GPU_TEMP'");
        QTest::newRow("not json") << QByteArray("<html>bad gateway</html>") << 0 << 0
                                  << QStringLiteral("range query 'DCGM_FI_DEV_GPU_TEMP'");
        QTest::newRow("more points than times")
            << matrixAnswer({ { "node-1", "0", points(40), {} } }) << 0 << 0
            << QStringLiteral("a series has more points than the 31 times asked for");
        std::vector<RangeSeries> many;
        for (int i = 0; i < 200; ++i) {
            many.push_back({ "node-1", std::to_string(i), points(1), {} });
        }
        QTest::newRow("more series than the fleet")
            << matrixAnswer(many) << 0 << 0 << QStringLiteral("the answer has more than 128 series");
        const std::string longLabel = ",\"note\":\"" + std::string(5000, 'x') + "\"";
        QTest::newRow("too big") << matrixAnswer({ { "node-1", "0", points(31), longLabel } }) << 0 << 3000
                                 << QStringLiteral("the warm-up's answers may have 3000 bytes together");
        QTest::newRow("too slow") << healthy << 5000 << 0 << QStringLiteral("timed out");
    }

    void theWarmUpIsBounded()
    {
        QFETCH(QByteArray, temps);
        QFETCH(int, delayMs);
        QFETCH(int, maxBytes);
        QFETCH(QString, why);
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        std::vector<std::string> log;
        auto source = std::make_unique<PrometheusSource>([&log](const std::string &line) { log.push_back(line); });
        PrometheusSource::Options options;
        options.url = fake.url();
        options.timeout = 2000ms;
        options.warmTimeout = 800ms;
        if (maxBytes > 0) {
            options.warmMaxBytes = static_cast<size_t>(maxBytes);
        }
        std::string error;
        QVERIFY2(source->start(options, &error), error.c_str());
        const int64_t now = 1700000100000;
        std::vector<std::pair<int64_t, std::string>> times;
        for (int k = 0; k <= 30; ++k) {
            const int64_t ms = now - int64_t { 30 - k } * 60000;
            times.emplace_back(ms, QByteArray::number(static_cast<double>(ms - 250) / 1000.0, 'f', 3).toStdString());
        }
        fake.setRange(
            PrometheusSource::sampleTimeQuery(hostnameProfile), { 200, matrixAnswer({ { {}, {}, times, {} } }), 0 });
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            if (const auto q = PrometheusSource::queryFor(hostnameProfile, static_cast<MetricId>(m))) {
                fake.setRange(*q, { 200, matrixAnswer({}), 0 });
            }
        }
        fake.setRange(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp), { 200, temps, delayMs });

        QElapsedTimer timer;
        timer.start();
        const auto past = source->pastFrames(now, 60000ms, 1000);
        QVERIFY2(timer.elapsed() < 2500, qPrintable(QString::number(timer.elapsed())));
        QVERIFY(past.frames.empty() && past.jobs.empty() && past.events.empty());
        QVERIFY(source->jobs().empty());
        QCOMPARE(source->firstFrame()->sequence, uint64_t { 0 });
        const auto said = std::find_if(log.begin(), log.end(), [](const std::string &line) {
            return contains(line, "the anomaly detector does not learn from the store at the start");
        });
        QVERIFY2(said != log.end(), log.empty() ? "nothing logged" : log.back().c_str());
        QVERIFY2(contains(*said, why.toUtf8().constData()), said->c_str());
    }
};

QTEST_GUILESS_MAIN(TestPrometheusHistory)
#include "tst_prometheus_history.moc"
