// SPDX-License-Identifier: Apache-2.0
// What the tests that start a real Prometheus share: a free port to give it, a plain HTTP GET of its API (which
// answers chunked), and a guard that stops the process however the test ends.
#pragma once

#include <QByteArray>
#include <QDeadlineTimer>
#include <QProcess>
#include <QTcpSocket>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

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

// GET over HTTP/1.1 with Connection: close; the body, or empty on any failure.
inline QByteArray httpGet(int port, const QByteArray &target, int timeoutMs = 5000)
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

} // namespace fleetscope::testing
