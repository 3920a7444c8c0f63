// SPDX-License-Identifier: Apache-2.0
// The real chain with VictoriaMetrics in Prometheus' place: the simulator's dcgm-exporter page, scraped by a real
// single-node VictoriaMetrics (Debian's `victoria-metrics`), read by the fleetscope-backend executable started as an
// operator would (--source prometheus --prometheus-url), and served over gRPC to the real client library. What the
// client receives is what the simulator holds, for the same GPUs, stamped with the scrape time VictoriaMetrics
// reports. The simulation is frozen on one frame so that every scrape sees the same page.
#include "client/telemetryclient.h"
#include "core/framesource.h"
#include "dcgm/metricmap.h"
#include "sim/exporterserver.h"
#include "tests/backend/testing/chaincheck.h"
#include "tests/backend/testing/prometheusprocess.h"
#include "tests/realparts.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <cmath>
#include <map>
#include <set>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace fleetscope::testing;
using namespace std::chrono_literals;

namespace {

// The simulator's floor plan as an operator's YAML topology file.
QByteArray yamlTopologyOf(const be::FleetShape &shape)
{
    QByteArray text = "# written by tst_victoriametrics_e2e from the simulator's floor plan\nsite: e2e\nhalls:\n";
    std::string hall;
    for (const auto &row : shape.rows) {
        if (row.hall != hall) {
            hall = row.hall;
            text += "  - name: " + QByteArray::fromStdString(hall) + "\n    rows:\n";
        }
        text += "      - name: " + QByteArray::fromStdString(row.name) + "\n        racks:\n";
        for (uint32_t r = row.firstRack; r < row.firstRack + row.rackCount; ++r) {
            const auto &rack = shape.racks[r];
            text += "          - name: " + QByteArray::fromStdString(rack.name) + "\n            hosts:\n";
            for (uint32_t n = rack.firstNode; n < rack.firstNode + rack.nodeCount; ++n) {
                text += "              - {hostname: " + QByteArray::fromStdString(shape.nodes[n].hostname)
                    + ", gpus: " + QByteArray::number(shape.nodes[n].gpuCount) + "}\n";
            }
        }
    }
    return text;
}

} // namespace

class TestVictoriaMetricsE2e : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        const QString victoriaMetrics = QStandardPaths::findExecutable(QStringLiteral("victoria-metrics"));
        if (victoriaMetrics.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT(
                "the victoria-metrics binary is not installed (Debian package 'victoria-metrics'; "
                "scripts/common.sh installs it for CI): the chain through VictoriaMetrics is not tested here");
        }

        const QString unserved = m_fleet.serve(); // a node down, every scrape the same page
        QVERIFY2(unserved.isEmpty(), qPrintable(unserved));

        QVERIFY(m_dir.isValid());
        const QString config = m_dir.filePath(QStringLiteral("scrape.yml"));
        QVERIFY(testing::writeFile(config, testing::scrapeConfig(m_fleet.exporter->port())));
        m_port = freePort();
        QVERIFY(m_port > 0);
        QVERIFY2(testing::startVictoriaMetrics(
                     &m_victoria, victoriaMetrics, config, m_dir.filePath(QStringLiteral("data")), m_port),
            qPrintable(m_victoria.process.errorString()));

        // Scraped samples reach the searchable storage in the background; the flush makes them searchable now.
        const QString late
            = testing::waitForServer(m_victoria, QStringLiteral("VictoriaMetrics"), 30000, [&](QString *detail) {
                  int status = 0;
                  httpGet(m_port, "/internal/force_flush", 2000, &status);
                  const auto temps = instantQuery(m_port, QStringLiteral("DCGM_FI_DEV_GPU_TEMP"));
                  *detail = QStringLiteral("%1 of %2 GPUs, flush status %3")
                                .arg(temps.size())
                                .arg(m_fleet.online)
                                .arg(status);
                  return status == 200 && static_cast<uint32_t>(temps.size()) == m_fleet.online;
              });
        QVERIFY2(late.isEmpty(), qPrintable(late));
    }

    // No topology file: the layout comes from the series' labels, one node per Hostname with its online GPUs.
    void layoutFromLabels()
    {
        const auto &shape = m_fleet.simulator->shape();
        const auto topology = subscribe({});
        QVERIFY(topology);

        const auto expectedNodes = nodesWithSeries(shape, *m_fleet.frame);
        QCOMPARE(topology->nodes.size(), expectedNodes.size());
        for (size_t n = 0; n < expectedNodes.size(); ++n) {
            QCOMPARE(topology->nodes[n].hostname, expectedNodes[n].first);
            QCOMPARE(topology->nodes[n].gpuCount, expectedNodes[n].second);
        }
        QCOMPARE(topology->gpuCount, m_fleet.online);

        std::vector<int64_t> simulatorGpu;
        const QString mismatch = matchGpusByUuid(*topology, shape, &simulatorGpu);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        checkFrame(simulatorGpu);
    }

    // With a YAML topology file written from the simulator's floor plan: the same rows, racks and hosts in that
    // order, offline GPUs kept in place as "no data". Through the /prometheus prefix, as VictoriaMetrics cluster's
    // vmselect URLs have one.
    void layoutFromYamlFile()
    {
        const auto &shape = m_fleet.simulator->shape();
        const QString path = m_dir.filePath(QStringLiteral("topology.yaml"));
        QVERIFY(testing::writeFile(path, yamlTopologyOf(shape)));
        const auto topology = subscribe(path, QStringLiteral("/prometheus"));
        QVERIFY(topology);

        const QString difference = layoutDifference(*topology, shape);
        QVERIFY2(difference.isEmpty(), qPrintable(difference));
        std::vector<int64_t> simulatorGpu(shape.gpuCount);
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            simulatorGpu[g] = g;
            if (online(*m_fleet.frame, g)) {
                QCOMPARE(topology->uuidText(g).toLower(), QString::fromStdString(shape.gpuUuid(g)).toLower());
            }
        }
        checkFrame(simulatorGpu);
    }

    // NVLink's errors as the catalogue sums them (MetricMap::increaseQuery) in MetricsQL: one series per online GPU,
    // the sum of the flow-control and data CRC counters' own increases (0: the page is frozen), no label of the sum's
    // making.
    void nvlinkErrorsSummedInMetricsQl()
    {
        const auto map = be::MetricMap::profile(be::MetricMap::Profile::Gen3x482);
        const auto names = map.seriesNames(be::MetricId::NvlinkErrors);
        QCOMPARE(names.size(), size_t { 2 });
        const QString summed = QString::fromStdString(map.increaseQuery(be::MetricId::NvlinkErrors, ""));
        const QString late
            = testing::waitForServer(m_victoria, QStringLiteral("VictoriaMetrics"), 30000, [&](QString *detail) {
                  int status = 0;
                  httpGet(m_port, "/internal/force_flush", 2000, &status);
                  const auto data = instantQuery(m_port, QString::fromStdString(names.back()));
                  *detail = QStringLiteral("%1 of %2 GPUs' data CRC counters").arg(data.size()).arg(m_fleet.online);
                  return static_cast<uint32_t>(data.size()) == m_fleet.online;
              });
        QVERIFY2(late.isEmpty(), qPrintable(late));
        const auto answer = instantQuery(m_port, summed);
        QVERIFY2(static_cast<uint32_t>(answer.size()) == m_fleet.online, qPrintable(summed));
        std::set<std::pair<QString, QString>> gpus;
        for (const auto &entry : answer) {
            const auto labels = entry.toObject().value(QStringLiteral("metric")).toObject();
            QVERIFY(!labels.contains(QStringLiteral("fleetscope_part")));
            gpus.emplace(
                labels.value(QStringLiteral("Hostname")).toString(), labels.value(QStringLiteral("gpu")).toString());
            QCOMPARE(sampleValue(entry), 0.0);
        }
        QCOMPARE(static_cast<uint32_t>(gpus.size()), m_fleet.online);
    }

    void cleanupTestCase()
    {
        m_client.reset();
        stopBackend();
        if (m_victoria.process.state() != QProcess::NotRunning) {
            m_victoria.process.terminate();
            QVERIFY(m_victoria.process.waitForFinished(20000));
        }
    }

private:
    void stopBackend()
    {
        if (m_backend && m_backend->process.state() != QProcess::NotRunning) {
            m_backend->process.terminate();
            m_backend->process.waitForFinished(10000);
        }
        m_backend.reset();
    }

    // Starts fleetscope-backend on the VictoriaMetrics server, as an operator would, and subscribes the real client
    // to it. Returns the topology the client received, with m_received set to its first frame with data; null on
    // failure.
    TopologyPtr subscribe(const QString &topologyFile, const QString &prefix = {})
    {
        m_received.reset();
        m_client.reset();
        stopBackend();

        m_backend = std::make_unique<ProcessGuard>();
        QStringList arguments
            = { QStringLiteral("--source"), QStringLiteral("prometheus"), QStringLiteral("--prometheus-url"),
                  QStringLiteral("http://127.0.0.1:%1%2").arg(m_port).arg(prefix), QStringLiteral("--listen"),
                  QStringLiteral("127.0.0.1:0"), QStringLiteral("--interval-ms"), QStringLiteral("200") };
        if (!topologyFile.isEmpty()) {
            arguments << QStringLiteral("--topology") << topologyFile;
        }
        m_backend->process.start(QStringLiteral(FLEETSCOPE_BIN_DIR "/fleetscope-backend"), arguments);
        QByteArray output;
        const QByteArray address = testing::waitForLine(m_backend->process, "listening on ", 20000, &output);
        if (address.isEmpty()) {
            qWarning("fleetscope-backend did not start: %s\n%s", output.constData(),
                m_backend->process.readAllStandardError().constData());
            return nullptr;
        }

        m_client = std::make_unique<TelemetryClient>();
        QStringList ids;
        for (const auto &m : comparedMetrics()) {
            ids.append(m.second);
        }
        m_client->setMetrics(ids);
        QSignalSpy frames(m_client.get(), &TelemetryClient::frameReady);
        m_client->start(QString::fromUtf8(address));
        m_received = waitForFrameWithData(frames, m_received, 15000);
        if (!m_received || m_received->sequence == 0) {
            qWarning("no frame with data reached the client (state: %s); the backend's log:\n%s",
                qPrintable(m_client->stateDetail()), m_backend->process.readAllStandardError().constData());
            return nullptr;
        }
        return m_client->topology();
    }

    // Every GPU of the received frame against the frozen simulator frame, and its sample time against the scrape
    // times the server holds (chainDifference).
    void checkFrame(const std::vector<int64_t> &simulatorGpu)
    {
        QVERIFY(m_received);
        const QString difference = chainDifference(m_port, *m_received, m_fleet, simulatorGpu, "/internal/force_flush");
        QVERIFY2(difference.isEmpty(), qPrintable(difference));
    }

    // Destroyed in reverse: the client, the backend, VictoriaMetrics, then the exporter and the simulator it serves.
    FrozenFleetPage m_fleet;
    QTemporaryDir m_dir;
    ProcessGuard m_victoria;
    int m_port = 0;
    std::unique_ptr<ProcessGuard> m_backend;
    std::unique_ptr<TelemetryClient> m_client;
    FramePtr m_received;
};

QTEST_GUILESS_MAIN(TestVictoriaMetricsE2e)
#include "tst_victoriametrics_e2e.moc"
