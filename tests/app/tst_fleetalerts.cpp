// SPDX-License-Identifier: Apache-2.0
// The session's alerts (FleetAlerts): how fresh what is shown is, said for people, judged again each second so that it
// turns old without a word from the backend; the last board kept, as old, when the backend goes; nothing called live
// before data; silences asked only where access allows. Against the alerts backend of the client's suites, and
// through ConsoleSession's connectTo.
#include "app/consolesession.h"
#include "app/session/fleetalerts.h"
#include "tests/client/alertsbackend.h"

#include <QDateTime>
#include <QSignalSpy>
#include <QTest>

using namespace fleetscope;
using namespace fleetscope::alertstesting;

namespace {

using Freshness = FleetAlerts::Freshness;

FleetAlerts::Inputs liveInputs(int64_t now)
{
    FleetAlerts::Inputs in;
    in.seenBoard = true;
    in.streamOpen = true;
    in.streamState = AlertsClient::State::Open;
    in.status.reachable = true;
    in.status.lastSuccessMs = now - 2000;
    in.status.pollIntervalMs = 1000;
    return in;
}

QString hhmm(int64_t ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("HH:mm"));
}

TopologyPtr fleetOf(uint32_t gpus, uint64_t generation)
{
    auto t = std::make_shared<Topology>();
    t->generation = generation;
    t->gpuCount = gpus;
    t->nodes.resize(gpus / 8);
    t->nodeOfGpu.resize(gpus);
    return t;
}

} // namespace

class TestFleetAlerts : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theRule()
    {
        // Noon today, so that "as of" is said as a time of day.
        const int64_t now = QDateTime(QDate::currentDate(), QTime(12, 0)).toMSecsSinceEpoch();
        auto in = liveInputs(now);
        QCOMPARE(FleetAlerts::judge(in, now), Freshness::Live);
        QCOMPARE(FleetAlerts::describe(in, now), QString());

        // A quiet Alertmanager: the backend publishes nothing new while polls read the same, however long.
        in.status.lastSuccessMs = now - 3600000;
        QCOMPARE(FleetAlerts::judge(in, now), Freshness::Live);
        QCOMPARE(FleetAlerts::describe(in, now), QString());

        // Alertmanager not answering the backend.
        in = liveInputs(now);
        in.status.reachable = false;
        in.status.error = QStringLiteral("connection refused");
        in.status.lastSuccessMs = now - 125000;
        QCOMPARE(FleetAlerts::judge(in, now), Freshness::Old);
        QCOMPARE(FleetAlerts::describe(in, now),
            QStringLiteral("Alertmanager unreachable for 2 min (connection refused): alerts as of %1")
                .arg(hhmm(now - 125000)));

        // The stream down: the backend is what does not answer.
        in = liveInputs(now);
        in.streamOpen = false;
        in.streamState = AlertsClient::State::Reconnecting;
        in.streamDetail = QStringLiteral("backend unavailable (connection refused)");
        QCOMPARE(FleetAlerts::judge(in, now), Freshness::Old);
        QCOMPARE(FleetAlerts::describe(in, now),
            QStringLiteral("backend unreachable (backend unavailable (connection refused)): alerts as of %1")
                .arg(hhmm(now - 2000)));

        // A read yesterday is dated.
        in.status.lastSuccessMs = now - 86400000;
        QVERIFY(FleetAlerts::describe(in, now).endsWith(
            QDateTime::fromMSecsSinceEpoch(now - 86400000).toString(QStringLiteral("yyyy-MM-dd HH:mm"))));

        // A newer state refused by the decoder: the board shown is not the backend's newest, so it is old.
        in = liveInputs(now);
        in.newerRefused = true;
        in.refusedWhy = QStringLiteral("alerts: a state of 3 alerts carried 2");
        QCOMPARE(FleetAlerts::judge(in, now), Freshness::Old);
        QCOMPARE(FleetAlerts::describe(in, now),
            QStringLiteral("the backend's newest alerts could not be read (alerts: a state of 3 alerts carried 2): "
                           "alerts as of %1")
                .arg(hhmm(now - 2000)));

        // Never read: not live, whatever else it says.
        in = liveInputs(now);
        in.status.lastSuccessMs = 0;
        QCOMPARE(FleetAlerts::judge(in, now), Freshness::Old);

        // Nothing shown is never called live.
        in = liveInputs(now);
        in.seenBoard = false;
        QCOMPARE(FleetAlerts::judge(in, now), Freshness::NotConfigured);
        QCOMPARE(FleetAlerts::describe(in, now), QStringLiteral("alerts: waiting for the backend"));
        in.notConfigured = true;
        in.streamState = AlertsClient::State::NotConfigured;
        in.streamDetail = QStringLiteral("the backend reads no Alertmanager");
        QCOMPARE(FleetAlerts::judge(in, now), Freshness::NotConfigured);
        QCOMPARE(FleetAlerts::describe(in, now), QStringLiteral("the backend reads no Alertmanager"));

        QCOMPARE(FleetAlerts::durationText(59999), QStringLiteral("59 s"));
        QCOMPARE(FleetAlerts::durationText(3 * 3600000), QStringLiteral("3 h"));
        QCOMPARE(FleetAlerts::durationText(int64_t { 3 } * 86400000), QStringLiteral("3 days"));
    }

    // Live once a state came; the words for an Alertmanager that does not answer follow the clock without a word from
    // the backend (judged again each second).
    void theWordsFollowTheClock()
    {
        AlertsBackend backend;
        QVERIFY(backend.start() != 0);
        FleetAlerts alerts;
        QCOMPARE(alerts.freshness(), Freshness::NotConfigured);
        QCOMPARE(alerts.freshnessText(), QStringLiteral("alerts: not connected"));
        backend.publish(oneState(1, { "GpuHot" }));
        alerts.connectTo(QString::fromStdString(backend.address()), ChannelSecurity());
        QTRY_COMPARE(alerts.freshness(), Freshness::Live);
        QCOMPARE(alerts.board().alerts.size(), size_t { 1 });
        QVERIFY(alerts.freshnessText().isEmpty());

        // Unreachable since 55 s ago: "5x s" (the state arrives within the few seconds a loaded machine takes), then
        // "1 min" with nothing more from the backend.
        backend.publish(oneState(2, { "GpuHot" }, 1000, false, QDateTime::currentMSecsSinceEpoch() - 55000));
        QTRY_COMPARE(alerts.freshness(), Freshness::Old);
        QVERIFY2(alerts.freshnessText().startsWith(QLatin1String("Alertmanager unreachable for 5")),
            qPrintable(alerts.freshnessText()));
        QSignalSpy changed(&alerts, &FleetAlerts::freshnessChanged);
        QTRY_VERIFY_WITH_TIMEOUT(
            alerts.freshnessText().startsWith(QLatin1String("Alertmanager unreachable for 1 min")), 10000);
        QVERIFY(!changed.isEmpty());
        QCOMPARE(backend.streams(), 1);
        // Answered again: live.
        backend.publish(oneState(3, { "GpuHot" }));
        QTRY_COMPARE(alerts.freshness(), Freshness::Live);
    }

    void aBackendGoneLeavesTheLastBoardOld()
    {
        auto backend = std::make_unique<AlertsBackend>();
        backend->publish(oneState(1, { "Kept" }, 60000));
        QVERIFY(backend->start() != 0);
        FleetAlerts alerts;
        QSignalSpy changed(&alerts, &FleetAlerts::freshnessChanged);
        alerts.connectTo(QString::fromStdString(backend->address()), ChannelSecurity());
        QTRY_COMPARE(alerts.freshness(), Freshness::Live);
        backend.reset();
        QTRY_COMPARE(alerts.freshness(), Freshness::Old);
        QVERIFY(!changed.isEmpty());
        QCOMPARE(alerts.board().alerts.size(), size_t { 1 });
        QCOMPARE(alerts.board().alerts[0].name(), QStringLiteral("Kept"));
        QVERIFY2(alerts.freshnessText().startsWith(QLatin1String("backend unreachable (")),
            qPrintable(alerts.freshnessText()));
    }

    // A state the decoder refuses (its count lies) leaves the last good board, marked old, until a good one comes.
    void aRefusedStateLeavesTheBoardOld()
    {
        AlertsBackend backend;
        backend.publish(oneState(1, { "Kept" }));
        QVERIFY(backend.start() != 0);
        FleetAlerts alerts;
        alerts.connectTo(QString::fromStdString(backend.address()), ChannelSecurity());
        QTRY_COMPARE(alerts.freshness(), Freshness::Live);
        auto lying = oneState(2, { "New" });
        lying[0].set_alert_count(3);
        backend.publish(lying);
        QTRY_COMPARE(alerts.freshness(), Freshness::Old);
        QCOMPARE(alerts.board().alerts[0].name(), QStringLiteral("Kept"));
        QVERIFY2(alerts.freshnessText().startsWith(QLatin1String("the backend's newest alerts could not be read (")),
            qPrintable(alerts.freshnessText()));
        backend.publish(oneState(3, { "New" }));
        QTRY_COMPARE(alerts.freshness(), Freshness::Live);
        QCOMPARE(alerts.board().alerts[0].name(), QStringLiteral("New"));
    }

    void alertmanagerUnreachableIsOld()
    {
        AlertsBackend backend;
        backend.publish(oneState(1, { "A" }, 1000, false, QDateTime::currentMSecsSinceEpoch() - 130000));
        QVERIFY(backend.start() != 0);
        FleetAlerts alerts;
        alerts.connectTo(QString::fromStdString(backend.address()), ChannelSecurity());
        QTRY_COMPARE(alerts.board().generation, uint64_t { 1 });
        QCOMPARE(alerts.freshness(), Freshness::Old);
        QVERIFY2(alerts.freshnessText().startsWith(QLatin1String("Alertmanager unreachable for 2 min (connection "
                                                                 "refused): alerts as of ")),
            qPrintable(alerts.freshnessText()));
    }

    // A backend restarted without an Alertmanager: what it read before is dropped.
    void noAlertmanagerShowsNothing()
    {
        AlertsBackend backend;
        backend.setConfigured(false);
        QVERIFY(backend.start() != 0);
        FleetAlerts alerts;
        alerts.connectTo(QString::fromStdString(backend.address()), ChannelSecurity());
        QTRY_COMPARE(alerts.streamState(), AlertsClient::State::NotConfigured);
        QCOMPARE(alerts.freshness(), Freshness::NotConfigured);
        QCOMPARE(alerts.freshnessText(), QStringLiteral("the backend reads no Alertmanager"));
        QVERIFY(alerts.board().alerts.empty());
    }

    // A viewer is greyed out (access()); a silence asked anyway goes to the backend, whose refusal is said and whose
    // word on who this console is is asked again; an operator's is made and expired.
    void silencesFollowAccess()
    {
        AlertsBackend backend;
        backend.setAccess(pb::ROLE_VIEWER, "bob");
        backend.publish(oneState(1, { "A" }));
        QVERIFY(backend.start() != 0);
        FleetAlerts alerts;
        QSignalSpy access(&alerts, &FleetAlerts::accessChanged);
        QSignalSpy done(&alerts, &FleetAlerts::silenceDone);
        alerts.connectTo(QString::fromStdString(backend.address()), ChannelSecurity());
        QVERIFY(!alerts.access().maySilence); // greyed out until the backend says
        QTRY_COMPARE(alerts.access().role, BackendAccess::Role::Viewer);
        QVERIFY(!alerts.access().maySilence);
        SilenceDraft draft;
        draft.matchers.push_back({ QStringLiteral("alertname"), QStringLiteral("A"), false, true });
        draft.comment = QStringLiteral("on it");
        // Asked anyway (a shortcut past the greyed-out control): the backend decides, and is asked again who this is.
        backend.setSilenceAnswer(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "bob is a viewer"));
        alerts.createSilence(draft);
        QTRY_COMPARE(done.size(), 1);
        QVERIFY(!done[0][0].toBool());
        QCOMPARE(done[0][1].toString(), QStringLiteral("Silence not made: not allowed: bob is a viewer"));
        QCOMPARE(backend.silencesAsked().size(), size_t { 1 });
        QTRY_COMPARE(backend.accessCalls(), 2);
        QCOMPARE(alerts.access().role, BackendAccess::Role::Viewer);

        // Made an operator since the console asked (a token file rewritten): the next refusal has it follow.
        backend.setAccess(pb::ROLE_OPERATOR, "alice");
        alerts.createSilence(draft);
        QTRY_COMPARE(done.size(), 2);
        QTRY_VERIFY(alerts.access().maySilence);
        QCOMPARE(alerts.access().name, QStringLiteral("alice"));
        backend.setSilenceAnswer(grpc::Status::OK);
        alerts.createSilence(draft);
        QTRY_COMPARE(done.size(), 3);
        QVERIFY(done[2][0].toBool());
        QCOMPARE(done[2][1].toString(), QStringLiteral("Silence s-3 made"));
        alerts.expireSilence(QStringLiteral("s-3"));
        QTRY_COMPARE(done.size(), 4);
        QCOMPARE(done[3][1].toString(), QStringLiteral("Silence s-3 expired"));

        backend.setSilenceAnswer(grpc::Status(grpc::StatusCode::NOT_FOUND, "no silence s-3"));
        alerts.expireSilence(QStringLiteral("s-3"));
        QTRY_COMPARE(done.size(), 5);
        QVERIFY(!done[4][0].toBool());
        QCOMPARE(done[4][1].toString(), QStringLiteral("Silence s-3 not expired: no such silence: no silence s-3"));
        QCOMPARE(backend.accessCalls(), 3);
    }

    // Another fleet: the kept board is placed nowhere until the stream's next state, decoded against it.
    void anotherFleetUnplacesTheKeptBoard()
    {
        AlertsBackend backend;
        backend.publish(oneState(1, { "A" }));
        QVERIFY(backend.start() != 0);
        FleetAlerts alerts;
        alerts.setTopology(fleetOf(64, 1));
        alerts.connectTo(QString::fromStdString(backend.address()), ChannelSecurity());
        QTRY_COMPARE(alerts.board().generation, uint64_t { 1 });
        QCOMPARE(alerts.board().alerts.at(0).gpuRuns.size(), size_t { 1 });
        backend.stop();
        QTRY_COMPARE(alerts.freshness(), Freshness::Old);
        QSignalSpy boards(&alerts, &FleetAlerts::boardChanged);
        alerts.setTopology(fleetOf(32, 2));
        QCOMPARE(boards.size(), 1);
        QCOMPARE(alerts.board().alerts.size(), size_t { 1 });
        QVERIFY(alerts.board().alerts[0].gpuRuns.empty());
        QCOMPARE(alerts.board().alerts[0].gpuCount, uint32_t { 0 });
    }

    // The session follows the alerts of the backend it connects to.
    void theSessionFollowsTheAlerts()
    {
        AlertsBackend backend;
        backend.publish(oneState(4, { "FromTheSession" }));
        QVERIFY(backend.start() != 0);
        ConsoleSession session(ConsoleSession::Options {});
        session.connectTo(QString::fromStdString(backend.address()));
        QTRY_COMPARE(session.alerts()->board().generation, uint64_t { 4 });
        QCOMPARE(session.alerts()->board().alerts.at(0).name(), QStringLiteral("FromTheSession"));
        QCOMPARE(session.alerts()->freshness(), Freshness::Live);
    }
};

QTEST_MAIN(TestFleetAlerts)
#include "tst_fleetalerts.moc"
