// SPDX-License-Identifier: Apache-2.0
// Who may read the fleet: the backend served over TLS, with client certificates and tokens, against the console's own
// channel code, with certificates made at test time by the openssl tool. Each refusal must be the documented status
// and must read, for people, as what is wrong (no token, token refused, certificate not trusted, hostname mismatch);
// good credentials must get the whole API; a rotated token needs no restart; the console recovers once its token is
// put right. The gate's limits and its token file: tst_accessgate; health and reflection: tst_standardservices.
#include "client/telemetryclient.h"
#include "tests/backend/service/securitytesting.h"
#include "tests/realparts.h"

#include <QTest>

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using fleetscope::ChannelSecurity;
using namespace fleetscope::testing;

namespace {

// A server stream's status, which must end before its first part: a part sent is a failure of its own.
template <typename Part> grpc::Status endedWithoutAPart(std::unique_ptr<grpc::ClientReader<Part>> reader)
{
    Part part;
    if (reader->Read(&part)) {
        return { grpc::StatusCode::INTERNAL, "a part was sent before the call ended" };
    }
    return reader->Finish();
}

// The gate's verdict on a real TLS session: a server built as BackendServer builds its own (client certificates asked
// for and verified against "ca", the gate before the call), answering GetAccess alone with the admission's caller.
class CallerServer final : public pb::Telemetry::Service
{
public:
    CallerServer(const TestCertificates &certificates, const be::AccessGate::Options &options)
        : m_gate(options, [this](const std::string &line) { said(line); })
    {
        std::string error;
        if (!m_gate.load(&error)) {
            m_error = error;
            return;
        }
        const auto read = [](const QString &path) {
            QFile file(path);
            return file.open(QIODevice::ReadOnly) ? file.readAll().toStdString() : std::string();
        };
        grpc::SslServerCredentialsOptions tls(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
        tls.pem_root_certs = read(certificates.crt(QStringLiteral("ca")));
        tls.pem_key_cert_pairs.push_back(
            { read(certificates.key(QStringLiteral("server"))), read(certificates.crt(QStringLiteral("server"))) });
        grpc::ServerBuilder builder;
        builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(tls), &m_port);
        builder.RegisterService(this);
        m_server = builder.BuildAndStart();
        if (!m_server || m_port == 0) {
            m_error = "cannot listen";
        }
    }
    ~CallerServer() override
    {
        if (m_server) {
            m_server->Shutdown(std::chrono::system_clock::now() + 1s);
        }
    }
    const std::string &error() const { return m_error; }
    std::string address() const { return "127.0.0.1:" + std::to_string(m_port); }
    std::vector<std::string> lines()
    {
        std::lock_guard lock(m_mutex);
        return m_lines;
    }

    grpc::Status GetAccess(grpc::ServerContext *context, const pb::GetAccessRequest *, pb::Access *access) override
    {
        const auto admitted = m_gate.admit(context, "GetAccess", be::AccessGate::Call::Unary);
        if (!admitted.ok()) {
            return admitted.status();
        }
        access->set_name(admitted.caller().name);
        access->set_role(admitted.caller().role == be::Role::Operator ? pb::ROLE_OPERATOR : pb::ROLE_VIEWER);
        return grpc::Status::OK;
    }

private:
    void said(const std::string &line)
    {
        std::lock_guard lock(m_mutex);
        m_lines.push_back(line);
    }

    std::mutex m_mutex; // the gate logs from gRPC's threads
    std::vector<std::string> m_lines;
    be::AccessGate m_gate;
    std::string m_error;
    int m_port = 0;
    std::unique_ptr<grpc::Server> m_server;
};

// "name role" as the gate found the caller of one GetAccess through the console's channel code, or the refusal.
std::string callerOf(const std::string &address, const ChannelSecurity &security)
{
    QString error;
    auto channel = fleetscope::createChannel(address, security, grpc::ChannelArguments(), &error);
    if (!channel) {
        return error.toStdString();
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    pb::Access access;
    const auto status = pb::Telemetry::NewStub(channel)->GetAccess(&context, pb::GetAccessRequest(), &access);
    if (!status.ok()) {
        return fmt::format("{}: {}", static_cast<int>(status.error_code()), status.error_message());
    }
    return fmt::format("{} {}", access.name(), access.role() == pb::ROLE_OPERATOR ? "operator" : "viewer");
}

} // namespace

class TestSecurity : public SecuritySuite
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        if (!m_certificates.make()) {
            FLEETSCOPE_SKIP_WITHOUT(qPrintable(m_certificates.error()));
        }
        QVERIFY(writeTokens());
    }

    // Each way a connection or its credentials can be wrong: the status, and what the console says about it.
    void refusalsSayWhatIsWrong_data()
    {
        QTest::addColumn<QString>("serverCertificate"); // empty: plain gRPC
        QTest::addColumn<bool>("clientCa"); // the backend takes client certificates from "ca"
        QTest::addColumn<bool>("tokens");
        QTest::addColumn<QString>("consoleCa");
        QTest::addColumn<QString>("consoleCertificate");
        QTest::addColumn<QString>("consoleToken"); // good, wrong, missing or empty
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("said");

        const QString server = QStringLiteral("server");
        const QString ca = QStringLiteral("ca");
        const QString good = QStringLiteral("good");
        QTest::newRow("good token") << server << false << true << ca << QString() << good << 0 << QString();
        QTest::newRow("no token") << server << false << true << ca << QString() << QString() << 16 << "no token";
        QTest::newRow("wrong token") << server << false << true << ca << QString() << "wrong" << 7 << "token refused";
        QTest::newRow("token file unreadable")
            << server << false << true << ca << QString() << "missing" << 3 << "cannot read the token file";
        QTest::newRow("backend's CA not the console's")
            << server << false << true << "otherca" << QString() << good << 14 << "certificate not trusted";
        QTest::newRow("expired certificate")
            << "expired" << false << true << ca << QString() << good << 14 << "certificate not trusted";
        QTest::newRow("hostname mismatch")
            << "elsewhere" << false << true << ca << QString() << good << 14 << "hostname mismatch";
        QTest::newRow("plain console, TLS backend")
            << server << false << true << QString() << QString() << QString() << 14 << "may need TLS";
        QTest::newRow("TLS console, plain backend")
            << QString() << false << false << ca << QString() << good << 14 << "does not speak TLS";
        QTest::newRow("mutual TLS, no client certificate")
            << server << true << false << ca << QString() << QString() << 16 << "no client certificate";
        QTest::newRow("mutual TLS, certificate from another CA")
            << server << true << false << ca << "strangerclient" << QString() << 14 << "client certificate refused";
        QTest::newRow("mutual TLS, good certificate")
            << server << true << false << ca << "client" << QString() << 0 << QString();
        QTest::newRow("mutual TLS and token") << server << true << true << ca << "client" << good << 0 << QString();
        QTest::newRow("mutual TLS, good certificate, no token")
            << server << true << true << ca << "client" << QString() << 16 << "no token";
    }

    void refusalsSayWhatIsWrong()
    {
        QFETCH(QString, serverCertificate);
        QFETCH(bool, clientCa);
        QFETCH(bool, tokens);
        QFETCH(QString, consoleCa);
        QFETCH(QString, consoleCertificate);
        QFETCH(QString, consoleToken);
        QFETCH(int, code);
        QFETCH(QString, said);

        be::BackendServer::Security security;
        if (!serverCertificate.isEmpty()) {
            security.tlsCertFile = m_certificates.crt(serverCertificate).toStdString();
            security.tlsKeyFile = m_certificates.key(serverCertificate).toStdString();
        }
        if (clientCa) {
            security.tlsClientCaFile = m_certificates.crt(QStringLiteral("ca")).toStdString();
        }
        if (tokens) {
            security.access.tokenFile = m_backendTokens.toStdString();
        }
        QString error;
        auto server = serve(security, &error);
        QVERIFY2(server, qPrintable(error));

        ChannelSecurity console;
        if (!consoleCa.isEmpty()) {
            console.caFile = m_certificates.crt(consoleCa);
        }
        if (!consoleCertificate.isEmpty()) {
            console.certFile = m_certificates.crt(consoleCertificate);
            console.keyFile = m_certificates.key(consoleCertificate);
        }
        if (consoleToken == QLatin1String("good")) {
            console.tokenFile = m_goodToken;
        } else if (consoleToken == QLatin1String("wrong")) {
            console.tokenFile = m_wrongToken;
        } else if (consoleToken == QLatin1String("missing")) {
            console.tokenFile = m_certificates.path(QStringLiteral("no-such.token"));
        }
        const auto status = listMetrics(server->listeningAddress(), console);
        QVERIFY2(static_cast<int>(status.error_code()) == code,
            qPrintable(
                QStringLiteral("%1: %2").arg(status.error_code()).arg(QString::fromStdString(status.error_message()))));
        const QString words = fleetscope::describeCall(status, console);
        if (code == 0) {
            return;
        }
        QVERIFY2(words.contains(said), qPrintable(words));
        // Never the secret itself.
        QVERIFY(!words.contains(QLatin1String("s3cret")) && !words.contains(QLatin1String("not-the-token")));
    }

    // Every method of the API is behind the gate, streams included.
    void everyCallNeedsTheToken()
    {
        be::BackendServer::Security security = tlsWithTokens();
        QString error;
        auto server = serve(security, &error);
        QVERIFY2(server, qPrintable(error));
        ChannelSecurity console;
        console.caFile = m_certificates.crt(QStringLiteral("ca"));
        auto stub = pb::Telemetry::NewStub(
            fleetscope::createChannel(server->listeningAddress(), console, grpc::ChannelArguments(), &error));
        std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
        const auto context = [&contexts] {
            contexts.push_back(std::make_unique<grpc::ClientContext>());
            contexts.back()->set_deadline(std::chrono::system_clock::now() + 10s);
            return contexts.back().get();
        };
        pb::ListMetricsResponse metrics;
        pb::ListJobsResponse jobs;
        pb::Summary summary;
        pb::Access access;
        pb::Silence silence;
        pb::ExpireSilenceResponse expired;
        const std::vector<std::pair<const char *, grpc::Status>> statuses {
            { "GetTopology", endedWithoutAPart(stub->GetTopology(context(), pb::GetTopologyRequest())) },
            { "ListMetrics", stub->ListMetrics(context(), pb::ListMetricsRequest(), &metrics) },
            { "Subscribe", endedWithoutAPart(stub->Subscribe(context(), pb::SubscribeRequest())) },
            { "StreamEvents", endedWithoutAPart(stub->StreamEvents(context(), pb::StreamEventsRequest())) },
            { "ListJobs", stub->ListJobs(context(), pb::ListJobsRequest(), &jobs) },
            { "QueryRange", endedWithoutAPart(stub->QueryRange(context(), pb::QueryRangeRequest())) },
            { "GetSummary", stub->GetSummary(context(), pb::GetSummaryRequest(), &summary) },
            { "StreamAlerts", endedWithoutAPart(stub->StreamAlerts(context(), pb::StreamAlertsRequest())) },
            { "GetAccess", stub->GetAccess(context(), pb::GetAccessRequest(), &access) },
            { "CreateSilence", stub->CreateSilence(context(), pb::CreateSilenceRequest(), &silence) },
            { "ExpireSilence", stub->ExpireSilence(context(), pb::ExpireSilenceRequest(), &expired) },
        };
        for (const auto &[method, status] : statuses) {
            QVERIFY2(status.error_code() == grpc::StatusCode::UNAUTHENTICATED, method);
            QVERIFY2(status.error_message().find(method) != std::string::npos, status.error_message().c_str());
        }
    }

    // A token is rotated by replacing the file: the backend takes the new one and refuses the old without a restart.
    void aRotatedTokenNeedsNoRestart()
    {
        const QString tokens = m_certificates.write(QStringLiteral("rotating.tokens"), "first-token\n");
        const QString consoleToken = m_certificates.write(QStringLiteral("rotating.console"), "first-token\n");
        be::BackendServer::Security security = tlsWithTokens();
        security.access.tokenFile = tokens.toStdString();
        QString error;
        auto server = serve(security, &error);
        QVERIFY2(server, qPrintable(error));
        ChannelSecurity console;
        console.caFile = m_certificates.crt(QStringLiteral("ca"));
        console.tokenFile = consoleToken;
        const auto address = server->listeningAddress();
        QCOMPARE(listMetrics(address, console).error_code(), grpc::StatusCode::OK);

        // The file is looked at once a second, not at every call: the new token is taken within a second or so.
        QVERIFY(!m_certificates.write(QStringLiteral("rotating.tokens"), "# rotated\nsecond-token\n").isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(
            listMetrics(address, console).error_code(), grpc::StatusCode::PERMISSION_DENIED, 5000);
        QVERIFY(!m_certificates.write(QStringLiteral("rotating.console"), "second-token\n").isEmpty());
        QCOMPARE(listMetrics(address, console).error_code(), grpc::StatusCode::OK);

        // A token file emptied by mistake refuses every call (it fails closed) and says why, rather than keep the
        // tokens read before working; put right, it is taken back without a restart.
        QVERIFY(!m_certificates.write(QStringLiteral("rotating.tokens"), "\n").isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(listMetrics(address, console).error_code(), grpc::StatusCode::UNAVAILABLE, 5000);
        const auto closed = listMetrics(address, console);
        QVERIFY2(
            closed.error_message().find("cannot check tokens") != std::string::npos, closed.error_message().c_str());
        QVERIFY(!m_certificates.write(QStringLiteral("rotating.tokens"), "second-token\n").isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(listMetrics(address, console).error_code(), grpc::StatusCode::OK, 5000);

        // A console's file holding a line copied whole from the backend's ("TOKEN NAME ROLE") sends the token alone.
        QVERIFY(!m_certificates
                     .write(QStringLiteral("rotating.console"),
                         "# as in the backend's file\n  second-token  "
                         "alice operator\n")
                     .isEmpty());
        QCOMPARE(listMetrics(address, console).error_code(), grpc::StatusCode::OK);
    }

    void tokenFileChecksAtStart()
    {
        const QString empty = m_certificates.write(QStringLiteral("empty.tokens"), "# nothing yet\n");
        be::BackendServer::Security security = tlsWithTokens();
        security.access.tokenFile = empty.toStdString();
        QString error;
        QVERIFY(!serve(security, &error));
        QVERIFY2(error.contains(QLatin1String("holds no token")), qPrintable(error));
        security.access.tokenFile = m_certificates.path(QStringLiteral("absent.tokens")).toStdString();
        QVERIFY(!serve(security, &error));
        QVERIFY2(error.contains(QLatin1String("cannot read the token file")), qPrintable(error));
        security = tlsWithTokens();
        security.tlsKeyFile = m_certificates.key(QStringLiteral("client")).toStdString();
        QVERIFY(!serve(security, &error));
        QVERIFY2(error.contains(QLatin1String("is not the key of the certificate")), qPrintable(error));
    }

    // Anyone who reaches a non-loopback port would read the fleet: refused without TLS and credentials.
    void aNonLoopbackAddressNeedsCredentials()
    {
        std::string error;
        be::BackendServer open(be::simulatedSource(smallFleet()));
        QVERIFY(!open.start("0.0.0.0:0", &error));
        QVERIFY2(error.find("--insecure-listen") != std::string::npos, error.c_str());
        be::BackendServer::Security tlsOnly;
        tlsOnly.tlsCertFile = m_certificates.crt(QStringLiteral("server")).toStdString();
        tlsOnly.tlsKeyFile = m_certificates.key(QStringLiteral("server")).toStdString();
        be::BackendServer encryptedButOpen(be::simulatedSource(smallFleet()), tlsOnly);
        QVERIFY(!encryptedButOpen.start("0.0.0.0:0", &error));
        be::BackendServer secured(be::simulatedSource(smallFleet()), tlsWithTokens());
        QVERIFY2(secured.start("0.0.0.0:0", &error), error.c_str());
        be::BackendServer::Security insecure;
        insecure.insecureListen = true;
        be::BackendServer said(be::simulatedSource(smallFleet()), insecure);
        QVERIFY2(said.start("0.0.0.0:0", &error), error.c_str());
        QVERIFY(be::BackendServer::isLoopback("127.0.0.1") && be::BackendServer::isLoopback("[::1]")
            && be::BackendServer::isLoopback("localhost") && !be::BackendServer::isLoopback("0.0.0.0")
            && !be::BackendServer::isLoopback("[::]") && !be::BackendServer::isLoopback("10.0.0.1")
            && !be::BackendServer::isLoopback("127.example.com") && be::BackendServer::isLoopback("127.0.1.1"));
    }

    // A certificate's subject, as Debian 12's gRPC (1.51) puts it in the auth context after a real handshake
    // (OpenSSL's RFC 2253 form: the most specific part first, a ',' in a value escaped), maps to a name and role; a
    // line for the common name alone maps any subject with it; a certificate in no line is a viewer named by its
    // common name, and the backend says its subject once. The roles file is read again when it changes.
    void certificateSubjectsMapToRoles()
    {
        const QString name = QStringLiteral("wall.roles");
        const QString roles = m_certificates.write(name,
            "# the NOC\nviewer wall CN=noc-wall,OU=Wall\\, Hall 2,O=Example NOC\noperator wall-by-cn CN=noc-wall\n"
            "operator alice CN=alice\n");
        be::AccessGate::Options options;
        options.requireClientCertificate = true;
        options.clientRolesFile = roles.toStdString();
        CallerServer server(m_certificates, options);
        QVERIFY2(server.error().empty(), server.error().c_str());
        ChannelSecurity wall;
        wall.caFile = m_certificates.crt(QStringLiteral("ca"));
        wall.certFile = m_certificates.crt(QStringLiteral("nocwall"));
        wall.keyFile = m_certificates.key(QStringLiteral("nocwall"));
        QCOMPARE(callerOf(server.address(), wall), std::string("wall viewer"));
        ChannelSecurity client = wall;
        client.certFile = m_certificates.crt(QStringLiteral("client"));
        client.keyFile = m_certificates.key(QStringLiteral("client"));
        QCOMPARE(callerOf(server.address(), client), std::string("client viewer"));
        const auto lines = server.lines();
        QCOMPARE(lines.size(), size_t { 1 });
        QVERIFY2(lines[0].find("is a viewer named client: its subject is 'CN=client'") != std::string::npos,
            lines[0].c_str());

        // The whole subject's line gone, the common name's maps the wall, within a second or so.
        QVERIFY(!m_certificates.write(name, "operator wall-by-cn CN=noc-wall\n").isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(callerOf(server.address(), wall), std::string("wall-by-cn operator"), 5000);
        // A line gone wrong refuses every call until it is put right.
        QVERIFY(!m_certificates.write(name, "operator wall-by-cn\n").isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(
            callerOf(server.address(), wall).find("cannot check client certificates") != std::string::npos, 5000);
        QVERIFY(!m_certificates.write(name, "viewer wall CN=noc-wall\n").isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(callerOf(server.address(), wall), std::string("wall viewer"), 5000);
    }

    // A token's name and role through TLS, as the console sends it.
    void aTokenNamesItsCaller()
    {
        const QString tokens
            = writeTokenFile(QStringLiteral("named-over-tls.tokens"), "s3cret-one\nop-s3cret alice operator\n");
        QVERIFY(!tokens.isEmpty());
        const QString consoleToken = m_certificates.write(QStringLiteral("alice.token"), "op-s3cret\n");
        be::AccessGate::Options options;
        options.requireClientCertificate = true;
        options.tokenFile = tokens.toStdString();
        CallerServer server(m_certificates, options);
        QVERIFY2(server.error().empty(), server.error().c_str());
        ChannelSecurity console;
        console.caFile = m_certificates.crt(QStringLiteral("ca"));
        console.certFile = m_certificates.crt(QStringLiteral("client"));
        console.keyFile = m_certificates.key(QStringLiteral("client"));
        console.tokenFile = consoleToken;
        QCOMPARE(callerOf(server.address(), console), std::string("alice operator"));
        console.tokenFile = m_goodToken;
        QCOMPARE(callerOf(server.address(), console), std::string("token-1 viewer"));
    }

    // The console says why it is refused, keeps retrying, and connects once its token is put right.
    void theConsoleSaysWhyAndRecovers()
    {
        QString error;
        auto server = serve(tlsWithTokens(), &error);
        QVERIFY2(server, qPrintable(error));
        const QString token = m_certificates.write(QStringLiteral("console-recovers.token"), "not-yet-right\n");
        ChannelSecurity console;
        console.caFile = m_certificates.crt(QStringLiteral("ca"));
        console.tokenFile = token;
        fleetscope::TelemetryClient client;
        client.start(QString::fromStdString(server->listeningAddress()), console);
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), fleetscope::TelemetryClient::State::Reconnecting, 15000);
        QVERIFY2(client.stateDetail().contains(QLatin1String("token refused")), qPrintable(client.stateDetail()));
        QVERIFY(!client.stateDetail().contains(QLatin1String("not-yet-right")));
        QVERIFY(!m_certificates.write(QStringLiteral("console-recovers.token"), "other-token\n").isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), fleetscope::TelemetryClient::State::Live, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(client.latestFrame() != nullptr, 20000);
    }
};

QTEST_GUILESS_MAIN(TestSecurity)
#include "tst_security.moc"
