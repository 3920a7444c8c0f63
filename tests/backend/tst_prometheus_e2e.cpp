// SPDX-License-Identifier: Apache-2.0
// The whole real chain: the simulator's dcgm-exporter page, scraped by a real Prometheus (Debian's `prometheus`),
// read back by the backend's Prometheus source and served over gRPC to the real client library. What the client
// receives is what the simulator holds, for the same GPUs, stamped with the scrape time Prometheus reports. The
// simulation is frozen on one frame so that every scrape sees the same page.
#include "backendserver.h"
#include "exporterserver.h"
#include "framesource.h"
#include "prometheusprocess.h"
#include "prometheussource.h"
#include "telemetryclient.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <map>
#include <mutex>

using namespace fleetscope;
namespace be = fleetscope::backend;
using fleetscope::testing::freePort;
using fleetscope::testing::httpGet;
using fleetscope::testing::ProcessGuard;
using namespace std::chrono_literals;

namespace {

// Unix milliseconds as the `time` parameter of the HTTP API.
QByteArray apiTime(int64_t ms)
{
    return QByteArray::number(ms / 1000) + '.' + QByteArray::number(ms % 1000).rightJustified(3, '0');
}

// The vector an instant query answers (at evalMs when given), or an empty array while it has none.
QJsonArray instantQuery(int port, const QString &query, int64_t evalMs = 0)
{
    QByteArray target = "/api/v1/query?query=" + QUrl::toPercentEncoding(query);
    if (evalMs > 0) {
        target += "&time=" + apiTime(evalMs);
    }
    const auto doc = QJsonDocument::fromJson(httpGet(port, target)).object();
    if (doc.value(QStringLiteral("status")).toString() != QStringLiteral("success")) {
        return {};
    }
    return doc.value(QStringLiteral("data")).toObject().value(QStringLiteral("result")).toArray();
}

// A sample's value as Prometheus prints it (a string), as a double; NaN when it is not a number.
double sampleValue(const QJsonValue &entry)
{
    bool ok = false;
    const double v = entry.toObject().value(QStringLiteral("value")).toArray().at(1).toString().toDouble(&ok);
    return ok ? v : std::nan("");
}

bool online(const be::SimFrame &frame, uint32_t g)
{
    return (frame.health[g] & 0x07U) != be::health::offline;
}

// The simulator's value after the trip the chain makes: the exporter prints integers for DCGM's int64 fields and
// power to the milliwatt with %f, Prometheus parses the text into a float64, and the source narrows it to a float.
float throughTheChain(be::MetricId id, float simulated)
{
    for (const auto &family : be::ExporterPage::families()) {
        if (family.metric == id) {
            const double printed = family.isDouble ? std::round(static_cast<double>(simulated) * 1000.0) / 1000.0
                                                   : static_cast<double>(std::llround(simulated));
            return static_cast<float>(printed);
        }
    }
    return std::nanf("");
}

// The simulator's floor plan as an operator's topology file: halls of rows of racks of hosts, with GPU counts.
QByteArray topologyFileOf(const be::FleetShape &shape)
{
    QJsonArray halls;
    for (const auto &row : shape.rows) {
        if (halls.isEmpty()
            || halls.last().toObject().value(QStringLiteral("name")).toString() != QString::fromStdString(row.hall)) {
            halls.append(QJsonObject { { QStringLiteral("name"), QString::fromStdString(row.hall) },
                { QStringLiteral("rows"), QJsonArray() } });
        }
        QJsonArray racks;
        for (uint32_t r = row.firstRack; r < row.firstRack + row.rackCount; ++r) {
            const auto &rack = shape.racks[r];
            QJsonArray hosts;
            for (uint32_t n = rack.firstNode; n < rack.firstNode + rack.nodeCount; ++n) {
                hosts.append(
                    QJsonObject { { QStringLiteral("hostname"), QString::fromStdString(shape.nodes[n].hostname) },
                        { QStringLiteral("gpus"), static_cast<int>(shape.nodes[n].gpuCount) } });
            }
            racks.append(QJsonObject {
                { QStringLiteral("name"), QString::fromStdString(rack.name) }, { QStringLiteral("hosts"), hosts } });
        }
        QJsonObject hall = halls.last().toObject();
        QJsonArray rows = hall.value(QStringLiteral("rows")).toArray();
        rows.append(QJsonObject {
            { QStringLiteral("name"), QString::fromStdString(row.name) }, { QStringLiteral("racks"), racks } });
        hall.insert(QStringLiteral("rows"), rows);
        halls.replace(halls.size() - 1, hall);
    }
    return QJsonDocument(
        QJsonObject { { QStringLiteral("site"), QStringLiteral("e2e") }, { QStringLiteral("halls"), halls } })
        .toJson();
}

const std::vector<std::pair<be::MetricId, QString>> comparedMetrics
    = { { be::MetricId::GpuTemp, QStringLiteral("gpu_temp") }, { be::MetricId::Power, QStringLiteral("power") },
          { be::MetricId::GpuUtil, QStringLiteral("gpu_util") } };

} // namespace

class TestPrometheusE2e : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            QSKIP("the prometheus binary is not installed (Debian package 'prometheus'; scripts/common.sh installs "
                  "it for CI): the simulator-to-Prometheus-to-client chain is not tested here");
        }

        // One simulated step of 130 s puts the node-flap scenario's node down (from 120 s, for a minute), so that the
        // chain also carries a node that reports nothing. Frozen on that frame (the next step is a second away):
        // every scrape gets the same page.
        be::FrameSource::Options options;
        options.gpuCount = 256;
        options.seed = 11;
        options.interval = 1000ms;
        options.speed = 130;
        options.scenario = be::Scenario::Kind::NodeFlap;
        m_simulator = std::make_unique<be::FrameSource>(options);
        QTRY_VERIFY_WITH_TIMEOUT(m_simulator->latest()->sequence >= 1, 5000);
        m_simulator->stop();
        m_frame = m_simulator->latest();
        m_exporter = std::make_unique<be::ExporterServer>(*m_simulator, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(m_exporter->start("127.0.0.1:0", &error), error.c_str());

        QVERIFY(m_dir.isValid());
        const QString config = m_dir.filePath(QStringLiteral("prometheus.yml"));
        {
            QFile file(config);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QStringLiteral("global:\n"
                                      "  scrape_interval: 1s\n"
                                      "  scrape_timeout: 1s\n"
                                      "scrape_configs:\n"
                                      "  - job_name: dcgm\n"
                                      "    static_configs:\n"
                                      "      - targets: ['127.0.0.1:%1']\n")
                           .arg(m_exporter->port())
                           .toUtf8());
        }
        m_port = freePort();
        QVERIFY(m_port > 0);
        m_prometheus.process.setProcessChannelMode(QProcess::MergedChannels);
        m_prometheus.process.start(prometheus,
            { QStringLiteral("--config.file=") + config,
                QStringLiteral("--storage.tsdb.path=") + m_dir.filePath(QStringLiteral("data")),
                QStringLiteral("--web.listen-address=127.0.0.1:%1").arg(m_port), QStringLiteral("--log.level=warn") });
        QVERIFY2(m_prometheus.process.waitForStarted(10000), qPrintable(m_prometheus.process.errorString()));

        const auto &shape = m_simulator->shape();
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            m_online += online(*m_frame, g) ? 1 : 0;
        }
        QVERIFY2(m_online == shape.gpuCount - be::FleetShape::gpusPerNode,
            qPrintable(QStringLiteral("%1 of %2 GPUs online in the frozen frame (sequence %3); expected all but the "
                                      "flapping node's")
                           .arg(m_online)
                           .arg(shape.gpuCount)
                           .arg(m_frame->sequence)));

        // The first scrape lands a few seconds after the start: poll until every online GPU's temperature is there.
        QDeadlineTimer deadline(30000);
        for (;;) {
            const auto temps = instantQuery(m_port, QStringLiteral("DCGM_FI_DEV_GPU_TEMP"));
            if (static_cast<uint32_t>(temps.size()) == m_online) {
                break;
            }
            if (deadline.hasExpired() || m_prometheus.process.state() == QProcess::NotRunning) {
                QFAIL(qPrintable(QStringLiteral("Prometheus did not answer all %1 GPUs in time (has %2); its log:\n%3")
                                     .arg(m_online)
                                     .arg(temps.size())
                                     .arg(QString::fromUtf8(m_prometheus.process.readAll()))));
            }
            QTest::qWait(200);
        }
    }

    // No topology file: the layout comes from the series' labels, one node per Hostname with its online GPUs.
    void layoutFromLabels()
    {
        const auto &shape = m_simulator->shape();
        const auto topology = subscribe({});
        QVERIFY(topology);

        // Nodes whose every GPU is offline have no series, so no place in the derived layout.
        std::vector<std::pair<QString, uint32_t>> expectedNodes;
        for (const auto &node : shape.nodes) {
            uint32_t count = 0;
            for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
                count += online(*m_frame, g) ? 1 : 0;
            }
            if (count > 0) {
                expectedNodes.emplace_back(QString::fromStdString(node.hostname), count);
            }
        }
        QCOMPARE(topology->nodes.size(), expectedNodes.size());
        // The simulator's hostnames (r01-k01-n01, ...) are in natural order, as the derived layout puts them.
        for (size_t n = 0; n < expectedNodes.size(); ++n) {
            QCOMPARE(topology->nodes[n].hostname, expectedNodes[n].first);
            QCOMPARE(topology->nodes[n].gpuCount, expectedNodes[n].second);
            QCOMPARE(topology->nodes[n].model, QStringLiteral("NVIDIA H100 80GB HBM3"));
        }
        QCOMPARE(topology->gpuCount, m_online);

        // A derived GPU is the simulator's GPU with the same UUID, on the same host.
        std::map<QString, uint32_t> simulatorGpuByUuid;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            simulatorGpuByUuid[QString::fromStdString(shape.gpuUuid(g)).toLower()] = g;
        }
        std::vector<int64_t> simulatorGpu(topology->gpuCount, -1);
        for (uint32_t i = 0; i < topology->gpuCount; ++i) {
            const auto it = simulatorGpuByUuid.find(topology->uuidText(i).toLower());
            QVERIFY2(it != simulatorGpuByUuid.end(), qPrintable(topology->uuidText(i)));
            QCOMPARE(topology->nodeOf(i).hostname,
                QString::fromStdString(shape.nodes[shape.nodeOfGpu[it->second]].hostname));
            simulatorGpu[i] = it->second;
        }
        checkFrame(simulatorGpu);
    }

    // With a topology file written from the simulator's floor plan: the same rows, racks and hosts, in that order,
    // and offline GPUs kept in place as "no data".
    void layoutFromFile()
    {
        const auto &shape = m_simulator->shape();
        const QString path = m_dir.filePath(QStringLiteral("topology.json"));
        {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(topologyFileOf(shape));
        }
        const auto topology = subscribe(path.toStdString());
        QVERIFY(topology);

        QCOMPARE(topology->gpuCount, shape.gpuCount);
        QCOMPARE(topology->rows.size(), shape.rows.size());
        for (size_t r = 0; r < shape.rows.size(); ++r) {
            QCOMPARE(topology->rows[r].name, QString::fromStdString(shape.rows[r].name));
            QCOMPARE(topology->rows[r].hall, QString::fromStdString(shape.rows[r].hall));
        }
        QCOMPARE(topology->racks.size(), shape.racks.size());
        for (size_t r = 0; r < shape.racks.size(); ++r) {
            QCOMPARE(topology->racks[r].name, QString::fromStdString(shape.racks[r].name));
            QCOMPARE(topology->racks[r].row, shape.racks[r].row);
            QCOMPARE(topology->racks[r].nodeCount, shape.racks[r].nodeCount);
        }
        QCOMPARE(topology->nodes.size(), shape.nodes.size());
        for (size_t n = 0; n < shape.nodes.size(); ++n) {
            QCOMPARE(topology->nodes[n].hostname, QString::fromStdString(shape.nodes[n].hostname));
            QCOMPARE(topology->nodes[n].gpuCount, shape.nodes[n].gpuCount);
            QCOMPARE(topology->nodes[n].firstGpu, shape.nodes[n].firstGpu);
        }
        // Same layout, same dense order: GPU i is the simulator's GPU i, and its UUID says so where it reports.
        std::vector<int64_t> simulatorGpu(shape.gpuCount);
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            simulatorGpu[g] = g;
            if (online(*m_frame, g)) {
                QCOMPARE(topology->uuidText(g).toLower(), QString::fromStdString(shape.gpuUuid(g)).toLower());
            } else {
                QVERIFY(topology->uuidText(g).isEmpty());
            }
        }
        checkFrame(simulatorGpu);
    }

    void cleanupTestCase()
    {
        m_client.reset();
        m_backend.reset();
        if (m_prometheus.process.state() != QProcess::NotRunning) {
            m_prometheus.process.terminate();
            QVERIFY(m_prometheus.process.waitForFinished(20000));
        }
    }

private:
    // Starts the backend in-process on the Prometheus source and subscribes the real client to it. Returns the
    // topology the client received, with m_received set to its first frame with data; null on failure.
    TopologyPtr subscribe(const std::string &topologyFile)
    {
        m_received.reset();
        m_client.reset();
        m_backend.reset();

        auto source = std::make_unique<be::PrometheusSource>([this](const std::string &line) {
            std::lock_guard lock(m_logMutex);
            m_log += line + '\n';
        });
        be::PrometheusSource::Options options;
        options.url = "http://127.0.0.1:" + std::to_string(m_port);
        options.topologyFile = topologyFile;
        options.timeout = 5000ms;
        std::string error;
        if (!source->start(options, &error)) {
            qWarning("the Prometheus source did not start: %s", error.c_str());
            return nullptr;
        }
        be::FrameSource::Options sourceOptions;
        sourceOptions.interval = 200ms;
        m_backend
            = std::make_unique<be::BackendServer>(std::make_unique<be::FrameSource>(std::move(source), sourceOptions));
        if (!m_backend->start("127.0.0.1:0", &error)) {
            qWarning("the backend did not start: %s", error.c_str());
            return nullptr;
        }

        m_client = std::make_unique<TelemetryClient>();
        QStringList ids;
        for (const auto &m : comparedMetrics) {
            ids.append(m.second);
        }
        m_client->setMetrics(ids);
        QSignalSpy frames(m_client.get(), &TelemetryClient::frameReady);
        m_client->start(QString::fromStdString(m_backend->listeningAddress()));
        // Sequence 0 is the frame served before the first poll, without data.
        QDeadlineTimer deadline(15000);
        while (!m_received || m_received->sequence == 0) {
            if (deadline.hasExpired()) {
                std::lock_guard lock(m_logMutex);
                qWarning("no frame with data reached the client (state: %s); the source's log:\n%s",
                    qPrintable(m_client->stateDetail()), m_log.c_str());
                return nullptr;
            }
            if (frames.isEmpty() && !frames.wait(static_cast<int>(std::max<qint64>(1, deadline.remainingTime())))) {
                continue;
            }
            while (!frames.isEmpty()) {
                m_received = frames.takeFirst().at(0).value<FramePtr>();
            }
        }
        return m_client->topology();
    }

    // Every GPU of the received frame against the frozen simulator frame (simulatorGpu: received index -> simulator
    // index), and its sample time against the scrape times Prometheus holds.
    void checkFrame(const std::vector<int64_t> &simulatorGpu)
    {
        const auto frame = m_received;
        QVERIFY(frame);
        QCOMPARE(frame->health.size(), simulatorGpu.size());
        size_t compared = 0;
        for (const auto &[id, key] : comparedMetrics) {
            const MetricPlane *plane = frame->plane(key);
            QVERIFY2(plane, qPrintable(key));
            QCOMPARE(plane->values.size(), simulatorGpu.size());
            const auto &simulated = m_frame->plane(id);
            for (size_t i = 0; i < simulatorGpu.size(); ++i) {
                const auto g = static_cast<uint32_t>(simulatorGpu[i]);
                const float got = plane->values[i];
                if (!online(*m_frame, g)) {
                    // Not on the page, so not in Prometheus: no data, not a stale or made-up value.
                    QVERIFY2(std::isnan(got), qPrintable(QStringLiteral("%1 of offline GPU %2").arg(key).arg(g)));
                    QCOMPARE(health::stateOf(frame->health[i]), health::NoData);
                    continue;
                }
                const float expected = throughTheChain(id, simulated[g]);
                if (got != expected) {
                    QFAIL(qPrintable(QStringLiteral("%1 of GPU %2 (received as %3): %4 received, %5 simulated")
                                         .arg(key)
                                         .arg(g)
                                         .arg(i)
                                         .arg(static_cast<double>(got), 0, 'g', 9)
                                         .arg(static_cast<double>(expected), 0, 'g', 9)));
                }
                QVERIFY(health::stateOf(frame->health[i]) != health::NoData);
                ++compared;
            }
        }
        QCOMPARE(compared, static_cast<size_t>(m_online) * comparedMetrics.size());

        // The frame's time is a scrape's: evaluated at that very millisecond, every GPU's newest sample was taken
        // then. A query time (or any other time) would find the scrape before it instead.
        const int64_t t = frame->sampleTimeMs;
        QVERIFY(t > 0);
        const auto stamps = instantQuery(m_port, QStringLiteral("timestamp(DCGM_FI_DEV_GPU_TEMP)"), t);
        QCOMPARE(static_cast<uint32_t>(stamps.size()), m_online);
        for (const auto &stamp : stamps) {
            QCOMPARE(std::llround(sampleValue(stamp) * 1000.0), t);
        }
        // And it is a recent scrape: no newer than the newest Prometheus holds now, and a few intervals behind it
        // at most.
        const auto newest = instantQuery(m_port, QStringLiteral("max(timestamp(DCGM_FI_DEV_GPU_TEMP))"));
        QCOMPARE(newest.size(), 1);
        const int64_t newestMs = std::llround(sampleValue(newest.at(0)) * 1000.0);
        QVERIFY2(t <= newestMs && newestMs - t < 15000,
            qPrintable(QStringLiteral("frame time %1, newest scrape %2").arg(t).arg(newestMs)));
    }

    // Destroyed in reverse: the client, the backend (before the log it writes to), Prometheus, then the exporter and
    // the simulator it serves.
    std::unique_ptr<be::FrameSource> m_simulator;
    std::shared_ptr<const be::SimFrame> m_frame;
    std::unique_ptr<be::ExporterServer> m_exporter;
    QTemporaryDir m_dir;
    ProcessGuard m_prometheus;
    int m_port = 0;
    uint32_t m_online = 0;
    std::mutex m_logMutex; // the source logs from the backend's ticker thread
    std::string m_log;
    std::unique_ptr<be::BackendServer> m_backend;
    std::unique_ptr<TelemetryClient> m_client;
    FramePtr m_received;
};

QTEST_GUILESS_MAIN(TestPrometheusE2e)
#include "tst_prometheus_e2e.moc"
