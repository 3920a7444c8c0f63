// SPDX-License-Identifier: Apache-2.0
// The console's alerts against the real thing: a fleetscope-backend process reading a real Prometheus Alertmanager
// (Debian's prometheus-alertmanager, on loopback with a free port and temporary storage), and console sessions
// following it. An alert added to Alertmanager (amtool) reaches the session placed on the GPU its labels name; a
// viewer's silence is refused by the backend; an operator's silence is made in Alertmanager under the caller's name and
// seen by a second console; a vmalert rule over the simulator's pages scraped by VictoriaMetrics reaches the map's
// alerts layer; Alertmanager gone, the board is kept and said to be old. Skips, saying so, when Alertmanager is not
// installed.
#include "app/consolesession.h"
#include "client/alertsclient.h"
#include "model/alertlayer.h"
#include "tests/app/backendprocesstesting.h"
#include "tests/backend/testing/alertmanagerprocess.h"
#include "tests/backend/testing/testcertificates.h"
#include "tests/realparts.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace fleetscope;
using namespace fleetscope::testing;
using fleetscope::backendprocesstesting::BackendProcess;

namespace {

using Freshness = FleetAlerts::Freshness;

bool startBackend(BackendProcess *backend, int alertmanagerPort, const QStringList &extra)
{
    return backend->start(QStringList { QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
                              QStringLiteral("--gpus"), QStringLiteral("64"), QStringLiteral("--alertmanager-url"),
                              QStringLiteral("http://127.0.0.1:%1").arg(alertmanagerPort),
                              QStringLiteral("--alertmanager-poll-ms"), QStringLiteral("500") }
        + extra);
}

bool startBackend(BackendProcess *backend, int alertmanagerPort, const QString &anonymousRole)
{
    return startBackend(backend, alertmanagerPort, { QStringLiteral("--anonymous-role"), anonymousRole });
}

// amtool's words: an alert with these labels (alertname first), firing from now.
QString addAlert(int port, const QStringList &labels)
{
    QProcess amtool;
    amtool.setProcessChannelMode(QProcess::MergedChannels);
    amtool.start(QStringLiteral("amtool"),
        QStringList { QStringLiteral("--alertmanager.url=http://127.0.0.1:%1").arg(port), QStringLiteral("alert"),
            QStringLiteral("add") }
            + labels + QStringList { QStringLiteral("--annotation=summary=too hot") });
    if (!amtool.waitForFinished(20000) || amtool.exitCode() != 0) {
        return QStringLiteral("amtool failed: %1").arg(QString::fromUtf8(amtool.readAll()));
    }
    return {};
}

const FleetAlert *findAlert(const AlertBoard &board, const QString &name)
{
    for (const auto &a : board.alerts) {
        if (a.name() == name) {
            return &a;
        }
    }
    return nullptr;
}

} // namespace

class TestConsoleAlerts : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        if (alertmanagerBinary().isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("prometheus-alertmanager is not installed (scripts/common.sh installs it)");
        }
        QVERIFY(m_dir.isValid());
        const QString config = m_dir.filePath(QStringLiteral("alertmanager.yml"));
        QVERIFY(writeFile(config, alertmanagerConfig()));
        m_port = freePort();
        QVERIFY(startAlertmanager(&m_alertmanager, config, m_dir.filePath(QStringLiteral("data")), m_port));
        const QString waited = waitForAlertmanager(m_alertmanager, m_port);
        QVERIFY2(waited.isEmpty(), qPrintable(waited));
    }

    // The alert reaches the console placed on the GPU its labels name; a viewer may not silence it.
    void anAlertOnTheMapAndAViewerRefused()
    {
        BackendProcess backend;
        QVERIFY(startBackend(&backend, m_port, QStringLiteral("viewer")));
        ConsoleSession session(ConsoleSession::Options {});
        session.connectTo(backend.address());
        QTRY_VERIFY_WITH_TIMEOUT(session.topology() != nullptr, 30000);
        const TopologyPtr topology = session.topology();
        const Topology::Node &node = topology->nodes.at(1);
        const QString added = addAlert(m_port,
            { QStringLiteral("alertname=GpuHotE2e"), QStringLiteral("Hostname=") + node.hostname,
                QStringLiteral("gpu=3"), QStringLiteral("severity=critical") });
        QVERIFY2(added.isEmpty(), qPrintable(added));

        FleetAlerts *alerts = session.alerts();
        QTRY_VERIFY_WITH_TIMEOUT(findAlert(alerts->board(), QStringLiteral("GpuHotE2e")) != nullptr, 20000);
        QTRY_COMPARE(alerts->freshness(), Freshness::Live);
        // Polls that read the same publish nothing: live all along, past three poll intervals (0.5 s) of them.
        const uint64_t generation = alerts->board().generation;
        const int64_t lastRead = alerts->board().status.lastSuccessMs;
        QElapsedTimer quiet;
        quiet.start();
        while (quiet.elapsed() < 2500) {
            QTest::qWait(100);
            QCOMPARE(alerts->freshness(), Freshness::Live);
        }
        QCOMPARE(alerts->board().generation, generation);
        QCOMPARE(alerts->board().status.lastSuccessMs, lastRead);
        const FleetAlert *alert = findAlert(alerts->board(), QStringLiteral("GpuHotE2e"));
        QCOMPARE(alert->severity, EventSeverity::Critical);
        QCOMPARE(alert->annotation(QStringLiteral("summary")), QStringLiteral("too hot"));
        QCOMPARE(alert->node, int64_t { 1 });
        QCOMPARE(alert->gpuCount, uint32_t { 1 });
        QCOMPARE(alert->gpuRuns.size(), size_t { 1 });
        QCOMPARE(alert->gpuRuns[0].first, node.firstGpu + 3);
        QVERIFY(!alert->suppressed);

        QTRY_COMPARE(alerts->access().role, BackendAccess::Role::Viewer);
        QVERIFY(alerts->access().alertmanager);
        QVERIFY(!alerts->access().maySilence);
        // Asked anyway, past the greyed-out control: the backend refuses it.
        AlertsClient client;
        QSignalSpy done(&client, &AlertsClient::silenceDone);
        client.start(backend.address());
        SilenceDraft draft;
        draft.matchers.push_back({ QStringLiteral("alertname"), QStringLiteral("GpuHotE2e"), false, true });
        draft.comment = QStringLiteral("a viewer trying");
        client.createSilence(draft);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 15000);
        QVERIFY(!done[0][1].toBool());
        QVERIFY2(done[0][2].toString().startsWith(QLatin1String("not allowed: ")), qPrintable(done[0][2].toString()));
        QVERIFY(alertmanagerSilences(m_port).isEmpty());
    }

    // An operator's silence: made in Alertmanager under the caller's name, seen by a second console, then expired.
    void anOperatorsSilenceIsSeenEverywhere()
    {
        BackendProcess backend;
        QVERIFY(startBackend(&backend, m_port, QStringLiteral("operator")));
        ConsoleSession desk(ConsoleSession::Options {});
        ConsoleSession wall(ConsoleSession::Options {});
        desk.connectTo(backend.address());
        wall.connectTo(backend.address());
        QTRY_VERIFY_WITH_TIMEOUT(findAlert(desk.alerts()->board(), QStringLiteral("GpuHotE2e")) != nullptr, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(findAlert(wall.alerts()->board(), QStringLiteral("GpuHotE2e")) != nullptr, 20000);
        QTRY_VERIFY(desk.alerts()->access().maySilence);
        QCOMPARE(desk.alerts()->access().name, QStringLiteral("anonymous"));

        QSignalSpy done(desk.alerts(), &FleetAlerts::silenceDone);
        SilenceDraft draft;
        draft.matchers.push_back({ QStringLiteral("alertname"), QStringLiteral("GpuHotE2e"), false, true });
        draft.durationMs = 3600000;
        draft.comment = QStringLiteral("on it from the desk");
        desk.alerts()->createSilence(draft);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 15000);
        QVERIFY2(done[0][0].toBool(), qPrintable(done[0][1].toString()));

        // In Alertmanager, under the caller's name.
        QJsonObject made;
        for (const auto &s : alertmanagerSilences(m_port)) {
            if (s.toObject().value(QStringLiteral("comment")).toString() == draft.comment) {
                made = s.toObject();
            }
        }
        QCOMPARE(made.value(QStringLiteral("createdBy")).toString(), QStringLiteral("anonymous"));
        const QString id = made.value(QStringLiteral("id")).toString();
        QVERIFY(done[0][1].toString().contains(id));

        // Both consoles see the alert silenced, and the silence.
        for (ConsoleSession *session : { &desk, &wall }) {
            QTRY_VERIFY_WITH_TIMEOUT(findAlert(session->alerts()->board(), QStringLiteral("GpuHotE2e")) != nullptr
                    && findAlert(session->alerts()->board(), QStringLiteral("GpuHotE2e"))->suppressed,
                15000);
            const FleetSilence *silence = session->alerts()->board().silence(id);
            QVERIFY(silence != nullptr);
            QCOMPARE(silence->createdBy, QStringLiteral("anonymous"));
            QCOMPARE(silence->comment, draft.comment);
        }

        desk.alerts()->expireSilence(id);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 2, 15000);
        QVERIFY2(done[1][0].toBool(), qPrintable(done[1][1].toString()));
        QTRY_VERIFY_WITH_TIMEOUT(wall.alerts()->board().silence(id) == nullptr, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(!findAlert(wall.alerts()->board(), QStringLiteral("GpuHotE2e"))->suppressed, 15000);
    }

    // Over TLS with tokens: each console is who its token's line names, with that line's role; the silence made is
    // Alertmanager's under that name.
    void tokensSayWhoSilences()
    {
        TestCertificates certificates;
        if (!certificates.make()) {
            FLEETSCOPE_SKIP_WITHOUT(qPrintable(certificates.error()));
        }
        const QString tokens = certificates.write(
            QStringLiteral("tokens"), "operator-token-0123456789 alice operator\nviewer-token-0123456789 bob viewer\n");
        const QString aliceToken = certificates.write(QStringLiteral("alice.token"), "operator-token-0123456789\n");
        const QString bobToken = certificates.write(QStringLiteral("bob.token"), "viewer-token-0123456789\n");
        BackendProcess backend;
        QVERIFY(startBackend(&backend, m_port,
            { QStringLiteral("--tls-cert"), certificates.crt(QStringLiteral("server")), QStringLiteral("--tls-key"),
                certificates.key(QStringLiteral("server")), QStringLiteral("--token-file"), tokens }));
        ChannelSecurity security;
        security.caFile = certificates.crt(QStringLiteral("ca"));
        security.tokenFile = aliceToken;
        ConsoleSession alice(ConsoleSession::Options {});
        alice.setChannelSecurity(security);
        alice.connectTo(backend.address());
        security.tokenFile = bobToken;
        ConsoleSession bob(ConsoleSession::Options {});
        bob.setChannelSecurity(security);
        bob.connectTo(backend.address());

        QTRY_VERIFY_WITH_TIMEOUT(findAlert(bob.alerts()->board(), QStringLiteral("GpuHotE2e")) != nullptr, 20000);
        QTRY_COMPARE(bob.alerts()->access().name, QStringLiteral("bob"));
        QCOMPARE(bob.alerts()->access().role, BackendAccess::Role::Viewer);
        QVERIFY(!bob.alerts()->access().maySilence);
        QTRY_COMPARE(alice.alerts()->access().name, QStringLiteral("alice"));
        QCOMPARE(alice.alerts()->access().role, BackendAccess::Role::Operator);
        QVERIFY(alice.alerts()->access().maySilence);

        QSignalSpy done(alice.alerts(), &FleetAlerts::silenceDone);
        SilenceDraft draft;
        draft.matchers.push_back({ QStringLiteral("alertname"), QStringLiteral("GpuHotE2e"), false, true });
        draft.durationMs = 600000;
        draft.comment = QStringLiteral("alice over TLS");
        alice.alerts()->createSilence(draft);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 15000);
        QVERIFY2(done[0][0].toBool(), qPrintable(done[0][1].toString()));
        QString createdBy;
        QString id;
        for (const auto &s : alertmanagerSilences(m_port)) {
            if (s.toObject().value(QStringLiteral("comment")).toString() == draft.comment) {
                createdBy = s.toObject().value(QStringLiteral("createdBy")).toString();
                id = s.toObject().value(QStringLiteral("id")).toString();
            }
        }
        QCOMPARE(createdBy, QStringLiteral("alice"));
        QTRY_VERIFY_WITH_TIMEOUT(bob.alerts()->board().silence(id) != nullptr, 15000);
        QCOMPARE(bob.alerts()->board().silence(id)->createdBy, QStringLiteral("alice"));
        alice.alerts()->expireSilence(id);
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 2, 15000);
        QVERIFY2(done[1][0].toBool(), qPrintable(done[1][1].toString()));
    }

    // The NOC's whole chain to the map: the backend's simulated fleet served as dcgm-exporter pages, scraped by a real
    // VictoriaMetrics, vmalert evaluating a rule over DCGM_FI_DEV_XID_ERRORS and sending what fires to Alertmanager,
    // the backend reading it, and the console: the bad GPU's XID alert on its board, placed on the GPU its labels name,
    // and on the alerts layer the map draws (the GPU critical and outlined).
    void vmalertsRuleReachesTheMap()
    {
        const QString vm = QStandardPaths::findExecutable(QStringLiteral("victoria-metrics"));
        if (vm.isEmpty() || QStandardPaths::findExecutable(QStringLiteral("vmalert")).isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("victoria-metrics (with vmalert) is not installed (scripts/common.sh installs it)");
        }
        // The bad-gpu scenario's GPU logs an XID every step from its 12th (a minute a second).
        const int exporterPort = freePort();
        BackendProcess backend;
        QVERIFY(startBackend(&backend, m_port,
            { QStringLiteral("--gpus"), QStringLiteral("256"), QStringLiteral("--seed"), QStringLiteral("5"),
                QStringLiteral("--scenario"), QStringLiteral("bad-gpu"), QStringLiteral("--speed"),
                QStringLiteral("60"), QStringLiteral("--exporter-listen"),
                QStringLiteral("127.0.0.1:%1").arg(exporterPort) }));
        const QString scrape = m_dir.filePath(QStringLiteral("scrape.yml"));
        QVERIFY(writeFile(scrape, scrapeConfig(exporterPort)));
        const int vmPort = freePort();
        ProcessGuard victoria;
        QVERIFY(startVictoriaMetrics(&victoria, vm, scrape, m_dir.filePath(QStringLiteral("vm")), vmPort));
        const QString rules = m_dir.filePath(QStringLiteral("rules.yml"));
        QVERIFY(writeFile(rules,
            "groups:\n"
            "  - name: gpu\n"
            "    interval: 1s\n"
            "    rules:\n"
            "      - alert: GpuXidChain\n"
            "        expr: DCGM_FI_DEV_XID_ERRORS > 0\n"
            "        labels:\n"
            "          severity: critical\n"
            "        annotations:\n"
            "          summary: 'XID {{ $value }} on {{ $labels.Hostname }} GPU {{ $labels.gpu }}'\n"));
        ProcessGuard vmalert;
        QVERIFY(startVmalert(&vmalert, rules, vmPort, m_port, freePort()));

        ConsoleSession session(ConsoleSession::Options {});
        session.connectTo(backend.address());
        FleetAlerts *alerts = session.alerts();
        QTRY_VERIFY_WITH_TIMEOUT(findAlert(alerts->board(), QStringLiteral("GpuXidChain")) != nullptr, 120000);
        const TopologyPtr topology = session.topology();
        QVERIFY(topology);
        const FleetAlert *alert = findAlert(alerts->board(), QStringLiteral("GpuXidChain"));
        // Placed where its labels say: that host's GPU of that index.
        int64_t node = -1;
        for (size_t n = 0; n < topology->nodes.size(); ++n) {
            if (topology->nodes[n].hostname == alert->label(QStringLiteral("Hostname"))) {
                node = static_cast<int64_t>(n);
            }
        }
        QVERIFY2(node >= 0, qPrintable(alert->label(QStringLiteral("Hostname"))));
        const uint32_t gpu
            = topology->nodes[static_cast<size_t>(node)].firstGpu + alert->label(QStringLiteral("gpu")).toUInt();
        QCOMPARE(alert->node, node);
        QCOMPARE(alert->gpuCount, 1U);
        QCOMPARE(alert->gpuRuns.size(), size_t { 1 });
        QCOMPARE(alert->gpuRuns[0].first, gpu);
        QCOMPARE(alert->severity, EventSeverity::Critical);
        // On the map's alerts layer: critical, outlined.
        QTRY_VERIFY_WITH_TIMEOUT(session.alertLayer().boardGeneration == alerts->board().generation
                && session.alertLayer().categoryOfGpu.size() == topology->gpuCount,
            20000);
        QCOMPARE(session.alertLayer().categoryOfGpu[gpu], uint8_t { AlertLayer::Critical });
        const auto &firing = session.alertLayer().firingGpus;
        QVERIFY(std::binary_search(firing.begin(), firing.end(), gpu));
    }

    // Alertmanager gone: the console keeps what it showed, said to be old, and why.
    void alertmanagerGoneLeavesTheBoardOld()
    {
        BackendProcess backend;
        QVERIFY(startBackend(&backend, m_port, QStringLiteral("viewer")));
        ConsoleSession session(ConsoleSession::Options {});
        session.connectTo(backend.address());
        FleetAlerts *alerts = session.alerts();
        QTRY_VERIFY_WITH_TIMEOUT(findAlert(alerts->board(), QStringLiteral("GpuHotE2e")) != nullptr, 20000);
        QTRY_COMPARE(alerts->freshness(), Freshness::Live);
        m_alertmanager.process.kill();
        m_alertmanager.process.waitForFinished(5000);
        QTRY_COMPARE_WITH_TIMEOUT(alerts->freshness(), Freshness::Old, 15000);
        QVERIFY(findAlert(alerts->board(), QStringLiteral("GpuHotE2e")) != nullptr);
        QVERIFY2(alerts->freshnessText().startsWith(QLatin1String("Alertmanager unreachable")),
            qPrintable(alerts->freshnessText()));
        QVERIFY2(alerts->freshnessText().contains(QLatin1String("alerts as of")), qPrintable(alerts->freshnessText()));
    }

private:
    QTemporaryDir m_dir;
    ProcessGuard m_alertmanager;
    int m_port = 0;
};

QTEST_GUILESS_MAIN(TestConsoleAlerts)
#include "tst_consolealerts.moc"
