// SPDX-License-Identifier: Apache-2.0
// The access gate every call passes, mostly alone with a clock the test moves: streams and calls per client limited
// (RESOURCE_EXHAUSTED naming the limit), refusals logged once a minute and never with the secret, token guessing
// limited per address, floods from many addresses kept apart from the consoles' records, a token file that goes
// wrong refusing every call, looked at once a second, and a warning when others may read it.
#include "backendoptions.h"
#include "service/accessgate.h"
#include "tests/backend/service/securitytesting.h"

#include <fmt/format.h>

#include <QTest>

#include <algorithm>
#include <vector>

#include <unistd.h>

using namespace std::chrono_literals;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using fleetscope::ChannelSecurity;
using namespace fleetscope::testing;

namespace {

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
    // A gate with these options that logs here and reads this clock, its token file (if any) loaded; null when it
    // could not be, *error saying why.
    std::unique_ptr<be::AccessGate> gate(const be::AccessGate::Options &options, std::string *error)
    {
        auto made = std::make_unique<be::AccessGate>(options, log(), clock());
        return made->load(error) ? std::move(made) : nullptr;
    }
    // The same over a token file, the other options their defaults.
    std::unique_ptr<be::AccessGate> gateOver(const QString &tokenFile, std::string *error)
    {
        be::AccessGate::Options options;
        options.tokenFile = tokenFile.toStdString();
        return gate(options, error);
    }
};

} // namespace

class TestAccessGate : public SecuritySuite
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(writeTokens()); }

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
        std::string error;
        const auto gate = probe.gate(options, &error);
        QVERIFY2(gate, error.c_str());
        for (int i = 0; i < 10; ++i) { // a burst of twice the rate
            QVERIFY(gate->admit("ipv4:10.0.0.7:40000", "", false, "ListJobs", be::AccessGate::Call::Unary).ok());
        }
        const auto refused = gate->admit("ipv4:10.0.0.7:40001", "", false, "ListJobs", be::AccessGate::Call::Unary);
        QCOMPARE(refused.status().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        QVERIFY2(refused.status().error_message().find("more than 5 calls a second") != std::string::npos,
            refused.status().error_message().c_str());
        // Another client is not affected; a second later the first may call 5 more times.
        QVERIFY(gate->admit("ipv4:10.0.0.8:40000", "", false, "ListJobs", be::AccessGate::Call::Unary).ok());
        probe.now += 1s;
        for (int i = 0; i < 5; ++i) {
            QVERIFY(gate->admit("ipv4:10.0.0.7:40002", "", false, "ListJobs", be::AccessGate::Call::Unary).ok());
        }
        QVERIFY(!gate->admit("ipv4:10.0.0.7:40002", "", false, "ListJobs", be::AccessGate::Call::Unary).ok());
    }

    // A refusal is logged once a minute per client and reason, and never with the token.
    void refusalsAreLoggedOnceAMinuteWithoutTheSecret()
    {
        GateProbe probe;
        std::string error;
        const auto gate = probe.gateOver(m_backendTokens, &error);
        QVERIFY2(gate, error.c_str());
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(
                gate->admit("ipv4:10.0.0.7:1", "Bearer guessed-token", false, "Subscribe", be::AccessGate::Call::Stream)
                    .status()
                    .error_code(),
                grpc::StatusCode::PERMISSION_DENIED);
        }
        QCOMPARE(probe.lines.size(), size_t { 1 });
        QCOMPARE(
            gate->admit("ipv6:[fd00::1]:2", "", false, "Subscribe", be::AccessGate::Call::Stream).status().error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
        QCOMPARE(probe.lines.size(), size_t { 2 });
        QVERIFY2(probe.lines[1].find("fd00::1: no token") != std::string::npos, probe.lines[1].c_str());
        probe.now += 61s;
        QVERIFY(
            !gate->admit("ipv4:10.0.0.7:3", "Bearer guessed-token", false, "Subscribe", be::AccessGate::Call::Stream)
                 .ok());
        QCOMPARE(probe.lines.size(), size_t { 3 });
        for (const auto &line : probe.lines) {
            QVERIFY2(
                line.find("guessed") == std::string::npos && line.find("s3cret") == std::string::npos, line.c_str());
        }
        // The right token, in either case of the scheme, and only it.
        QVERIFY(gate->admit("ipv4:10.0.0.7:4", "Bearer s3cret-one", false, "GetTopology", be::AccessGate::Call::Stream)
                    .ok());
        QVERIFY(gate->admit("ipv4:10.0.0.7:4", "bearer other-token", false, "GetTopology", be::AccessGate::Call::Stream)
                    .ok());
        QVERIFY(!gate->admit("ipv4:10.0.0.7:4", "Bearer s3cret-on", false, "GetTopology", be::AccessGate::Call::Stream)
                     .ok());
        QVERIFY(!gate->admit("ipv4:10.0.0.7:4", "Basic s3cret-one", false, "GetTopology", be::AccessGate::Call::Stream)
                     .ok());
    }

    // A token guesser from one address: past 60 refusals a minute (the default) its calls are refused before their
    // token is looked at, the right one too (an answer there would tell it that it guessed right), one refusal won
    // back every second. Other addresses are not affected. The limit is --max-refusals-per-minute.
    void guessingIsRateLimitedPerAddress()
    {
        QCOMPARE(be::AccessGate::Options().maxRefusalsPerMinutePerClient, uint32_t { 60 });
        GateProbe probe;
        std::string error;
        const auto gate = probe.gateOver(m_backendTokens, &error);
        QVERIFY2(gate, error.c_str());
        const auto admit = [&gate](const char *peer, const std::string &authorization) {
            return gate->admit(peer, authorization, false, "ListMetrics", be::AccessGate::Call::Unary).status();
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
        std::string error;
        const auto gate = probe.gateOver(m_backendTokens, &error);
        QVERIFY2(gate, error.c_str());
        const auto held
            = gate->admit("ipv4:10.9.9.9:1", "Bearer s3cret-one", false, "Subscribe", be::AccessGate::Call::Stream);
        QVERIFY(held.ok());
        const size_t flood = be::AccessGate::maxRefusalRecords + 4000;
        for (size_t i = 0; i < flood; ++i) {
            const std::string peer = fmt::format("ipv6:[fd00::{:x}]:443", i);
            QVERIFY(!gate->admit(peer, i % 2 ? "" : "Bearer guessed", false, "Subscribe", be::AccessGate::Call::Stream)
                         .ok());
        }
        QCOMPARE(gate->refusalRecords(), be::AccessGate::maxRefusalRecords);
        QCOMPARE(gate->clientRecords(), size_t { 1 });
        QCOMPARE(gate->openStreams("10.9.9.9"), size_t { 1 });
        const auto newcomer
            = gate->admit("ipv4:10.9.9.10:1", "Bearer other-token", false, "Subscribe", be::AccessGate::Call::Stream);
        QVERIFY2(newcomer.ok(), newcomer.status().error_message().c_str());
        QCOMPARE(gate->openStreams("10.9.9.10"), size_t { 1 });
        QCOMPARE(gate->openStreams("10.9.9.9"), size_t { 1 });

        QCOMPARE(probe.lines.size(), size_t { be::AccessGate::refusalLinesBurst });
        probe.now += 2s;
        QVERIFY(!gate->admit("ipv6:[fd01::1]:443", "", false, "Subscribe", be::AccessGate::Call::Stream).ok());
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
        QVERIFY(!gate->admit("ipv6:[fd02::1]:443", "", false, "Subscribe", be::AccessGate::Call::Stream).ok());
        QCOMPARE(gate->refusalRecords(), size_t { 1 });
    }

    // A token file that becomes empty, missing or unreadable refuses every call, with a token or without, and says
    // so in the log; put right, it is taken back. Those refusals are not held against the callers' addresses.
    void aWrongTokenFileRefusesEveryCall()
    {
        const QString name = QStringLiteral("closing.tokens");
        const QString path = writeTokenFile(name, "the-token\n");
        QVERIFY(!path.isEmpty());
        GateProbe probe;
        std::string error;
        const auto gate = probe.gateOver(path, &error);
        QVERIFY2(gate, error.c_str());
        const auto admit = [&gate](const std::string &authorization) {
            return gate->admit("ipv4:10.0.0.7:1", authorization, false, "ListJobs", be::AccessGate::Call::Unary)
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
        const QString path = writeTokenFile(name, "old-token\n");
        QVERIFY(!path.isEmpty());
        GateProbe probe;
        std::string error;
        const auto gate = probe.gateOver(path, &error);
        QVERIFY2(gate, error.c_str());
        const auto admit = [&gate](const char *authorization) {
            return gate->admit("ipv4:10.0.0.7:1", authorization, false, "ListJobs", be::AccessGate::Call::Unary)
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
            std::string error;
            if (!probe.gateOver(path, &error)) {
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

    void clientAddresses()
    {
        QCOMPARE(be::AccessGate::clientAddress("ipv4:10.0.0.7:53122"), std::string("10.0.0.7"));
        QCOMPARE(be::AccessGate::clientAddress("ipv6:[::1]:5"), std::string("::1"));
        QCOMPARE(be::AccessGate::clientAddress("unix:/run/x.sock"), std::string("/run/x.sock"));
    }
};

QTEST_GUILESS_MAIN(TestAccessGate)
#include "tst_accessgate.moc"
