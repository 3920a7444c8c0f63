// SPDX-License-Identifier: Apache-2.0
// Authentication and TLS towards the upstream server. Against a real Prometheus 2.42 (Debian's `prometheus`) serving
// https with a self-signed certificate the test makes with the openssl tool, and basic authentication with a
// bcrypt hash it makes with libcrypt: the right CA and credentials work, and a wrong password, a missing or wrong
// CA and a certificate for another host each fail with an error that says so. Against fake servers on a thread:
// what goes over the wire (the Authorization header, SNI) and that a server that never answers the handshake
// costs the time-out and no more.
#include "core/framesource.h"
#include "prometheus/prometheushttp.h"
#include "prometheus/prometheussource.h"
#include "sim/exporterserver.h"
#include "sim/simulatedfleet.h"
#include "tests/backend/testing/prometheusprocess.h"
#include "tests/realparts.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <crypt.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>

using namespace fleetscope::backend;
using fleetscope::testing::ProcessGuard;
using fleetscope::testing::writeFile;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string &text, const char *part)
{
    return text.find(part) != std::string::npos;
}

// A TCP server on 127.0.0.1 on its own thread, one connection at a time. It answers with `answer` once it has read
// a request's head, or at the first bytes (as a plain HTTP server answers a TLS hello: with an error), or never.
// Everything received is kept.
class FakeServer
{
public:
    enum class Answer { AfterHead, AtOnce, Never };
    explicit FakeServer(std::string answer, Answer when = Answer::AfterHead)
        : m_answer(std::move(answer))
        , m_when(when)
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a {};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof a;
        if (::bind(m_fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || ::listen(m_fd, 8) != 0
            || ::getsockname(m_fd, reinterpret_cast<sockaddr *>(&a), &length) != 0) {
            qFatal("fake server: cannot listen");
        }
        m_port = ntohs(a.sin_port);
        m_thread = std::thread([this] { run(); });
    }
    ~FakeServer()
    {
        m_stop = true;
        m_thread.join();
        ::close(m_fd);
    }
    FakeServer(const FakeServer &) = delete;
    FakeServer &operator=(const FakeServer &) = delete;

    int port() const { return m_port; }
    std::string url(const char *scheme = "http", const char *host = "127.0.0.1") const
    {
        return std::string(scheme) + "://" + host + ':' + std::to_string(m_port);
    }
    // What each connection sent, in order.
    std::vector<std::string> received() const
    {
        std::lock_guard lock(m_mutex);
        return m_received;
    }

private:
    // Waits up to 50 ms for fd to be readable, so that the thread notices m_stop.
    static bool readable(int fd)
    {
        pollfd p { fd, POLLIN, 0 };
        return ::poll(&p, 1, 50) > 0;
    }

    void run()
    {
        while (!m_stop) {
            if (!readable(m_fd)) {
                continue;
            }
            const int client = ::accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0) {
                continue;
            }
            {
                std::lock_guard lock(m_mutex);
                m_received.emplace_back();
            }
            bool answered = false;
            while (!m_stop) {
                if (!readable(client)) {
                    continue;
                }
                char buffer[4096];
                const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
                if (n <= 0) {
                    break;
                }
                std::string request;
                {
                    std::lock_guard lock(m_mutex);
                    m_received.back().append(buffer, static_cast<size_t>(n));
                    request = m_received.back();
                }
                if (!answered
                    && (m_when == Answer::AtOnce
                        || (m_when == Answer::AfterHead && request.find("\r\n\r\n") != std::string::npos))) {
                    ::send(client, m_answer.data(), m_answer.size(), MSG_NOSIGNAL);
                    answered = true;
                    break;
                }
            }
            ::close(client);
        }
    }

    std::string m_answer;
    Answer m_when;
    int m_fd = -1;
    int m_port = 0;
    std::atomic<bool> m_stop { false };
    mutable std::mutex m_mutex; // m_received: written by the server thread, read by the test
    std::vector<std::string> m_received;
    std::thread m_thread;
};

const std::string okAnswer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 53\r\n"
                             "Connection: close\r\n\r\n"
                             R"({"status":"success","data":{"resultType":"vector","result":[]}})";

// Runs a command; its output on failure.
bool run(const QString &program, const QStringList &arguments, QByteArray *output)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    const bool ok
        = process.waitForFinished(60000) && process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
    *output = process.readAll();
    return ok;
}

// A bcrypt hash of password (cost 4, the least bcrypt allows: the test wants speed, not strength), as Prometheus'
// basic_auth_users takes it; empty when libcrypt cannot make one.
QByteArray bcrypt(const QByteArray &password)
{
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    if (!crypt_gensalt_rn("$2b$", 4, nullptr, 0, salt, sizeof salt)) {
        return {};
    }
    crypt_data data {};
    const char *hash = crypt_r(password.constData(), salt, &data);
    return hash && hash[0] == '$' ? QByteArray(hash) : QByteArray();
}

} // namespace

class TestPrometheusTls : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_passwordFile = path("password");
        QVERIFY(writeFile(QString::fromStdString(m_passwordFile), "s3cret\n"));
        m_wrongPasswordFile = path("wrong-password");
        QVERIFY(writeFile(QString::fromStdString(m_wrongPasswordFile), "guess\n"));
    }

    // libcurl's escaping: RFC 3986's unreserved characters as they are, every other byte as %XX.
    void encode()
    {
        QCOMPARE(PrometheusHttp::encode("AZaz09-._~"), std::string("AZaz09-._~"));
        QCOMPARE(PrometheusHttp::encode(R"(max by (h) (up{a=~"b|c"}) / 2 + 1)"),
            std::string("max%20by%20%28h%29%20%28up%7Ba%3D~%22b%7Cc%22%7D%29%20%2F%202%20%2B%201"));
        QCOMPARE(PrometheusHttp::encode(std::string("&?#%\xff\x00", 6)), std::string("%26%3F%23%25%FF%00"));
        QCOMPARE(PrometheusHttp::encode(""), std::string());
    }

    // The base URL as libcurl parses it: a path prefix goes before every request's path (without its trailing
    // slashes), an IPv6 literal and the default ports are taken, and anything the requests could not be appended to
    // is refused with what is needed.
    void baseUrls()
    {
        FakeServer server(okAnswer);
        PrometheusHttp http;
        std::string error;
        QVERIFY2(http.setBaseUrl(server.url() + "/prom//", &error), error.c_str());
        PrometheusHttp::Response response;
        QVERIFY2(http.get("/api/v1/query?query=up", 2000ms, &response, &error), error.c_str());
        QCOMPARE(server.received().size(), size_t { 1 });
        QVERIFY2(server.received()[0].rfind("GET /prom/api/v1/query?query=up HTTP/1.1\r\n", 0) == 0,
            server.received()[0].c_str());

        for (const char *good : { "http://[::1]:9090", "https://[::1]", "http://vm:8428/select/0/prometheus/",
                 "HTTPS://Prometheus.example:443" }) {
            QVERIFY2(http.setBaseUrl(good, &error), (std::string(good) + ": " + error).c_str());
        }
        QVERIFY(http.isTls());
        const std::vector<std::pair<const char *, const char *>> bad = { { "ftp://p:9090", "not an http" },
            { "p:9090", "not an http" }, { "//p:9090", "not an http" }, { "http://", "need http://HOST" },
            { "http://p:0", "port from 1 to 65535" }, { "https://p:65536", "port from 1 to 65535" },
            { "http://p:x", "port from 1 to 65535" }, { "http://p:9090/?a=1", "without a query or fragment" },
            { "http://p:9090/prom#x", "without a query or fragment" }, { "http://u@p:9090", "never go in the URL" } };
        for (const auto &[url, why] : bad) {
            QVERIFY2(!http.setBaseUrl(url, &error), url);
            QVERIFY2(contains(error, why), (std::string(url) + ": " + error).c_str());
        }
    }

    // The token goes out as a bearer Authorization header, read from its file for every request: a rotated token
    // is sent from the next request on, and a vanished file fails the request, not the process.
    void bearerTokenIsSent()
    {
        FakeServer server(okAnswer);
        const std::string token = path("token");
        QVERIFY(writeFile(QString::fromStdString(token), "abc.DEF-123\n"));
        PrometheusHttp::Options options;
        options.bearerTokenFile = token;
        PrometheusHttp http;
        std::string error;
        QVERIFY2(http.setBaseUrl(server.url(), options, &error), error.c_str());
        PrometheusHttp::Response response;
        QVERIFY2(http.get("/api/v1/query?query=up", 2000ms, &response, &error), error.c_str());
        QCOMPARE(response.status, 200);
        QVERIFY(writeFile(QString::fromStdString(token), "rotated\n"));
        QVERIFY2(http.get("/api/v1/query?query=up", 2000ms, &response, &error), error.c_str());
        const auto requests = server.received();
        QCOMPARE(requests.size(), size_t { 2 });
        QVERIFY2(contains(requests[0], "\r\nAuthorization: Bearer abc.DEF-123\r\n"), requests[0].c_str());
        QVERIFY2(contains(requests[1], "\r\nAuthorization: Bearer rotated\r\n"), requests[1].c_str());

        QVERIFY(QFile::remove(QString::fromStdString(token)));
        QVERIFY(!http.get("/api/v1/query?query=up", 2000ms, &response, &error));
        QVERIFY2(contains(error, "bearer token file") && contains(error, "cannot read it"), error.c_str());
        QCOMPARE(server.received().size(), size_t { 2 });
    }

    void basicAuthenticationIsSent()
    {
        FakeServer server(okAnswer);
        PrometheusHttp::Options options;
        options.user = "fleet";
        options.passwordFile = m_passwordFile;
        PrometheusHttp http;
        std::string error;
        QVERIFY2(http.setBaseUrl(server.url(), options, &error), error.c_str());
        PrometheusHttp::Response response;
        QVERIFY2(http.get("/api/v1/query?query=up", 2000ms, &response, &error), error.c_str());
        const auto requests = server.received();
        QCOMPARE(requests.size(), size_t { 1 });
        // "fleet:s3cret": the password file's newline is not part of the password.
        QVERIFY2(contains(requests[0], "\r\nAuthorization: Basic ZmxlZXQ6czNjcmV0\r\n"), requests[0].c_str());

        // Without options, no Authorization header at all.
        PrometheusHttp plain;
        QVERIFY(plain.setBaseUrl(server.url(), &error));
        QVERIFY2(plain.get("/api/v1/query?query=up", 2000ms, &response, &error), error.c_str());
        QVERIFY(!contains(server.received().at(1), "Authorization"));
    }

    void inconsistentOptionsAreRefused()
    {
        PrometheusHttp http;
        std::string error;
        PrometheusHttp::Options options;
        options.user = "fleet";
        QVERIFY(!http.setBaseUrl("https://localhost:9090", options, &error));
        QVERIFY2(contains(error, "both a user and a password file"), error.c_str());
        options.passwordFile = m_passwordFile;
        options.bearerTokenFile = m_passwordFile;
        QVERIFY(!http.setBaseUrl("https://localhost:9090", options, &error));
        QVERIFY2(contains(error, "exclude each other"), error.c_str());
        options = {};
        options.caFile = m_passwordFile;
        QVERIFY(!http.setBaseUrl("http://localhost:9090", options, &error));
        QVERIFY2(contains(error, "https:// only"), error.c_str());
        QVERIFY(!http.setBaseUrl("https://localhost:9090", options, &error));
        QVERIFY2(contains(error, "not a readable PEM bundle of CA certificates"), error.c_str());
        QVERIFY(!http.setBaseUrl("https://fleet:s3cret@localhost:9090", &error));
        QVERIFY2(contains(error, "credentials never go in the URL"), error.c_str());
        QVERIFY(http.setBaseUrl("https://localhost", &error));
        QVERIFY(http.isTls());
    }

    // A server that takes the connection and never answers the handshake costs the time-out, not more; the client
    // named the host it wants (SNI) in its hello.
    void handshakeTimesOut()
    {
        FakeServer server({}, FakeServer::Answer::Never);
        PrometheusHttp http;
        std::string error;
        QVERIFY2(http.setBaseUrl(server.url("https", "localhost"), &error), error.c_str());
        PrometheusHttp::Response response;
        QElapsedTimer clock;
        clock.start();
        QVERIFY(!http.get("/api/v1/query?query=up", 400ms, &response, &error));
        const qint64 took = clock.elapsed();
        QVERIFY2(contains(error, "timed out in the TLS handshake"), error.c_str());
        QVERIFY2(took >= 390 && took < 3000, qPrintable(QString::number(took)));
        QTRY_COMPARE(server.received().size(), size_t { 1 });
        const std::string hello = server.received().at(0);
        QVERIFY(!hello.empty());
        QCOMPARE(static_cast<int>(static_cast<unsigned char>(hello[0])), 0x16); // a TLS handshake record
        QVERIFY(contains(hello, "localhost"));
    }

    void plainServerOnHttps()
    {
        FakeServer server(
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", FakeServer::Answer::AtOnce);
        PrometheusHttp http;
        std::string error;
        QVERIFY(http.setBaseUrl(server.url("https"), &error));
        PrometheusHttp::Response response;
        QVERIFY(!http.get("/api/v1/query?query=up", 2000ms, &response, &error));
        QVERIFY2(
            contains(error, "TLS handshake failed") && contains(error, "does the server speak https"), error.c_str());
    }

    // The rest against a real Prometheus with TLS and basic authentication.
    void realPrometheusSetUp()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        const QString openssl = QStandardPaths::findExecutable(QStringLiteral("openssl"));
        if (prometheus.isEmpty() || openssl.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT(
                "prometheus or openssl is not installed (Debian packages 'prometheus' and 'openssl'; "
                "scripts/common.sh installs them for CI): TLS and authentication against a real server are not "
                "tested here");
        }
        // The server's certificate names localhost only, so that https://127.0.0.1 must fail the host check. Another
        // self-signed certificate is the wrong CA.
        QByteArray output;
        for (const char *name : { "server", "other" }) {
            QVERIFY2(
                run(openssl,
                    { QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("ec"),
                        QStringLiteral("-pkeyopt"), QStringLiteral("ec_paramgen_curve:prime256v1"),
                        QStringLiteral("-nodes"), QStringLiteral("-days"), QStringLiteral("2"), QStringLiteral("-subj"),
                        QStringLiteral("/CN=localhost"), QStringLiteral("-addext"),
                        QStringLiteral("subjectAltName=DNS:localhost"), QStringLiteral("-keyout"),
                        QString::fromStdString(path(name) + "-key.pem"), QStringLiteral("-out"),
                        QString::fromStdString(path(name) + ".pem") },
                    &output),
                output.constData());
        }
        m_ca = path("server.pem");
        m_otherCa = path("other.pem");
        const QByteArray hash = bcrypt("s3cret");
        QVERIFY(!hash.isEmpty());
        const QString webConfig = QString::fromStdString(path("web.yml"));
        QVERIFY(writeFile(webConfig,
            "tls_server_config:\n"
            "  cert_file: "
                + QByteArray::fromStdString(m_ca) + "\n  key_file: " + QByteArray::fromStdString(path("server-key.pem"))
                + "\nbasic_auth_users:\n  fleet: " + hash + "\n"));

        // A small simulated fleet, frozen on one frame, for Prometheus to scrape over plain http.
        SimulationOptions options;
        options.gpuCount = 64;
        options.seed = 5;
        m_simulator = simulatedSource(options);
        QTRY_VERIFY_WITH_TIMEOUT(m_simulator->latest()->sequence >= 1, 5000);
        m_simulator->stop();
        m_exporter = std::make_unique<ExporterServer>(*m_simulator, ExporterPage::Options());
        std::string error;
        QVERIFY2(m_exporter->start("127.0.0.1:0", &error), error.c_str());
        const QString config = QString::fromStdString(path("prometheus.yml"));
        QVERIFY(writeFile(config, fleetscope::testing::scrapeConfig(m_exporter->port())));
        m_port = fleetscope::testing::freePort();
        QVERIFY(fleetscope::testing::startPrometheus(&m_prometheus, prometheus, config,
            QString::fromStdString(path("data")), m_port, { QStringLiteral("--web.config.file=") + webConfig }));

        // Ready when it answers, over TLS with the credentials, with every GPU.
        PrometheusHttp http;
        QVERIFY2(http.setBaseUrl(url("localhost"), trusted(), &error), error.c_str());
        const QString late = fleetscope::testing::waitForServer(
            m_prometheus, QStringLiteral("Prometheus"), 30000, [&](QString *detail) {
                PrometheusHttp::Response response;
                const bool answered
                    = http.get("/api/v1/query?query=count(DCGM_FI_DEV_GPU_TEMP)", 2000ms, &response, &error);
                *detail = QString::fromStdString(error);
                return answered && response.status == 200 && contains(response.body, R"(,"64"])");
            });
        QVERIFY2(late.isEmpty(), qPrintable(late));
    }

    // The right CA and credentials: the source starts and its frame holds the simulator's values.
    void trustedWithCredentials()
    {
        requirePrometheus();
        PrometheusSource source;
        std::string error;
        QVERIFY2(source.start(sourceOptions(url("localhost"), trusted()), &error), error.c_str());
        const auto frame = source.poll();
        QVERIFY2(frame, source.lastReport().error.c_str());
        const auto &shape = source.shape();
        const auto &simulated = m_simulator->shape();
        QCOMPARE(shape.gpuCount, simulated.gpuCount);
        std::map<std::string, uint32_t> byUuid;
        for (uint32_t g = 0; g < simulated.gpuCount; ++g) {
            byUuid[simulated.gpuUuid(g)] = g;
        }
        const auto &temperatures = m_simulator->latest()->plane(MetricId::GpuTemp);
        for (uint32_t i = 0; i < shape.gpuCount; ++i) {
            const auto it = byUuid.find(shape.gpuUuid(i));
            QVERIFY2(it != byUuid.end(), shape.gpuUuid(i).c_str());
            QCOMPARE(frame->plane(MetricId::GpuTemp)[i], static_cast<float>(std::llround(temperatures[it->second])));
        }
    }

    void refusals_data()
    {
        QTest::addColumn<QByteArray>("host");
        QTest::addColumn<QByteArray>("credentials"); // right, wrong, none
        QTest::addColumn<QByteArray>("ca"); // ours, other, system
        QTest::addColumn<QByteArray>("mentions");
        QTest::newRow("wrong password") << QByteArray("localhost") << QByteArray("wrong") << QByteArray("ours")
                                        << QByteArray("HTTP 401 Unauthorized: the server refused user 'fleet'");
        QTest::newRow("no credentials")
            << QByteArray("localhost") << QByteArray("none") << QByteArray("ours")
            << QByteArray("HTTP 401 Unauthorized: the server refused a request without credentials");
        QTest::newRow("system CAs") << QByteArray("localhost") << QByteArray("right") << QByteArray("system")
                                    << QByteArray("the server's certificate is not trusted: self-signed certificate");
        QTest::newRow("wrong CA") << QByteArray("localhost") << QByteArray("right") << QByteArray("other")
                                  << QByteArray("the server's certificate is not trusted: self-signed certificate");
        QTest::newRow("another host") << QByteArray("127.0.0.1") << QByteArray("right") << QByteArray("ours")
                                      << QByteArray("the server's certificate is not trusted: IP address mismatch");
    }
    void refusals()
    {
        requirePrometheus();
        QFETCH(QByteArray, host);
        QFETCH(QByteArray, credentials);
        QFETCH(QByteArray, ca);
        QFETCH(QByteArray, mentions);
        PrometheusHttp::Options options;
        if (credentials != "none") {
            options.user = "fleet";
            options.passwordFile = credentials == "right" ? m_passwordFile : m_wrongPasswordFile;
        }
        options.caFile = ca == "ours" ? m_ca : ca == "other" ? m_otherCa : "";
        PrometheusSource source;
        std::string error;
        QVERIFY(!source.start(sourceOptions(url(host.toStdString()), options), &error));
        QVERIFY2(contains(error, mentions.constData()), error.c_str());
    }

    // Skipping verification accepts the certificate for another host, and from no known CA.
    void insecureSkipVerify()
    {
        requirePrometheus();
        PrometheusHttp::Options options = trusted();
        options.caFile.clear();
        options.insecureSkipVerify = true;
        PrometheusSource source;
        std::string error;
        QVERIFY2(source.start(sourceOptions(url("127.0.0.1"), options), &error), error.c_str());
        QCOMPARE(source.shape().gpuCount, m_simulator->shape().gpuCount);
    }

    // The command line reaches the client: the executable starts only when the server took its CA and credentials,
    // and says why when it did not.
    void executable()
    {
        requirePrometheus();
        const QStringList common
            = { QStringLiteral("--source"), QStringLiteral("prometheus"), QStringLiteral("--prometheus-url"),
                  QString::fromStdString(url("localhost")), QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
                  QStringLiteral("--prometheus-ca"), QString::fromStdString(m_ca), QStringLiteral("--prometheus-user"),
                  QStringLiteral("fleet"), QStringLiteral("--prometheus-password-file") };
        const QString binary = QStringLiteral(FLEETSCOPE_BIN_DIR "/fleetscope-backend");
        {
            ProcessGuard backend;
            backend.process.start(binary, common + QStringList { QString::fromStdString(m_passwordFile) });
            QByteArray output;
            const QByteArray address
                = fleetscope::testing::waitForLine(backend.process, "listening on ", 20000, &output);
            QVERIFY2(!address.isEmpty(), QByteArray(output + backend.process.readAllStandardError()).constData());
        }
        QProcess refused;
        refused.start(binary, common + QStringList { QString::fromStdString(m_wrongPasswordFile) });
        QVERIFY(refused.waitForFinished(20000));
        QCOMPARE(refused.exitCode(), 1);
        const QByteArray errors = refused.readAllStandardError();
        QVERIFY2(errors.contains("HTTP 401 Unauthorized"), errors.constData());
    }

    void cleanupTestCase()
    {
        if (m_prometheus.process.state() != QProcess::NotRunning) {
            m_prometheus.process.terminate();
            QVERIFY(m_prometheus.process.waitForFinished(20000));
        }
    }

private:
    std::string path(const char *name) const { return m_dir.filePath(QString::fromUtf8(name)).toStdString(); }
    std::string url(const std::string &host) const { return "https://" + host + ':' + std::to_string(m_port); }
    void requirePrometheus()
    {
        if (m_port == 0) {
            FLEETSCOPE_SKIP_WITHOUT("no real Prometheus (see realPrometheusSetUp)");
        }
    }
    PrometheusHttp::Options trusted() const
    {
        PrometheusHttp::Options options;
        options.user = "fleet";
        options.passwordFile = m_passwordFile;
        options.caFile = m_ca;
        return options;
    }
    static PrometheusSource::Options sourceOptions(const std::string &url, const PrometheusHttp::Options &http)
    {
        PrometheusSource::Options options;
        options.url = url;
        options.timeout = 5000ms;
        options.http = http;
        return options;
    }

    QTemporaryDir m_dir;
    std::string m_passwordFile;
    std::string m_wrongPasswordFile;
    std::string m_ca;
    std::string m_otherCa;
    std::unique_ptr<FrameSource> m_simulator;
    std::unique_ptr<ExporterServer> m_exporter;
    ProcessGuard m_prometheus;
    int m_port = 0;
};

QTEST_GUILESS_MAIN(TestPrometheusTls)
#include "tst_prometheus_tls.moc"
