// SPDX-License-Identifier: Apache-2.0
// The standard gRPC services beside Telemetry: health (grpc.health.v1, no token needed, its status from the source's
// state) and server reflection (behind the token as every Telemetry call is, its refused calls bounded), each spoken
// by hand since Debian's gRPC ships no generated stubs for them.
#include "analytics/fleetanalytics.h"
#include "core/framesource.h"
#include "service/healthreport.h"
#include "service/reflectiongate.h"
#include "tests/backend/service/securitytesting.h"
#include "tests/backend/testing/switchedfleet.h"
#include "tests/realparts.h"

#include <grpcpp/generic/generic_stub.h>

#include <QDeadlineTimer>
#include <QTest>

#include <atomic>
#include <future>
#include <memory>
#include <vector>

using namespace std::chrono_literals;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using fleetscope::ChannelSecurity;
using namespace fleetscope::testing;

namespace {

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

} // namespace

class TestStandardServices : public SecuritySuite
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

    // The standard health service answers without a token (Kubernetes' probes have none) and says what the source's
    // state is: NOT_SERVING while the upstream is unreachable, SERVING once a poll gave a frame, NOT_SERVING again
    // when the upstream goes; the Telemetry service by its name the same. Every other call still needs the token.
    void healthAnswersWithoutATokenFromTheSourcesState()
    {
        auto up = std::make_shared<std::atomic<bool>>(false);
        be::SimulationOptions options = smallFleet();
        options.interval = 100ms;
        be::BackendServer server(
            be::judgedSource(
                std::make_unique<SwitchedFleet>(options, up, SwitchedFleet::WhileOff::Unreachable), options),
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
        } while (
            status.error_code() == grpc::StatusCode::CANCELLED && !deadline.hasExpired() && (QTest::qWait(20), true));
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
};

QTEST_GUILESS_MAIN(TestStandardServices)
#include "tst_standardservices.moc"
