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

    // A token's line names its caller and gives its role; a line with a token alone (the old format) is a viewer
    // named by its line, so that no token gains writes by an upgrade.
    void tokenLinesNameTheCaller()
    {
        const QString path = writeTokenFile(QStringLiteral("named.tokens"),
            "old-token\n# the NOC\n\twall-token   noc-wall \nop-token alice operator\nview-token bob viewer\n");
        QVERIFY(!path.isEmpty());
        GateProbe probe;
        std::string error;
        const auto gate = probe.gateOver(path, &error);
        QVERIFY2(gate, error.c_str());
        const auto caller = [&gate](const std::string &token) {
            const auto admitted
                = gate->admit("ipv4:10.0.0.7:1", "Bearer " + token, false, "GetAccess", be::AccessGate::Call::Unary);
            return admitted.ok() ? fmt::format("{} {} {}", admitted.caller().name, be::roleName(admitted.caller().role),
                       admitted.caller().address)
                                 : admitted.status().error_message();
        };
        QCOMPARE(caller("old-token"), std::string("token-1 viewer 10.0.0.7"));
        QCOMPARE(caller("wall-token"), std::string("noc-wall viewer 10.0.0.7"));
        QCOMPARE(caller("op-token"), std::string("alice operator 10.0.0.7"));
        QCOMPARE(caller("view-token"), std::string("bob viewer 10.0.0.7"));
        // The caller goes with its admission.
        auto held = gate->admit("ipv4:10.0.0.8:1", "Bearer op-token", false, "GetAccess", be::AccessGate::Call::Stream);
        const be::AccessGate::Admission moved(std::move(held));
        QCOMPARE(moved.caller().name, std::string("alice"));
        QCOMPARE(moved.caller().address, std::string("10.0.0.8"));
        const auto refused
            = gate->admit("ipv4:10.0.0.7:1", "Bearer alice", false, "GetAccess", be::AccessGate::Call::Unary);
        QCOMPARE(refused.status().error_code(), grpc::StatusCode::PERMISSION_DENIED);
        QVERIFY(refused.caller().name.empty());
        QCOMPARE(refused.caller().address, std::string("10.0.0.7"));
    }

    // A line of another shape is refused at start with its number, and the secret is never in the words.
    void badTokenLinesAreRefusedWithTheLine_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("said");
        QTest::newRow("unknown role") << QByteArray("a-token alice\nsecret-x bob admin\n")
                                      << "line 2: a role is 'viewer' or 'operator'";
        QTest::newRow("role in capitals") << QByteArray("secret-x bob Operator\n") << "line 1: a role is";
        QTest::newRow("four words") << QByteArray("# c\n\nsecret-x bob operator extra\n")
                                    << "line 3: a line is TOKEN [NAME [ROLE]]";
        QTest::newRow("name too long") << QByteArray("secret-x " + QByteArray(65, 'n') + "\n")
                                       << "line 1: a name is a printable word of at most 64 bytes";
        QTest::newRow("name of control characters") << QByteArray("ok-token\nsecret-x bo\x01"
                                                                  "b viewer\n")
                                                    << "line 2: a name is";
        QTest::newRow("name not ASCII") << QByteArray("secret-x j\xc3\xbcrgen\n") << "line 1: a name is";
        QTest::newRow("name read as a comment") << QByteArray("secret-x #wall\n") << "line 1: a name is";
        QTest::newRow("the name of no credentials")
            << QByteArray("secret-x anonymous operator\n") << "line 1: a name is a printable word";
        QTest::newRow("token twice") << QByteArray("secret-x alice operator\nother\nsecret-x bob viewer\n")
                                     << "line 3: the same token as line 1";
        QTest::newRow("token too long") << QByteArray(QByteArray(4097, 't') + " alice\n")
                                        << "line 1: a token is one word of at most 4096 bytes";
        QTest::newRow("no token") << QByteArray("# nobody\n") << "holds no token";
    }

    void badTokenLinesAreRefusedWithTheLine()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, said);
        const QString path = writeTokenFile(QStringLiteral("bad.tokens"), text);
        QVERIFY(!path.isEmpty());
        GateProbe probe;
        std::string error;
        QVERIFY(!probe.gateOver(path, &error));
        QVERIFY2(error.find(said.toStdString()) != std::string::npos, error.c_str());
        QVERIFY2(error.find(path.toStdString()) != std::string::npos, error.c_str());
        QVERIFY2(error.find("secret-x") == std::string::npos, error.c_str());
        // parse() says the same, and keeps nothing.
        std::vector<be::TokenFile::Entry> entries { be::TokenFile::Entry() };
        std::string parsed;
        QVERIFY(!be::TokenFile::parse(text.toStdString(), "f", &entries, &parsed));
        QVERIFY(entries.empty());
        QVERIFY2(parsed.find(said.toStdString()) != std::string::npos, parsed.c_str());
    }

    // A token file rewritten while served: the names and roles of its new lines are taken within a second, and a bad
    // role written later refuses every call (it fails closed, as a file gone wrong does) until it is put right.
    void aRewrittenTokenFileKeepsNamesAndFailsClosed()
    {
        const QString name = QStringLiteral("renamed.tokens");
        const QString path = writeTokenFile(name, "a-token alice operator\n");
        QVERIFY(!path.isEmpty());
        GateProbe probe;
        std::string error;
        const auto gate = probe.gateOver(path, &error);
        QVERIFY2(gate, error.c_str());
        const auto admit = [&gate](const char *token) {
            return gate->admit(
                "ipv4:10.0.0.7:1", fmt::format("Bearer {}", token), false, "GetAccess", be::AccessGate::Call::Unary);
        };
        QCOMPARE(admit("a-token").caller().role, be::Role::Operator);
        QVERIFY(!m_certificates.write(name, "a-token alice viewer\nb-token bob operator\n").isEmpty());
        probe.now += 1s;
        auto alice = admit("a-token");
        QVERIFY2(alice.ok(), alice.status().error_message().c_str());
        QCOMPARE(alice.caller().name, std::string("alice"));
        QCOMPARE(alice.caller().role, be::Role::Viewer);
        const auto bob = admit("b-token");
        QCOMPARE(bob.caller().name, std::string("bob"));
        QCOMPARE(bob.caller().role, be::Role::Operator);

        QVERIFY(!m_certificates.write(name, "a-token alice viewer\nb-token bob root\n").isEmpty());
        probe.now += 1s;
        QCOMPARE(admit("a-token").status().error_code(), grpc::StatusCode::UNAVAILABLE);
        QCOMPARE(admit("b-token").status().error_code(), grpc::StatusCode::UNAVAILABLE);
        QVERIFY(std::any_of(probe.lines.begin(), probe.lines.end(), [](const std::string &line) {
            return line.find("line 2: a role is") != std::string::npos
                && line.find("every call is refused") != std::string::npos;
        }));
        QVERIFY(!m_certificates.write(name, "a-token alice viewer\nb-token bob operator\n").isEmpty());
        probe.now += 1s;
        QCOMPARE(admit("b-token").caller().role, be::Role::Operator);
        QVERIFY2(probe.lines.back().find("holds 2 token(s) again") != std::string::npos, probe.lines.back().c_str());
    }

    // Where no credential is asked (loopback), everyone is "anonymous", a viewer unless the backend says otherwise.
    void withoutCredentialsEveryoneIsAnonymous()
    {
        be::AccessGate open;
        auto admitted = open.admit("ipv4:127.0.0.1:5", "", false, "GetAccess", be::AccessGate::Call::Unary);
        QVERIFY(admitted.ok());
        QCOMPARE(admitted.caller().name, std::string("anonymous"));
        QCOMPARE(admitted.caller().role, be::Role::Viewer);
        QCOMPARE(admitted.caller().address, std::string("127.0.0.1"));
        GateProbe probe;
        be::AccessGate::Options options;
        std::string error;
        QCOMPARE(probe.gate(options, &error)
                     ->admit("ipv6:[::1]:5", "", false, "GetAccess", be::AccessGate::Call::Unary)
                     .caller()
                     .role,
            be::Role::Viewer);
        options.anonymousRole = be::Role::Operator;
        const auto gate = probe.gate(options, &error);
        admitted = gate->admit("ipv6:[::1]:5", "Bearer ignored", false, "GetAccess", be::AccessGate::Call::Unary);
        QCOMPARE(admitted.caller().name, std::string("anonymous"));
        QCOMPARE(admitted.caller().role, be::Role::Operator);
        QCOMPARE(admitted.caller().address, std::string("::1"));
        QVERIFY(gate->mayWrite(admitted, "silencing").ok());
    }

    // A viewer's write is refused PERMISSION_DENIED in words for people, and logged once a minute per address;
    // an operator's is let through; a refused admission answers its own status.
    void viewersMayNotWrite()
    {
        const QString path
            = writeTokenFile(QStringLiteral("writers.tokens"), "wall-token noc-wall viewer\nop-token alice operator\n");
        QVERIFY(!path.isEmpty());
        GateProbe probe;
        std::string error;
        const auto gate = probe.gateOver(path, &error);
        QVERIFY2(gate, error.c_str());
        const auto wall
            = gate->admit("ipv4:10.0.0.7:1", "Bearer wall-token", false, "CreateSilence", be::AccessGate::Call::Unary);
        QVERIFY(wall.ok());
        const auto refused = gate->mayWrite(wall, "silencing");
        QCOMPARE(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
        QVERIFY2(refused.error_message().rfind("noc-wall is a viewer: silencing needs the operator role (", 0) == 0
                && refused.error_message().find("token file") != std::string::npos
                && refused.error_message().find("docs/ALERTS.md") != std::string::npos,
            refused.error_message().c_str());
        QCOMPARE(probe.lines.size(), size_t { 1 });
        QVERIFY2(
            probe.lines[0].find("10.0.0.7 (noc-wall): a viewer's write") != std::string::npos, probe.lines[0].c_str());
        for (int i = 0; i < 5; ++i) {
            QCOMPARE(gate->mayWrite(wall, "expiring a silence").error_code(), grpc::StatusCode::PERMISSION_DENIED);
        }
        QCOMPARE(probe.lines.size(), size_t { 1 }); // once a minute
        probe.now += 61s;
        QVERIFY(!gate->mayWrite(wall, "silencing").ok());
        QCOMPARE(probe.lines.size(), size_t { 2 });

        const auto alice
            = gate->admit("ipv4:10.0.0.8:1", "Bearer op-token", false, "CreateSilence", be::AccessGate::Call::Unary);
        QVERIFY(gate->mayWrite(alice, "silencing").ok());
        const auto stranger
            = gate->admit("ipv4:10.0.0.9:1", "Bearer guess", false, "CreateSilence", be::AccessGate::Call::Unary);
        QCOMPARE(gate->mayWrite(stranger, "silencing").error_code(), grpc::StatusCode::PERMISSION_DENIED);
        QVERIFY2(gate->mayWrite(stranger, "silencing").error_message().find("token is not one") != std::string::npos,
            gate->mayWrite(stranger, "silencing").error_message().c_str());

        // The anonymous caller of an open gate hears where its role comes from.
        be::AccessGate open;
        const auto anyone = open.admit("ipv4:127.0.0.1:1", "", false, "CreateSilence", be::AccessGate::Call::Unary);
        const auto words = open.mayWrite(anyone, "silencing").error_message();
        QVERIFY2(words.find("anonymous is a viewer") != std::string::npos
                && words.find("--anonymous-role") != std::string::npos,
            words.c_str());
    }

    // Client certificates: the line for the whole subject first, then one for the common name; a certificate in no
    // line is a viewer named by its common name, said once with its subject (what to write in the file).
    void certificatesAreMappedByTheRolesFile()
    {
        const QString path = m_certificates.write(QStringLiteral("mapped.roles"),
            "# the NOC\noperator alice CN=alice\nviewer wall   CN=noc-wall,OU=Wall\\, Hall 2,O=Example NOC  \n"
            "operator wall-by-cn cn=noc-wall\n");
        QVERIFY(!path.isEmpty());
        GateProbe probe;
        be::AccessGate::Options options;
        options.requireClientCertificate = true;
        options.clientRolesFile = path.toStdString();
        std::string error;
        const auto gate = probe.gate(options, &error);
        QVERIFY2(gate, error.c_str());
        const auto caller = [&gate](std::string_view subject, std::string_view commonName) {
            be::AccessGate::Credentials credentials;
            credentials.certificate = true;
            credentials.subject = subject;
            credentials.commonName = commonName;
            const auto admitted = gate->admit("ipv4:10.0.0.7:1", credentials, "GetAccess", be::AccessGate::Call::Unary);
            return admitted.ok() ? fmt::format("{} {}", admitted.caller().name, be::roleName(admitted.caller().role))
                                 : admitted.status().error_message();
        };
        QCOMPARE(caller("CN=noc-wall,OU=Wall\\, Hall 2,O=Example NOC", "noc-wall"), std::string("wall viewer"));
        QCOMPARE(caller("CN=noc-wall,O=Elsewhere", "noc-wall"), std::string("wall-by-cn operator"));
        QCOMPARE(caller("CN=alice,O=Example NOC", "alice"), std::string("alice operator"));
        QVERIFY(probe.lines.empty());
        QCOMPARE(caller("CN=bob,O=Example NOC", "bob"), std::string("bob viewer"));
        QCOMPARE(caller("CN=bob,O=Example NOC", "bob"), std::string("bob viewer"));
        QCOMPARE(probe.lines.size(), size_t { 1 });
        QVERIFY2(
            probe.lines[0].find("is a viewer named bob: its subject is 'CN=bob,O=Example NOC'") != std::string::npos,
            probe.lines[0].c_str());
        // A common name's words are a name's: printable, bounded.
        QCOMPARE(caller("CN=x", "eve\n\x1b[2Jroot"), std::string("eve??[2Jroot viewer"));
        QCOMPARE(caller("O=none", ""), std::string("(no common name) viewer"));
        QCOMPARE(be::AccessGate::nameOfCommonName(std::string(100, 'n')), std::string(64, 'n'));
        QCOMPARE(be::AccessGate::nameOfCommonName("anonymous"), std::string("cn:anonymous"));
        // Without a certificate, refused as before.
        QCOMPARE(
            gate->admit("ipv4:10.0.0.8:1", "", false, "GetAccess", be::AccessGate::Call::Unary).status().error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
        // Without a roles file, every certificate is a viewer named by its common name, and nothing is said.
        be::AccessGate::Options plain;
        plain.requireClientCertificate = true;
        GateProbe quiet;
        const auto unmapped = quiet.gate(plain, &error);
        be::AccessGate::Credentials credentials;
        credentials.certificate = true;
        credentials.subject = "CN=alice";
        credentials.commonName = "alice";
        const auto admitted = unmapped->admit("ipv4:10.0.0.7:1", credentials, "GetAccess", be::AccessGate::Call::Unary);
        QCOMPARE(admitted.caller().name, std::string("alice"));
        QCOMPARE(admitted.caller().role, be::Role::Viewer);
        QVERIFY(quiet.lines.empty());
        // A roles file needs client certificates.
        options.requireClientCertificate = false;
        QVERIFY(!probe.gate(options, &error));
        QVERIFY2(error.find("needs client certificates (--tls-client-ca)") != std::string::npos, error.c_str());
    }

    void badRolesLinesAreRefusedWithTheLine_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("said");
        QTest::newRow("unknown role") << QByteArray("admin alice CN=alice\n") << "line 1: a line is ROLE NAME SUBJECT";
        QTest::newRow("no subject") << QByteArray("# c\noperator alice\n") << "line 2: a line is ROLE NAME SUBJECT";
        QTest::newRow("bad name") << QByteArray("operator " + QByteArray(65, 'a') + " CN=a\n")
                                  << "line 1: a name is a printable word";
        QTest::newRow("control character") << QByteArray("viewer a CN=a\x01z\n")
                                           << "line 1: a subject is at most 1024 bytes, without control characters";
        QTest::newRow("subject twice") << QByteArray("viewer a CN=a,O=b\noperator b CN=a,O=b\n")
                                       << "line 2: the same subject as line 1";
        QTest::newRow("common name twice")
            << QByteArray("viewer a CN=a\noperator b cn=a\n") << "line 2: the same subject as line 1";
        QTest::newRow("empty") << QByteArray("\n# none yet\n") << "holds no certificate";
    }

    void badRolesLinesAreRefusedWithTheLine()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, said);
        const QString path = m_certificates.write(QStringLiteral("bad.roles"), text);
        QVERIFY(!path.isEmpty());
        GateProbe probe;
        be::AccessGate::Options options;
        options.requireClientCertificate = true;
        options.clientRolesFile = path.toStdString();
        std::string error;
        QVERIFY(!probe.gate(options, &error));
        QVERIFY2(
            error.find(said.toStdString()) != std::string::npos && error.find(path.toStdString()) != std::string::npos,
            error.c_str());
    }

    // A roles file gone wrong while served refuses every call (UNAVAILABLE, not held against the callers), and is
    // taken back once put right, its new lines with it.
    void aRolesFileGoneWrongRefusesEveryCall()
    {
        const QString name = QStringLiteral("changing.roles");
        const QString path = m_certificates.write(name, "operator alice CN=alice\n");
        GateProbe probe;
        be::AccessGate::Options options;
        options.requireClientCertificate = true;
        options.clientRolesFile = path.toStdString();
        std::string error;
        const auto gate = probe.gate(options, &error);
        QVERIFY2(gate, error.c_str());
        be::AccessGate::Credentials credentials;
        credentials.certificate = true;
        credentials.subject = "CN=alice";
        credentials.commonName = "alice";
        const auto admit
            = [&] { return gate->admit("ipv4:10.0.0.7:1", credentials, "GetAccess", be::AccessGate::Call::Unary); };
        QCOMPARE(admit().caller().role, be::Role::Operator);
        QVERIFY(!m_certificates.write(name, "operator alice CN=alice\nowner bob CN=bob\n").isEmpty());
        probe.now += 1s;
        for (int i = 0; i < 100; ++i) { // more than the refusals an address may have a minute
            const auto refused = admit();
            QCOMPARE(refused.status().error_code(), grpc::StatusCode::UNAVAILABLE);
            QVERIFY2(refused.status().error_message().find("cannot check client certificates") != std::string::npos,
                refused.status().error_message().c_str());
        }
        QVERIFY2(probe.lines.front().find("line 2: a line is ROLE NAME SUBJECT") != std::string::npos,
            probe.lines.front().c_str());
        QVERIFY(!m_certificates.write(name, "viewer alice CN=alice\n").isEmpty());
        probe.now += 1s;
        const auto back = admit();
        QVERIFY2(back.ok(), back.status().error_message().c_str());
        QCOMPARE(back.caller().role, be::Role::Viewer);
        QVERIFY2(
            probe.lines.back().find("holds 1 certificate(s) again") != std::string::npos, probe.lines.back().c_str());
    }

    // A token and a certificate: the token names the caller; with a roles file, both must allow a write.
    void aTokenAndACertificateTakeTheLesserRole()
    {
        const QString tokens = writeTokenFile(QStringLiteral("both.tokens"), "op-token alice operator\n");
        const QString roles = m_certificates.write(QStringLiteral("both.roles"), "operator desk CN=desk\n");
        GateProbe probe;
        be::AccessGate::Options options;
        options.requireClientCertificate = true;
        options.tokenFile = tokens.toStdString();
        std::string error;
        const auto withoutRoles = probe.gate(options, &error);
        QVERIFY2(withoutRoles, error.c_str());
        be::AccessGate::Credentials credentials;
        credentials.authorization = "Bearer op-token";
        credentials.certificate = true;
        credentials.subject = "CN=laptop";
        credentials.commonName = "laptop";
        auto admitted = withoutRoles->admit("ipv4:10.0.0.7:1", credentials, "GetAccess", be::AccessGate::Call::Unary);
        QCOMPARE(admitted.caller().name, std::string("alice"));
        QCOMPARE(admitted.caller().role, be::Role::Operator);
        options.clientRolesFile = roles.toStdString();
        const auto withRoles = probe.gate(options, &error);
        QVERIFY2(withRoles, error.c_str());
        admitted = withRoles->admit("ipv4:10.0.0.7:1", credentials, "GetAccess", be::AccessGate::Call::Unary);
        QCOMPARE(admitted.caller().name, std::string("alice"));
        QCOMPARE(admitted.caller().role, be::Role::Viewer); // an unmapped certificate is a viewer's
        credentials.subject = "CN=desk";
        credentials.commonName = "desk";
        admitted = withRoles->admit("ipv4:10.0.0.7:1", credentials, "GetAccess", be::AccessGate::Call::Unary);
        QCOMPARE(admitted.caller().name, std::string("alice"));
        QCOMPARE(admitted.caller().role, be::Role::Operator);
    }

    void rolesAreNamed()
    {
        QCOMPARE(be::roleName(be::Role::Viewer), std::string_view("viewer"));
        QCOMPARE(be::roleName(be::Role::Operator), std::string_view("operator"));
        QCOMPARE(be::roleNamed("operator"), std::optional<be::Role>(be::Role::Operator));
        QCOMPARE(be::roleNamed("viewer"), std::optional<be::Role>(be::Role::Viewer));
        QVERIFY(!be::roleNamed("admin") && !be::roleNamed("") && !be::roleNamed("Viewer"));
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
