// SPDX-License-Identifier: Apache-2.0
// The NOC's alerts where the operator looks, over the real simulator backend's fleet: the desk's Problems dock lists
// them beside the fleet's problems (a silenced one marked, after the rest), a click drills to an alert's GPUs and
// outlines them, Silence… proposes the alert's matchers and hands the draft on, Open runbook opens its runbook_url,
// both greyed out with the reason for a viewer; the wall's board shows the alerts and its banner says when they are
// old. The boards are mostly built here (what the session's FleetAlerts would hold); one case follows the session's
// own FleetAlerts over a backend that serves the alerts contract (tests/client/alertsbackend.h).
#include "app/consolesession.h"
#include "app/embeddedbackend.h"
#include "app/pages/mappage.h"
#include "app/pages/problemspage.h"
#include "app/problemsmodel.h"
#include "app/session/fleetalerts.h"
#include "app/wallwindow.h"
#include "model/alertproblems.h"
#include "model/navigation.h"
#include "tests/client/alertsbackend.h"
#include "tests/model/testtopology.h"
#include "widgets/alerts/silencedialog.h"
#include "widgets/alerts/silencesview.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/wall/problemsboard.h"
#include "widgets/wall/wallheader.h"

#include <QAbstractButton>
#include <QDateTime>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>

using namespace fleetscope;

// Where Open runbook sends the desktop's browser: here, not to a browser.
class UrlCatcher : public QObject
{
    Q_OBJECT
public:
    QList<QUrl> opened;
public Q_SLOTS:
    void open(const QUrl &url) { opened << url; }
};

class TestProblemAlerts : public QObject
{
    Q_OBJECT

    std::unique_ptr<ConsoleSession> m_session;
    std::unique_ptr<EmbeddedBackend> m_backend;
    std::unique_ptr<MapPage> m_map;
    std::unique_ptr<ProblemsPage> m_desk;
    UrlCatcher m_urls;

    // Three alerts on the fleet as the backend would place them: one GPU too hot (with a runbook), a node's exporter
    // down, and one GPU's XIDs silenced by alice.
    std::shared_ptr<const AlertBoard> makeBoard() const
    {
        const Topology &t = *m_session->topology();
        const auto &node = t.nodes[3];
        auto board = std::make_shared<AlertBoard>();
        const int64_t now = QDateTime::currentMSecsSinceEpoch();
        FleetAlert hot;
        hot.fingerprint = QStringLiteral("a1");
        hot.labels = { { QStringLiteral("alertname"), QStringLiteral("GpuTooHot") },
            { QStringLiteral("Hostname"), node.hostname }, { QStringLiteral("gpu"), QStringLiteral("2") },
            { QStringLiteral("severity"), QStringLiteral("critical") } };
        hot.annotations = { { QStringLiteral("summary"), QStringLiteral("GPU at 94 °C") },
            { QStringLiteral("runbook_url"), QStringLiteral("https://runbooks.example/gpu-too-hot") } };
        hot.severity = EventSeverity::Critical;
        hot.startsAtMs = now - 5 * 60'000;
        hot.gpuRuns = { { node.firstGpu + 2, 1 } };
        hot.gpuCount = 1;
        hot.node = 3;
        FleetAlert down;
        down.fingerprint = QStringLiteral("a2");
        down.labels = { { QStringLiteral("alertname"), QStringLiteral("NodeExporterDown") },
            { QStringLiteral("instance"), t.nodes[5].hostname + QStringLiteral(":9100") } };
        down.severity = EventSeverity::Warning;
        down.startsAtMs = now - 60'000;
        down.gpuRuns = { { t.nodes[5].firstGpu, t.nodes[5].gpuCount } };
        down.gpuCount = t.nodes[5].gpuCount;
        down.node = 5;
        FleetAlert xid;
        xid.fingerprint = QStringLiteral("a3");
        xid.labels = { { QStringLiteral("alertname"), QStringLiteral("XidErrors") },
            { QStringLiteral("Hostname"), t.nodes[7].hostname }, { QStringLiteral("gpu"), QStringLiteral("0") } };
        xid.annotations = { { QStringLiteral("summary"), QStringLiteral("XID 79 on GPU 0") } };
        xid.severity = EventSeverity::Critical;
        xid.startsAtMs = now - 20 * 60'000;
        xid.gpuRuns = { { t.nodes[7].firstGpu, 1 } };
        xid.gpuCount = 1;
        xid.node = 7;
        xid.suppressed = true;
        xid.silencedBy = { QStringLiteral("s-1") };
        board->alerts = { hot, xid, down };
        board->silences = { { QStringLiteral("s-1"),
            { { QStringLiteral("Hostname"), t.nodes[7].hostname, false, true },
                { QStringLiteral("gpu"), QStringLiteral("0"), false, true } },
            now - 60'000, now + 2 * 3'600'000, QStringLiteral("alice"), QStringLiteral("reseating the GPU"),
            FleetSilence::State::Active } };
        return board;
    }

    int rowOfAlert(const QString &name) const
    {
        ProblemsModel *model = m_desk->model();
        for (int row = 0; row < model->rowCount(); ++row) {
            const Problem *p = model->problemAt(row);
            if (p->alert && p->alert->name() == name) {
                return row;
            }
        }
        return -1;
    }

    QTableView *table() const { return m_desk->findChild<QTableView *>(); }

private Q_SLOTS:
    void initTestCase()
    {
        QDesktopServices::setUrlHandler(QStringLiteral("https"), &m_urls, "open");
        m_session = std::make_unique<ConsoleSession>(ConsoleSession::Options {});
        m_backend = std::make_unique<EmbeddedBackend>(512, 1, QStringList());
        connect(m_backend.get(), &EmbeddedBackend::ready, m_session.get(), &ConsoleSession::connectTo);
        m_map = std::make_unique<MapPage>(m_session.get(), false);
        m_desk = std::make_unique<ProblemsPage>(m_session.get(), ProblemsPage::Look::Desk, m_map.get());
        m_backend->start();
        m_map->resize(900, 600);
        m_map->show();
        m_desk->resize(420, 700);
        m_desk->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_desk.get()));
        QTRY_VERIFY_WITH_TIMEOUT(m_session->topology() != nullptr, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(m_map->heatmap()->frame() != nullptr, 60000);
    }

    void cleanupTestCase()
    {
        QDesktopServices::unsetUrlHandler(QStringLiteral("https"));
        m_desk.reset();
        m_map.reset();
        m_session.reset();
        m_backend.reset();
    }

    // Listed beside the fleet's problems, ranked by severity, the silenced one after the rest and saying who, until
    // when and why; the dock's count says them apart.
    void theDockListsAlerts()
    {
        m_desk->setAlerts(makeBoard());
        ProblemsModel *model = m_desk->model();
        const int hot = rowOfAlert(QStringLiteral("GpuTooHot"));
        const int xid = rowOfAlert(QStringLiteral("XidErrors"));
        const int down = rowOfAlert(QStringLiteral("NodeExporterDown"));
        QVERIFY(hot >= 0 && xid >= 0 && down >= 0);
        QCOMPARE(xid, model->rowCount() - 1); // silenced: last
        QVERIFY(hot < down);
        const Topology &t = *m_session->topology();
        const QStringList hotLines
            = model->index(hot, ProblemsModel::EntryColumn).data().toString().split(QLatin1Char('\n'));
        QCOMPARE(hotLines.value(0), QStringLiteral("ALERT · %1 GPU 2").arg(t.nodes[3].hostname));
        QCOMPARE(hotLines.value(1), QStringLiteral("GpuTooHot: GPU at 94 °C"));
        const QStringList xidLines
            = model->index(xid, ProblemsModel::EntryColumn).data().toString().split(QLatin1Char('\n'));
        QCOMPARE(xidLines.value(0), QStringLiteral("ALERT (silenced) · %1 GPU 0").arg(t.nodes[7].hostname));
        QVERIFY2(
            xidLines.value(2).startsWith(QStringLiteral("silenced by alice until ")), qPrintable(xidLines.value(2)));
        QVERIFY2(xidLines.value(2).endsWith(QStringLiteral(": reseating the GPU")), qPrintable(xidLines.value(2)));
        QCOMPARE(model->index(down, ProblemsModel::EntryColumn).data().toString().section(QLatin1Char('\n'), 0, 0),
            QStringLiteral("ALERT · %1").arg(t.nodes[5].hostname));
        QVERIFY(m_desk->tally().alerts == 3 && m_desk->tally().quietAlerts == 1);
        QVERIFY2(tallyText(m_desk->tally()).contains(QStringLiteral("3 alerts (1 critical, 1 silenced)")),
            qPrintable(tallyText(m_desk->tally())));
        // The kind filter has alerts too.
        model->setKindFilter({ Problem::Kind::Alert });
        QCOMPARE(model->rowCount(), 3);
        model->setKindFilter({});
        // The desk's list of silences.
        SilencesView *silences = m_desk->silencesView();
        QCOMPARE(silences->count(), 1);
        QVERIFY(silences->rowTexts()[0].contains(QStringLiteral("· alice · until ")));
    }

    // A click drills to the alert's GPU, or to its node with the node's GPUs outlined as an incident's are.
    void aClickDrillsToTheAlertsGpus()
    {
        m_desk->setAlerts(makeBoard());
        const Topology &t = *m_session->topology();
        QSignalSpy messages(m_desk.get(), &ProblemsPage::message);
        Q_EMIT table()->activated(m_desk->model()->index(rowOfAlert(QStringLiteral("GpuTooHot")), 0));
        QCOMPARE(m_map->navigation()->current(), Place::gpu(t.nodes[3].firstGpu + 2));
        QCOMPARE(messages.size(), 1);
        QVERIFY2(messages[0][0].toString().startsWith(QStringLiteral("ALERT GpuTooHot: GPU at 94 °C at ")),
            qPrintable(messages[0][0].toString()));
        m_map->navigation()->goTo(Place::fleet());
        Q_EMIT table()->activated(m_desk->model()->index(rowOfAlert(QStringLiteral("NodeExporterDown")), 0));
        QCOMPARE(m_map->navigation()->current(), Place::node(5));
        QCOMPARE(m_map->heatmap()->markedGpuCount(), size_t { t.nodes[5].gpuCount });
        Q_EMIT table()->activated(m_desk->model()->index(rowOfAlert(QStringLiteral("XidErrors")), 0));
        QCOMPARE(m_map->navigation()->current(), Place::gpu(t.nodes[7].firstGpu));
        QVERIFY2(messages.last()[0].toString().contains(QStringLiteral("silenced by alice")),
            qPrintable(messages.last()[0].toString()));
        m_map->heatmap()->setMarkedGpus({});
        m_map->navigation()->goTo(Place::fleet());
    }

    // An operator: Silence… on an alert proposes its name and place; OK hands the draft on. On a fleet problem of a
    // node, its host. Open runbook opens the alert's runbook_url, and only an alert's.
    void anOperatorSilencesAndReadsTheRunbook()
    {
        m_desk->setAccess({ QStringLiteral("alice"), BackendAccess::Role::Operator, true, true });
        m_desk->setAlerts(makeBoard());
        QVERIFY(!m_desk->silenceButton()->isEnabled()); // nothing chosen
        table()->selectRow(rowOfAlert(QStringLiteral("GpuTooHot")));
        QVERIFY(m_desk->silenceButton()->isEnabled());
        QVERIFY(m_desk->runbookButton()->isEnabled());
        QSignalSpy requested(m_desk.get(), &ProblemsPage::silenceRequested);
        m_desk->silenceButton()->click();
        SilenceDialog *dialog = m_desk->silenceDialog();
        QVERIFY(dialog != nullptr);
        QTRY_VERIFY(dialog->isVisible());
        QCOMPARE(dialog->matcherCount(), 3); // its name and the labels that place it; not its severity
        const SilenceDraft proposed = dialog->draft();
        QCOMPARE(matcherText(proposed.matchers[0]), QStringLiteral("alertname=\"GpuTooHot\""));
        QCOMPARE(matcherText(proposed.matchers[1]),
            QStringLiteral("Hostname=\"%1\"").arg(m_session->topology()->nodes[3].hostname));
        QCOMPARE(matcherText(proposed.matchers[2]), QStringLiteral("gpu=\"2\""));
        QVERIFY2(dialog->summaryText().contains(QStringLiteral("It matches 1 of the 3 alerts shown now: GpuTooHot")),
            qPrintable(dialog->summaryText()));
        dialog->setComment(QStringLiteral("fan swap at 14:10"));
        dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
        QCOMPARE(requested.size(), 1);
        const auto draft = requested[0][0].value<SilenceDraft>();
        QCOMPARE(draft.comment, QStringLiteral("fan swap at 14:10"));
        QCOMPARE(draft.matchers.size(), size_t { 3 });
        QTRY_VERIFY(m_desk->silenceDialog() == nullptr); // closed and gone

        m_desk->openChosenRunbook();
        QCOMPARE(m_urls.opened, QList<QUrl>({ QUrl(QStringLiteral("https://runbooks.example/gpu-too-hot")) }));
        table()->selectRow(rowOfAlert(QStringLiteral("NodeExporterDown")));
        QVERIFY(!m_desk->runbookButton()->isEnabled());
        QVERIFY(!m_desk->runbookButton()->toolTip().isEmpty());
        m_desk->openChosenRunbook();
        QCOMPARE(m_urls.opened.size(), 1);
        QVERIFY(m_desk->silenceButton()->isEnabled());
        m_desk->silenceChosen();
        QVERIFY(m_desk->silenceDialog() != nullptr);
        QCOMPARE(m_desk->silenceDialog()->draft().matchers.size(), size_t { 2 }); // alertname, instance
        m_desk->silenceDialog()->reject();
    }

    // A viewer: Silence… and every Expire greyed out, each saying why; asked anyway, nothing opens.
    void aViewerSeesThemGreyedOut()
    {
        m_desk->setAccess({ QStringLiteral("noc-wall"), BackendAccess::Role::Viewer, true, false });
        m_desk->setAlerts(makeBoard());
        table()->selectRow(rowOfAlert(QStringLiteral("GpuTooHot")));
        const QString why = QStringLiteral("you are a viewer (noc-wall): silencing needs the operator role");
        QCOMPARE(m_desk->silenceRefusal(), why);
        QVERIFY(!m_desk->silenceButton()->isEnabled());
        QCOMPARE(m_desk->silenceButton()->toolTip(), why);
        QVERIFY(m_desk->runbookButton()->isEnabled()); // reading is a viewer's
        QVERIFY(!m_desk->canSilenceChosen());
        m_desk->silenceChosen();
        QVERIFY(m_desk->silenceDialog() == nullptr);
        SilencesView *silences = m_desk->silencesView();
        QCOMPARE(silences->count(), 1);
        QVERIFY(!silences->expireButton(0)->isEnabled());
        QCOMPARE(silences->expireButton(0)->toolTip(), why);
        m_desk->setAccess({ QStringLiteral("alice"), BackendAccess::Role::Operator, true, true });
        QVERIFY(silences->expireButton(0)->isEnabled());
        QSignalSpy expire(m_desk.get(), &ProblemsPage::expireRequested);
        silences->expireButton(0)->click();
        QCOMPARE(expire.size(), 1);
        QCOMPARE(expire[0][0].toString(), QStringLiteral("s-1"));
    }

    // The wall: the alerts as lines, the silenced one dim and saying so; the banner says when the alerts are old.
    void theWallShowsThem()
    {
        WallPage problems;
        problems.kind = WallPage::Kind::Problems;
        WallWindow wall(m_session.get(), { problems }, false);
        wall.resize(1280, 720);
        wall.show();
        QVERIFY(QTest::qWaitForWindowExposed(&wall));
        ProblemsPage *page = wall.problemsPage();
        page->setAlerts(makeBoard());
        page->refresh();
        const QStringList rows = wall.problems()->rowTexts();
        const Topology &t = *m_session->topology();
        const auto row = [&rows](const QString &needle) {
            const auto found
                = std::find_if(rows.begin(), rows.end(), [&](const QString &r) { return r.contains(needle); });
            return found == rows.end() ? QString() : *found;
        };
        QVERIFY2(row(QStringLiteral("ALERT GpuTooHot: GPU at 94 °C"))
                     .startsWith(t.nodes[3].hostname + QStringLiteral(" GPU 2")),
            qPrintable(rows.join(QLatin1Char('\n'))));
        const QString silenced = row(QStringLiteral("ALERT XidErrors"));
        QVERIFY2(silenced.contains(QStringLiteral("XID 79 on GPU 0 — silenced by alice until ")), qPrintable(silenced));
        QVERIFY2(silenced.contains(QStringLiteral(": reseating the GPU")), qPrintable(silenced));
        QCOMPARE(rows.last(), silenced);
        QVERIFY2(wall.problems()->headline().contains(QStringLiteral("3 alerts (1 critical, 1 silenced)")),
            qPrintable(wall.problems()->headline()));
        // The header counts the alerts that fire; the silenced one is someone's already.
        wall.refresh();
        const auto &health = wall.header()->health();
        const auto alerts = std::find_if(health.begin(), health.end(),
            [](const WallHeader::HealthCount &c) { return c.label == QStringLiteral("alerts"); });
        QVERIFY(alerts != health.end());
        QCOMPARE(alerts->count, 2U);

        QCOMPARE(page->alertsNote(), QString());
        page->setAlertsNote(
            QStringLiteral("Alertmanager unreachable for 2 min (connection refused): alerts as of 14:02"));
        wall.refresh();
        if (page->leadIncident().isEmpty()) {
            QCOMPARE(wall.header()->banner(),
                QStringLiteral(
                    "Alerts are old: Alertmanager unreachable for 2 min (connection refused): alerts as of 14:02"));
            QCOMPARE(wall.header()->bannerTone(), WallHeader::Tone::Warning);
        } else { // an open incident of the simulated fleet comes first, and the note after it
            QVERIFY2(wall.header()->banner().endsWith(QStringLiteral(" · NOC alerts are old")),
                qPrintable(wall.header()->banner()));
        }
        if (const int ms = qEnvironmentVariableIntValue("FLEETSCOPE_LOOK"); ms > 0) {
            wall.playlist()->setPaused(true);
            QTest::qWait(ms);
        }
        page->setAlertsNote({});
        wall.refresh();
        QVERIFY(!wall.header()->banner().startsWith(QStringLiteral("Alerts are old")));
    }

    // The page follows the session's FleetAlerts: the alerts the backend serves are listed, who the backend says this
    // console is greys Silence… out or not, a silence asked for from the dialog reaches the backend and its answer
    // the status bar, and alerts gone old are said.
    void itFollowsTheSessionsAlerts()
    {
        using namespace alertstesting;
        AlertsBackend backend;
        QVERIFY(backend.start() > 0);
        backend.setAccess(pb::ROLE_VIEWER, "noc-wall");
        backend.publish(oneState(1, { "GpuTooHot", "XidErrors" }));
        ConsoleSession session(ConsoleSession::Options {});
        ProblemsPage page(&session, ProblemsPage::Look::Desk);
        page.show();
        session.alerts()->connectTo(QString::fromStdString(backend.address()), ChannelSecurity());
        QTRY_COMPARE(page.model()->rowCount(), 2);
        QCOMPARE(page.alertBoard().alerts.size(), size_t { 2 });
        QVERIFY(page.model()->problemAt(0)->alert != nullptr);
        auto *view = page.findChild<QTableView *>();
        view->selectRow(0);
        QTRY_COMPARE(
            page.silenceRefusal(), QStringLiteral("you are a viewer (noc-wall): silencing needs the operator role"));
        QVERIFY(!page.silenceButton()->isEnabled());
        QCOMPARE(page.silenceButton()->toolTip(), page.silenceRefusal());

        // The same console as an operator (the backend asked again on the next connection).
        backend.setAccess(pb::ROLE_OPERATOR, "alice");
        session.alerts()->connectTo(QString::fromStdString(backend.address()), ChannelSecurity());
        QTRY_VERIFY(page.silenceRefusal().isEmpty());
        view->selectRow(0);
        QVERIFY(page.silenceButton()->isEnabled());
        QSignalSpy messages(&page, &ProblemsPage::message);
        page.silenceChosen();
        QVERIFY(page.silenceDialog() != nullptr);
        page.silenceDialog()->setComment(QStringLiteral("on it"));
        page.silenceDialog()->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
        QTRY_COMPARE(backend.silencesAsked().size(), size_t { 1 });
        const pb::CreateSilenceRequest asked = backend.silencesAsked()[0];
        QCOMPARE(asked.comment(), std::string("on it"));
        QVERIFY(asked.matchers_size() >= 1);
        QCOMPARE(asked.matchers(0).name(), std::string("alertname"));
        QTRY_VERIFY(!messages.isEmpty());
        QVERIFY2(
            messages.last()[0].toString().contains(QStringLiteral("made")), qPrintable(messages.last()[0].toString()));

        // Alertmanager unreachable: the alerts stay, said to be old.
        QCOMPARE(page.alertsNote(), QString());
        backend.publish(
            oneState(2, { "GpuTooHot", "XidErrors" }, 1000, false, QDateTime::currentMSecsSinceEpoch() - 120'000));
        QTRY_VERIFY(!page.alertsNote().isEmpty());
        QVERIFY2(page.alertsNote().startsWith(QStringLiteral("Alerts are old: ")), qPrintable(page.alertsNote()));
        QCOMPARE(page.model()->rowCount(), 2);
    }

    // The backend's own incident silenced in Alertmanager (its FleetscopeIncident alert): one entry, the incident's,
    // saying who is on it, on the desk and on the wall.
    void aSilencedIncident()
    {
        auto topology = std::const_pointer_cast<Topology>(testing::makeTopology());
        topology->domains.push_back({ DomainKind::CoolingUnit, QStringLiteral("r01-crah1"), -1, -1 });
        const int64_t now = QDateTime::currentMSecsSinceEpoch();
        auto incident = std::make_shared<Incident>();
        incident->id = 12;
        incident->startMs = now - 4 * 60'000;
        incident->domain = 0;
        incident->cause = QStringLiteral("cooling");
        incident->evidence = QStringLiteral("16 of its GPUs began throttling within 40 s");
        incident->gpuRuns = { { 16, 16 } };
        incident->gpuCount = 16;
        Problem p;
        p.kind = Problem::Kind::Incident;
        p.severity = EventSeverity::Critical;
        p.incident = incident;
        p.sinceMs = incident->startMs;
        p.text = QStringLiteral("Cooling unit r01-crah1 failing: 16 GPUs throttling");
        for (uint32_t g = 16; g < 32; ++g) {
            p.gpus.push_back(g);
        }
        std::vector<Problem> ranked = { p };
        rankProblems(&ranked, nullptr);
        AlertBoard board;
        FleetAlert own;
        own.fingerprint = QStringLiteral("f12");
        own.labels = { { QStringLiteral("alertname"), QStringLiteral("FleetscopeIncident") },
            { QStringLiteral("cause"), QStringLiteral("cooling") },
            { QStringLiteral("domain"), QStringLiteral("r01-crah1") } };
        own.severity = EventSeverity::Critical;
        own.suppressed = true;
        own.silencedBy = { QStringLiteral("s-7") };
        board.alerts = { own };
        board.silences = { { QStringLiteral("s-7"),
            { { QStringLiteral("domain"), QStringLiteral("r01-crah1"), false, true } }, now, now + 3'600'000,
            QStringLiteral("carol"), QStringLiteral("CRAH vendor on site"), FleetSilence::State::Active } };
        const auto all = withAlerts(ranked, board, topology.get(), nullptr, now);
        QCOMPARE(all.size(), size_t { 1 });

        ProblemsModel model;
        model.setProblems(all, topology, nullptr, now);
        const QStringList lines = model.index(0, ProblemsModel::EntryColumn).data().toString().split(QLatin1Char('\n'));
        QCOMPARE(lines.value(0), QStringLiteral("COOLING (silenced) · cooling unit r01-crah1"));
        QVERIFY2(lines.value(2).startsWith(QStringLiteral("silenced by carol until ")), qPrintable(lines.value(2)));
        QVERIFY(lines.value(2).endsWith(QStringLiteral(": CRAH vendor on site")));

        ProblemsBoard wall;
        wall.resize(1280, 640);
        wall.setProblems(all, topology, nullptr, now);
        QCOMPARE(wall.rowTexts().size(), 1);
        QVERIFY2(
            wall.rowTexts()[0].contains(QStringLiteral("  silenced by carol until ")), qPrintable(wall.rowTexts()[0]));
        QCOMPARE(wall.headline(), QStringLiteral("1 incident (1 critical)"));
        if (const int ms = qEnvironmentVariableIntValue("FLEETSCOPE_LOOK"); ms > 0) {
            wall.show();
            QTest::qWait(ms);
        }
    }

    // For a person: the dock with alerts and the dialog open on one (FLEETSCOPE_LOOK=ms).
    void lookAtTheDesk()
    {
        const int ms = qEnvironmentVariableIntValue("FLEETSCOPE_LOOK");
        if (ms <= 0) {
            QSKIP("only to look at: FLEETSCOPE_LOOK=ms");
        }
        m_desk->setAccess({ QStringLiteral("alice"), BackendAccess::Role::Operator, true, true });
        m_desk->setAlerts(makeBoard());
        m_desk->move(0, 0);
        table()->selectRow(rowOfAlert(QStringLiteral("GpuTooHot")));
        QTest::qWait(ms);
        m_desk->silenceChosen();
        m_desk->silenceDialog()->move(440, 0);
        QTest::qWait(ms);
        m_desk->silenceDialog()->reject();
        m_desk->silencesView()->resize(700, 200);
        m_desk->silencesView()->move(440, 500);
        m_desk->silencesView()->show();
        QTest::qWait(ms);
    }
};

QTEST_MAIN(TestProblemAlerts)
#include "tst_problemalerts.moc"
