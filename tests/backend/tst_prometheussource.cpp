// SPDX-License-Identifier: Apache-2.0
// The Prometheus source against a fake Prometheus HTTP API (a QTcpServer on its own thread answering
// /api/v1/query with canned JSON per query): layout, values, sample times, and every kind of bad answer.
#include "backendserver.h"
#include "framesource.h"
#include "prometheussource.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

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
#include <mutex>

using namespace fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using namespace std::chrono_literals;

namespace {

struct Answer
{
    int status = 200;
    QByteArray body;
    int delayMs = 0;
};

// Answers GET /api/v1/query?query=Q with the answer set for Q; an unexpected query gets a Prometheus-style 400.
// Lives on its own thread so that a test may block on the source while the server answers.
class FakePrometheus : public QObject
{
public:
    FakePrometheus()
    {
        m_thread.start();
        moveToThread(&m_thread);
        QMetaObject::invokeMethod(
            this,
            [this] {
                m_server = new QTcpServer(this);
                m_server->listen(QHostAddress::LocalHost, 0);
                connect(m_server, &QTcpServer::newConnection, this, [this] {
                    while (auto *socket = m_server->nextPendingConnection()) {
                        connect(socket, &QTcpSocket::readyRead, this, [this, socket] { serve(socket); });
                        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
                    }
                });
            },
            Qt::BlockingQueuedConnection);
    }
    ~FakePrometheus() override
    {
        QMetaObject::invokeMethod(
            this, [this] { delete m_server; }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(m_server->serverPort()); }

    void set(const std::string &query, Answer answer)
    {
        QMutexLocker lock(&m_mutex);
        m_answers[QString::fromStdString(query)] = std::move(answer);
    }
    int requests(const std::string &query) const
    {
        QMutexLocker lock(&m_mutex);
        return m_requests.value(QString::fromStdString(query));
    }

private:
    void serve(QTcpSocket *socket)
    {
        QByteArray &buffer = m_buffers[socket];
        buffer += socket->readAll();
        if (!buffer.contains("\r\n\r\n")) {
            return;
        }
        const QByteArray line = buffer.left(buffer.indexOf("\r\n"));
        m_buffers.remove(socket);
        const QUrl url(QString::fromLatin1(line.split(' ').value(1)));
        const QString query = QUrlQuery(url.query()).queryItemValue(QStringLiteral("query"), QUrl::FullyDecoded);
        Answer answer;
        {
            QMutexLocker lock(&m_mutex);
            ++m_requests[query];
            answer = m_answers.value(query,
                Answer { 400,
                    R"({"status":"error","errorType":"bad_data","error":"the fake has no answer for this query"})",
                    0 });
        }
        if (url.path() != QStringLiteral("/api/v1/query")) {
            answer = { 404, "404 page not found", 0 };
        }
        QPointer<QTcpSocket> guard(socket);
        auto respond = [guard, answer] {
            if (!guard) {
                return;
            }
            guard->write("HTTP/1.1 " + QByteArray::number(answer.status) + " X\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + QByteArray::number(answer.body.size()) + "\r\nConnection: close\r\n\r\n"
                + answer.body);
            guard->disconnectFromHost();
        };
        if (answer.delayMs > 0) {
            QTimer::singleShot(answer.delayMs, socket, respond);
        } else {
            respond();
        }
    }

    QThread m_thread;
    QTcpServer *m_server = nullptr;
    QHash<QTcpSocket *, QByteArray> m_buffers; // server thread only
    mutable QMutex m_mutex; // guards m_answers and m_requests, set by the test, read by the server thread
    QHash<QString, Answer> m_answers;
    QHash<QString, int> m_requests;
};

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

void answerTimestamp(FakePrometheus &fake, double seconds)
{
    fake.set(PrometheusSource::sampleTimeQuery(),
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
    fake.set(PrometheusSource::discoveryQuery(), { 200, vectorAnswer(gpus), 0 });
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        if (const auto q = PrometheusSource::queryFor(static_cast<MetricId>(m))) {
            fake.set(*q, { 200, vectorAnswer(metricSeries(static_cast<MetricId>(m))), 0 });
        }
    }
    answerTimestamp(fake, seconds);
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
        QCOMPARE(source->lastReport().unknownSeries, size_t { 12 * 13 }); // 12 per metric query
        QCOMPARE(frame->plane(MetricId::GpuTemp)[9], expectedValue(MetricId::GpuTemp, denseIndex("node-2", 1)));
        QVERIFY(std::isnan(frame->plane(MetricId::GpuTemp)[25]));
        QCOMPARE(frame->health[25], health::noData);
        QCOMPARE(source->lastReport().gpusWithoutData, size_t { 8 });

        std::string error;
        TopologyFile bad;
        QVERIFY(!TopologyFile::parse(R"({"halls": [{"name": "h", "rows": [{"name": "r", "racks": [
            {"name": "k", "hosts": ["a", "a"]}]}]}]})",
            &bad, &error));
        QVERIFY2(contains(error, "appears twice"), error.c_str());
        QVERIFY(!TopologyFile::parse(R"({"halls": [{"name": "h", "rows": []}]})", &bad, &error) || bad.rows.empty());
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
            for (int g = 0; g < static_cast<int>(fleetGpus); ++g) {
                QCOMPARE(frame->plane(id)[static_cast<size_t>(g)], expectedValue(id, g));
            }
        }
        for (uint32_t g = 0; g < fleetGpus; ++g) {
            QCOMPARE(frame->health[g], health::ok);
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
        fake.set(*PrometheusSource::queryFor(MetricId::GpuTemp), { 200, vectorAnswer(temps), 0 });
        // node-10/0 reports sentinels only: no data at all.
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            const auto id = static_cast<MetricId>(m);
            if (id == MetricId::GpuTemp || !PrometheusSource::queryFor(id)) {
                continue;
            }
            auto series = metricSeries(id);
            series[0].value = "9223372036854775792";
            fake.set(*PrometheusSource::queryFor(id), { 200, vectorAnswer(series), 0 });
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
        QCOMPARE(frame->health[static_cast<size_t>(all)], health::noData);
        QVERIFY(std::isnan(frame->plane(MetricId::Power)[static_cast<size_t>(all)]));
        // node-10/1 lost only its temperature: its other values stand and it is not "no data".
        const int some = denseIndex("node-10", 1);
        QCOMPARE(frame->health[static_cast<size_t>(some)], health::ok);
        QCOMPARE(frame->plane(MetricId::Power)[static_cast<size_t>(some)], expectedValue(MetricId::Power, some));
        QCOMPARE(source->lastReport().sentinelValues, size_t { 3 + 12 });
        QCOMPARE(source->lastReport().nanValues, size_t { 2 });
        QCOMPARE(source->lastReport().gpusWithoutData, size_t { 1 });
    }

    void aMissingGpuHasNoData()
    {
        FakePrometheus fake;
        answerFleet(fake);
        for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
            if (const auto q = PrometheusSource::queryFor(static_cast<MetricId>(m))) {
                fake.set(*q, { 200, vectorAnswer(metricSeries(static_cast<MetricId>(m), "node-3", 6)), 0 });
            }
        }
        auto source = startSource(fake, nullptr);
        QVERIFY(source);
        auto frame = source->poll();
        QVERIFY(frame);
        const auto g = static_cast<size_t>(denseIndex("node-3", 6));
        QCOMPARE(frame->health[g], health::noData);
        QCOMPARE(frame->plane(MetricId::HealthState)[g], float(health::noData));
        QVERIFY(std::isnan(frame->plane(MetricId::GpuTemp)[g]));
        QCOMPARE(frame->health[g - 1], health::ok);
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
        fake.set(*PrometheusSource::queryFor(MetricId::GpuTemp), { 200, vectorAnswer(temps), 0 });
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

        fake.set(*PrometheusSource::queryFor(MetricId::GpuTemp), { status, body, delayMs });
        answerTimestamp(fake, 1700000001.5);
        QElapsedTimer timer;
        timer.start();
        QVERIFY(!source->poll());
        QVERIFY2(timer.elapsed() < 2500, "the time-out did not cut the slow answer short");
        const std::string error = source->upstreamError();
        QVERIFY2(contains(error, expected.toStdString().c_str()), error.c_str());
        QVERIFY2(contains(error, "DCGM_FI_DEV_GPU_TEMP"), error.c_str()); // which query failed
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
        QVERIFY(!other.start({ "http://127.0.0.1:" + std::to_string(port), {}, 500ms }, &error));
        QVERIFY2(contains(error, "cannot connect"), error.c_str());
        QVERIFY(!other.start({ "https://example.invalid", {}, 500ms }, &error));
        QVERIFY2(contains(error, "https is not supported"), error.c_str());
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
        QCOMPARE(source.latest()->health[0], health::noData); // before the first poll
        QTRY_COMPARE(source.latest()->sequence, uint64_t { 1 });
        QCOMPARE(source.latest()->sampleTimeMs, int64_t { 1700000000500 });

        fake.set(*PrometheusSource::queryFor(MetricId::GpuTemp), { 500, "down", 0 });
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
        const int pollsBefore = fake.requests(PrometheusSource::sampleTimeQuery());
        const int tempBefore = fake.requests(*PrometheusSource::queryFor(MetricId::GpuTemp));
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
        QCOMPARE(fake.requests(*PrometheusSource::queryFor(MetricId::GpuTemp)) - tempBefore, 2);
        QVERIFY(fake.requests(PrometheusSource::sampleTimeQuery()) > pollsBefore);

        fake.set(*PrometheusSource::queryFor(MetricId::GpuTemp), { 500, "down", 0 });
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
