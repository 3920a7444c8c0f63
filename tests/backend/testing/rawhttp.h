// SPDX-License-Identifier: Apache-2.0
#pragma once
// HTTP spoken byte by byte over a QTcpSocket, for the tests of the backend's HTTP endpoints (the exporter, the
// remote-write receiver): requests written as they are, malformed or slow if need be, and answers read strictly.
#include <QByteArray>
#include <QDeadlineTimer>
#include <QHostAddress>
#include <QNetworkProxy>
#include <QTcpSocket>
#include <QVariant>

#include <algorithm>
#include <memory>

namespace fleetscope::testing {

struct HttpResponse
{
    int status = 0;
    QByteArray head;
    QByteArray body;
    bool complete = false; // a whole response (status line, headers, Content-Length bytes of body) arrived
};

// Reads one Content-Length-framed response from the socket within the deadline; what came after it is left in the
// socket's "leftover" property.
inline HttpResponse readResponse(QTcpSocket &socket, QDeadlineTimer deadline, bool headOnly = false)
{
    HttpResponse r;
    QByteArray data;
    qsizetype headEnd = -1;
    qsizetype length = -1;
    for (;;) {
        data += socket.readAll();
        if (headEnd < 0 && (headEnd = data.indexOf("\r\n\r\n")) >= 0) {
            r.head = data.left(headEnd);
            const auto lines = r.head.split('\n');
            const auto statusLine = lines.value(0).split(' ');
            r.status = statusLine.value(1).toInt();
            length = 0;
            for (const auto &line : lines) {
                if (line.toLower().startsWith("content-length:")) {
                    length = line.mid(15).trimmed().toLongLong();
                }
            }
            if (headOnly) {
                length = 0;
            }
        }
        if (headEnd >= 0 && data.size() >= headEnd + 4 + length) {
            r.body = data.mid(headEnd + 4, length);
            r.complete = true;
            socket.setProperty("leftover", data.mid(headEnd + 4 + length));
            return r;
        }
        if (deadline.hasExpired() || socket.state() != QAbstractSocket::ConnectedState) {
            if (socket.bytesAvailable() == 0) {
                return r;
            }
            continue;
        }
        socket.waitForReadyRead(static_cast<int>(std::min<qint64>(deadline.remainingTime(), 1000)));
    }
}

inline bool connectTo(QTcpSocket &socket, int port)
{
    // Straight to loopback: no system proxy asked (Qt asks libproxy on a thread of its own, synchronized by a mutex
    // ThreadSanitizer cannot see).
    socket.setProxy(QNetworkProxy::NoProxy);
    socket.connectToHost(QStringLiteral("127.0.0.1"), static_cast<quint16>(port));
    return socket.waitForConnected(5000);
}

// A connection to port from a loopback address of the test's choosing (127.0.0.2, ...: another client to the server).
inline std::unique_ptr<QTcpSocket> connectFrom(const char *from, int port)
{
    auto socket = std::make_unique<QTcpSocket>();
    socket->setProxy(QNetworkProxy::NoProxy); // before bind(), which asks for a proxy too
    socket->bind(QHostAddress(QString::fromLatin1(from)));
    return connectTo(*socket, port) ? std::move(socket) : nullptr;
}

// Sends raw on a connection of its own and reads the answer.
inline HttpResponse request(int port, const QByteArray &raw, int timeoutMs = 20000)
{
    QTcpSocket socket;
    if (!connectTo(socket, port)) {
        return {};
    }
    socket.write(raw);
    socket.waitForBytesWritten(5000);
    return readResponse(socket, QDeadlineTimer(timeoutMs), raw.startsWith("HEAD "));
}

} // namespace fleetscope::testing
