// SPDX-License-Identifier: Apache-2.0
// The exporter's pages as they are served: paths and methods, malformed and slow clients, keep-alive, many scrapes
// at once, a real Prometheus scraping the node targets, the door over TLS with a token, the listen option. What the
// pages hold: tst_exporter.
#include "backendoptions.h"
#include "exportertesting.h"
#include "tests/backend/testing/chaincheck.h"
#include "tests/backend/testing/prometheusprocess.h"
#include "tests/backend/testing/testcertificates.h"
#include "tests/realparts.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include <httplib.h>

namespace be = fleetscope::backend;
using namespace fleetscope::testing;

class TestExporterHttp : public FrozenExporterSuite
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        const std::string error = serveFrozenFleet();
        QVERIFY2(error.empty(), error.c_str());
    }

    void cleanupTestCase()
    {
        if (m_exporter) {
            m_exporter->stop();
        }
    }

    void otherPathsAndMethods()
    {
        const int port = m_exporter->port();
        QCOMPARE(get(port, "/other").status, 404);
        QCOMPARE(get(port, "/").status, 404);
        QCOMPARE(get(port, "/metricsx").status, 404);
        // A query string does not change the path.
        QCOMPARE(get(port, "/metrics?x=1").status, 200);
        const auto post = request(port, "POST /metrics HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
        QCOMPARE(post.status, 405);
        QVERIFY(post.head.contains("Allow: GET, HEAD"));
        const auto head = request(port, "HEAD /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
        QCOMPARE(head.status, 200);
        QVERIFY(head.complete);
        QVERIFY(head.body.isEmpty());
    }

    void malformedRequests_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<int>("status");
        // The parsing is the HTTP edge's (tst_httpedge); here what the exporter's own answers are.
        QTest::newRow("huge body") << QByteArray("GET /metrics HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n") << 413;
        QTest::newRow("chunked post") << QByteArray("POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                                      << 405;
        QTest::newRow("two lengths") << QByteArray(
            "GET /metrics HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n")
                                     << 400;
    }

    void malformedRequests()
    {
        QFETCH(QByteArray, raw);
        QFETCH(int, status);
        const auto response = request(m_exporter->port(), raw);
        QVERIFY(response.complete);
        QCOMPARE(response.status, status);
        // A short text: "404 Not Found\n".
        QVERIFY2(response.body.startsWith(QByteArray(QByteArray::number(status) + ' ')) && response.body.endsWith('\n')
                && response.body.size() < 64,
            response.body.left(200).constData());
        // The server is still there and well.
        QCOMPARE(get(m_exporter->port(), "/metrics").status, 200);
        QCOMPARE(get(m_exporter->port(), "/metrics/" + QByteArray::fromStdString(m_source->shape().nodes[0].hostname))
                     .status,
            200);
    }

    void stalledClientsDoNotBlockOthers()
    {
        // Half a request, never finished, and a connection that says nothing: a scrape beside them still works.
        QTcpSocket half;
        QVERIFY(connectTo(half, m_exporter->port()));
        half.write("GET /metr");
        QVERIFY(half.waitForBytesWritten(5000));
        QTcpSocket silent;
        QVERIFY(connectTo(silent, m_exporter->port()));
        const auto response = get(m_exporter->port(), "/metrics");
        QVERIFY(response.complete);
        QCOMPARE(response.status, 200);
        // A client that goes away mid-request does no harm either.
        half.abort();
        QCOMPARE(get(m_exporter->port(), "/metrics").status, 200);
    }

    void keepAlive()
    {
        QTcpSocket socket;
        QVERIFY(connectTo(socket, m_exporter->port()));
        // Two requests pipelined on one connection, as HTTP/1.1 allows, then a third after the answers.
        socket.write("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto first = readResponse(socket, QDeadlineTimer(20000));
        QVERIFY(first.complete);
        QCOMPARE(first.status, 200);
        // What readResponse read past the first answer is the start of the second.
        const QByteArray leftover = socket.property("leftover").toByteArray();
        QVERIFY(leftover.isEmpty() || leftover.startsWith("HTTP/1.1 "));
        QByteArray rest = leftover;
        QDeadlineTimer deadline(20000);
        while (!rest.contains("\r\n\r\n404 Not Found\n") && !deadline.hasExpired()) {
            socket.waitForReadyRead(500);
            rest += socket.readAll();
        }
        QVERIFY(rest.startsWith("HTTP/1.1 404 Not Found\r\n"));
        socket.write("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
        const auto third = readResponse(socket, QDeadlineTimer(20000));
        QCOMPARE(third.status, 200);
        QCOMPARE(third.body, first.body);
        QVERIFY(third.head.contains("Connection: close"));
        // The server closes after a Connection: close answer.
        QDeadlineTimer closed(10000);
        while (socket.state() == QAbstractSocket::ConnectedState && !closed.hasExpired()) {
            socket.waitForDisconnected(500);
        }
        QCOMPARE(socket.state(), QAbstractSocket::UnconnectedState);
    }

    void concurrentScrapes()
    {
        // A fleet big enough that a page does not fit in the socket buffers: the first answer is left unread while
        // the second is read in full, which only a server that serves both at once can answer.
        const auto source = be::simulatedSource(fleet(10240));
        source->stop();
        be::ExporterServer exporter(*source, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        // The page rendered before the scrapes (under ThreadSanitizer a render of 10,240 GPUs takes seconds, and a
        // connection's head must arrive within the edge's requestTimeout of its start): what is tested is serving.
        QVERIFY(exporter.page());
        QTcpSocket a;
        QTcpSocket b;
        QVERIFY(connectTo(a, exporter.port()));
        a.write("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
        QVERIFY(a.waitForBytesWritten(5000));
        // Let the first answer start before the second request is made.
        QTRY_VERIFY_WITH_TIMEOUT(a.bytesAvailable() > 0 || a.waitForReadyRead(100), 10000);
        QVERIFY(connectTo(b, exporter.port()));
        b.write("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
        QVERIFY(b.waitForBytesWritten(5000));
        const auto second = readResponse(b, QDeadlineTimer(30000));
        QVERIFY2(second.complete, "the second scrape was not answered while the first was in progress");
        const auto first = readResponse(a, QDeadlineTimer(30000));
        QVERIFY(first.complete);
        QCOMPARE(first.status, 200);
        QCOMPARE(second.status, 200);
        QVERIFY(first.body.size() > 8 << 20);
        QCOMPARE(first.body, second.body);
        exporter.stop();
    }

    void stopWithOpenConnections()
    {
        be::ExporterServer exporter(*m_source, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        QTcpSocket idle;
        QVERIFY(connectTo(idle, exporter.port()));
        QTcpSocket half;
        QVERIFY(connectTo(half, exporter.port()));
        half.write("GET /metrics HTTP/1.1\r\n");
        QVERIFY(half.waitForBytesWritten(5000));
        QDeadlineTimer timer(5000);
        exporter.stop(); // must not wait for the clients
        QVERIFY(!timer.hasExpired());
        QVERIFY(idle.waitForDisconnected(5000) || idle.state() == QAbstractSocket::UnconnectedState);
    }

    // A real fleet's scrapers: every node target of a 10,240-GPU fleet (1,280 nodes) scraped at once by 64 clients,
    // four per thread of the server, each on a kept-alive connection that it opens again when an answer says the
    // server closes it. Every answer is 200 and that node's page, which parses; no connection is closed unannounced.
    void allNodeTargetsAtOnce()
    {
        const auto source = be::simulatedSource(fleet(10240));
        source->stop();
        be::ExporterServer exporter(*source, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        // Rendered before the scrapes, as in concurrentScrapes: the clients measure serving, not one render.
        QVERIFY(exporter.page());
        const auto &nodes = source->shape().nodes;
        QCOMPARE(nodes.size(), size_t(1280));
        struct Answer
        {
            int status = 0;
            QByteArray body;
        };
        std::vector<Answer> answers(nodes.size());
        std::atomic<size_t> next { 0 };
        std::atomic<int> connections { 0 };
        const int port = exporter.port();
        QElapsedTimer elapsed;
        elapsed.start();
        std::vector<std::thread> clients;
        for (int c = 0; c < 64; ++c) {
            clients.emplace_back([&] {
                std::unique_ptr<QTcpSocket> socket;
                for (size_t k; (k = next++) < nodes.size();) {
                    if (!socket) {
                        socket = std::make_unique<QTcpSocket>();
                        ++connections;
                        if (!connectTo(*socket, port)) {
                            socket.reset();
                            continue;
                        }
                    }
                    socket->write("GET /metrics/" + QByteArray::fromStdString(nodes[k].hostname)
                        + " HTTP/1.1\r\nHost: x\r\n\r\n");
                    const auto response = readResponse(*socket, QDeadlineTimer(60000));
                    answers[k] = { response.complete ? response.status : 0, response.body };
                    if (!response.complete || response.head.contains("Connection: close")) {
                        socket.reset();
                    }
                }
            });
        }
        for (auto &client : clients) {
            client.join();
        }
        qInfo("1,280 node pages by 64 clients: %lld ms, %d connections", elapsed.elapsed(), connections.load());
        const auto rendered = exporter.page();
        for (size_t k = 0; k < nodes.size(); ++k) {
            QVERIFY2(answers[k].status == 200, qPrintable(QStringLiteral("node %1: %2").arg(k).arg(answers[k].status)));
            QCOMPARE(answers[k].body, QByteArray::fromStdString(rendered->nodePage(static_cast<uint32_t>(k))));
            const Page page = parsePage(answers[k].body);
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
        }
        QCOMPARE(exporter.renderCount(), uint64_t(1));
    }

    // A scraper that stops taking its page is dropped after sendTimeout (the edge's inactivity timeout, in whole
    // seconds), and the page it held is let go; other scrapes are served meanwhile (the heads' and idle connections'
    // deadlines are tst_httpedge's).
    void stalledReaderIsDropped()
    {
        be::ExporterServer::Limits limits;
        limits.sendTimeout = std::chrono::milliseconds(1000);
        const auto big = be::simulatedSource(fleet(10240));
        big->stop();
        be::ExporterServer exporter(*big, be::ExporterPage::Options(), limits);
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        // The whole page of 10,240 GPUs is more than the socket buffers hold; this client takes 64 KiB of it.
        QTcpSocket stalled;
        stalled.setReadBufferSize(64 * 1024);
        QVERIFY(connectTo(stalled, exporter.port()));
        stalled.write("GET /metrics HTTP/1.1\r\n\r\n");
        QVERIFY(stalled.waitForReadyRead(20000));
        QCOMPARE(
            get(exporter.port(), "/metrics/" + QByteArray::fromStdString(big->shape().nodes[1].hostname)).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(exporter.load().connections, size_t(0), 10000);
        stalled.setReadBufferSize(0);
        const auto cut = readResponse(stalled, QDeadlineTimer(20000));
        QCOMPARE(cut.status, 200);
        QVERIFY2(!cut.complete, "the stalled client was sent its whole page");
    }

    // Pages go out whole and as they are, whatever the scraper accepts: no gzip (Prometheus asks for it; compressing
    // a page per scrape would cost more than cutting it), no byte ranges, no Accept-Ranges.
    void pagesGoOutWholeAndPlain()
    {
        const QByteArray path = "/metrics/" + QByteArray::fromStdString(m_source->shape().nodes[2].hostname);
        const auto plain = get(m_exporter->port(), path);
        QCOMPARE(plain.status, 200);
        for (const QByteArray &path : { path, QByteArray("/metrics") }) {
            const auto asked = request(m_exporter->port(),
                "GET " + path
                    + " HTTP/1.1\r\nAccept-Encoding: gzip, br\r\nRange: bytes=0-9, 20-29\r\n"
                      "Connection: close\r\n\r\n");
            QVERIFY(asked.complete);
            QCOMPARE(asked.status, 200);
            QVERIFY2(!asked.head.toLower().contains("content-encoding") && !asked.head.toLower().contains("range"),
                asked.head.constData());
            QCOMPARE(asked.body, path == QByteArray("/metrics") ? get(m_exporter->port(), path).body : plain.body);
        }
        const auto head = request(m_exporter->port(), "HEAD " + path + " HTTP/1.1\r\nConnection: close\r\n\r\n");
        QCOMPARE(head.status, 200);
        QVERIFY2(!head.head.toLower().contains("accept-ranges"), head.head.constData());
    }

    // Names that are no node's: 404 with a short text, however they are dressed up, and malformed escapes 400. The
    // server goes on serving.
    void unknownNodes_data()
    {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<int>("status");
        const auto &shape = m_source->shape();
        const QByteArray first = QByteArray::fromStdString(shape.nodes.front().hostname);
        const QByteArray second = QByteArray::fromStdString(shape.nodes[1].hostname);
        auto row = [](const char *name, const QByteArray &path, int status) {
            QTest::newRow(name) << QByteArray("GET " + path + " HTTP/1.1\r\nConnection: close\r\n\r\n") << status;
        };
        row("unknown", QByteArray("/metrics/no-such-host"), 404);
        row("empty", QByteArray("/metrics/"), 404);
        row("dot dot", QByteArray("/metrics/../metrics"), 404);
        row("dot dot escaped", QByteArray("/metrics/%2e%2e/metrics"), 404);
        row("dot dot before a name", "/metrics/../" + first, 404);
        row("trailing slash", "/metrics/" + first + '/', 404);
        row("escaped slash", "/metrics/" + first + "%2F", 404);
        row("double slash", "/metrics//" + first, 404);
        row("two names", "/metrics/" + first + '/' + second, 404);
        row("other case", "/metrics/" + first.toUpper(), 404);
        row("prefix of a name", "/metrics/" + first.left(first.size() - 1), 404);
        row("nul", "/metrics/" + first + "%00", 404);
        row("utf-8", QByteArray("/metrics/r\xc3\xa9"), 404);
        row("2 KiB", "/metrics/" + QByteArray(2048, 'a'), 404);
        row("bad escape", QByteArray("/metrics/%zz"), 400);
        row("cut escape", "/metrics/" + first + "%4", 400);
        row("lone percent", QByteArray("/metrics/%"), 400);
        // Within the 16 KiB a request head may have (a longer head is refused by the edge, see tst_httpedge), a long
        // name is just no node's.
        row("8 KiB", "/metrics/" + QByteArray(8 * 1024 - 64, 'a'), 404);
        row("14 KiB", "/metrics/" + QByteArray(14 * 1024, 'a'), 404);
    }

    void unknownNodes() { malformedRequests(); }

    // A name escaped by the scraper is the same name; a query string does not change it; HEAD answers GET's head
    // without a body, for known nodes and unknown, and the connection goes on.
    void nodePageEscapesAndHead()
    {
        const int port = m_exporter->port();
        const QByteArray hostname = QByteArray::fromStdString(m_source->shape().nodes.back().hostname);
        const auto plain = get(port, "/metrics/" + hostname);
        QCOMPARE(plain.status, 200);
        QVERIFY(!plain.body.isEmpty());
        QByteArray escaped;
        for (const char c : hostname) {
            escaped += '%' + QByteArray(1, c).toHex();
        }
        const auto decoded = get(port, "/metrics/" + escaped);
        QCOMPARE(decoded.status, 200);
        QCOMPARE(decoded.body, plain.body);
        const auto query = get(port, "/metrics/" + hostname + "?collect=all");
        QCOMPARE(query.status, 200);
        QCOMPARE(query.body, plain.body);

        QTcpSocket socket;
        QVERIFY(connectTo(socket, port));
        socket.write("HEAD /metrics/" + hostname + " HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto head = readResponse(socket, QDeadlineTimer(20000), true);
        QVERIFY(head.complete);
        QCOMPARE(head.status, 200);
        const QByteArray length = "Content-Length: " + QByteArray::number(plain.body.size()) + "\r\n";
        QVERIFY(QByteArray(head.head + "\r\n").contains(length));
        socket.write("HEAD /metrics/no-such-host HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto missing = readResponse(socket, QDeadlineTimer(20000), true);
        QVERIFY(missing.complete);
        QCOMPARE(missing.status, 404);
        // Had either answer carried a body, it would be read here as the start of this one.
        socket.write("GET /metrics/" + hostname + " HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto after = readResponse(socket, QDeadlineTimer(20000));
        QVERIFY(after.complete);
        QCOMPARE(after.status, 200);
        QCOMPARE(after.body, plain.body);
    }

    // A real Prometheus (Debian's) given the targets file scrapes one target per node: every one is up, the down
    // node's included (its exporter answers, with no GPU), and it stores the GPUs of the whole page.
    void prometheusScrapesTheNodes()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT(
                "the prometheus binary is not installed (Debian package 'prometheus'): the node targets are not "
                "scraped by a real Prometheus here");
        }
        const Page whole = parsePage(get(m_exporter->port(), "/metrics").body);
        QVERIFY2(whole.error.isEmpty(), qPrintable(whole.error));
        const auto gpus = std::count_if(whole.samples.begin(), whole.samples.end(),
            [](const Sample &s) { return s.name == "DCGM_FI_DEV_GPU_TEMP"; });
        const auto nodes = static_cast<qsizetype>(m_source->shape().nodes.size());

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString targets = dir.filePath(QStringLiteral("targets.json"));
        std::string error;
        QVERIFY2(m_exporter->writeTargetsFile(targets.toStdString(), &error), error.c_str());
        const QString config = dir.filePath(QStringLiteral("prometheus.yml"));
        QVERIFY(fleetscope::testing::writeFile(config,
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: dcgm\n"
            "    file_sd_configs:\n      - files: ['"
                + targets.toUtf8() + "']\n"));
        const int port = fleetscope::testing::freePort();
        QVERIFY(port > 0);
        fleetscope::testing::ProcessGuard server;
        QVERIFY(fleetscope::testing::startPrometheus(
            &server, prometheus, config, dir.filePath(QStringLiteral("data")), port));

        auto count = [&](const QString &query) {
            const auto result = fleetscope::testing::instantQuery(port, query);
            return result.size() == 1 ? fleetscope::testing::sampleValue(result.at(0)) : -1.0;
        };
        const QString late
            = fleetscope::testing::waitForServer(server, QStringLiteral("Prometheus"), 30000, [&](QString *detail) {
                  const double up = count(QStringLiteral("count(up{job=\"dcgm\"} == 1)"));
                  const double scraped = count(QStringLiteral("count(DCGM_FI_DEV_GPU_TEMP)"));
                  *detail = QStringLiteral("%1 of %2 node targets up, %3 of %4 GPUs")
                                .arg(up)
                                .arg(nodes)
                                .arg(scraped)
                                .arg(gpus);
                  return up == static_cast<double>(nodes) && scraped == static_cast<double>(gpus);
              });
        QVERIFY2(late.isEmpty(), qPrintable(late));
        // Every target is one node's, none down, and each GPU came from its own node's page.
        QCOMPARE(count(QStringLiteral("count(up{job=\"dcgm\"})")), static_cast<double>(nodes));
        const auto series = fleetscope::testing::instantQuery(port, QStringLiteral("DCGM_FI_DEV_GPU_TEMP"));
        QCOMPARE(series.size(), gpus);
        for (const auto &entry : series) {
            const auto labels = entry.toObject().value(QStringLiteral("metric")).toObject();
            QCOMPARE(labels.value(QStringLiteral("instance")), labels.value(QStringLiteral("Hostname")));
        }
    }

    // The exporter's door locked (--exporter-tls-cert, -tls-key, -token-file): a real Prometheus scrapes it over TLS
    // with a token (scheme https, tls_config.ca_file, authorization.credentials_file) and has every GPU; a scrape
    // without the token is 401 with WWW-Authenticate, and plain HTTP gets no page.
    void prometheusScrapesOverTlsWithAToken()
    {
        fleetscope::testing::TestCertificates certs;
        QVERIFY2(certs.make(), qPrintable(certs.error()));
        const QString tokens = certs.write(QStringLiteral("tokens"), "scraper-token-1\n");
        const QString token = certs.write(QStringLiteral("scraper.token"), "scraper-token-1\n");
        QVERIFY(QFile::setPermissions(tokens, QFile::ReadOwner | QFile::WriteOwner));
        const auto parsed = be::parseBackendOptions({ "--exporter-listen", "127.0.0.1:0", "--exporter-tls-cert",
            certs.crt(QStringLiteral("server")).toStdString(), "--exporter-tls-key",
            certs.key(QStringLiteral("server")).toStdString(), "--exporter-token-file", tokens.toStdString() });
        QVERIFY2(parsed.error.empty(), parsed.error.c_str());
        auto security = parsed.options.exporterSecurity;
        std::string error;
        QVERIFY2(be::attachTokenFile(&security, &error), error.c_str());
        be::ExporterServer exporter(*m_source, be::ExporterPage::Options(), be::ExporterServer::Limits(), security);
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        QVERIFY(exporter.url().rfind("https://", 0) == 0);
        QVERIFY(!get(exporter.port(), "/metrics").complete); // plain HTTP: no page

        httplib::SSLClient client("127.0.0.1", exporter.port());
        client.set_ca_cert_path(certs.crt(QStringLiteral("ca")).toStdString().c_str());
        client.enable_server_certificate_verification(true);
        const auto refused = client.Get("/metrics");
        QVERIFY(refused);
        QCOMPARE(refused->status, 401);
        QVERIFY(refused->get_header_value("WWW-Authenticate").rfind("Bearer", 0) == 0);
        const auto page = client.Get("/metrics", { { "Authorization", "Bearer scraper-token-1" } });
        QVERIFY(page);
        QCOMPARE(page->status, 200);
        QCOMPARE(QByteArray::fromStdString(page->body), get(m_exporter->port(), "/metrics").body);

        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("the prometheus binary is not installed (Debian package 'prometheus')");
        }
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("prometheus.yml"));
        QVERIFY(fleetscope::testing::writeFile(config,
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: dcgm\n"
            "    scheme: https\n    tls_config:\n      ca_file: "
                + certs.crt(QStringLiteral("ca")).toUtf8() + "\n    authorization:\n      credentials_file: "
                + token.toUtf8() + "\n    static_configs:\n      - targets: ['127.0.0.1:"
                + QByteArray::number(exporter.port()) + "']\n"));
        const int port = fleetscope::testing::freePort();
        fleetscope::testing::ProcessGuard server;
        QVERIFY(fleetscope::testing::startPrometheus(
            &server, prometheus, config, dir.filePath(QStringLiteral("data")), port));
        const Page served = parsePage(QByteArray::fromStdString(page->body));
        const auto gpus = static_cast<double>(std::count_if(served.samples.begin(), served.samples.end(),
            [](const Sample &x) { return x.name == "DCGM_FI_DEV_GPU_TEMP"; }));
        QVERIFY(gpus > 0);
        const QString late
            = fleetscope::testing::waitForServer(server, QStringLiteral("Prometheus"), 30000, [&](QString *detail) {
                  const auto result
                      = fleetscope::testing::instantQuery(port, QStringLiteral("count(DCGM_FI_DEV_GPU_TEMP)"));
                  const double scraped = result.size() == 1 ? fleetscope::testing::sampleValue(result.at(0)) : -1.0;
                  *detail = QStringLiteral("%1 of %2 GPUs scraped over TLS").arg(scraped).arg(gpus);
                  return scraped == gpus;
              });
        QVERIFY2(late.isEmpty(), qPrintable(late));
    }

    void listenOption()
    {
        auto parse = [](std::vector<std::string> args) { return be::parseBackendOptions(args); };
        const auto ok = parse({ "--exporter-listen", "127.0.0.1:9400", "--exporter-topology-labels" });
        QVERIFY2(ok.error.empty(), ok.error.c_str());
        QCOMPARE(ok.options.exporterListen, std::string("127.0.0.1:9400"));
        QVERIFY(ok.options.exporterTopologyLabels);
        QVERIFY(parse({}).options.exporterListen.empty());
        QVERIFY(parse({ "--exporter-listen", "[::1]:0" }).error.empty());
        for (const char *bad : { "9400", "127.0.0.1:", ":9400", "127.0.0.1:65536", "127.0.0.1:-1", "host:94x0" }) {
            const auto r = parse({ "--exporter-listen", bad });
            QVERIFY2(r.error.find("--exporter-listen") != std::string::npos, bad);
        }
        QVERIFY(!parse({ "--exporter-listen" }).error.empty());

        const auto targets = parse({ "--exporter-listen", "127.0.0.1:0", "--exporter-targets-file", "/tmp/t.json" });
        QVERIFY2(targets.error.empty(), targets.error.c_str());
        QCOMPARE(targets.options.exporterTargetsFile, std::string("/tmp/t.json"));
        QVERIFY(parse({}).options.exporterTargetsFile.empty());
        const auto nodeTargets
            = parse({ "--exporter-listen", "127.0.0.1:0", "--exporter-node-targets-file", "/tmp/n.json" });
        QVERIFY2(nodeTargets.error.empty(), nodeTargets.error.c_str());
        QCOMPARE(nodeTargets.options.exporterNodeTargetsFile, std::string("/tmp/n.json"));
        QVERIFY(parse({ "--exporter-node-targets-file", "/tmp/n.json" }).error.find("--exporter-node-targets-file")
            != std::string::npos); // needs --exporter-listen
        // Targets of an exporter that is not there, no file name, an empty one: refused, naming the option.
        for (const auto &bad : std::vector<std::vector<std::string>> { { "--exporter-targets-file", "/tmp/t.json" },
                 { "--exporter-listen", "127.0.0.1:0", "--exporter-targets-file" },
                 { "--exporter-listen", "127.0.0.1:0", "--exporter-targets-file", "" } }) {
            const auto r = parse(bad);
            QVERIFY2(r.error.find("--exporter-targets-file") != std::string::npos, r.error.c_str());
        }
        QVERIFY(be::backendUsage().find("--exporter-targets-file") != std::string::npos);

        be::ExporterServer exporter(*m_source, be::ExporterPage::Options());
        std::string error;
        QVERIFY(!exporter.start("256.1.1.1:0", &error));
        QVERIFY(!error.empty());
        // Port taken: the running exporter's.
        QVERIFY(!exporter.start("127.0.0.1:" + std::to_string(m_exporter->port()), &error));
    }
};

QTEST_GUILESS_MAIN(TestExporterHttp)
#include "tst_exporter_http.moc"
