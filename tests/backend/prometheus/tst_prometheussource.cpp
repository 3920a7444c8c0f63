// SPDX-License-Identifier: Apache-2.0
// The Prometheus source against a fake Prometheus HTTP API (a QTcpServer on its own thread answering
// /api/v1/query with canned JSON per query): layout, values, sample times, and every kind of bad answer.
#include "core/framesource.h"
#include "prometheus/prometheussource.h"
#include "service/backendserver.h"
#include "tests/backend/testing/fakeprometheus.h"
#include "tests/backend/testing/jobgpus.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDateTime>
#include <QElapsedTimer>
#include <QHash>
#include <QMutex>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QUrl>
#include <QUrlQuery>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

using namespace fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using namespace std::chrono_literals;

namespace {

// The fake's series name their node Hostname, as dcgm-exporter before 4.8.3 does, with the names of 3.x and 4.x: the
// source chooses this profile, and asks its queries.
const MetricMap hostnameProfile = MetricMap::profile(MetricMap::Profile::Gen3x482);

// The test fleet: four hosts whose names sort naturally as node-1, node-2, node-3, node-10, 8 GPUs each.
const std::vector<std::string> hosts = { "node-10", "node-2", "node-3", "node-1" };
const std::vector<std::string> hostsInOrder = { "node-1", "node-2", "node-3", "node-10" };
constexpr uint32_t gpusPerHost = 8;
constexpr uint32_t fleetGpus = 32;

struct Series
{
    std::string host;
    std::string gpu;
    std::string value;
    std::string extraLabels; // ,"name":"value" pairs
};

QByteArray vectorAnswer(const std::vector<Series> &series, double evalSeconds = 1700000100.0)
{
    std::string out = R"({"status":"success","data":{"resultType":"vector","result":[)";
    for (size_t i = 0; i < series.size(); ++i) {
        const auto &s = series[i];
        out += (i ? "," : "") + std::string(R"({"metric":{)");
        std::string labels;
        if (!s.host.empty()) {
            labels += R"("Hostname":")" + s.host + "\"";
        }
        if (!s.gpu.empty()) {
            labels += std::string(labels.empty() ? "" : ",") + R"("gpu":")" + s.gpu + "\"";
        }
        labels += s.extraLabels;
        out += labels + R"(},"value":[)" + QByteArray::number(evalSeconds, 'f', 3).toStdString() + ",\"" + s.value
            + "\"]}";
    }
    out += "]}}";
    return QByteArray::fromStdString(out);
}

int denseIndex(const std::string &host, uint32_t gpu)
{
    const auto it = std::find(hostsInOrder.begin(), hostsInOrder.end(), host);
    return static_cast<int>(it - hostsInOrder.begin()) * gpusPerHost + static_cast<int>(gpu);
}

std::string uuidOf(int index)
{
    return "GPU-00000000-0000-4000-8000-" + QByteArray::number(100000000000LL + index).toStdString();
}

// Gauges: 100 x metric + dense index; counts and throttle reasons: 0, so every GPU is healthy.
float expectedValue(MetricId id, int index)
{
    if (metricCatalog()[static_cast<size_t>(id)].isRate || id == MetricId::ThrottleReasons) {
        return 0;
    }
    return static_cast<float>(100 * static_cast<int>(id) + index);
}

std::vector<Series> metricSeries(MetricId id, const std::string &skipHost = {}, int skipGpu = -1)
{
    std::vector<Series> out;
    for (const auto &h : hosts) {
        for (uint32_t g = 0; g < gpusPerHost; ++g) {
            if (h == skipHost && static_cast<int>(g) == skipGpu) {
                continue;
            }
            const float v = expectedValue(id, denseIndex(h, g));
            out.push_back({ h, std::to_string(g), QByteArray::number(v).toStdString(), {} });
        }
    }
    return out;
}

// The raw XID gauge and double-bit counter the events come from: 0 on every GPU but those given (dense index ->
// value).
void answerEvents(FakePrometheus &fake, const std::map<int, std::string> &xid, const std::map<int, std::string> &dbe)
{
    std::vector<Series> series;
    for (const auto &[field, values] :
        { std::pair { "DCGM_FI_DEV_XID_ERRORS", &xid }, std::pair { "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", &dbe } }) {
        for (const auto &h : hosts) {
            for (uint32_t g = 0; g < gpusPerHost; ++g) {
                const auto it = values->find(denseIndex(h, g));
                series.push_back({ h, std::to_string(g), it == values->end() ? "0" : it->second,
                    std::string(R"(,"__name__":")") + field + "\"" });
            }
        }
    }
    fake.set(PrometheusSource::eventQuery(hostnameProfile), { 200, vectorAnswer(series), 0 });
}

void answerTimestamp(FakePrometheus &fake, double seconds)
{
    fake.set(PrometheusSource::sampleTimeQuery(hostnameProfile),
        { 200, vectorAnswer({ { {}, {}, QByteArray::number(seconds, 'f', 3).toStdString(), {} } }), 0 });
}

// A healthy fleet: discovery with identity labels, every metric, the newest sample at `seconds`.
void answerFleet(FakePrometheus &fake, double seconds = 1700000000.5, const std::string &placement = {})
{
    std::vector<Series> gpus;
    for (const auto &h : hosts) {
        for (uint32_t g = 0; g < gpusPerHost; ++g) {
            std::string labels = R"(,"UUID":")" + uuidOf(denseIndex(h, g))
                + R"(","modelName":"NVIDIA H100 80GB HBM3","DCGM_FI_DRIVER_VERSION":"550.54.15")";
            if (!placement.empty()) {
                // node-1 and node-2 in row r10, the others in row r2; one rack per host.
                const bool low = h == "node-1" || h == "node-2";
                labels += std::string(R"(,"row":")") + (low ? "r10" : "r2") + R"(","rack":"k-)" + h + "\"";
            }
            gpus.push_back({ h, std::to_string(g), "1", labels });
        }
    }
    fake.set(PrometheusSource::profileDiscoveryQuery(), { 200, vectorAnswer(gpus), 0 });
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        if (const auto q = PrometheusSource::queryFor(hostnameProfile, static_cast<MetricId>(m))) {
            fake.set(*q, { 200, vectorAnswer(metricSeries(static_cast<MetricId>(m))), 0 });
        }
    }
    answerTimestamp(fake, seconds);
    answerEvents(fake, {}, {});
}

struct Started
{
    std::unique_ptr<PrometheusSource> source;
    std::vector<std::string> log;
    std::shared_ptr<std::mutex> logMutex = std::make_shared<std::mutex>();
};

std::unique_ptr<PrometheusSource> startSource(FakePrometheus &fake, std::vector<std::string> *log,
    std::chrono::milliseconds timeout = 2000ms, const std::string &topologyFile = {})
{
    auto source = std::make_unique<PrometheusSource>([log](const std::string &line) {
        if (log) {
            log->push_back(line);
        }
    });
    PrometheusSource::Options options;
    options.url = fake.url();
    options.timeout = timeout;
    options.topologyFile = topologyFile;
    std::string error;
    if (!source->start(options, &error)) {
        qWarning("start failed: %s", error.c_str());
        return nullptr;
    }
    return source;
}

bool contains(const std::string &text, const char *part)
{
    return text.find(part) != std::string::npos;
}

// One series of a range query's matrix: (Unix ms, value text) points.
struct RangeSeries
{
    std::string host;
    std::string gpu;
    std::vector<std::pair<int64_t, std::string>> points;
    std::string extraLabels;
};

QByteArray matrixAnswer(const std::vector<RangeSeries> &series)
{
    std::string out = R"({"status":"success","data":{"resultType":"matrix","result":[)";
    for (size_t i = 0; i < series.size(); ++i) {
        const auto &s = series[i];
        std::string labels;
        if (!s.host.empty()) {
            labels = R"("Hostname":")" + s.host + R"(","gpu":")" + s.gpu + "\"";
        }
        labels += s.extraLabels;
        out += (i ? "," : "") + std::string(R"({"metric":{)") + labels + R"(},"values":[)";
        for (size_t p = 0; p < s.points.size(); ++p) {
            out += (p ? "," : "") + std::string("[") + std::to_string(s.points[p].first / 1000) + "."
                + QByteArray::number(s.points[p].first % 1000).rightJustified(3, '0').toStdString() + ",\""
                + s.points[p].second + "\"]";
        }
        out += "]}";
    }
    out += "]}}";
    return QByteArray::fromStdString(out);
}

// A vector answer of every GPU of the fleet for a metric, with these labels on some GPUs (dense index -> labels) and
// extra series (a GPU serving two jobs).
QByteArray labelledAnswer(MetricId id, const std::map<int, std::string> &labels, const std::vector<Series> &extra = {})
{
    auto series = metricSeries(id);
    for (auto &s : series) {
        if (const auto it = labels.find(denseIndex(s.host, std::stoul(s.gpu))); it != labels.end()) {
            s.extraLabels = it->second;
        }
    }
    series.insert(series.end(), extra.begin(), extra.end());
    return vectorAnswer(series);
}

// The throttle reasons of every GPU: 0 but those given.
void answerReasons(FakePrometheus &fake, const std::map<int, std::string> &reasons)
{
    auto series = metricSeries(MetricId::ThrottleReasons);
    for (auto &s : series) {
        if (const auto it = reasons.find(denseIndex(s.host, std::stoul(s.gpu))); it != reasons.end()) {
            s.value = it->second;
        }
    }
    fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::ThrottleReasons), { 200, vectorAnswer(series), 0 });
}

const FleetEvent *findEvent(const std::vector<FleetEvent> &events, FleetEvent::Kind kind, int64_t gpu)
{
    for (const auto &e : events) {
        if (e.kind == kind && e.gpu == gpu) {
            return &e;
        }
    }
    return nullptr;
}

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

// The range queries pastEvents makes, with the default 15 s step: per GPU, whatever its other labels.
// By both spellings of the node label: a fleet may hold both.
const std::string byNode = "max by (Hostname, hostname, gpu) ";
const std::string pastXidQuery
    = "(" + byNode + "(DCGM_FI_DEV_XID_ERRORS) != " + byNode + "(DCGM_FI_DEV_XID_ERRORS offset 15000ms)) > 0";
const std::string pastDbeQuery = "(" + byNode + "(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL) - " + byNode
    + "(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL offset 15000ms)) > 0";
const std::string pastReasonsQuery
    = byNode + "(DCGM_FI_DEV_CLOCKS_EVENT_REASONS) != " + byNode + "(DCGM_FI_DEV_CLOCKS_EVENT_REASONS offset 15000ms)";
const std::string pastReasonsBeforeQuery
    = byNode + "(DCGM_FI_DEV_CLOCKS_EVENT_REASONS offset 15000ms) != " + byNode + "(DCGM_FI_DEV_CLOCKS_EVENT_REASONS)";

} // namespace

class TestPrometheusSource : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void topologyFromHostnames()
    {
        FakePrometheus fake;
        answerFleet(fake);
        std::vector<std::string> log;
        auto source = startSource(fake, &log);
        QVERIFY(source);
        const auto &shape = source->shape();
        QCOMPARE(shape.gpuCount, fleetGpus);
        QCOMPARE(shape.nodes.size(), size_t { 4 });
        for (size_t n = 0; n < hostsInOrder.size(); ++n) {
            QCOMPARE(shape.nodes[n].hostname, hostsInOrder[n]);
            QCOMPARE(shape.nodes[n].gpuCount, gpusPerHost);
            QCOMPARE(shape.nodes[n].model, std::string("NVIDIA H100 80GB HBM3"));
            QCOMPARE(shape.nodes[n].driverVersion, std::string("550.54.15"));
        }
        QCOMPARE(shape.racks.size(), size_t { 1 });
        QCOMPARE(shape.rows.front().name, std::string("auto-r01"));
        QVERIFY(!shape.simulated);
        for (int g = 0; g < static_cast<int>(fleetGpus); ++g) {
            QCOMPARE(shape.gpuUuid(static_cast<uint32_t>(g)), uuidOf(g));
        }
        QCOMPARE(source->topologyGeneration(), startSource(fake, nullptr)->topologyGeneration());
    }

    void topologyFromRowAndRackLabels()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5, "placed");
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        const auto &shape = source->shape();
        QCOMPARE(shape.rows.size(), size_t { 2 });
        QCOMPARE(shape.rows[0].name, std::string("r2")); // natural order: r2 before r10
        QCOMPARE(shape.rows[1].name, std::string("r10"));
        QCOMPARE(shape.racks.size(), size_t { 4 });
        QCOMPARE(shape.nodes[0].hostname, std::string("node-3"));
        QCOMPARE(shape.nodes[1].hostname, std::string("node-10"));
        QCOMPARE(shape.nodes[2].hostname, std::string("node-1"));
        QCOMPARE(shape.racks[shape.nodes[2].rack].row, 1U);
        // Values land on the GPUs of that layout.
        auto frame = source->poll();
        QVERIFY(frame);
        const uint32_t g = shape.nodes[0].firstGpu + 5;
        QCOMPARE(frame->plane(MetricId::Power)[g], expectedValue(MetricId::Power, denseIndex("node-3", 5)));
    }

    void topologyFromFile()
    {
        FakePrometheus fake;
        answerFleet(fake);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("topology.json"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        // File order, not name order; node-3 missing (its series are unknown), node-9 not reporting, node-2 with 4.
        file.write(R"({"site": "dc-1", "halls": [{"name": "hall-a", "rows": [{"name": "r01", "racks": [
            {"name": "r01-k01", "hosts": ["node-10", {"hostname": "node-2", "gpus": 4}]},
            {"name": "r01-k02", "hosts": ["node-1", "node-9"]}]}]}]})");
        file.close();
        std::vector<std::string> log;
        auto source = startSource(fake, &log, 2000ms, path.toStdString());
        QVERIFY(source);
        const auto &shape = source->shape();
        QCOMPARE(shape.gpuCount, 8U + 4U + 8U + 8U);
        QCOMPARE(shape.site, std::string("dc-1"));
        QCOMPARE(shape.nodes[0].hostname, std::string("node-10"));
        QCOMPARE(shape.nodes[1].gpuCount, 4U);
        QCOMPARE(shape.racks[1].name, std::string("r01-k02"));
        QCOMPARE(shape.gpuUuid(8), uuidOf(denseIndex("node-2", 0)));
        QVERIFY(shape.gpuUuid(27).empty()); // node-9 has no series
        // node-3's 8 GPUs and node-2's GPUs 4..7 are not in the file: counted and reported at start.
        QVERIFY(std::any_of(log.begin(), log.end(), [](const auto &l) { return contains(l, "12 GPUs"); }));

        auto frame = source->poll();
        QVERIFY(frame);
        QCOMPARE(source->lastReport().unknownSeries, size_t { 12 * 15 }); // 12 per metric query
        QCOMPARE(frame->plane(MetricId::GpuTemp)[9], expectedValue(MetricId::GpuTemp, denseIndex("node-2", 1)));
        QVERIFY(std::isnan(frame->plane(MetricId::GpuTemp)[25]));
        QCOMPARE(frame->health[25], fleetscope::health::NoData);
        QCOMPARE(source->lastReport().gpusWithoutData, size_t { 8 });

        std::string error;
        TopologyFile bad;
        QVERIFY(!TopologyFile::parse(R"({"halls": [{"name": "h", "rows": [{"name": "r", "racks": [
            {"name": "k", "hosts": ["a", "a"]}]}]}]})",
            &bad, &error));
        QVERIFY2(contains(error, "appears twice"), error.c_str());
        QVERIFY(!TopologyFile::parse(R"({"halls": [{"name": "h", "rows": []}]})", &bad, &error) || bad.rows.empty());
    }

    void remappedRowsAreWindowIncreases()
    {
        // Counters, read as their increase over the window as the other error counters are; 1.x names have none.
        QCOMPARE(PrometheusSource::queryFor(hostnameProfile, MetricId::RemappedRows).value_or(""),
            std::string("increase(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS[5m])"));
        QCOMPARE(PrometheusSource::queryFor(hostnameProfile, MetricId::RemappedRowsCorrectable).value_or(""),
            std::string("increase(DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS[5m])"));
        QVERIFY(!PrometheusSource::queryFor(MetricMap::profile(MetricMap::Profile::Compat1x), MetricId::RemappedRows));
        QVERIFY(!PrometheusSource::queryFor(hostnameProfile, MetricId::Offender));
        // A poll's planes: the fake's answers to those queries, GPU by GPU (framesCarryValuesAndTheSampleTime has
        // every metric).
        FakePrometheus fake;
        answerFleet(fake);
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        const auto frame = source->poll();
        QVERIFY(frame);
        for (int g = 0; g < static_cast<int>(fleetGpus); ++g) {
            QCOMPARE(
                frame->plane(MetricId::RemappedRows)[static_cast<size_t>(g)], expectedValue(MetricId::RemappedRows, g));
        }
    }

    void framesCarryValuesAndTheSampleTime()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        auto frame = source->poll();
        QVERIFY(frame);
        // The newest sample's own time, not the evaluation time (1700000100) nor the time asked.
        QCOMPARE(frame->sampleTimeMs, int64_t { 1700000000500 });
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            const auto id = static_cast<MetricId>(m);
            if (id == MetricId::HealthState) {
                continue;
            }
            // Fleetscope's own scores, given when the frame source publishes
            if (id == MetricId::Anomaly || id == MetricId::Offender) {
                for (int g = 0; g < static_cast<int>(fleetGpus); ++g) {
                    QVERIFY(std::isnan(frame->plane(id)[static_cast<size_t>(g)]));
                }
                continue;
            }
            for (int g = 0; g < static_cast<int>(fleetGpus); ++g) {
                QCOMPARE(frame->plane(id)[static_cast<size_t>(g)], expectedValue(id, g));
            }
        }
        for (uint32_t g = 0; g < fleetGpus; ++g) {
            QCOMPARE(frame->health[g], fleetscope::health::Ok);
        }
        QVERIFY(source->lastReport().ok);
        QVERIFY(source->lastReport().answerBytes > 0);

        // Nothing newer upstream: no new frame, and no error either.
        QVERIFY(!source->poll());
        QVERIFY(source->upstreamError().empty());
        answerTimestamp(fake, 1700000001.5);
        frame = source->poll();
        QVERIFY(frame);
        QCOMPARE(frame->sampleTimeMs, int64_t { 1700000001500 });
    }

    void sentinelsAndNaNAreNoData()
    {
        FakePrometheus fake;
        answerFleet(fake);
        auto temps = metricSeries(MetricId::GpuTemp);
        temps[0].value = "9223372036854775794"; // node-10/0: int64 not supported
        temps[1].value = "NaN";
        temps[2].value = "+Inf";
        temps[3].value = "2147483634"; // int32 not supported
        temps[4].value = "140737488355328"; // fp64 blank
        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp), { 200, vectorAnswer(temps), 0 });
        // node-10/0 reports sentinels only: no data at all.
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            const auto id = static_cast<MetricId>(m);
            if (id == MetricId::GpuTemp || !PrometheusSource::queryFor(hostnameProfile, id)) {
                continue;
            }
            auto series = metricSeries(id);
            series[0].value = "9223372036854775792";
            fake.set(*PrometheusSource::queryFor(hostnameProfile, id), { 200, vectorAnswer(series), 0 });
        }
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        auto frame = source->poll();
        QVERIFY(frame);
        const auto &temp = frame->plane(MetricId::GpuTemp);
        for (int i = 0; i < 5; ++i) {
            const int g = denseIndex(temps[static_cast<size_t>(i)].host, std::stoul(temps[static_cast<size_t>(i)].gpu));
            QVERIFY2(std::isnan(temp[static_cast<size_t>(g)]), temps[static_cast<size_t>(i)].value.c_str());
        }
        const int all = denseIndex("node-10", 0);
        QCOMPARE(frame->health[static_cast<size_t>(all)], fleetscope::health::NoData);
        QVERIFY(std::isnan(frame->plane(MetricId::Power)[static_cast<size_t>(all)]));
        // node-10/1 lost only its temperature: its other values stand and it is not "no data".
        const int some = denseIndex("node-10", 1);
        QCOMPARE(frame->health[static_cast<size_t>(some)], fleetscope::health::Ok);
        QCOMPARE(frame->plane(MetricId::Power)[static_cast<size_t>(some)], expectedValue(MetricId::Power, some));
        QCOMPARE(source->lastReport().sentinelValues, size_t { 3 + 14 });
        QCOMPARE(source->lastReport().nanValues, size_t { 2 });
        QCOMPARE(source->lastReport().gpusWithoutData, size_t { 1 });
    }

    void aMissingGpuHasNoData()
    {
        FakePrometheus fake;
        answerFleet(fake);
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            if (const auto q = PrometheusSource::queryFor(hostnameProfile, static_cast<MetricId>(m))) {
                fake.set(*q, { 200, vectorAnswer(metricSeries(static_cast<MetricId>(m), "node-3", 6)), 0 });
            }
        }
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        auto frame = source->poll();
        QVERIFY(frame);
        const auto g = static_cast<size_t>(denseIndex("node-3", 6));
        QCOMPARE(frame->health[g], fleetscope::health::NoData);
        QCOMPARE(frame->plane(MetricId::HealthState)[g], float(fleetscope::health::NoData));
        QVERIFY(std::isnan(frame->plane(MetricId::GpuTemp)[g]));
        QCOMPARE(frame->health[g - 1], fleetscope::health::Ok);
        QCOMPARE(source->lastReport().gpusWithoutData, size_t { 1 });
    }

    void seriesForUnknownGpusAreCountedAndIgnored()
    {
        FakePrometheus fake;
        answerFleet(fake);
        auto temps = metricSeries(MetricId::GpuTemp);
        temps.push_back({ "stranger", "0", "99", {} });
        temps.push_back({ "node-1", "8", "98", {} }); // a ninth GPU on a known host
        temps.push_back({ "node-1", "0", "97", {} }); // a second series for a known GPU
        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp), { 200, vectorAnswer(temps), 0 });
        std::vector<std::string> log;
        auto source = startSource(fake, &log);
        QVERIFY(source);
        auto frame = source->poll();
        QVERIFY(frame);
        QCOMPARE(source->lastReport().unknownSeries, size_t { 2 });
        QCOMPARE(source->lastReport().unknownExample, std::string("stranger/0"));
        QCOMPARE(source->lastReport().duplicateSeries, size_t { 1 });
        QCOMPARE(frame->plane(MetricId::GpuTemp)[0], expectedValue(MetricId::GpuTemp, 0)); // the first series kept
        QVERIFY(std::any_of(log.begin(), log.end(),
            [](const auto &l) { return contains(l, "2 series name GPUs not in the topology (e.g. stranger/0)"); }));
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
        BackendServer server(std::make_unique<FrameSource>(std::move(poller), options));
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
        BackendServer server(std::make_unique<FrameSource>(std::move(poller), options));
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

    // Jobs come from the labels dcgm-exporter puts on each GPU's series: Kubernetes pods (numbered pods of one job
    // are one job) and HPC jobs; what appears starts, what disappears ends.
    void jobsFromLabels()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        std::map<int, std::string> labels;
        for (uint32_t g = 0; g < gpusPerHost; ++g) {
            labels[denseIndex("node-1", g)] = R"(,"container":"train","namespace":"ml","pod":"train-llm-0")";
            labels[denseIndex("node-2", g)] = R"(,"container":"train","namespace":"ml","pod":"train-llm-1")";
        }
        for (uint32_t g = 0; g < 5; ++g) {
            labels[denseIndex("node-3", g)] = R"(,"hpc_job":"4242","hpc_user":"alice")";
        }
        // Scraped without honor_labels: the exporter pod's own namespace and pod, and the GPU's as exported_*.
        labels[denseIndex("node-10", 0)] = R"(,"exported_namespace":"team-b","exported_pod":"web-5d8f9-xk2p",)"
                                           R"("namespace":"gpu-operator","pod":"nvidia-dcgm-exporter-abcde")";
        // node-3 GPU 4 serves a second HPC job: a second series, as dcgm-exporter's HPC mapping writes.
        const std::vector<Series> shared = { { "node-3", "4", "1", R"(,"hpc_job":"4243","hpc_user":"bob")" } };
        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuUtil),
            { 200, labelledAnswer(MetricId::GpuUtil, labels, shared), 0 });
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        QVERIFY(source->poll());
        QVERIFY(source->takeEvents().empty()); // what runs at the first poll started before it

        auto jobs = source->jobs();
        QCOMPARE(jobs.size(), size_t { 4 });
        // By start time (all the first poll's), then name.
        QCOMPARE(jobs[0].name, std::string("4242"));
        QCOMPARE(jobs[0].id, uint64_t { 4242 });
        QCOMPARE(jobs[0].owner, std::string("alice"));
        QCOMPARE(jobs[0].gpuList(), (std::vector<uint32_t> { 16, 17, 18, 19, 20 }));
        QCOMPARE(jobs[1].name, std::string("4243"));
        QCOMPARE(jobs[1].gpuList(), (std::vector<uint32_t> { 20 }));
        QCOMPARE(jobs[2].name, std::string("train-llm"));
        QCOMPARE(jobs[2].owner, std::string("ml"));
        QCOMPARE(jobs[2].gpuList().size(), size_t { 16 });
        QCOMPARE(jobs[2].gpuList().front(), 0U);
        QCOMPARE(jobs[2].gpuList().back(), 15U);
        QCOMPARE(jobs[2].startMs, int64_t { 1700000000500 });
        QCOMPARE(jobs[3].name, std::string("web-5d8f9-xk2p")); // no numeric ordinal: the pod is the job
        QCOMPARE(jobs[3].owner, std::string("team-b"));
        QCOMPARE(jobs[3].gpuList(), (std::vector<uint32_t> { 24 }));
        for (const auto &j : jobs) {
            QCOMPARE(j.endMs, int64_t { 0 });
            QVERIFY(j.id != 0);
        }

        // Job 4243 ends, eval-suite starts on node-10 GPU 1.
        labels[denseIndex("node-10", 1)] = R"(,"namespace":"ml","pod":"eval-suite-0")";
        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuUtil),
            { 200, labelledAnswer(MetricId::GpuUtil, labels), 0 });
        answerTimestamp(fake, 1700000001.5);
        QVERIFY(source->poll());
        const auto events = source->takeEvents();
        QCOMPARE(events.size(), size_t { 2 });
        QCOMPARE(events[0].kind, FleetEvent::Kind::JobEnd);
        QCOMPARE(events[0].jobId, uint64_t { 4243 });
        QCOMPARE(events[1].kind, FleetEvent::Kind::JobStart);
        QVERIFY2(contains(events[1].text, "eval-suite"), events[1].text.c_str());
        jobs = source->jobs();
        QCOMPARE(jobs.size(), size_t { 5 });
        QCOMPARE(jobs[3].name, std::string("eval-suite")); // running ones first
        QCOMPARE(jobs[3].startMs, int64_t { 1700000001500 });
        QCOMPARE(jobs[4].name, std::string("4243"));
        QCOMPARE(jobs[4].endMs, int64_t { 1700000001500 });
        QCOMPARE(events[1].jobId, jobs[3].id);
    }

    // Events from changes between polls: a new XID value is one event (and the same value again is none), a
    // double-bit counter's increase is one, its reset none; throttle-reason bits starting and stopping.
    void eventsFromChanges()
    {
        FakePrometheus fake;
        answerFleet(fake, 1700000000.5);
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        QVERIFY(source->poll());
        QVERIFY(source->takeEvents().empty());

        answerEvents(fake, { { 5, "79" } }, { { 6, "3" } });
        answerReasons(fake, { { 7, "32" }, { 8, "4" } });
        answerTimestamp(fake, 1700000001.5);
        QVERIFY(source->poll());
        auto events = source->takeEvents();
        QCOMPARE(events.size(), size_t { 4 });
        const auto *xid = findEvent(events, FleetEvent::Kind::Xid, 5);
        QVERIFY(xid);
        QCOMPARE(xid->xid, 79U);
        QCOMPARE(xid->severity, FleetEvent::Severity::Critical);
        QCOMPARE(xid->node, int64_t { 0 });
        QCOMPARE(xid->text, std::string("XID 79 on node-1 GPU 5: GPU has fallen off the bus"));
        const auto *dbe = findEvent(events, FleetEvent::Kind::EccDoubleBit, 6);
        QVERIFY(dbe);
        QCOMPARE(dbe->text, std::string("3 double-bit ECC errors on node-1 GPU 6"));
        QVERIFY(findEvent(events, FleetEvent::Kind::ThermalThrottleStart, 7));
        QVERIFY(findEvent(events, FleetEvent::Kind::PowerThrottleStart, 8));

        // Unchanged XID, a counter reset, throttling over on GPU 7: one event.
        answerEvents(fake, { { 5, "79" } }, { { 6, "0" } });
        answerReasons(fake, { { 8, "4" } });
        answerTimestamp(fake, 1700000002.5);
        QVERIFY(source->poll());
        events = source->takeEvents();
        QCOMPARE(events.size(), size_t { 1 });
        QVERIFY(findEvent(events, FleetEvent::Kind::ThermalThrottleEnd, 7));

        // A new XID and one double-bit error after the reset; a GPU with no value keeps its last one meanwhile.
        answerEvents(fake, { { 5, "13" } }, { { 6, "1" } });
        auto series = metricSeries(MetricId::ThrottleReasons, "node-2", 0); // GPU 8
        fake.set(
            *PrometheusSource::queryFor(hostnameProfile, MetricId::ThrottleReasons), { 200, vectorAnswer(series), 0 });
        answerTimestamp(fake, 1700000003.5);
        QVERIFY(source->poll());
        events = source->takeEvents();
        QCOMPARE(events.size(), size_t { 2 });
        QCOMPARE(findEvent(events, FleetEvent::Kind::Xid, 5)->xid, 13U);
        QCOMPARE(findEvent(events, FleetEvent::Kind::EccDoubleBit, 6)->text,
            std::string("double-bit ECC error on node-1 GPU 6"));
        answerReasons(fake, { { 8, "4" } }); // back with the bit it had: no new start
        answerTimestamp(fake, 1700000004.5);
        QVERIFY(source->poll());
        QVERIFY(source->takeEvents().empty());
    }

    // Through FrameSource and gRPC: the hour before the start from range queries, then live events at their
    // frames' sample times, and ListJobs.
    void eventsAndJobsOverGrpc()
    {
        FakePrometheus fake;
        // Samples of now: StreamEvents replays from an hour ago.
        const int64_t now = QDateTime::currentMSecsSinceEpoch();
        answerFleet(fake, static_cast<double>(now - 500) / 1000.0);
        const int64_t t1 = now - 1800000;
        const int64_t t2 = now - 1200000;
        const int64_t t3 = now - 600000;
        fake.setRange(pastXidQuery, { 200, matrixAnswer({ { "node-2", "3", { { t2, "94" } }, {} } }), 0 });
        fake.setRange(pastDbeQuery, { 200, matrixAnswer({ { "node-3", "0", { { t1, "1" } }, {} } }), 0 });
        fake.setRange(pastReasonsQuery, { 200, matrixAnswer({ { "node-1", "2", { { t3, "4" } }, {} } }), 0 });
        fake.setRange(pastReasonsBeforeQuery, { 200, matrixAnswer({ { "node-1", "2", { { t3, "0" } }, {} } }), 0 });
        std::map<int, std::string> labels;
        labels[2] = R"(,"namespace":"ml","pod":"train-llm-0")";
        labels[9] = R"(,"namespace":"ml","pod":"train-llm-1")";
        fake.set(*PrometheusSource::queryFor(hostnameProfile, MetricId::GpuTemp),
            { 200, labelledAnswer(MetricId::GpuTemp, labels), 0 });
        auto poller = startSource(fake, nullptr, 500ms);
        QVERIFY(poller);
        FrameSource::Options options;
        options.interval = 50ms;
        BackendServer server(std::make_unique<FrameSource>(std::move(poller), options));
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        QTRY_COMPARE(server.source().latest()->sequence, uint64_t { 1 });
        // The hour before the start, on a 15 s grid that ends at the start.
        const auto asked = fake.lastRange(pastXidQuery);
        QCOMPARE(asked.value(2), QStringLiteral("15.000"));
        const int64_t end = std::llround(asked.value(1).toDouble() * 1000.0);
        const int64_t start = std::llround(asked.value(0).toDouble() * 1000.0);
        QVERIFY(end >= now && end - now < 60000);
        QVERIFY(end - start <= 3600000 && end - start > 3600000 - 15000 && (end - start) % 15000 == 0);

        auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(server.listeningAddress(), grpc::InsecureChannelCredentials()));
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 5s);
            pb::ListJobsResponse response;
            QVERIFY(stub->ListJobs(&context, pb::ListJobsRequest(), &response).ok());
            QCOMPARE(response.jobs_size(), 1);
            QCOMPARE(response.jobs(0).name(), std::string("train-llm"));
            QCOMPARE(response.jobs(0).owner(), std::string("ml"));
            QCOMPARE(jobGpus(response.jobs(0)), (std::vector<uint32_t> { 2, 9 }));
        }

        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 20s);
        pb::StreamEventsRequest request;
        request.set_since_ms(now - 3600000);
        auto reader = stub->StreamEvents(&context, request);
        pb::Event e;
        QVERIFY(reader->Read(&e));
        QCOMPARE(e.kind(), pb::EVENT_KIND_ECC_DOUBLE_BIT);
        QCOMPARE(e.time_ms(), t1);
        QCOMPARE(e.gpu(), int64_t { denseIndex("node-3", 0) });
        QVERIFY(reader->Read(&e));
        QCOMPARE(e.kind(), pb::EVENT_KIND_XID);
        QCOMPARE(e.xid(), 94U);
        QCOMPARE(e.time_ms(), t2);
        QVERIFY(reader->Read(&e));
        QCOMPARE(e.kind(), pb::EVENT_KIND_POWER_THROTTLE_START);
        QCOMPARE(e.gpu(), int64_t { denseIndex("node-1", 2) });
        QCOMPARE(e.time_ms(), t3);
        const uint64_t pastSequence = e.sequence();

        // Live: an XID on GPU 9, in the next frame; it names the job GPU 9 serves.
        answerEvents(fake, { { 9, "31" } }, {});
        answerTimestamp(fake, static_cast<double>(now + 500) / 1000.0);
        QVERIFY(reader->Read(&e));
        QCOMPARE(e.kind(), pb::EVENT_KIND_XID);
        QCOMPARE(e.xid(), 31U);
        QCOMPARE(e.gpu(), int64_t { 9 });
        QCOMPARE(e.time_ms(), now + 500);
        QCOMPARE(e.sequence(), pastSequence + 1);
        QVERIFY(e.job_id() != 0);
        QVERIFY2(contains(e.text(), "XID 31 on node-2 GPU 1"), e.text().c_str());
        context.TryCancel();
        while (reader->Read(&e)) { }
        reader->Finish();
        server.stop();
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
        BackendServer server(std::make_unique<FrameSource>(std::move(poller), options));
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

QTEST_GUILESS_MAIN(TestPrometheusSource)
#include "tst_prometheussource.moc"
