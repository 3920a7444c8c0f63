// SPDX-License-Identifier: Apache-2.0
// The NOC's alerts among the fleet's problems (ranked by severity, the silenced and inhibited last, counted apart,
// marked with who silenced them until when and why), and the silences proposed for a problem: matchers for a GPU, a
// node, a rack, a domain and an alert, what Alertmanager would refuse, what they match, who may make them.
#include "model/alertproblems.h"
#include "tests/model/testtopology.h"

#include <QDateTime>
#include <QTest>

using namespace fleetscope;

namespace {
constexpr int64_t minute = 60'000;
const int64_t t0 = QDateTime(QDate(2026, 12, 6), QTime(14, 0)).toMSecsSinceEpoch();

FleetAlert makeAlert(const QString &name, EventSeverity severity, std::vector<AlertLabel> placing,
    std::vector<std::pair<uint32_t, uint32_t>> runs, int64_t node = -1)
{
    FleetAlert a;
    a.fingerprint = name + QString::number(runs.empty() ? 0 : runs[0].first);
    a.labels = { { QStringLiteral("alertname"), name }, { QStringLiteral("severity"), QStringLiteral("critical") } };
    a.labels.insert(a.labels.end(), placing.begin(), placing.end());
    a.annotations = { { QStringLiteral("summary"), QStringLiteral("%1 fires").arg(name) } };
    a.severity = severity;
    a.startsAtMs = t0;
    a.gpuRuns = std::move(runs);
    for (const auto &[first, count] : a.gpuRuns) {
        a.gpuCount += count;
    }
    a.node = node;
    return a;
}

AlertLabel label(const char *name, const QString &value)
{
    return { QLatin1String(name), value };
}

std::shared_ptr<const Incident> makeIncident(int64_t domain)
{
    auto incident = std::make_shared<Incident>();
    incident->id = 4;
    incident->startMs = t0;
    incident->domain = domain;
    incident->cause = QStringLiteral("cooling");
    return incident;
}

Problem gpuProblem(Problem::Kind kind, int64_t gpu, EventSeverity severity)
{
    Problem p;
    p.kind = kind;
    p.gpu = gpu;
    p.severity = severity;
    p.sinceMs = t0;
    p.gpus = { static_cast<uint32_t>(gpu) };
    return p;
}
} // namespace

class TestAlertProblems : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // An alert is placed where the backend put it: one GPU's is that GPU's (a click drills to it), a node's the node's,
    // one of nothing in the fleet is fleet-wide; its words are its name and summary.
    void alertsArePlacedAsTheBackendPlacedThem()
    {
        const TopologyPtr topology = testing::makeTopology();
        AlertBoard board;
        board.alerts.push_back(makeAlert(QStringLiteral("GpuTooHot"), EventSeverity::Critical,
            { label("Hostname", QStringLiteral("r01-k02-n01")), label("gpu", QStringLiteral("5")) }, { { 21, 1 } }));
        board.alerts.push_back(makeAlert(QStringLiteral("NodeExporterDown"), EventSeverity::Warning,
            { label("Hostname", QStringLiteral("r01-k01-n02")) }, { { 8, 8 } }, 1));
        board.alerts.push_back(makeAlert(QStringLiteral("Watchdog"), EventSeverity::Info, {}, {}));
        board.alerts.push_back(makeAlert(QStringLiteral("Beyond"), EventSeverity::Warning, {}, { { 40, 100 } }));
        const auto problems = alertProblems(board, topology.get(), t0 + minute);
        QCOMPARE(problems.size(), size_t { 4 });
        QCOMPARE(problems[0].kind, Problem::Kind::Alert);
        QCOMPARE(problems[0].gpu, int64_t { 21 });
        QCOMPARE(problems[0].node, int64_t { 2 });
        QCOMPARE(problemPlace(problems[0], topology.get()), QStringLiteral("r01-k02-n01 GPU 5"));
        QCOMPARE(problemSummary(problems[0]), QStringLiteral("GpuTooHot: GpuTooHot fires"));
        QCOMPARE(problems[1].gpu, int64_t { -1 });
        QCOMPARE(problems[1].node, int64_t { 1 });
        QCOMPARE(problems[1].gpus.size(), size_t { 8 });
        QCOMPARE(problemPlace(problems[1], topology.get()), QStringLiteral("r01-k01-n02"));
        QCOMPARE(problemPlace(problems[2], topology.get()), QStringLiteral("fleet-wide"));
        QVERIFY(problems[2].gpus.empty());
        // Runs past the fleet are cut to it (the backend is another process).
        QCOMPARE(problems[3].gpus.size(), size_t { 8 });
        QCOMPARE(problems[3].gpus.back(), uint32_t { 47 });
        QCOMPARE(problems[0].key(), alertProblems(board, topology.get(), t0 + 2 * minute)[0].key());
        QVERIFY(problems[0].key() != problems[3].key());
    }

    // Ranked among the fleet's problems by severity (incidents first as always), a silenced or inhibited alert after
    // everything else; counted apart: "3 alerts (1 critical, 1 silenced)".
    void alertsRankBySeverityTheQuietLast()
    {
        const TopologyPtr topology = testing::makeTopology();
        AlertBoard board;
        board.alerts.push_back(makeAlert(QStringLiteral("GpuTooHot"), EventSeverity::Critical, {}, { { 3, 1 } }));
        FleetAlert silenced = makeAlert(QStringLiteral("XidErrors"), EventSeverity::Critical, {}, { { 4, 1 } });
        silenced.suppressed = true;
        silenced.silencedBy = { QStringLiteral("s-1") };
        board.alerts.push_back(silenced);
        board.alerts.push_back(makeAlert(QStringLiteral("FanSlow"), EventSeverity::Warning, {}, { { 5, 1 } }));
        board.silences.push_back({ QStringLiteral("s-1"),
            { { QStringLiteral("gpu"), QStringLiteral("4"), false, true } }, t0, t0 + 2 * 60 * minute,
            QStringLiteral("alice"), QStringLiteral("swapping the PSU"), FleetSilence::State::Active });

        std::vector<Problem> ranked = { gpuProblem(Problem::Kind::EccDoubleBit, 10, EventSeverity::Critical),
            gpuProblem(Problem::Kind::ThermalThrottle, 11, EventSeverity::Warning) };
        Problem incident;
        incident.kind = Problem::Kind::Incident;
        incident.severity = EventSeverity::Warning;
        incident.incident = makeIncident(0);
        ranked.push_back(incident);
        rankProblems(&ranked, nullptr);
        const auto all = withAlerts(ranked, board, topology.get(), nullptr, t0 + minute);
        QCOMPARE(all.size(), size_t { 6 });
        QCOMPARE(all[0].kind, Problem::Kind::Incident); // a shared one: first, whatever its severity
        // The critical ones (an ECC error, a firing alert), then the warnings, then the silenced critical alert.
        QCOMPARE(all[1].severity, EventSeverity::Critical);
        QCOMPARE(all[2].severity, EventSeverity::Critical);
        QVERIFY(all[1].kind == Problem::Kind::Alert || all[2].kind == Problem::Kind::Alert);
        QCOMPARE(all[3].severity, EventSeverity::Warning);
        QCOMPARE(all[4].severity, EventSeverity::Warning);
        QCOMPARE(all[5].kind, Problem::Kind::Alert);
        QVERIFY(all[5].isQuietAlert());
        QCOMPARE(all[5].quietNote, QStringLiteral("silenced by alice until 16:00: swapping the PSU"));
        // The alert's jobs and blast radius were counted as the others' are.
        QCOMPARE(all[5].gpusHit, uint32_t { 1 });

        const ProblemTally tally = tallyProblems(all);
        QCOMPARE(tally.alerts, uint32_t { 3 });
        QCOMPARE(tally.quietAlerts, uint32_t { 1 });
        QCOMPARE(tally.criticalAlerts, uint32_t { 1 });
        QCOMPARE(tally.others, uint32_t { 2 });
        QCOMPARE(tally.incidents, uint32_t { 1 });
        QCOMPARE(tallyText(tally),
            QStringLiteral("1 incident · 2 other problems (1 critical) · 3 alerts (1 critical, 1 silenced)"));
        std::vector<Problem> alertsOnly = alertProblems(board, topology.get(), t0);
        QCOMPARE(tallyText(tallyProblems(alertsOnly)), QStringLiteral("3 alerts (1 critical, 1 silenced)"));
        QCOMPARE(tallyText(tallyProblems({})), QStringLiteral("No open problems"));
    }

    // Why it is quiet: the silence's author, end and comment (another day's end with its date), an inhibition by the
    // alert that inhibits it; a silence left out of the board still says silenced.
    void theQuietSayWhy()
    {
        AlertBoard board;
        board.alerts.push_back(makeAlert(QStringLiteral("NodeDown"), EventSeverity::Critical, {}, {}));
        board.silences.push_back({ QStringLiteral("s-2"), {}, t0, t0 + 26 * 60 * minute, QStringLiteral("bob"),
            QString(), FleetSilence::State::Active });
        FleetAlert a = makeAlert(QStringLiteral("GpuTooHot"), EventSeverity::Critical, {}, {});
        QCOMPARE(quietNote(a, board, t0), QString());
        a.suppressed = true;
        a.silencedBy = { QStringLiteral("s-2") };
        QCOMPARE(quietNote(a, board, t0), QStringLiteral("silenced by bob until 7 Dec 16:00"));
        a.silencedBy = { QStringLiteral("gone"), QStringLiteral("s-2") };
        QCOMPARE(quietNote(a, board, t0), QStringLiteral("silenced by bob until 7 Dec 16:00 (+1 more)"));
        a.silencedBy = { QStringLiteral("gone") };
        QCOMPARE(quietNote(a, board, t0), QStringLiteral("silenced"));
        a.silencedBy.clear();
        a.inhibitedBy = { board.alerts[0].fingerprint };
        QCOMPARE(quietNote(a, board, t0), QStringLiteral("inhibited by NodeDown"));
        a.inhibitedBy = { QStringLiteral("unknown") };
        QCOMPARE(quietNote(a, board, t0), QStringLiteral("inhibited by another alert"));
    }

    // Silence… proposes matchers for the problem's place: a GPU's host and index, a node's host, a rack, an
    // incident's domain, an alert's own name and placing labels; GPUs over several nodes as one regex of hosts.
    void proposalsForEachPlace()
    {
        auto topology = std::const_pointer_cast<Topology>(testing::makeTopology());
        topology->domains.push_back({ DomainKind::CoolingUnit, QStringLiteral("r01-crah1"), -1, -1 });
        const auto texts = [](const SilenceProposal &p) {
            QStringList t;
            for (const auto &m : p.matchers) {
                t << matcherText(m);
            }
            return t.join(QStringLiteral(", "));
        };
        const SilenceProposal gpu
            = proposeSilence(gpuProblem(Problem::Kind::XidBurst, 21, EventSeverity::Critical), topology.get());
        QCOMPARE(texts(gpu), QStringLiteral("Hostname=\"r01-k02-n01\", gpu=\"5\""));
        QCOMPARE(gpu.subject, QStringLiteral("XID burst on GPU 5 of r01-k02-n01"));

        Problem node;
        node.kind = Problem::Kind::NodeDown;
        node.node = 3;
        QCOMPARE(texts(proposeSilence(node, topology.get())), QStringLiteral("Hostname=\"r01-k02-n02\""));

        Problem rack;
        rack.kind = Problem::Kind::ThermalThrottle;
        rack.rack = 2;
        rack.gpus = { 32, 40 };
        const SilenceProposal rackProposal = proposeSilence(rack, topology.get());
        QCOMPARE(texts(rackProposal), QStringLiteral("rack=\"r01-k03\""));
        QCOMPARE(rackProposal.subject, QStringLiteral("Thermal throttling in rack r01-k03"));

        Problem incident;
        incident.kind = Problem::Kind::Incident;
        incident.incident = makeIncident(0);
        incident.gpus = { 16, 17 };
        const SilenceProposal domain = proposeSilence(incident, topology.get());
        QCOMPARE(texts(domain), QStringLiteral("alertname=\"FleetscopeIncident\", domain=\"r01-crah1\""));
        QCOMPARE(domain.subject, QStringLiteral("cooling incident of cooling unit r01-crah1"));

        // The backend's own findings are its alerts (--alertmanager-send), labelled as its sender labels them
        // (alertname, hostname, gpu; backend/alerting/alertsender.cpp): a GPU's own incident and an anomaly propose
        // matchers that mute those pages, not the NOC's dcgm rules' (Hostname).
        Problem ownIncident;
        ownIncident.kind = Problem::Kind::Incident;
        ownIncident.incident = makeIncident(-1);
        ownIncident.gpu = 21;
        const SilenceProposal own = proposeSilence(ownIncident, topology.get());
        QCOMPARE(texts(own), QStringLiteral("alertname=\"FleetscopeIncident\", hostname=\"r01-k02-n01\", gpu=\"5\""));
        const FleetAlert sent = makeAlert(QLatin1String(incidentAlertName), EventSeverity::Critical,
            { label("cause", QStringLiteral("gpu")), label("gpu", QStringLiteral("5")),
                label("hostname", QStringLiteral("r01-k02-n01")), label("site", QStringLiteral("sim")) },
            { { 21, 1 } });
        QVERIFY(silenceMatches(own.matchers, sent));
        const SilenceProposal anomaly
            = proposeSilence(gpuProblem(Problem::Kind::Anomaly, 21, EventSeverity::Warning), topology.get());
        QCOMPARE(
            texts(anomaly), QStringLiteral("alertname=\"FleetscopeAnomaly\", hostname=\"r01-k02-n01\", gpu=\"5\""));

        Problem folded;
        folded.kind = Problem::Kind::EccDoubleBit;
        folded.foldedJob = 7;
        folded.gpus = { 1, 9, 17 };
        const SilenceProposal hosts = proposeSilence(folded, topology.get());
        QCOMPARE(hosts.matchers.size(), size_t { 1 });
        QVERIFY(hosts.matchers[0].isRegex);
        QCOMPARE(hosts.matchers[0].value, QStringLiteral("r01\\-k01\\-n01|r01\\-k01\\-n02|r01\\-k02\\-n01"));

        AlertBoard board;
        FleetAlert hot = makeAlert(QStringLiteral("GpuTooHot"), EventSeverity::Critical,
            { label("Hostname", QStringLiteral("r01-k02-n01")), label("gpu", QStringLiteral("5")),
                label("UUID", QStringLiteral("GPU-1234")) },
            { { 21, 1 } });
        board.alerts.push_back(hot);
        const SilenceProposal alert = proposeSilence(alertProblems(board, topology.get(), t0)[0], topology.get());
        QCOMPARE(texts(alert),
            QStringLiteral("alertname=\"GpuTooHot\", Hostname=\"r01-k02-n01\", gpu=\"5\", UUID=\"GPU-1234\""));
        QCOMPARE(alert.subject, QStringLiteral("alert GpuTooHot (r01-k02-n01 GPU 5)"));
        // The proposal silences the alert it was made for, not its twin on another GPU.
        QVERIFY(silenceMatches(alert.matchers, hot));
        FleetAlert twin = hot;
        twin.labels[3].value = QStringLiteral("6");
        QVERIFY(!silenceMatches(alert.matchers, twin));
    }

    // What Alertmanager refuses is refused here first; what a silence matches is decided as Alertmanager decides.
    void matchersAsAlertmanagerReadsThem()
    {
        const SilenceMatcher host { QStringLiteral("Hostname"), QStringLiteral("r01-k02-n01"), false, true };
        QCOMPARE(matchersProblem({ host }), QString());
        QVERIFY(!matchersProblem({}).isEmpty());
        QVERIFY(
            matchersProblem({ { QString(), QStringLiteral("x"), false, true } }).contains(QStringLiteral("no label")));
        QVERIFY(matchersProblem({ { QStringLiteral("1gpu"), QStringLiteral("x"), false, true } })
                    .contains(QStringLiteral("not a label name")));
        QVERIFY(matchersProblem({ host, { QStringLiteral("gpu"), QStringLiteral("[0-"), true, true } })
                    .startsWith(QStringLiteral("matcher 2:")));
        // Every matcher matches the empty value: it would silence everything.
        QVERIFY(!matchersProblem({ { QStringLiteral("gpu"), QStringLiteral(".*"), true, true } }).isEmpty());
        QVERIFY(!matchersProblem({ { QStringLiteral("gpu"), QStringLiteral("5"), false, false } }).isEmpty());

        FleetAlert a = makeAlert(QStringLiteral("GpuTooHot"), EventSeverity::Critical,
            { label("Hostname", QStringLiteral("r01-k02-n01")), label("gpu", QStringLiteral("15")) }, {});
        QVERIFY(silenceMatches({ host }, a));
        QVERIFY(!silenceMatches({ { QStringLiteral("gpu"), QStringLiteral("1"), true, true } }, a)); // anchored
        QVERIFY(silenceMatches({ { QStringLiteral("gpu"), QStringLiteral("1[0-9]"), true, true } }, a));
        QVERIFY(silenceMatches({ { QStringLiteral("gpu"), QStringLiteral("1[0-9]"), true, false } }, a) == false);
        QVERIFY(silenceMatches({ host, { QStringLiteral("rack"), QString(), false, true } }, a)); // absent reads ""
        QVERIFY(!silenceMatches({ host, { QStringLiteral("gpu"), QStringLiteral("15"), false, false } }, a));
        QVERIFY(!silenceMatches({}, a));
    }

    // The backend's own incident, back from Alertmanager as FleetscopeIncident: set on its incident (by its domain's
    // name and cause), not listed again; silenced, the incident says so and goes after those no one is on, and the
    // wall's banner names who is on it when it leads.
    void anIncidentsOwnAlertIsTheIncidents()
    {
        auto topology = std::const_pointer_cast<Topology>(testing::makeTopology());
        topology->domains.push_back({ DomainKind::CoolingUnit, QStringLiteral("r01-crah1"), -1, -1 });
        topology->domains.push_back({ DomainKind::Pdu, QStringLiteral("r01-k01-a"), -1, -1 });
        Problem cooling;
        cooling.kind = Problem::Kind::Incident;
        cooling.severity = EventSeverity::Critical;
        cooling.incident = makeIncident(0);
        cooling.text = QStringLiteral("Cooling unit r01-crah1 failing");
        cooling.gpus = { 16, 17 };
        Problem power = cooling;
        auto pdu = std::make_shared<Incident>(*cooling.incident);
        pdu->id = 5;
        pdu->domain = 1;
        pdu->cause = QStringLiteral("power");
        power.incident = pdu;
        power.severity = EventSeverity::Warning;
        power.text = QStringLiteral("PDU r01-k01-a tripped");
        std::vector<Problem> ranked = { cooling, power };
        rankProblems(&ranked, nullptr);
        QCOMPARE(ranked[0].incident->id, uint64_t { 4 }); // critical first

        AlertBoard board;
        FleetAlert own = makeAlert(QString::fromLatin1(incidentAlertName), EventSeverity::Critical,
            { label("cause", QStringLiteral("cooling")), label("domain", QStringLiteral("r01-crah1")) }, {});
        own.suppressed = true;
        own.silencedBy = { QStringLiteral("s-9") };
        board.alerts.push_back(own);
        // Another domain's name under another cause is not this incident's.
        board.alerts.push_back(makeAlert(QString::fromLatin1(incidentAlertName), EventSeverity::Warning,
            { label("cause", QStringLiteral("network")), label("domain", QStringLiteral("r01-k01-a")) }, {}));
        board.silences.push_back({ QStringLiteral("s-9"), {}, t0, t0 + 60 * minute, QStringLiteral("carol"),
            QStringLiteral("CRAH vendor on site"), FleetSilence::State::Active });
        const auto all = withAlerts(ranked, board, topology.get(), nullptr, t0);
        QCOMPARE(all.size(), size_t { 3 }); // two incidents and the network alert that is no incident's
        QCOMPARE(all[0].incident->id, uint64_t { 5 }); // the one no one is on first
        QCOMPARE(all[1].incident->id, uint64_t { 4 });
        QVERIFY(all[1].isQuietAlert());
        QCOMPARE(all[1].quietNote, QStringLiteral("silenced by carol until 15:00: CRAH vendor on site"));
        QCOMPARE(all[1].key(), ranked[0].key()); // still the same problem for the table's selection
        QCOMPARE(all[2].kind, Problem::Kind::Alert);
        const ProblemTally tally = tallyProblems(all);
        QCOMPARE(tally.incidents, uint32_t { 2 });
        QCOMPARE(tally.alerts, uint32_t { 1 });
        EventSeverity severity = EventSeverity::Info;
        QCOMPARE(leadIncidentLine(all, tally, &severity).left(30), QStringLiteral("POWER · PDU r01-k01-a tripped "));
        const std::vector<Problem> quietOnly = { all[1] };
        QCOMPARE(leadIncidentLine(quietOnly, tallyProblems(quietOnly), &severity),
            QStringLiteral("COOLING · Cooling unit r01-crah1 failing · silenced by carol until 15:00: CRAH vendor on "
                           "site"));
    }

    void whoMaySilence()
    {
        BackendAccess viewer { QStringLiteral("noc-wall"), BackendAccess::Role::Viewer, true, false };
        QCOMPARE(
            silenceRefusal(viewer), QStringLiteral("you are a viewer (noc-wall): silencing needs the operator role"));
        BackendAccess unknown;
        QVERIFY(!silenceRefusal(unknown).isEmpty());
        BackendAccess noAlertmanager { QStringLiteral("alice"), BackendAccess::Role::Operator, false, false };
        QVERIFY(silenceRefusal(noAlertmanager).contains(QStringLiteral("no Alertmanager")));
        BackendAccess op { QStringLiteral("alice"), BackendAccess::Role::Operator, true, true };
        QCOMPARE(silenceRefusal(op), QString());
    }

    // Only a web page is offered as a runbook.
    void runbooks()
    {
        FleetAlert a;
        QVERIFY(!runbookUrl(a).isValid());
        a.annotations = { { QStringLiteral("runbook_url"), QStringLiteral("https://wiki.example/runbooks/gpu-hot") } };
        QCOMPARE(runbookUrl(a), QUrl(QStringLiteral("https://wiki.example/runbooks/gpu-hot")));
        a.annotations = { { QStringLiteral("runbook_url"), QStringLiteral("file:///etc/passwd") } };
        QVERIFY(!runbookUrl(a).isValid());
        a.annotations = { { QStringLiteral("runbook"), QStringLiteral("http://runbooks/xid") } };
        QCOMPARE(runbookUrl(a).host(), QStringLiteral("runbooks"));
    }
};

QTEST_GUILESS_MAIN(TestAlertProblems)
#include "tst_alertproblems.moc"
