// SPDX-License-Identifier: Apache-2.0
// Who may read the fleet: the backend served over TLS, with client certificates and tokens, against the console's own
// channel code, with certificates made at test time by the openssl tool. Each refusal must be the documented status
// and must read, for people, as what is wrong (no token, token refused, certificate not trusted, hostname mismatch);
// good credentials must get the whole API; a rotated token needs no restart; the per-client limits answer
// RESOURCE_EXHAUSTED naming the limit.
#include "client/channelsecurity.h"
#include "client/telemetryclient.h"
#include "service/accessgate.h"
#include "service/backendserver.h"
#include "sim/simulatedfleet.h"
#include "testcertificates.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <QTest>

#include <chrono>
#include <memory>

using namespace std::chrono_literals;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using fleetscope::ChannelSecurity;

namespace {

be::SimulationOptions smallFleet()
{
    be::SimulationOptions options;
    options.gpuCount = 64;
    return options;
}

std::unique_ptr<be::BackendServer> serve(const be::BackendServer::Security &security, QString *error)
{
    auto server = std::make_unique<be::BackendServer>(be::simulatedSource(smallFleet()), security);
    std::string why;
    if (!server->start("127.0.0.1:0", &why)) {
        *error = QString::fromStdString(why);
        return nullptr;
    }
    return server;
}

// One unary call through the console's channel; its status.
grpc::Status listMetrics(const std::string &address, const ChannelSecurity &security)
{
    QString error;
    auto channel = fleetscope::createChannel(address, security, grpc::ChannelArguments(), &error);
    if (!channel) {
        return { grpc::StatusCode::INVALID_ARGUMENT, error.toStdString() };
    }
    auto stub = pb::Telemetry::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    pb::ListMetricsResponse response;
    return stub->ListMetrics(&context, pb::ListMetricsRequest(), &response);
}

// A Subscribe stream opened and its first part read (so that the backend holds it), or the status it ended with.
struct OpenStream
{
    std::unique_ptr<grpc::ClientContext> context = std::make_unique<grpc::ClientContext>();
    std::unique_ptr<grpc::ClientReader<pb::FramePart>> reader;
    grpc::Status status;
};

OpenStream subscribe(pb::Telemetry::Stub &stub)
{
    OpenStream stream;
    stream.context->set_deadline(std::chrono::system_clock::now() + 30s);
    stream.reader = stub.Subscribe(stream.context.get(), pb::SubscribeRequest());
    pb::FramePart part;
    if (!stream.reader->Read(&part)) {
        stream.status = stream.reader->Finish();
    }
    return stream;
}

// What the gate's log said, and a clock the test moves.
struct GateProbe
{
    std::vector<std::string> lines;
    std::chrono::steady_clock::time_point now = std::chrono::steady_clock::time_point() + 1h;
    be::AccessGate::Log log()
    {
        return [this](const std::string &line) { lines.push_back(line); };
    }
    be::AccessGate::Clock clock()
    {
        return [this] { return now; };
    }
};

} // namespace

class TestSecurity : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        if (!m_certificates.make()) {
            QSKIP(qPrintable(m_certificates.error()));
        }
        m_goodToken = m_certificates.write(QStringLiteral("console.token"), "# the wall's token\n s3cret-one \n");
        m_wrongToken = m_certificates.write(QStringLiteral("wrong.token"), "not-the-token\n");
        m_backendTokens
            = m_certificates.write(QStringLiteral("backend.tokens"), "# consoles\ns3cret-one\nother-token\n");
        QVERIFY(!m_goodToken.isEmpty() && !m_wrongToken.isEmpty() && !m_backendTokens.isEmpty());
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
        auto context = [] {
            auto c = std::make_unique<grpc::ClientContext>();
            c->set_deadline(std::chrono::system_clock::now() + 10s);
            return c;
        };
        std::vector<std::pair<const char *, grpc::Status>> statuses;
        {
            auto c = context();
            pb::TopologyPart part;
            auto reader = stub->GetTopology(c.get(), pb::GetTopologyRequest());
            QVERIFY(!reader->Read(&part));
            statuses.emplace_back("GetTopology", reader->Finish());
        }
        {
            auto c = context();
            pb::ListMetricsResponse answer;
            statuses.emplace_back("ListMetrics", stub->ListMetrics(c.get(), pb::ListMetricsRequest(), &answer));
        }
        {
            auto c = context();
            pb::FramePart part;
            auto reader = stub->Subscribe(c.get(), pb::SubscribeRequest());
            QVERIFY(!reader->Read(&part));
            statuses.emplace_back("Subscribe", reader->Finish());
        }
        {
            auto c = context();
            pb::Event event;
            auto reader = stub->StreamEvents(c.get(), pb::StreamEventsRequest());
            QVERIFY(!reader->Read(&event));
            statuses.emplace_back("StreamEvents", reader->Finish());
        }
        {
            auto c = context();
            pb::ListJobsResponse answer;
            statuses.emplace_back("ListJobs", stub->ListJobs(c.get(), pb::ListJobsRequest(), &answer));
        }
        {
            auto c = context();
            pb::QueryRangePart part;
            auto reader = stub->QueryRange(c.get(), pb::QueryRangeRequest());
            QVERIFY(!reader->Read(&part));
            statuses.emplace_back("QueryRange", reader->Finish());
        }
        {
            auto c = context();
            pb::Summary answer;
            statuses.emplace_back("GetSummary", stub->GetSummary(c.get(), pb::GetSummaryRequest(), &answer));
        }
        QCOMPARE(statuses.size(), size_t { 7 });
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

        QVERIFY(!m_certificates.write(QStringLiteral("rotating.tokens"), "# rotated\nsecond-token\n").isEmpty());
        QCOMPARE(listMetrics(address, console).error_code(), grpc::StatusCode::PERMISSION_DENIED);
        QVERIFY(!m_certificates.write(QStringLiteral("rotating.console"), "second-token\n").isEmpty());
        QCOMPARE(listMetrics(address, console).error_code(), grpc::StatusCode::OK);

        // A token file emptied by mistake keeps the tokens read before (and says so), rather than locking all out.
        QVERIFY(!m_certificates.write(QStringLiteral("rotating.tokens"), "\n").isEmpty());
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

    // A client may hold a bounded number of streams; one closed frees its slot.
    void streamsPerClientAreLimited()
    {
        be::BackendServer::Security security;
        security.access.maxStreamsPerClient = 2;
        QString error;
        auto server = serve(security, &error);
        QVERIFY2(server, qPrintable(error));
        auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(server->listeningAddress(), grpc::InsecureChannelCredentials()));
        auto first = subscribe(*stub);
        auto second = subscribe(*stub);
        QVERIFY2(first.status.ok() && second.status.ok(), first.status.error_message().c_str());
        auto third = subscribe(*stub);
        QCOMPARE(third.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        QVERIFY2(
            third.status.error_message().find("2 streams") != std::string::npos, third.status.error_message().c_str());
        first.context->TryCancel();
        first.reader->Finish();
        // The slot is freed when the backend's handler returns, a moment after the cancel.
        OpenStream again;
        const bool freed = QTest::qWaitFor(
            [&] {
                again = subscribe(*stub);
                return again.status.ok();
            },
            10000);
        QVERIFY2(freed, again.status.error_message().c_str());
        again.context->TryCancel();
    }

    void callRateIsLimited()
    {
        GateProbe probe;
        be::AccessGate::Options options;
        options.maxCallsPerSecondPerClient = 5;
        be::AccessGate gate(options, probe.log(), probe.clock());
        std::string error;
        QVERIFY(gate.load(&error));
        for (int i = 0; i < 10; ++i) { // a burst of twice the rate
            QVERIFY(gate.admit("ipv4:10.0.0.7:40000", "", false, "ListJobs", be::AccessGate::Call::Unary).ok());
        }
        const auto refused = gate.admit("ipv4:10.0.0.7:40001", "", false, "ListJobs", be::AccessGate::Call::Unary);
        QCOMPARE(refused.status().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        QVERIFY2(refused.status().error_message().find("more than 5 calls a second") != std::string::npos,
            refused.status().error_message().c_str());
        // Another client is not affected; a second later the first may call 5 more times.
        QVERIFY(gate.admit("ipv4:10.0.0.8:40000", "", false, "ListJobs", be::AccessGate::Call::Unary).ok());
        probe.now += 1s;
        for (int i = 0; i < 5; ++i) {
            QVERIFY(gate.admit("ipv4:10.0.0.7:40002", "", false, "ListJobs", be::AccessGate::Call::Unary).ok());
        }
        QVERIFY(!gate.admit("ipv4:10.0.0.7:40002", "", false, "ListJobs", be::AccessGate::Call::Unary).ok());
    }

    // A refusal is logged once a minute per client and reason, and never with the token.
    void refusalsAreLoggedOnceAMinuteWithoutTheSecret()
    {
        GateProbe probe;
        be::AccessGate::Options options;
        options.tokenFile = m_backendTokens.toStdString();
        be::AccessGate gate(options, probe.log(), probe.clock());
        std::string error;
        QVERIFY2(gate.load(&error), error.c_str());
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(
                gate.admit("ipv4:10.0.0.7:1", "Bearer guessed-token", false, "Subscribe", be::AccessGate::Call::Stream)
                    .status()
                    .error_code(),
                grpc::StatusCode::PERMISSION_DENIED);
        }
        QCOMPARE(probe.lines.size(), size_t { 1 });
        QCOMPARE(
            gate.admit("ipv6:[fd00::1]:2", "", false, "Subscribe", be::AccessGate::Call::Stream).status().error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
        QCOMPARE(probe.lines.size(), size_t { 2 });
        QVERIFY2(probe.lines[1].find("fd00::1: no token") != std::string::npos, probe.lines[1].c_str());
        probe.now += 61s;
        QVERIFY(!gate.admit("ipv4:10.0.0.7:3", "Bearer guessed-token", false, "Subscribe", be::AccessGate::Call::Stream)
                     .ok());
        QCOMPARE(probe.lines.size(), size_t { 3 });
        for (const auto &line : probe.lines) {
            QVERIFY2(
                line.find("guessed") == std::string::npos && line.find("s3cret") == std::string::npos, line.c_str());
        }
        // The right token, in either case of the scheme, and only it.
        QVERIFY(gate.admit("ipv4:10.0.0.7:4", "Bearer s3cret-one", false, "GetTopology", be::AccessGate::Call::Stream)
                    .ok());
        QVERIFY(gate.admit("ipv4:10.0.0.7:4", "bearer other-token", false, "GetTopology", be::AccessGate::Call::Stream)
                    .ok());
        QVERIFY(!gate.admit("ipv4:10.0.0.7:4", "Bearer s3cret-on", false, "GetTopology", be::AccessGate::Call::Stream)
                     .ok());
        QVERIFY(!gate.admit("ipv4:10.0.0.7:4", "Basic s3cret-one", false, "GetTopology", be::AccessGate::Call::Stream)
                     .ok());
    }

    // A flood from many addresses keeps a bounded record: past 4,096 busy addresses, the new ones share one.
    void manyAddressesShareOneRecordPastTheBound()
    {
        GateProbe probe;
        be::AccessGate::Options options;
        options.tokenFile = m_backendTokens.toStdString();
        be::AccessGate gate(options, probe.log(), probe.clock());
        std::string error;
        QVERIFY2(gate.load(&error), error.c_str());
        for (int i = 0; i < 6000; ++i) {
            const std::string peer = fmt::format("ipv6:[fd00::{:x}]:443", i);
            QVERIFY(!gate.admit(peer, "", false, "Subscribe", be::AccessGate::Call::Stream).ok());
        }
        QCOMPARE(probe.lines.size(), size_t { 4097 }); // 4,096 addresses of their own, then the shared record once
        QVERIFY2(probe.lines.back().find("other addresses") != std::string::npos, probe.lines.back().c_str());
        // A minute on, the old records are forgotten and a new address has one of its own again.
        probe.now += 61s;
        const auto held
            = gate.admit("ipv4:10.9.9.9:1", "Bearer s3cret-one", false, "Subscribe", be::AccessGate::Call::Stream);
        QVERIFY(held.ok());
        QCOMPARE(gate.openStreams("10.9.9.9"), size_t { 1 });
    }

    void clientAddresses()
    {
        QCOMPARE(be::AccessGate::clientAddress("ipv4:10.0.0.7:53122"), std::string("10.0.0.7"));
        QCOMPARE(be::AccessGate::clientAddress("ipv6:[::1]:5"), std::string("::1"));
        QCOMPARE(be::AccessGate::clientAddress("unix:/run/x.sock"), std::string("/run/x.sock"));
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

private:
    be::BackendServer::Security tlsWithTokens() const
    {
        be::BackendServer::Security security;
        security.tlsCertFile = m_certificates.crt(QStringLiteral("server")).toStdString();
        security.tlsKeyFile = m_certificates.key(QStringLiteral("server")).toStdString();
        security.access.tokenFile = m_backendTokens.toStdString();
        return security;
    }

    fleetscope::testing::TestCertificates m_certificates;
    QString m_goodToken;
    QString m_wrongToken;
    QString m_backendTokens;
};

QTEST_GUILESS_MAIN(TestSecurity)
#include "tst_security.moc"
