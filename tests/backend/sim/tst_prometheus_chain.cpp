// SPDX-License-Identifier: Apache-2.0
// A real chain: a real Prometheus (Debian's `prometheus`) scrapes the simulator's dcgm-exporter page, and what it
// stored is what the simulator's frame holds, GPU by GPU. The simulation is frozen on one frame so that every scrape
// sees the same page.
#include "sim/exporterserver.h"
#include "sim/simulatedfleet.h"
#include "tests/backend/testing/prometheusprocess.h"
#include "tests/realparts.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
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

namespace be = fleetscope::backend;
using fleetscope::testing::freePort;
using fleetscope::testing::httpGet;
using fleetscope::testing::ProcessGuard;

namespace {

// The vector an instant query answers, or an empty array while it has none.
QJsonArray instantQuery(int port, const QString &query)
{
    const QByteArray body = httpGet(port, "/api/v1/query?query=" + QUrl::toPercentEncoding(query));
    const auto doc = QJsonDocument::fromJson(body).object();
    if (doc.value(QStringLiteral("status")).toString() != QStringLiteral("success")) {
        return {};
    }
    return doc.value(QStringLiteral("data")).toObject().value(QStringLiteral("result")).toArray();
}

} // namespace

class TestPrometheusChain : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void prometheusStoresWhatTheSimulatorServes()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT(
                "the prometheus binary is not installed (Debian package 'prometheus'; scripts/common.sh installs "
                "it for CI): the exporter-to-Prometheus chain is not tested here");
        }

        be::SimulationOptions options;
        options.gpuCount = 256;
        options.seed = 11;
        const auto simulatedSource = be::simulatedSource(options);
        be::FrameSource &source = *simulatedSource;
        source.stop(); // frozen on its first frame: every scrape gets the same page
        be::ExporterServer exporter(source, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString config = dir.filePath(QStringLiteral("prometheus.yml"));
        QVERIFY(fleetscope::testing::writeFile(config, fleetscope::testing::scrapeConfig(exporter.port())));
        const int port = freePort();
        QVERIFY(port > 0);
        ProcessGuard guard;
        QVERIFY2(fleetscope::testing::startPrometheus(
                     &guard, prometheus, config, dir.filePath(QStringLiteral("data")), port),
            qPrintable(guard.process.errorString()));

        const auto frame = source.latest();
        const auto &shape = source.shape();
        size_t online = 0;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            online += (frame->health[g] & 0x07U) == fleetscope::health::Offline ? 0 : 1;
        }
        QVERIFY(online > 0);

        // The first scrape lands a few seconds after the start: poll until every GPU's temperature is there.
        QJsonArray temps;
        const QString late
            = fleetscope::testing::waitForServer(guard, QStringLiteral("Prometheus"), 60000, [&](QString *detail) {
                  temps = instantQuery(port, QStringLiteral("DCGM_FI_DEV_GPU_TEMP"));
                  *detail = QStringLiteral("%1 of %2 GPUs").arg(temps.size()).arg(online);
                  return static_cast<size_t>(temps.size()) >= online;
              });
        QVERIFY2(late.isEmpty(), qPrintable(late));

        std::map<std::pair<QString, QString>, uint32_t> gpuByHostAndIndex;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const auto &node = shape.nodes[shape.nodeOfGpu[g]];
            gpuByHostAndIndex[{ QString::fromStdString(node.hostname), QString::number(g - node.firstGpu) }] = g;
        }
        // Every family, every GPU: Prometheus holds the value the simulator's frame has.
        size_t compared = 0;
        for (const auto &family : be::ExporterPage::families()) {
            const QString name = QString::fromStdString(family.name);
            const QJsonArray series = instantQuery(port, name);
            QCOMPARE(static_cast<size_t>(series.size()), online);
            for (const auto &entry : series) {
                const auto metric = entry.toObject().value(QStringLiteral("metric")).toObject();
                QCOMPARE(metric.value(QStringLiteral("__name__")).toString(), name);
                const auto it = gpuByHostAndIndex.find({ metric.value(QStringLiteral("Hostname")).toString(),
                    metric.value(QStringLiteral("gpu")).toString() });
                QVERIFY2(it != gpuByHostAndIndex.end(), "a series for no GPU of the fleet");
                const uint32_t g = it->second;
                QCOMPARE(metric.value(QStringLiteral("UUID")).toString(), QString::fromStdString(shape.gpuUuid(g)));
                const QString text = entry.toObject().value(QStringLiteral("value")).toArray().at(1).toString();
                bool ok = false;
                const double stored = text.toDouble(&ok);
                QVERIFY2(ok, qPrintable(text));
                const float expected = frame->plane(family.metric)[g];
                if (family.isDouble) {
                    QCOMPARE(static_cast<float>(stored), expected);
                } else {
                    QCOMPARE(stored, static_cast<double>(std::llround(expected)));
                }
                ++compared;
            }
        }
        QCOMPARE(compared, online * be::ExporterPage::families().size());

        guard.process.terminate();
        QVERIFY(guard.process.waitForFinished(20000));
    }
};

QTEST_GUILESS_MAIN(TestPrometheusChain)
#include "tst_prometheus_chain.moc"
