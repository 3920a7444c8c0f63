// SPDX-License-Identifier: Apache-2.0
// A fake Prometheus HTTP API for the source's tests: canned JSON per query, on its own thread.
#pragma once

#include <QHash>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>
#include <QTimer>
#include <QUrl>
#include <QUrlQuery>

#include <cstring>
#include <mutex>
#include <string>

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
    // Everything is made here, before the thread starts, and destroyed on that thread as its loop ends: no call
    // crosses threads through Qt's queues, whose synchronization ThreadSanitizer cannot see (the thread's start and
    // join, which it does see, order them).
    FakePrometheus()
    {
        m_server = new QTcpServer(this);
        m_server->listen(QHostAddress::LocalHost, 0);
        m_port = m_server->serverPort();
        connect(m_server, &QTcpServer::newConnection, this, [this] {
            while (auto *socket = m_server->nextPendingConnection()) {
                connect(socket, &QTcpSocket::readyRead, this, [this, socket] { serve(socket); });
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
        // Emitted on the server's thread as it ends, with its event dispatcher still there. m_mutex tells the
        // destructor it is done: QThread::wait() synchronizes inside Qt, out of ThreadSanitizer's sight.
        connect(
            &m_thread, &QThread::finished, m_server,
            [this] {
                delete m_server;
                std::lock_guard lock(m_mutex);
                m_server = nullptr;
            },
            Qt::DirectConnection);
        moveToThread(&m_thread);
        m_thread.start();
    }
    ~FakePrometheus() override
    {
        m_thread.quit();
        m_thread.wait();
        std::lock_guard lock(m_mutex);
        Q_ASSERT(!m_server);
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

    void set(const std::string &query, Answer answer)
    {
        std::lock_guard lock(m_mutex);
        m_answers[QString::fromStdString(query)] = std::move(answer);
    }
    int requests(const std::string &query) const
    {
        std::lock_guard lock(m_mutex);
        return m_requests.value(QString::fromStdString(query));
    }
    // Answers for /api/v1/query_range, by query.
    void setRange(const std::string &query, Answer answer) { set(rangeKey + query, std::move(answer)); }
    int rangeRequests(const std::string &query) const { return requests(rangeKey + query); }
    // The start, end and step (as sent) of the last range query for this query.
    QStringList lastRange(const std::string &query) const
    {
        std::lock_guard lock(m_mutex);
        return m_ranges.value(QString::fromStdString(query));
    }
    static constexpr const char *rangeKey = "range:";

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
        const QUrlQuery items(url.query());
        const bool range = url.path() == QStringLiteral("/api/v1/query_range");
        const QString query
            = QLatin1String(range ? rangeKey : "") + items.queryItemValue(QStringLiteral("query"), QUrl::FullyDecoded);
        Answer answer;
        {
            std::lock_guard lock(m_mutex);
            if (range) {
                m_ranges[query.mid(static_cast<qsizetype>(std::strlen(rangeKey)))]
                    = QStringList { items.queryItemValue(QStringLiteral("start")),
                          items.queryItemValue(QStringLiteral("end")), items.queryItemValue(QStringLiteral("step")) };
            }
            ++m_requests[query];
            answer = m_answers.value(query,
                Answer { 400,
                    R"({"status":"error","errorType":"bad_data","error":"the fake has no answer for this query"})",
                    0 });
        }
        if (url.path() != QStringLiteral("/api/v1/query") && !range) {
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
    quint16 m_port = 0; // set before the thread starts
    QHash<QTcpSocket *, QByteArray> m_buffers; // server thread only
    // Guards m_answers, m_requests and m_ranges, set by the test, read by the server thread, and orders the server's
    // end before the destructor's.
    mutable std::mutex m_mutex;
    QHash<QString, Answer> m_answers;
    QHash<QString, int> m_requests;
    QHash<QString, QStringList> m_ranges;
};
