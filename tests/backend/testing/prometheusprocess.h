// SPDX-License-Identifier: Apache-2.0
// What the tests that start a real Prometheus or VictoriaMetrics share: a free port to give it, a scrape
// configuration, a plain HTTP GET of its API (which answers chunked), starting the server, waiting until it answers,
// reading a process's announcement, and a guard that stops the process however the test ends.
#pragma once

#include <QByteArray>
#include <QDeadlineTimer>
#include <QFile>
#include <QNetworkProxy>
#include <QProcess>
#include <QStringList>
#include <QTcpSocket>
#include <QTest>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

namespace fleetscope::testing {

// A port free at the moment of asking (Prometheus takes its listen address on the command line).
inline int freePort()
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

// GET over HTTP/1.1 with Connection: close; the body of a 200 answer, or empty on any failure. With status, the
// answer's status too (0 when there was none).
inline QByteArray httpGet(int port, const QByteArray &target, int timeoutMs = 5000, int *status = nullptr)
{
    if (status) {
        *status = 0;
    }
    QTcpSocket socket;
    socket.setProxy(QNetworkProxy::NoProxy); // as rawhttp.h connectTo
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
    if (status && data.startsWith("HTTP/1.") && data.size() > 12) {
        *status = data.mid(9, 3).toInt();
    }
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

inline bool writeFile(const QString &path, const QByteArray &content)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(content) == content.size();
}

// A Prometheus configuration (VictoriaMetrics reads the same) scraping one target every second.
inline QByteArray scrapeConfig(int targetPort)
{
    return "global:\n"
           "  scrape_interval: 1s\n"
           "  scrape_timeout: 1s\n"
           "scrape_configs:\n"
           "  - job_name: dcgm\n"
           "    static_configs:\n"
           "      - targets: ['127.0.0.1:"
        + QByteArray::number(targetPort) + "']\n";
}

// A scrape job for the simulator's node_exporter and facility pages, over the file_sd targets file it writes
// (ExporterServer::writeNodeExporterTargetsFile): appended to scrapeConfig's.
inline QByteArray nodeExporterScrapeJob(const QString &targetsFile)
{
    return "  - job_name: node\n"
           "    file_sd_configs:\n"
           "      - files: ['"
        + targetsFile.toUtf8() + "']\n";
}

// Waits for a line of the process's standard output that starts with prefix; that line without it, or empty (the
// output so far in *seen) when the process ends or the time is up first.
inline QByteArray waitForLine(QProcess &process, const QByteArray &prefix, int timeoutMs, QByteArray *seen = nullptr)
{
    QByteArray all;
    QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        while (process.canReadLine()) {
            const QByteArray line = process.readLine();
            all += line;
            if (line.startsWith(prefix)) {
                return line.mid(prefix.size()).trimmed();
            }
        }
        if (deadline.hasExpired() || process.state() == QProcess::NotRunning) {
            all += process.readAll();
            if (seen) {
                *seen = all;
            }
            return {};
        }
        process.waitForReadyRead(static_cast<int>(std::min<qint64>(deadline.remainingTime(), 200)));
    }
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

// Polls ready() every intervalMs until it says yes, the server's process ends, or timeoutMs passes: the one loop of
// "wait until this external server answers" the end-to-end suites share. Empty when ready; else why not, for QVERIFY2:
// `what` did not answer in time, what ready() last put in *detail, and the server's output.
inline QString waitForServer(ProcessGuard &server, const QString &what, int timeoutMs,
    const std::function<bool(QString *detail)> &ready, int intervalMs = 200)
{
    QDeadlineTimer deadline(timeoutMs);
    QString detail;
    for (;;) {
        if (ready(&detail)) {
            return {};
        }
        if (deadline.hasExpired() || server.process.state() == QProcess::NotRunning) {
            return QStringLiteral("%1 did not answer in time (%2); its log:\n%3")
                .arg(what, detail, QString::fromUtf8(server.process.readAll()));
        }
        QTest::qWait(intervalMs);
    }
}

// Debian's `prometheus` (2.42 in bookworm) on 127.0.0.1:port, storing under dataDir; extra arguments appended
// (--web.config.file=...). Started, not yet ready: poll its API.
inline bool startPrometheus(ProcessGuard *guard, const QString &binary, const QString &config, const QString &dataDir,
    int port, const QStringList &extra = {})
{
    guard->process.setProcessChannelMode(QProcess::MergedChannels);
    guard->process.start(binary,
        QStringList { QStringLiteral("--config.file=") + config, QStringLiteral("--storage.tsdb.path=") + dataDir,
            QStringLiteral("--web.listen-address=127.0.0.1:%1").arg(port), QStringLiteral("--log.level=warn") }
            + extra);
    return guard->process.waitForStarted(10000);
}

// Debian's `victoria-metrics` (single-node, 1.79 in bookworm) on 127.0.0.1:port scraping as config says. Samples
// are searchable at once (no 30 s latency offset) once /internal/force_flush has been called.
inline bool startVictoriaMetrics(
    ProcessGuard *guard, const QString &binary, const QString &config, const QString &dataDir, int port)
{
    guard->process.setProcessChannelMode(QProcess::MergedChannels);
    guard->process.start(binary,
        { QStringLiteral("-storageDataPath=") + dataDir, QStringLiteral("-httpListenAddr=127.0.0.1:%1").arg(port),
            QStringLiteral("-promscrape.config=") + config, QStringLiteral("-search.latencyOffset=0s"),
            QStringLiteral("-loggerLevel=WARN") });
    return guard->process.waitForStarted(10000);
}

} // namespace fleetscope::testing
