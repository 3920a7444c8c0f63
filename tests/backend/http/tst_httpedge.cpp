// SPDX-License-Identifier: Apache-2.0
// The backend's HTTP doors (BoundedHttpServer over libmicrohttpd), on their own: the door's rule, TLS, tokens and
// client certificates (with libcurl as the client), and what hostile clients can and cannot do to the default
// settings: silent sockets, slow readers, trickled heads and bodies, one address's many connections, bodies past the
// limit. Clients come from other loopback addresses (127.0.0.2, 127.0.0.3) where a test needs them told apart.
#include "http/boundedhttpserver.h"

#include "tests/backend/testing/rawhttp.h"
#include "tests/backend/testing/testcertificates.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QTest>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include <curl/curl.h>

namespace be = fleetscope::backend;
using namespace fleetscope::testing;
using namespace std::chrono_literals;

namespace {

// A door answering 200 "ok N" (N: the body's size) to POST and GET of /x, counting what its handler saw.
struct Door
{
    explicit Door(const be::BoundedHttpServer::Limits &limits = {}, be::BoundedHttpServer::Security security = {})
        : server(
            limits, std::move(security), { "GET", "POST" },
            [this](const be::HttpRequest &request, be::HttpResponse &response) {
                ++handled;
                response.status = request.path == "/x" ? 200 : 404;
                response.body = "ok " + std::to_string(request.body.size()) + "\n";
            },
            [this](const std::string &line) {
                std::lock_guard lock(mutex);
                logged.push_back(line);
            })
    { }
    bool start(const std::string &address = "127.0.0.1:0")
    {
        std::string error;
        if (!server.start(address, &error)) {
            qWarning("%s", error.c_str());
            return false;
        }
        return true;
    }
    std::vector<std::string> log()
    {
        std::lock_guard lock(mutex);
        return logged;
    }
    std::atomic<int> handled { 0 };
    std::mutex mutex;
    std::vector<std::string> logged;
    be::BoundedHttpServer server;
};

struct CurlAnswer
{
    long status = 0;
    std::string body;
    std::string headers;
    std::string error; // curl's, when no answer came
};

// One request with libcurl: over TLS when url is https (the test CA trusted), with a token and a client certificate
// when given.
CurlAnswer curlRequest(const std::string &url, const TestCertificates *certs, const std::string &token = {},
    const QString &clientName = {}, const std::string &body = {}, const char *from = nullptr)
{
    CurlAnswer answer;
    CURL *curl = curl_easy_init();
    if (from != nullptr) {
        curl_easy_setopt(curl, CURLOPT_INTERFACE, from);
    }
    char error[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 20000L);
    auto append = +[](char *data, size_t size, size_t n, void *out) {
        static_cast<std::string *>(out)->append(data, size * n);
        return size * n;
    };
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, append);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &answer.headers);
    const std::string ca = certs ? certs->crt(QStringLiteral("ca")).toStdString() : std::string();
    const std::string cert = clientName.isEmpty() ? std::string() : certs->crt(clientName).toStdString();
    const std::string key = clientName.isEmpty() ? std::string() : certs->key(clientName).toStdString();
    if (certs) {
        curl_easy_setopt(curl, CURLOPT_CAINFO, ca.c_str());
    }
    if (!cert.empty()) {
        curl_easy_setopt(curl, CURLOPT_SSLCERT, cert.c_str());
        curl_easy_setopt(curl, CURLOPT_SSLKEY, key.c_str());
    }
    curl_slist *headers = nullptr;
    const std::string authorization = "Authorization: Bearer " + token;
    if (!token.empty()) {
        headers = curl_slist_append(headers, authorization.c_str());
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    }
    if (!body.empty()) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    }
    if (curl_easy_perform(curl) == CURLE_OK) {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
    } else {
        answer.error = error;
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return answer;
}

be::BoundedHttpServer::Security withToken(const TestCertificates &certs, const std::string &token)
{
    be::BoundedHttpServer::Security security;
    security.tlsCertFile = certs.crt(QStringLiteral("server")).toStdString();
    security.tlsKeyFile = certs.key(QStringLiteral("server")).toStdString();
    security.tokenFile = "test";
    security.acceptsToken = [token](std::string_view t) { return t == token; };
    security.optionPrefix = "--test";
    return security;
}

QByteArray get(const char *path = "/x")
{
    return QByteArray("GET ") + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
}

} // namespace

class TestHttpEdge : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        QVERIFY2(m_certs.make(), qPrintable(m_certs.error()));
    }

    void cleanupTestCase() { curl_global_cleanup(); }

    // One rule for every door: a routable address only with TLS and a credential, or insecureListen said out loud.
    void routableAddressesNeedTlsAndACredential()
    {
        std::string error;
        {
            Door open;
            QVERIFY(!open.server.start("0.0.0.0:0", &error));
            QVERIFY2(error.find("not a loopback address") != std::string::npos
                    && error.find("--http-tls-cert") != std::string::npos
                    && error.find("--insecure-listen") != std::string::npos,
                error.c_str());
        }
        {
            auto security = withToken(m_certs, "t");
            security.acceptsToken = nullptr; // TLS, but no credential
            Door tlsOnly({}, security);
            QVERIFY(!tlsOnly.server.start("0.0.0.0:0", &error));
            QVERIFY2(error.find("--test-token-file") != std::string::npos, error.c_str());
        }
        {
            be::BoundedHttpServer::Security security;
            security.acceptsToken = [](std::string_view) { return true; }; // a token over plain HTTP
            Door plainToken({}, security);
            QVERIFY(!plainToken.server.start("127.0.0.1:0", &error));
            QVERIFY2(error.find("need --http-tls-cert") != std::string::npos, error.c_str());
        }
        Door guarded({}, withToken(m_certs, "t"));
        QVERIFY(guarded.server.start("0.0.0.0:0", &error));
        be::BoundedHttpServer::Security insecure;
        insecure.insecureListen = true;
        Door said({}, insecure);
        QVERIFY(said.server.start("0.0.0.0:0", &error));
        // Loopback in every spelling needs nothing.
        for (const char *host : { "127.0.0.1", "127.0.0.2", "localhost", "[::1]" }) {
            Door local;
            QVERIFY2(local.server.start(std::string(host) + ":0", &error), host);
        }
        QVERIFY(be::isLoopbackHost("127.255.0.1"));
        QVERIFY(!be::isLoopbackHost("128.0.0.1"));
        QVERIFY(!be::isLoopbackHost("0.0.0.0"));
        QVERIFY(!be::isLoopbackHost("::"));
        QVERIFY(!be::isLoopbackHost("localhost.example"));
    }

    // Tokens: none or a wrong one is 401 with WWW-Authenticate before the body is read (the handler never runs); the
    // right one is served. Refusals are logged once a minute per address and reason, never with what was sent.
    void tokensAreChecked()
    {
        Door door({}, withToken(m_certs, "s3cret-token"));
        QVERIFY(door.start());
        const std::string url = door.server.url() + "/x";
        QVERIFY(url.rfind("https://127.0.0.1:", 0) == 0);
        const auto none = curlRequest(url, &m_certs, {}, {}, "body");
        QCOMPARE(none.status, 401L);
        QVERIFY2(none.headers.find("WWW-Authenticate: Bearer realm=\"fleetscope-backend\"") != std::string::npos,
            none.headers.c_str());
        const auto wrong = curlRequest(url, &m_certs, "guessed-token", {}, "body");
        QCOMPARE(wrong.status, 401L);
        QVERIFY(wrong.headers.find("error=\"invalid_token\"") != std::string::npos);
        curlRequest(url, &m_certs, "guessed-again", {}, "body");
        QCOMPARE(door.handled.load(), 0);
        const auto right = curlRequest(url, &m_certs, "s3cret-token", {}, "body");
        QCOMPARE(right.status, 200L);
        QCOMPARE(right.body, std::string("ok 4\n"));
        QCOMPARE(door.handled.load(), 1);
        QCOMPARE(door.server.load().unauthorized, uint64_t(3));
        const auto log = door.log();
        QCOMPARE(log.size(), size_t(2)); // no token; a wrong token (twice, logged once)
        for (const auto &line : log) {
            QVERIFY2(
                line.find("guessed") == std::string::npos && line.find("s3cret") == std::string::npos, line.c_str());
            QVERIFY2(line.find("127.0.0.1") != std::string::npos, line.c_str());
        }
        // Plain HTTP to a TLS door gets no answer.
        QVERIFY(curlRequest("http://" + door.server.listeningAddress() + "/x", nullptr).status != 200);
    }

    // Guessing is slow: past refusalsPerMinute refusals from one address its requests are answered 429 before their
    // token is looked at (the right token too), while another address is served as before.
    void refusalsAreLimitedPerAddress()
    {
        be::BoundedHttpServer::Limits limits;
        limits.refusalsPerMinute = 3;
        Door door(limits, withToken(m_certs, "right-token"));
        QVERIFY(door.start());
        const std::string url = door.server.url() + "/x";
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(curlRequest(url, &m_certs, "guess-" + std::to_string(i), {}, {}, "127.0.0.2").status, 401L);
        }
        const auto held = curlRequest(url, &m_certs, "right-token", {}, {}, "127.0.0.2");
        QCOMPARE(held.status, 429L);
        QVERIFY2(held.headers.find("Retry-After: 60") != std::string::npos, held.headers.c_str());
        QCOMPARE(door.handled.load(), 0);
        QCOMPARE(curlRequest(url, &m_certs, "right-token", {}, {}, "127.0.0.1").status, 200L);
        QCOMPARE(door.handled.load(), 1);
    }

    // Mutual TLS: a certificate from the client CA is let in, none or one from another CA is not.
    void clientCertificates()
    {
        auto security = withToken(m_certs, "t");
        security.acceptsToken = nullptr;
        security.clientCaFile = m_certs.crt(QStringLiteral("ca")).toStdString();
        Door door({}, security);
        QVERIFY(door.start());
        const std::string url = door.server.url() + "/x";
        QCOMPARE(curlRequest(url, &m_certs, {}, QStringLiteral("client")).status, 200L);
        const auto none = curlRequest(url, &m_certs);
        QVERIFY2(none.status == 403L, none.error.c_str());
        const auto stranger = curlRequest(url, &m_certs, {}, QStringLiteral("strangerclient"));
        QVERIFY2(stranger.status == 403L || !stranger.error.empty(), stranger.body.c_str());
        QCOMPARE(door.handled.load(), 1);
        // A client CA file that holds no certificate is refused at start.
        auto broken = security;
        broken.clientCaFile = m_certs.key(QStringLiteral("ca")).toStdString();
        Door bad({}, broken);
        std::string error;
        QVERIFY(!bad.server.start("127.0.0.1:0", &error));
        QVERIFY2(!error.empty(), error.c_str());
    }

    // The default settings against 64 silent sockets and 64 slow readers: they hold descriptors, not threads, and a
    // real request beside them is answered within 2 s.
    void silentSocketsAndSlowReaders()
    {
        Door door;
        QVERIFY(door.start());
        const int port = door.server.port();
        std::vector<std::unique_ptr<QTcpSocket>> silent;
        std::vector<std::unique_ptr<QTcpSocket>> slow;
        for (int i = 0; i < 64; ++i) {
            silent.push_back(connectFrom("127.0.0.2", port));
            QVERIFY(silent.back());
            slow.push_back(connectFrom("127.0.0.3", port));
            QVERIFY(slow.back());
            // A slow reader asks and never reads: its answer waits in the socket buffers.
            slow.back()->setReadBufferSize(1);
            slow.back()->write(get() + get() + get());
        }
        QTRY_VERIFY_WITH_TIMEOUT(door.server.load().connections >= 128, 10000);
        QElapsedTimer timer;
        timer.start();
        const auto answer = request(port, get() + "Connection: close\r\n\r\n", 2000);
        const qint64 ms = timer.elapsed();
        QVERIFY(answer.complete);
        QCOMPARE(answer.status, 200);
        QVERIFY2(ms < 2000, qPrintable(QString::number(ms)));
        qInfo("answered in %lld ms beside 64 silent sockets and 64 slow readers", ms);
    }

    // One address holds at most maxConnectionsPerAddress; past that it is closed at once, and others are served.
    void connectionsPerAddress()
    {
        be::BoundedHttpServer::Limits limits;
        limits.maxConnectionsPerAddress = 8;
        Door door(limits);
        QVERIFY(door.start());
        const int port = door.server.port();
        std::vector<std::unique_ptr<QTcpSocket>> held;
        for (int i = 0; i < 8; ++i) {
            held.push_back(connectFrom("127.0.0.2", port));
            QVERIFY(held.back());
        }
        QTRY_COMPARE_WITH_TIMEOUT(door.server.load().connections, size_t(8), 10000);
        auto ninth = connectFrom("127.0.0.2", port);
        QVERIFY(ninth); // the kernel accepts it; the door closes it
        ninth->write(get());
        QTRY_COMPARE_WITH_TIMEOUT(ninth->state(), QAbstractSocket::UnconnectedState, 10000);
        QCOMPARE(request(port, get() + "Connection: close\r\n\r\n").status, 200);
    }

    // Heads and bodies have a time each however slowly they trickle in, and an idle connection has its own.
    void deadlines()
    {
        be::BoundedHttpServer::Limits limits;
        limits.requestTimeout = 500ms;
        limits.idleTimeout = 800ms;
        Door door(limits);
        QVERIFY(door.start());
        const int port = door.server.port();
        const auto trickleUntilClosed = [](QTcpSocket &socket, const QByteArray &piece) {
            QElapsedTimer since;
            since.start();
            QDeadlineTimer giveUp(10000);
            while (socket.state() == QAbstractSocket::ConnectedState && !giveUp.hasExpired()) {
                socket.write(piece);
                socket.waitForDisconnected(100);
            }
            return since.elapsed();
        };
        auto head = connectFrom("127.0.0.1", port);
        head->write("GET /x HTTP/1.1\r\n");
        const qint64 headMs = trickleUntilClosed(*head, "X-Slow: a\r\n");
        QVERIFY2(headMs < 3000, qPrintable(QString::number(headMs)));
        auto body = connectFrom("127.0.0.1", port);
        body->write("POST /x HTTP/1.1\r\nContent-Length: 60000\r\n\r\n");
        const qint64 bodyMs = trickleUntilClosed(*body, "x");
        QVERIFY2(bodyMs < 3000, qPrintable(QString::number(bodyMs)));
        QCOMPARE(door.handled.load(), 0);
        // Kept alive after an answer, then idle: closed after idleTimeout.
        auto idle = connectFrom("127.0.0.1", port);
        idle->write(get());
        QCOMPARE(readResponse(*idle, QDeadlineTimer(5000)).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(idle->state(), QAbstractSocket::UnconnectedState, 5000);
        // A silent connection too, within requestTimeout.
        auto silent = connectFrom("127.0.0.1", port);
        QTRY_COMPARE_WITH_TIMEOUT(silent->state(), QAbstractSocket::UnconnectedState, 5000);
        QVERIFY(door.server.load().timedOut >= 3);
        QTRY_COMPARE_WITH_TIMEOUT(door.server.load().connections, size_t(0), 5000);
    }

    // A body past the limit: 413 from its Content-Length before any of it is read; a chunked one is cut when it
    // passes the limit. Neither reaches the handler; a body within the limit sent in pieces arrives whole.
    void bodies()
    {
        be::BoundedHttpServer::Limits limits;
        limits.maxBodyBytes = 1000;
        Door door(limits);
        QVERIFY(door.start());
        const int port = door.server.port();
        const auto big = request(port, "POST /x HTTP/1.1\r\nContent-Length: 1001\r\n\r\n");
        QCOMPARE(big.status, 413);
        QVERIFY(big.body.startsWith("413 "));
        QTcpSocket chunked;
        QVERIFY(connectTo(chunked, port));
        chunked.write("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (int i = 0; i < 20 && chunked.state() == QAbstractSocket::ConnectedState; ++i) {
            chunked.write("64\r\n" + QByteArray(100, 'x') + "\r\n");
            chunked.waitForBytesWritten(1000);
        }
        chunked.write("0\r\n\r\n");
        const auto cut = readResponse(chunked, QDeadlineTimer(5000));
        QVERIFY(!cut.complete || cut.status >= 400);
        QCOMPARE(door.handled.load(), 0);
        QTcpSocket pieces;
        QVERIFY(connectTo(pieces, port));
        pieces.write("POST /x HTTP/1.1\r\nContent-Length: 1000\r\n\r\n");
        for (int i = 0; i < 10; ++i) {
            pieces.write(QByteArray(100, 'y'));
            pieces.waitForBytesWritten(1000);
        }
        const auto whole = readResponse(pieces, QDeadlineTimer(5000));
        QCOMPARE(whole.status, 200);
        QCOMPARE(whole.body, QByteArray("ok 1000\n"));
    }

    // What the library refuses: answered 4xx or 5xx (or closed), never handed on, and the door serves on. The heads a
    // request smuggler needs (two lengths, a length beside chunking) are refused.
    void malformedRequests_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::newRow("garbage") << QByteArray("GARBAGE\r\n\r\n");
        QTest::newRow("bad version") << QByteArray("GET /x HTTP/9.9\r\n\r\n");
        QTest::newRow("binary") << QByteArray("\x00\x01\x02\xff\r\n\r\n", 8);
        QTest::newRow("head past the limit")
            << QByteArray("GET /x HTTP/1.1\r\nX: ") + QByteArray(40000, 'a') + "\r\n\r\n";
        QTest::newRow("request line past the limit") << "GET /" + QByteArray(40000, 'a') + " HTTP/1.1\r\n\r\n";
        QTest::newRow("bad content length") << QByteArray("POST /x HTTP/1.1\r\nContent-Length: x\r\n\r\n");
        QTest::newRow("two content lengths")
            << QByteArray("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab");
        QTest::newRow("length and chunked")
            << QByteArray("POST /x HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
        QTest::newRow("method") << QByteArray("DELETE /x HTTP/1.1\r\n\r\n");
    }

    void malformedRequests()
    {
        QFETCH(QByteArray, raw);
        Door door;
        QVERIFY(door.start());
        const auto response = request(door.server.port(), raw, 5000);
        QVERIFY2(!response.complete || response.status >= 400,
            qPrintable(QStringLiteral("%1 %2").arg(response.status).arg(QString::fromLatin1(response.head))));
        QCOMPARE(door.handled.load(), 0);
        QCOMPARE(request(door.server.port(), get() + "Connection: close\r\n\r\n").status, 200);
    }

    // stop() does not wait for clients, and a second server on a port in use does not start.
    void stopAndPortInUse()
    {
        Door door;
        QVERIFY(door.start());
        auto idle = connectFrom("127.0.0.1", door.server.port());
        auto half = connectFrom("127.0.0.1", door.server.port());
        half->write("GET /x HTTP/1.1\r\n");
        Door second;
        std::string error;
        QVERIFY(!second.server.start("127.0.0.1:" + std::to_string(door.server.port()), &error));
        QVERIFY2(error.find("in use") != std::string::npos, error.c_str());
        QElapsedTimer timer;
        timer.start();
        door.server.stop();
        QVERIFY(timer.elapsed() < 5000);
        QTRY_COMPARE_WITH_TIMEOUT(idle->state(), QAbstractSocket::UnconnectedState, 5000);
    }

private:
    TestCertificates m_certs;
};

QTEST_GUILESS_MAIN(TestHttpEdge)
#include "tst_httpedge.moc"
