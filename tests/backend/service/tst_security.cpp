// SPDX-License-Identifier: Apache-2.0
// Who may read the fleet: the backend served over TLS, with client certificates and tokens, against the console's own
// channel code, with certificates made at test time by the openssl tool. Each refusal must be the documented status
// and must read, for people, as what is wrong (no token, token refused, certificate not trusted, hostname mismatch);
// good credentials must get the whole API; a rotated token needs no restart; the per-client limits answer
// RESOURCE_EXHAUSTED naming the limit.
#include "backendoptions.h"
#include "client/channelsecurity.h"
#include "client/telemetryclient.h"
#include "service/accessgate.h"
#include "service/backendserver.h"
#include "service/healthreport.h"
#include "service/reflectiongate.h"
#include "sim/simulatedfleet.h"
#include "tests/backend/testing/testcertificates.h"
#include "tests/realparts.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <fmt/format.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <QDeadlineTimer>
#include <QFile>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>

#include <unistd.h>

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

// The simulated fleet behind an upstream the test turns off and on: while off, a poll gives no frame and says why, as
// a Prometheus poller does when its server is unreachable.
class SwitchedUpstream final : public be::FramePoller
{
public:
    SwitchedUpstream(const be::SimulationOptions &options, std::shared_ptr<std::atomic<bool>> up)
        : m_fleet(options)
        , m_up(std::move(up))
    { }
    const be::FleetShape &shape() const override { return m_fleet.shape(); }
    uint64_t topologyGeneration() const override { return m_fleet.topologyGeneration(); }
    std::shared_ptr<be::Frame> firstFrame() override { return m_fleet.firstFrame(); }
    std::shared_ptr<be::Frame> poll() override
    {
        m_error = *m_up ? std::string() : std::string("connection refused");
        return *m_up ? m_fleet.poll() : nullptr;
    }
    std::string upstreamError() const override { return m_error; }
    std::vector<be::FleetEvent> takeEvents() override { return m_fleet.takeEvents(); }
    std::vector<be::JobInfo> jobs() const override { return m_fleet.jobs(); }
    std::chrono::steady_clock::time_point nextPollAt(std::chrono::steady_clock::time_point scheduled) const override
    {
        return m_fleet.nextPollAt(scheduled);
    }

private:
    be::SimulatedFleet m_fleet;
    std::shared_ptr<std::atomic<bool>> m_up;
    std::string m_error; // the ticker's only
};

std::string bytesOf(const grpc::ByteBuffer &buffer)
{
    std::vector<grpc::Slice> slices;
    std::string bytes;
    if (buffer.Dump(&slices).ok()) {
        for (const auto &part : slices) {
            bytes.append(reinterpret_cast<const char *>(part.begin()), part.size());
        }
    }
    return bytes;
}

// grpc.health.v1.Health/Check for a service name, by hand (Debian's gRPC ships no generated health stubs): the request
// is HealthCheckRequest { string service = 1 }, the answer HealthCheckResponse { ServingStatus status = 1 }, whose zero
// (UNKNOWN) is left out on the wire. The status (1 SERVING, 2 NOT_SERVING), or -1 with the call's status in *failed.
int healthOf(const std::shared_ptr<grpc::Channel> &channel, const std::string &service, grpc::Status *failed = nullptr)
{
    std::string request;
    if (!service.empty()) { // names under 128 bytes: one byte of length
        request = std::string("\x0a") + static_cast<char>(service.size()) + service;
    }
    grpc::Slice slice(request);
    grpc::ByteBuffer in(&slice, 1);
    grpc::ByteBuffer out;
    grpc::GenericStub stub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &in, &out,
        [&done](grpc::Status status) { done.set_value(std::move(status)); });
    const grpc::Status status = done.get_future().get();
    if (!status.ok()) {
        if (failed) {
            *failed = status;
        }
        return -1;
    }
    const std::string answer = bytesOf(out);
    if (answer.empty()) {
        return 0;
    }
    return answer.size() == 2 && answer[0] == '\x08' ? answer[1] : -2;
}

// One exchange with server reflection, by hand as healthOf: ServerReflectionRequest { string list_services = 7 } sent
// (what grpcurl's "list" sends), the answers' bytes and the call's status back.
struct Reflected
{
    std::vector<std::string> answers;
    grpc::Status status;
};

Reflected listServices(const std::shared_ptr<grpc::Channel> &channel)
{
    grpc::GenericStub stub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    grpc::CompletionQueue queue;
    void *tag = nullptr;
    bool ok = false;
    const auto done = [&] { return queue.Next(&tag, &ok) && ok; }; // one operation at a time: its outcome
    Reflected out;
    auto call = stub.PrepareCall(&context, be::ReflectionGate::method, &queue);
    call->StartCall(nullptr);
    if (done()) {
        const std::string request("\x3a\x00", 2);
        grpc::Slice slice(request);
        call->Write(grpc::ByteBuffer(&slice, 1), nullptr);
        if (done()) {
            call->WritesDone(nullptr);
            done();
        }
        for (;;) {
            grpc::ByteBuffer answer;
            call->Read(&answer, nullptr);
            if (!done()) {
                break;
            }
            out.answers.push_back(bytesOf(answer));
        }
    }
    call->Finish(&out.status, nullptr);
    queue.Next(&tag, &ok);
    queue.Shutdown();
    while (queue.Next(&tag, &ok)) { }
    return out;
}

constexpr int serving = 1;
constexpr int notServing = 2;

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
            FLEETSCOPE_SKIP_WITHOUT(qPrintable(m_certificates.error()));
        }
        m_goodToken = m_certificates.write(QStringLiteral("console.token"), "# the wall's token\n s3cret-one \n");
        m_wrongToken = m_certificates.write(QStringLiteral("wrong.token"), "not-the-token\n");
        m_backendTokens
            = m_certificates.write(QStringLiteral("backend.tokens"), "# consoles\ns3cret-one\nother-token\n");
        QVERIFY(!m_goodToken.isEmpty() && !m_wrongToken.isEmpty() && !m_backendTokens.isEmpty());
        // As a token file should be (one others may read is a warning, which the logs below would count).
        QVERIFY(QFile::setPermissions(m_backendTokens, QFile::ReadOwner | QFile::WriteOwner));
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

    // A token guesser from one address: past 60 refusals a minute (the default) its calls are refused before their
    // token is looked at, the right one too (an answer there would tell it that it guessed right), one refusal won
    // back every second. Other addresses are not affected. The limit is --max-refusals-per-minute.
    void guessingIsRateLimitedPerAddress()
    {
        GateProbe probe;
        be::AccessGate::Options options;
        options.tokenFile = m_backendTokens.toStdString();
        QCOMPARE(options.maxRefusalsPerMinutePerClient, uint32_t { 60 });
        be::AccessGate gate(options, probe.log(), probe.clock());
        std::string error;
        QVERIFY2(gate.load(&error), error.c_str());
        const auto admit = [&gate](const char *peer, const std::string &authorization) {
            return gate.admit(peer, authorization, false, "ListMetrics", be::AccessGate::Call::Unary).status();
        };
        for (int i = 0; i < 60; ++i) {
            QCOMPARE(admit("ipv4:10.0.0.7:1", fmt::format("Bearer guess-{}", i)).error_code(),
                grpc::StatusCode::PERMISSION_DENIED);
        }
        const auto locked = admit("ipv4:10.0.0.7:2", "Bearer s3cret-one");
        QCOMPARE(locked.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        QVERIFY2(locked.error_message().find("more than 60 refused calls a minute from 10.0.0.7") != std::string::npos
                && locked.error_message().find("for the next 1 s") != std::string::npos,
            locked.error_message().c_str());
        QCOMPARE(admit("ipv4:10.0.0.7:2", "").error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        QVERIFY(admit("ipv4:10.0.0.8:1", "Bearer s3cret-one").ok());
        probe.now += 1s;
        QCOMPARE(admit("ipv4:10.0.0.7:3", "Bearer guess-60").error_code(), grpc::StatusCode::PERMISSION_DENIED);
        QCOMPARE(admit("ipv4:10.0.0.7:3", "Bearer s3cret-one").error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        probe.now += 60s;
        QVERIFY(admit("ipv4:10.0.0.7:4", "Bearer s3cret-one").ok());
        // Said once a minute for each reason: the guesses, then the lock.
        QCOMPARE(probe.lines.size(), size_t { 2 });
        QVERIFY2(probe.lines[0].find("10.0.0.7: token refused") != std::string::npos, probe.lines[0].c_str());
        QVERIFY2(probe.lines[1].find("10.0.0.7: too many refused calls") != std::string::npos, probe.lines[1].c_str());

        // Another limit from the command line: 5 a minute, one back every 12 s.
        const auto parsed = be::parseBackendOptions({ "--max-refusals-per-minute", "5" });
        QVERIFY2(parsed.error.empty(), parsed.error.c_str());
        auto access = parsed.options.security.access;
        access.tokenFile = m_backendTokens.toStdString();
        be::AccessGate strict(access, probe.log(), probe.clock());
        QVERIFY2(strict.load(&error), error.c_str());
        for (int i = 0; i < 5; ++i) {
            QVERIFY(!strict.admit("ipv4:10.0.0.9:1", "", false, "ListJobs", be::AccessGate::Call::Unary).ok());
        }
        const auto past = strict.admit("ipv4:10.0.0.9:1", "", false, "ListJobs", be::AccessGate::Call::Unary);
        QVERIFY2(
            past.status().error_message().find("more than 5 refused calls a minute from 10.0.0.9") != std::string::npos
                && past.status().error_message().find("for the next 12 s") != std::string::npos,
            past.status().error_message().c_str());
        QVERIFY(!be::parseBackendOptions({ "--max-refusals-per-minute", "0" }).error.empty());
    }

    // Refusals from many addresses (a guesser with a botnet, or a scanner) make no records of admitted clients: the
    // consoles keep theirs and one that connects during the flood gets its own, not one shared with the flood. What
    // tracks refusals is bounded, forgets quiet addresses, and the log says a line a second, not one per address.
    void refusalsFromManyAddressesLeaveConsolesTheirRecords()
    {
        GateProbe probe;
        be::AccessGate::Options options;
        options.tokenFile = m_backendTokens.toStdString();
        be::AccessGate gate(options, probe.log(), probe.clock());
        std::string error;
        QVERIFY2(gate.load(&error), error.c_str());
        const auto held
            = gate.admit("ipv4:10.9.9.9:1", "Bearer s3cret-one", false, "Subscribe", be::AccessGate::Call::Stream);
        QVERIFY(held.ok());
        const size_t flood = be::AccessGate::maxRefusalRecords + 4000;
        for (size_t i = 0; i < flood; ++i) {
            const std::string peer = fmt::format("ipv6:[fd00::{:x}]:443", i);
            QVERIFY(!gate.admit(peer, i % 2 ? "" : "Bearer guessed", false, "Subscribe", be::AccessGate::Call::Stream)
                         .ok());
        }
        QCOMPARE(gate.refusalRecords(), be::AccessGate::maxRefusalRecords);
        QCOMPARE(gate.clientRecords(), size_t { 1 });
        QCOMPARE(gate.openStreams("10.9.9.9"), size_t { 1 });
        const auto newcomer
            = gate.admit("ipv4:10.9.9.10:1", "Bearer other-token", false, "Subscribe", be::AccessGate::Call::Stream);
        QVERIFY2(newcomer.ok(), newcomer.status().error_message().c_str());
        QCOMPARE(gate.openStreams("10.9.9.10"), size_t { 1 });
        QCOMPARE(gate.openStreams("10.9.9.9"), size_t { 1 });

        QCOMPARE(probe.lines.size(), size_t { be::AccessGate::refusalLinesBurst });
        probe.now += 2s;
        QVERIFY(!gate.admit("ipv6:[fd01::1]:443", "", false, "Subscribe", be::AccessGate::Call::Stream).ok());
        QCOMPARE(probe.lines.size(), size_t { be::AccessGate::refusalLinesBurst + 1 });
        QVERIFY2(probe.lines.back().find("addresses past the 16384") != std::string::npos
                && probe.lines.back().find(fmt::format("{} more refusal line(s) left out", flood - 60))
                    != std::string::npos,
            probe.lines.back().c_str());
        for (const auto &line : probe.lines) {
            QVERIFY2(line.find("guessed") == std::string::npos, line.c_str());
        }
        // A minute on, the quiet addresses are forgotten and a new one is tracked again.
        probe.now += 61s;
        QVERIFY(!gate.admit("ipv6:[fd02::1]:443", "", false, "Subscribe", be::AccessGate::Call::Stream).ok());
        QCOMPARE(gate.refusalRecords(), size_t { 1 });
    }

    // A token file that becomes empty, missing or unreadable refuses every call, with a token or without, and says
    // so in the log; put right, it is taken back. Those refusals are not held against the callers' addresses.
    void aWrongTokenFileRefusesEveryCall()
    {
        const QString name = QStringLiteral("closing.tokens");
        const QString path = m_certificates.write(name, "the-token\n");
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner));
        GateProbe probe;
        be::AccessGate::Options options;
        options.tokenFile = path.toStdString();
        be::AccessGate gate(options, probe.log(), probe.clock());
        std::string error;
        QVERIFY2(gate.load(&error), error.c_str());
        const auto admit = [&gate](const std::string &authorization) {
            return gate.admit("ipv4:10.0.0.7:1", authorization, false, "ListJobs", be::AccessGate::Call::Unary)
                .status();
        };
        QVERIFY(admit("Bearer the-token").ok());

        const auto refusesEveryCall = [&](const char *logged) {
            probe.now += 1s;
            for (int i = 0; i < 25; ++i) {
                const auto status = admit(i % 2 ? "" : "Bearer the-token");
                if (status.error_code() != grpc::StatusCode::UNAVAILABLE
                    || status.error_message().find("cannot check tokens") == std::string::npos) {
                    return fmt::format(
                        "call {}: {} {}", i, static_cast<int>(status.error_code()), status.error_message());
                }
            }
            const bool said = std::any_of(probe.lines.begin(), probe.lines.end(), [logged](const std::string &line) {
                return line.find(logged) != std::string::npos
                    && line.find("every call is refused") != std::string::npos;
            });
            return said ? std::string() : fmt::format("nothing logged with '{}'", logged);
        };
        QVERIFY(!m_certificates.write(name, "# emptied\n").isEmpty());
        auto wrong = refusesEveryCall("holds no token");
        QVERIFY2(wrong.empty(), wrong.c_str());
        QVERIFY(QFile::remove(path));
        wrong = refusesEveryCall("cannot read the token file");
        QVERIFY2(wrong.empty(), wrong.c_str());
        QVERIFY(!m_certificates.write(name, "the-token\n").isEmpty());
        if (::geteuid() != 0) { // root reads a file of mode 000
            QVERIFY(QFile::setPermissions(path, {}));
            wrong = refusesEveryCall("cannot read the token file");
            QVERIFY2(wrong.empty(), wrong.c_str());
            QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner));
        }
        probe.now += 1s;
        QVERIFY(admit("Bearer the-token").ok()); // the 25 and more refused above not held against 10.0.0.7
        QVERIFY2(probe.lines.back().find("admitted again") != std::string::npos, probe.lines.back().c_str());
        QCOMPARE(admit("Bearer other").error_code(), grpc::StatusCode::PERMISSION_DENIED);
    }

    // The token file is looked at once a second, not at every call (a flood of calls is not a flood of stat()s): a
    // token written within the second is taken at the first call after it, the old one refused then. The new text
    // has the old one's size and is written within the same clock tick, so its change shows in no stamp: the file
    // was read too soon after it changed to trust that.
    void theTokenFileIsLookedAtOnceASecond()
    {
        const QString name = QStringLiteral("looked-at.tokens");
        const QString path = m_certificates.write(name, "old-token\n");
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner));
        GateProbe probe;
        be::AccessGate::Options options;
        options.tokenFile = path.toStdString();
        be::AccessGate gate(options, probe.log(), probe.clock());
        std::string error;
        QVERIFY2(gate.load(&error), error.c_str());
        const auto admit = [&gate](const char *authorization) {
            return gate.admit("ipv4:10.0.0.7:1", authorization, false, "ListJobs", be::AccessGate::Call::Unary)
                .status()
                .error_code();
        };
        QCOMPARE(admit("Bearer old-token"), grpc::StatusCode::OK);
        QVERIFY(!m_certificates.write(name, "new-token\n").isEmpty());
        QCOMPARE(admit("Bearer old-token"), grpc::StatusCode::OK);
        QCOMPARE(admit("Bearer new-token"), grpc::StatusCode::PERMISSION_DENIED);
        probe.now += 999ms;
        QCOMPARE(admit("Bearer new-token"), grpc::StatusCode::PERMISSION_DENIED);
        probe.now += 1ms;
        QCOMPARE(admit("Bearer new-token"), grpc::StatusCode::OK);
        QCOMPARE(admit("Bearer old-token"), grpc::StatusCode::PERMISSION_DENIED);
    }

    // A token file its group or others may read is a warning at start (it is served: an operator may mean it), with
    // what to do; one only its owner may read says nothing.
    void aTokenFileOthersMayReadIsAWarning()
    {
        const QString path = m_certificates.write(QStringLiteral("lax.tokens"), "lax-token\n");
        const auto warnings = [&path](QFile::Permissions permissions) {
            if (!QFile::setPermissions(path, permissions)) {
                return std::vector<std::string> { "cannot chmod" };
            }
            GateProbe probe;
            be::AccessGate::Options options;
            options.tokenFile = path.toStdString();
            be::AccessGate gate(options, probe.log(), probe.clock());
            std::string error;
            if (!gate.load(&error)) {
                return std::vector<std::string> { error };
            }
            return probe.lines;
        };
        const auto owner = QFile::ReadOwner | QFile::WriteOwner;
        auto said = warnings(owner | QFile::ReadGroup | QFile::ReadOther);
        QCOMPARE(said.size(), size_t { 1 });
        QVERIFY2(said[0].find("may be read by every account on this host (mode 0644)") != std::string::npos
                && said[0].find("chmod 600") != std::string::npos
                && said[0].find(path.toStdString()) != std::string::npos
                && said[0].find("lax-token") == std::string::npos,
            said[0].c_str());
        said = warnings(owner | QFile::ReadGroup);
        QCOMPARE(said.size(), size_t { 1 });
        QVERIFY2(said[0].find("may be read by its group (mode 0640)") != std::string::npos, said[0].c_str());
        said = warnings(owner);
        QVERIFY2(said.empty(), said.empty() ? "" : said.front().c_str());
    }

    // The standard health service answers without a token (Kubernetes' probes have none) and says what the source's
    // state is: NOT_SERVING while the upstream is unreachable, SERVING once a poll gave a frame, NOT_SERVING again
    // when the upstream goes; the Telemetry service by its name the same. Every other call still needs the token.
    void healthAnswersWithoutATokenFromTheSourcesState()
    {
        auto up = std::make_shared<std::atomic<bool>>(false);
        be::SimulationOptions options = smallFleet();
        options.interval = 100ms;
        be::BackendServer server(
            std::make_unique<be::FrameSource>(std::make_unique<SwitchedUpstream>(options, up), options),
            tlsWithTokens());
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        ChannelSecurity console; // the CA, no token
        console.caFile = m_certificates.crt(QStringLiteral("ca"));
        QString why;
        const auto channel
            = fleetscope::createChannel(server.listeningAddress(), console, grpc::ChannelArguments(), &why);
        QVERIFY2(channel, qPrintable(why));
        const std::string telemetry = pb::Telemetry::service_full_name();

        grpc::Status failed;
        QCOMPARE(healthOf(channel, "", &failed), notServing);
        QVERIFY2(failed.ok(), failed.error_message().c_str());
        QTRY_VERIFY_WITH_TIMEOUT(!server.source().upstreamError().empty(), 5000);
        QCOMPARE(healthOf(channel, ""), notServing);
        QCOMPARE(healthOf(channel, telemetry), notServing);
        std::string reason;
        QVERIFY(!be::HealthReport::serving(server.source(), &reason));
        QVERIFY2(reason.find("the upstream is unreachable: connection refused") != std::string::npos, reason.c_str());

        *up = true;
        QTRY_COMPARE_WITH_TIMEOUT(healthOf(channel, ""), serving, 5000);
        QCOMPARE(healthOf(channel, telemetry), serving);
        QCOMPARE(healthOf(channel, "no.such.Service", &failed), -1);
        QCOMPARE(failed.error_code(), grpc::StatusCode::NOT_FOUND);
        QCOMPARE(listMetrics(server.listeningAddress(), console).error_code(), grpc::StatusCode::UNAUTHENTICATED);

        *up = false;
        QTRY_COMPARE_WITH_TIMEOUT(healthOf(channel, ""), notServing, 5000);
        QCOMPARE(healthOf(channel, telemetry), notServing);
    }

    // Before its first poll a source serves the frame of the start (a polled one: every GPU without data, while it
    // discovers what it serves): NOT_SERVING, though nothing failed.
    void healthIsNotServingBeforeTheFirstFrame()
    {
        be::SimulationOptions options = smallFleet();
        options.interval = 1h; // the simulator polls first one interval after the start
        be::BackendServer server(be::simulatedSource(options));
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        const auto channel = grpc::CreateChannel(server.listeningAddress(), grpc::InsecureChannelCredentials());
        QCOMPARE(healthOf(channel, ""), notServing);
        std::string reason;
        QVERIFY(!be::HealthReport::serving(server.source(), &reason));
        QCOMPARE(reason, std::string("no frame polled yet"));
        server.stop();
    }

    // Server reflection (for grpcurl) is behind the token as every Telemetry call is: without it the call ends
    // UNAUTHENTICATED and nothing of the API leaves, its answer replaced by the refusal; with a wrong one
    // PERMISSION_DENIED; with the token it lists the services.
    void reflectionNeedsTheToken()
    {
        QString error;
        auto server = serve(tlsWithTokens(), &error);
        QVERIFY2(server, qPrintable(error));
        const auto reflect = [&](const QString &token) {
            ChannelSecurity console;
            console.caFile = m_certificates.crt(QStringLiteral("ca"));
            console.tokenFile = token;
            QString why;
            return listServices(
                fleetscope::createChannel(server->listeningAddress(), console, grpc::ChannelArguments(), &why));
        };
        const auto refused = reflect(QString());
        QCOMPARE(refused.status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
        QVERIFY2(refused.status.error_message().find("needs a token") != std::string::npos
                && refused.status.error_message().find("ServerReflectionInfo") != std::string::npos,
            refused.status.error_message().c_str());
        QVERIFY(refused.answers.size() <= 1);
        for (const auto &answer : refused.answers) {
            QCOMPARE(answer, be::ReflectionGate::errorResponse(refused.status));
            QVERIFY(answer.find("fleetscope.telemetry") == std::string::npos);
        }
        QCOMPARE(reflect(m_wrongToken).status.error_code(), grpc::StatusCode::PERMISSION_DENIED);

        const auto listed = reflect(m_goodToken);
        QVERIFY2(listed.status.ok(), listed.status.error_message().c_str());
        QCOMPARE(listed.answers.size(), size_t { 1 });
        for (const char *service : { "fleetscope.telemetry.v1.Telemetry", "grpc.health.v1.Health",
                 "grpc.reflection.v1alpha.ServerReflection" }) {
            QVERIFY2(listed.answers[0].find(service) != std::string::npos, service);
        }
    }

    // A refused reflection call stays open while its caller keeps it, and holds a thread of the server: past 16 at once
    // the next is cancelled at once, and one closed makes room.
    void refusedReflectionCallsAreBounded()
    {
        QString error;
        auto server = serve(tlsWithTokens(), &error);
        QVERIFY2(server, qPrintable(error));
        ChannelSecurity console; // no token
        console.caFile = m_certificates.crt(QStringLiteral("ca"));
        const auto channel
            = fleetscope::createChannel(server->listeningAddress(), console, grpc::ChannelArguments(), &error);
        QVERIFY2(channel, qPrintable(error));
        grpc::GenericStub stub(channel);
        grpc::CompletionQueue queue;
        void *tag = nullptr;
        bool ok = false;
        struct Held
        {
            grpc::ClientContext context;
            std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call;
            grpc::Status status;
        };
        std::vector<Held> held(be::ReflectionGate::maxRefusedOpen);
        for (auto &call : held) { // opened, and then nothing sent
            call.context.set_deadline(std::chrono::system_clock::now() + 60s);
            call.call = stub.PrepareCall(&call.context, be::ReflectionGate::method, &queue);
            call.call->StartCall(nullptr);
            QVERIFY(queue.Next(&tag, &ok) && ok);
        }
        // They reach the server in their own time: once it holds the 16, the next is cancelled.
        QTRY_COMPARE_WITH_TIMEOUT(listServices(channel).status.error_code(), grpc::StatusCode::CANCELLED, 10000);
        held.front().context.TryCancel();
        // Asked once per try and the answer kept: the server lets go of a finished call's slot a moment after its
        // caller has the status, so asking again at once may find all 16 held (QTRY_VERIFY asks a last time).
        grpc::Status status;
        QDeadlineTimer deadline(10000);
        do {
            status = listServices(channel).status;
        } while (status.error_code() == grpc::StatusCode::CANCELLED && !deadline.hasExpired() && (QTest::qWait(20), true));
        QVERIFY2(!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED, status.error_message().c_str());
        for (auto &call : held) {
            call.context.TryCancel();
            call.call->Finish(&call.status, nullptr);
        }
        for (size_t i = 0; i < held.size(); ++i) {
            QVERIFY(queue.Next(&tag, &ok));
        }
        queue.Shutdown();
        while (queue.Next(&tag, &ok)) { }
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
