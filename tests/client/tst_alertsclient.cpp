// SPDX-License-Identifier: Apache-2.0
// The alerts client against a backend on 127.0.0.1 (tests/client/alertsbackend.h): a state followed as it changes,
// latest wins, a bad state dropped with the last good one kept, no Alertmanager asked again rarely, the backend gone
// and back followed again with backoff and asked again who this console is, and silences made, refused and timed out.
#include "client/alertsclient.h"
#include "tests/client/alertsbackend.h"

#include <QSignalSpy>
#include <QTest>

using namespace fleetscope;
using namespace fleetscope::alertstesting;
using namespace std::chrono_literals;

namespace {

TopologyPtr fleetOf(uint32_t gpus, uint64_t generation = 1)
{
    auto t = std::make_shared<Topology>();
    t->generation = generation;
    t->gpuCount = gpus;
    t->nodes.resize(gpus / 8);
    t->nodeOfGpu.resize(gpus);
    for (uint32_t g = 0; g < gpus; ++g) {
        t->nodeOfGpu[g] = g / 8;
    }
    return t;
}

QStringList namesOf(const AlertBoardPtr &board)
{
    QStringList names;
    if (board) {
        for (const auto &a : board->alerts) {
            names << a.name();
        }
    }
    return names;
}

} // namespace

class TestAlertsClient : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void followsTheStateAsItChanges()
    {
        AlertsBackend backend;
        backend.setAccess(pb::ROLE_OPERATOR, "alice");
        backend.publish(oneState(1, { "GpuHot", "XidStorm" }));
        QVERIFY(backend.start() != 0);
        AlertsClient client;
        client.setTopology(fleetOf(64));
        QSignalSpy boards(&client, &AlertsClient::boardReady);
        QSignalSpy access(&client, &AlertsClient::accessChanged);
        client.start(QString::fromStdString(backend.address()));
        QCOMPARE(client.state(), AlertsClient::State::Connecting);
        QTRY_VERIFY(client.board() != nullptr);
        QCOMPARE(client.state(), AlertsClient::State::Open);
        QCOMPARE(namesOf(client.board()), (QStringList { QStringLiteral("GpuHot"), QStringLiteral("XidStorm") }));
        QCOMPARE(client.board()->alerts[1].gpuRuns.at(0), (std::pair<uint32_t, uint32_t> { 4, 4 }));
        QTRY_VERIFY(client.accessKnown());
        QCOMPARE(access.size(), 1);
        QCOMPARE(client.access().name, QStringLiteral("alice"));
        QVERIFY(client.access().maySilence);

        backend.publish(oneState(2, { "GpuHot" }));
        QTRY_COMPARE(client.board()->generation, uint64_t { 2 });
        QCOMPARE(namesOf(client.board()), QStringList { QStringLiteral("GpuHot") });
        QCOMPARE(backend.streams(), 1);
        QCOMPARE(backend.accessCalls(), 1);
    }

    // A burst of states is delivered as fewer, the newest last.
    void theLatestStateWins()
    {
        AlertsBackend backend;
        backend.publish(oneState(1, { "A" }));
        QVERIFY(backend.start() != 0);
        AlertsClient client;
        QSignalSpy boards(&client, &AlertsClient::boardReady);
        client.start(QString::fromStdString(backend.address()));
        QTRY_VERIFY(client.board() != nullptr);
        std::vector<pb::AlertsPart> burst;
        for (uint64_t g = 2; g <= 200; ++g) {
            auto state = oneState(g, { "A", "B" });
            burst.push_back(state[0]);
        }
        backend.publish(burst); // 199 states, one after another on the stream
        QTRY_COMPARE(client.board()->generation, uint64_t { 200 });
        QVERIFY(boards.size() <= 200);
        QCOMPARE(client.statesRejected(), quint64 { 0 });
    }

    // A state whose counts lie is dropped whole and said; the last good one stays until the next good one.
    void aBadStateKeepsTheLastGoodOne()
    {
        AlertsBackend backend;
        backend.publish(oneState(1, { "Good" }));
        QVERIFY(backend.start() != 0);
        AlertsClient client;
        QSignalSpy errors(&client, &AlertsClient::errorOccurred);
        client.start(QString::fromStdString(backend.address()));
        QTRY_VERIFY(client.board() != nullptr);
        auto lying = oneState(2, { "Liar" });
        lying[0].set_alert_count(5);
        backend.publish(lying);
        QTRY_COMPARE(client.statesRejected(), quint64 { 1 });
        QTRY_VERIFY(!errors.isEmpty());
        QVERIFY2(errors.first().first().toString().contains(QLatin1String("said 5 alerts")),
            qPrintable(errors.first().first().toString()));
        QCOMPARE(client.board()->generation, uint64_t { 1 });
        QCOMPARE(client.state(), AlertsClient::State::Open);
        backend.publish(oneState(3, { "Next" }));
        QTRY_COMPARE(client.board()->generation, uint64_t { 3 });
    }

    // FAILED_PRECONDITION: no Alertmanager behind the backend; asked again every 30 s, not on the backoff.
    void noAlertmanagerIsAskedAgainRarely()
    {
        AlertsBackend backend;
        backend.setConfigured(false);
        backend.setAccess(pb::ROLE_VIEWER, "bob");
        QVERIFY(backend.start() != 0);
        AlertsClient client;
        client.start(QString::fromStdString(backend.address()));
        QTRY_COMPARE(client.state(), AlertsClient::State::NotConfigured);
        QCOMPARE(client.nextRetryDelayMs(), 30000);
        QVERIFY(client.board() == nullptr);
        QTRY_VERIFY(client.accessKnown());
        QCOMPARE(client.access().role, BackendAccess::Role::Viewer);
        const int streams = backend.streams();

        // Asked again on its interval (shortened here), the access not asked again on the same connection.
        AlertsClient soon;
        soon.setBackoff({ 500, 10000, 300 });
        soon.start(QString::fromStdString(backend.address()));
        QTRY_COMPARE(soon.state(), AlertsClient::State::NotConfigured);
        QCOMPARE(soon.nextRetryDelayMs(), 300);
        QTRY_VERIFY(soon.accessKnown());
        backend.setConfigured(true);
        backend.publish(oneState(1, { "Now" }));
        QTRY_VERIFY(soon.board() != nullptr);
        QCOMPARE(soon.state(), AlertsClient::State::Open);
        QCOMPARE(backend.accessCalls(), 2); // once for each client
        // The first client, on its 30 s, has not asked again meanwhile.
        QCOMPARE(client.state(), AlertsClient::State::NotConfigured);
        QVERIFY(backend.streams() <= streams + 3);
    }

    // The backend gone: the last state kept, followed again 0.5 s, 1 s, 2 s, … later (±20%), and when it is back the
    // stream is open again and who this console is is asked again.
    void aBackendGoneIsFollowedAgainWithBackoff()
    {
        auto backend = std::make_unique<AlertsBackend>();
        backend->setAccess(pb::ROLE_OPERATOR, "alice");
        backend->publish(oneState(1, { "Kept" }));
        const int port = backend->start();
        QVERIFY(port != 0);
        AlertsClient client;
        std::vector<int> waits;
        connect(&client, &AlertsClient::stateChanged, this, [&](AlertsClient::State state, const QString &) {
            if (state == AlertsClient::State::Reconnecting) {
                waits.push_back(client.nextRetryDelayMs());
            }
        });
        client.start(QString::fromStdString(backend->address()));
        QTRY_VERIFY(client.board() != nullptr);
        QTRY_COMPARE(backend->accessCalls(), 1);
        backend.reset();
        QTRY_VERIFY_WITH_TIMEOUT(waits.size() >= 3, 15000);
        QCOMPARE(client.state(), AlertsClient::State::Reconnecting);
        QVERIFY(!client.stateDetail().isEmpty());
        QCOMPARE(namesOf(client.board()), QStringList { QStringLiteral("Kept") });
        QVERIFY2(waits[0] >= 400 && waits[0] <= 600, qPrintable(QString::number(waits[0])));
        QVERIFY2(waits[1] >= 800 && waits[1] <= 1200, qPrintable(QString::number(waits[1])));
        QVERIFY2(waits[2] >= 1600 && waits[2] <= 2400, qPrintable(QString::number(waits[2])));

        backend = std::make_unique<AlertsBackend>();
        backend->setAccess(pb::ROLE_VIEWER, "alice");
        backend->publish(oneState(1, { "Back" }));
        QCOMPARE(backend->start(port), port);
        QTRY_VERIFY_WITH_TIMEOUT(namesOf(client.board()) == QStringList { QStringLiteral("Back") }, 15000);
        QCOMPARE(client.state(), AlertsClient::State::Open);
        QTRY_COMPARE(client.access().role, BackendAccess::Role::Viewer);
        QCOMPARE(backend->accessCalls(), 1);
    }

    // Another fleet: the stream is followed again, its state decoded against the new one.
    void anotherFleetFollowsTheStreamAgain()
    {
        AlertsBackend backend;
        backend.publish(oneState(1, { "A", "B", "C" })); // GPUs 0 to 11
        QVERIFY(backend.start() != 0);
        AlertsClient client;
        client.setTopology(fleetOf(4));
        client.start(QString::fromStdString(backend.address()));
        QTRY_VERIFY(client.board() != nullptr);
        QCOMPARE(namesOf(client.board()), QStringList { QStringLiteral("A") }); // B and C are past a fleet of 4
        QCOMPARE(client.board()->problems.size(), qsizetype { 2 });
        client.setTopology(fleetOf(8, 2));
        QTRY_COMPARE(backend.streams(), 2);
        QTRY_COMPARE(namesOf(client.board()), (QStringList { QStringLiteral("A"), QStringLiteral("B") }));
    }

    void silencesAreMadeAndExpired()
    {
        AlertsBackend backend;
        backend.publish(oneState(1, { "A" }));
        QVERIFY(backend.start() != 0);
        AlertsClient client;
        QSignalSpy done(&client, &AlertsClient::silenceDone);
        client.start(QString::fromStdString(backend.address()));
        SilenceDraft draft;
        draft.matchers.push_back({ QStringLiteral("Hostname"), QStringLiteral("n1"), false, true });
        draft.durationMs = 3600000;
        draft.comment = QStringLiteral("on it");
        const quint64 id = client.createSilence(draft);
        QVERIFY(id != 0);
        QTRY_COMPARE(done.size(), 1);
        QCOMPARE(done[0][0].value<quint64>(), id);
        QVERIFY(done[0][1].toBool());
        QCOMPARE(done[0][2].toString(), QStringLiteral("s-1"));
        const auto asked = backend.silencesAsked();
        QCOMPARE(asked.size(), size_t { 1 });
        QCOMPARE(asked[0].matchers(0).value(), std::string("n1"));
        QCOMPARE(asked[0].duration_ms(), int64_t { 3600000 });
        QCOMPARE(asked[0].comment(), std::string("on it"));

        client.expireSilence(QStringLiteral("s-1"));
        QTRY_COMPARE(done.size(), 2);
        QVERIFY(done[1][1].toBool());
        QCOMPARE(backend.expiresAsked(), std::vector<std::string> { "s-1" });
    }

    // The backend's refusals said for people, with its own words.
    void refusalsAreSaid_data()
    {
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("said");
        QTest::addColumn<QString>("expected");
        QTest::newRow("viewer") << int(grpc::StatusCode::PERMISSION_DENIED) << QStringLiteral("bob is a viewer")
                                << QStringLiteral("not allowed: bob is a viewer");
        QTest::newRow("invalid") << int(grpc::StatusCode::INVALID_ARGUMENT)
                                 << QStringLiteral("a matcher every alert matches")
                                 << QStringLiteral("refused by the backend: a matcher every alert matches");
        QTest::newRow("unavailable") << int(grpc::StatusCode::UNAVAILABLE)
                                     << QStringLiteral("Alertmanager: connection refused")
                                     << QStringLiteral(
                                            "unavailable (the backend or its Alertmanager): Alertmanager: connection "
                                            "refused");
        QTest::newRow("not found") << int(grpc::StatusCode::NOT_FOUND) << QStringLiteral("no silence s-9")
                                   << QStringLiteral("no such silence: no silence s-9");
    }
    void refusalsAreSaid()
    {
        QFETCH(int, code);
        QFETCH(QString, said);
        QFETCH(QString, expected);
        AlertsBackend backend;
        backend.setSilenceAnswer(grpc::Status(static_cast<grpc::StatusCode>(code), said.toStdString()));
        QVERIFY(backend.start() != 0);
        AlertsClient client;
        QSignalSpy done(&client, &AlertsClient::silenceDone);
        client.start(QString::fromStdString(backend.address()));
        client.createSilence(SilenceDraft());
        QTRY_COMPARE(done.size(), 1);
        QVERIFY(!done[0][1].toBool());
        QCOMPARE(done[0][2].toString(), expected);
    }

    // A call the backend does not answer ends at its deadline, said as such; one under way when the connection is
    // replaced is said to have gone with it.
    void callsHaveDeadlines()
    {
        AlertsBackend backend;
        backend.setSilenceAnswer(grpc::Status::OK, true);
        QVERIFY(backend.start() != 0);
        AlertsClient client;
        client.setCallDeadline(300ms);
        QSignalSpy done(&client, &AlertsClient::silenceDone);
        client.start(QString::fromStdString(backend.address()));
        client.createSilence(SilenceDraft());
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 5000);
        QVERIFY(!done[0][1].toBool());
        QVERIFY2(
            done[0][2].toString().startsWith(QLatin1String("no answer within")), qPrintable(done[0][2].toString()));

        client.setCallDeadline(60s);
        const quint64 id = client.expireSilence(QStringLiteral("s-1"));
        QTRY_COMPARE(backend.expiresAsked().size(), size_t { 1 });
        client.start(QString::fromStdString(backend.address()));
        QCOMPARE(done.size(), 2);
        QCOMPARE(done[1][0].value<quint64>(), id);
        QVERIFY(!done[1][1].toBool());
        backend.release();
    }

    // Asked of no backend: refused at once, never a hang.
    void notConnectedIsRefused()
    {
        AlertsClient client;
        QSignalSpy done(&client, &AlertsClient::silenceDone);
        client.createSilence(SilenceDraft());
        QTRY_COMPARE(done.size(), 1);
        QVERIFY(!done[0][1].toBool());
        QCOMPARE(done[0][2].toString(), QStringLiteral("not connected to a backend"));
    }
};

QTEST_GUILESS_MAIN(TestAlertsClient)
#include "tst_alertsclient.moc"
