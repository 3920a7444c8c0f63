// SPDX-License-Identifier: Apache-2.0
// A real chain: a real Prometheus (Debian's `prometheus`) scrapes the simulator's dcgm-exporter page, and what it
// stored is what the simulator's frame holds, GPU by GPU. The simulation is frozen on one frame so that every scrape
// sees the same page.
#include "exporterserver.h"

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

namespace {

// A port free at the moment of asking (Prometheus takes its listen address on the command line).
int freePort()
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    int port = 0;
    socklen_t length = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0
        && getsockname(fd, reinterpret_cast<sockaddr *>(&a), &length) == 0) {
        port = ntohs(a.sin_port);
    }
    close(fd);
    return port;
}

// GET over HTTP/1.1 with Connection: close; the body, or empty on any failure.
QByteArray httpGet(int port, const QByteArray &target, int timeoutMs = 5000)
{
    QTcpSocket socket;
    socket.connectToHost(QStringLiteral("127.0.0.1"), static_cast<quint16>(port));
    if (!socket.waitForConnected(timeoutMs)) {
        return {};
    }
    socket.write("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    QByteArray data;
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        socket.waitForReadyRead(static_cast<int>(std::min<qint64>(deadline.remainingTime(), 500)));
        data += socket.readAll();
        if (socket.state() == QAbstractSocket::UnconnectedState) {
            data += socket.readAll();
            break;
        }
    }
    const auto headEnd = data.indexOf("\r\n\r\n");
    if (!data.startsWith("HTTP/1.1 200") || headEnd < 0) {
        return {};
    }
    QByteArray body = data.mid(headEnd + 4);
    if (data.left(headEnd).toLower().contains("transfer-encoding: chunked")) {
        // Prometheus' API answers chunked: strip the chunk framing.
        QByteArray plain;
        qsizetype p = 0;
        for (;;) {
            const auto eol = body.indexOf("\r\n", p);
            if (eol < 0) {
                return {};
            }
            bool ok = false;
            const auto size = body.mid(p, eol - p).trimmed().toLongLong(&ok, 16);
            if (!ok) {
                return {};
            }
            if (size == 0) {
                break;
            }
            plain += body.mid(eol + 2, size);
            p = eol + 2 + size + 2;
        }
        body = plain;
    }
    return body;
}

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

// Terminates the process when the test leaves, passing or failing.
struct ProcessGuard
{
    QProcess process;
    ~ProcessGuard()
    {
        if (process.state() != QProcess::NotRunning) {
            process.terminate();
            if (!process.waitForFinished(10000)) {
                process.kill();
                process.waitForFinished(5000);
            }
        }
    }
};

} // namespace

class TestPrometheusChain : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void prometheusStoresWhatTheSimulatorServes()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            QSKIP("the prometheus binary is not installed (Debian package 'prometheus'; scripts/common.sh installs "
                  "it for CI): the exporter-to-Prometheus chain is not tested here");
        }

        be::FrameSource::Options options;
        options.gpuCount = 256;
        options.seed = 11;
        be::FrameSource source(options);
        source.stop(); // frozen on its first frame: every scrape gets the same page
        be::ExporterServer exporter(source, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString config = dir.filePath(QStringLiteral("prometheus.yml"));
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
                           .arg(exporter.port())
                           .toUtf8());
        }
        const int port = freePort();
        QVERIFY(port > 0);
        ProcessGuard guard;
        guard.process.setProcessChannelMode(QProcess::MergedChannels);
        guard.process.start(prometheus,
            { QStringLiteral("--config.file=") + config,
                QStringLiteral("--storage.tsdb.path=") + dir.filePath(QStringLiteral("data")),
                QStringLiteral("--web.listen-address=127.0.0.1:%1").arg(port), QStringLiteral("--log.level=warn") });
        QVERIFY2(guard.process.waitForStarted(10000), qPrintable(guard.process.errorString()));

        const auto frame = source.latest();
        const auto &shape = source.shape();
        size_t online = 0;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            online += (frame->health[g] & 0x07U) == be::health::offline ? 0 : 1;
        }
        QVERIFY(online > 0);

        // The first scrape lands a few seconds after the start: poll until every GPU's temperature is there.
        QDeadlineTimer deadline(60000);
        QJsonArray temps;
        while (static_cast<size_t>(temps.size()) < online) {
            if (deadline.hasExpired() || guard.process.state() == QProcess::NotRunning) {
                QFAIL(qPrintable(QStringLiteral("Prometheus did not answer all %1 GPUs in time (has %2); its log:\n%3")
                                     .arg(online)
                                     .arg(temps.size())
                                     .arg(QString::fromUtf8(guard.process.readAll()))));
            }
            QTest::qWait(250);
            temps = instantQuery(port, QStringLiteral("DCGM_FI_DEV_GPU_TEMP"));
        }

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
