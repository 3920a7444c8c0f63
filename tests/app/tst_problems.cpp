// SPDX-License-Identifier: Apache-2.0
// What is wrong right now: events folded into problems (XID bursts split by three quiet minutes, throttles and nodes
// down from start to end, double-bit ECC kept), ranked by severity and by the GPUs of the jobs they hit, and the table
// over them checked by QAbstractItemModelTester.
#include "app/consolesession.h"
#include "app/pages/problemspage.h"
#include "app/problemsmodel.h"
#include "model/problems.h"
#include "tests/model/testtopology.h"
#include "widgets/wall/problemsboard.h"

#include <QAbstractItemModelTester>
#include <QHeaderView>
#include <QStyle>
#include <QTableView>
#include <QTest>

using namespace fleetscope;

namespace {
constexpr int64_t minute = 60'000;
constexpr int64_t t0 = 1'790'000'000'000;

FleetEvent makeEvent(EventKind kind, int64_t timeMs, int64_t gpu, int64_t node, uint32_t xid = 0,
    EventSeverity severity = EventSeverity::Warning)
{
    FleetEvent e;
    e.kind = kind;
    e.timeMs = timeMs;
    e.gpu = gpu;
    e.node = node;
    e.xid = xid;
    e.severity = severity;
    return e;
}

// An incident event as the backend sends it (model/history.h): GPUs as runs, its domain, cause, evidence, jobs.
FleetEvent makeIncident(EventKind kind, int64_t timeMs, uint64_t id, std::vector<std::pair<uint32_t, uint32_t>> runs,
    const QString &cause = QStringLiteral("cooling"), const QString &headline = QString(), int64_t domain = 0,
    EventSeverity severity = EventSeverity::Critical)
{
    auto incident = std::make_shared<Incident>();
    incident->id = id;
    incident->startMs = timeMs;
    incident->domain = domain;
    incident->cause = cause;
    incident->evidence = QStringLiteral("%1 of its GPUs began throttling within 40 s; no other unit's did").arg(8);
    for (const auto &[first, count] : runs) {
        incident->gpuCount += count;
    }
    incident->gpuRuns = std::move(runs);
    incident->jobs = { 7 };
    incident->jobCount = 1;
    FleetEvent e = makeEvent(kind, timeMs, -1, -1, 0, severity);
    e.text = headline.isEmpty() ? QStringLiteral("Incident %1").arg(id) : headline;
    e.incident = std::move(incident);
    return e;
}

// The test fleet with domains: a cooling unit serving its second rack (0), the PDU of its first rack's A side (1) on
// the row's busway (2).
TopologyPtr makeTopologyWithDomains()
{
    auto topology = std::const_pointer_cast<Topology>(testing::makeTopology());
    topology->domains.push_back({ DomainKind::CoolingUnit, QStringLiteral("r01-crah1"), -1, -1 });
    topology->domains.push_back({ DomainKind::Pdu, QStringLiteral("r01-k01-a"), 2, -1 });
    topology->domains.push_back({ DomainKind::Busway, QStringLiteral("r01-bus-a"), -1, -1 });
    topology->racks[0].domains = { 1 };
    topology->racks[1].domains = { 0 };
    return topology;
}

// Two jobs on the 48-GPU test fleet: a big one on GPUs 0-31, a small one on 40-43.
JobsPtr makeJobs(const Topology &topology)
{
    auto jobs = std::make_shared<JobList>();
    jobs->topologyGeneration = topology.generation;
    jobs->runningJobOfGpu.assign(topology.gpuCount, -1);
    Job big;
    big.id = 7;
    big.name = QStringLiteral("pretrain-70b");
    Job small;
    small.id = 9;
    small.name = QStringLiteral("eval");
    for (uint32_t g = 0; g < 32; ++g) {
        big.gpus.push_back(g);
        jobs->runningJobOfGpu[g] = 0;
    }
    for (uint32_t g = 40; g < 44; ++g) {
        small.gpus.push_back(g);
        jobs->runningJobOfGpu[g] = 1;
    }
    jobs->jobs = { big, small };
    return jobs;
}
} // namespace

class TestProblems : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void xidsOnOneGpuAreOneBurstUntilThreeQuietMinutes()
    {
        ProblemBoard board;
        board.add(makeEvent(EventKind::Xid, t0, 3, 0, 79, EventSeverity::Critical));
        board.add(makeEvent(EventKind::Xid, t0 + 1 * minute, 3, 0, 48));
        board.add(makeEvent(EventKind::Xid, t0 + 3 * minute, 3, 0, 79)); // 2 min after: the same burst
        auto open = board.open(t0 + 4 * minute, nullptr, nullptr);
        QCOMPARE(open.size(), size_t { 1 });
        QCOMPARE(open[0].kind, Problem::Kind::XidBurst);
        QCOMPARE(open[0].sinceMs, t0);
        QCOMPARE(open[0].severity, EventSeverity::Critical); // the worst of its XIDs
        QCOMPARE(open[0].xids, (std::vector<std::pair<uint32_t, uint32_t>> { { 79, 2 }, { 48, 1 } }));
        QVERIFY2(ProblemsModel::summary(open[0]).contains(QLatin1String("79 (")), "the XID's meaning is said");
        QVERIFY(ProblemsModel::summary(open[0]).contains(QStringLiteral("×2")));

        // Three quiet minutes close it; the next XID starts another burst.
        QVERIFY(board.open(t0 + 6 * minute + 1, nullptr, nullptr).empty());
        board.add(makeEvent(EventKind::Xid, t0 + 7 * minute, 3, 0, 31));
        open = board.open(t0 + 7 * minute, nullptr, nullptr);
        QCOMPARE(open.size(), size_t { 1 });
        QCOMPARE(open[0].sinceMs, t0 + 7 * minute);
        QCOMPARE(open[0].xids.size(), size_t { 1 });
    }

    void throttlesAndNodesLastFromStartToEnd()
    {
        ProblemBoard board;
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0, 5, 0));
        board.add(makeEvent(EventKind::PowerThrottleStart, t0, 5, 0));
        board.add(makeEvent(EventKind::NodeDown, t0, -1, 4, 0, EventSeverity::Critical));
        QCOMPARE(board.open(t0 + minute, nullptr, nullptr).size(), size_t { 3 });
        board.add(makeEvent(EventKind::ThermalThrottleEnd, t0 + minute, 5, 0, 0, EventSeverity::Info));
        board.add(makeEvent(EventKind::NodeUp, t0 + minute, -1, 4, 0, EventSeverity::Info));
        const auto open = board.open(t0 + 2 * minute, nullptr, nullptr);
        QCOMPARE(open.size(), size_t { 1 });
        QCOMPARE(open[0].kind, Problem::Kind::PowerThrottle);
        // An anomaly lasts from its start to its end and says the detector's reason.
        FleetEvent anomaly = makeEvent(EventKind::AnomalyStart, t0 + minute, 12, 1);
        anomaly.text = QStringLiteral("GPU 4 of r01-k01-n02 runs 14 °C above its job's median for 3 min");
        anomaly.metric = QStringLiteral("gpu_temp");
        board.add(anomaly);
        FleetEvent power = makeEvent(EventKind::AnomalyStart, t0 + minute, 12, 1); // another metric, another problem
        power.metric = QStringLiteral("power");
        board.add(power);
        QCOMPARE(board.open(t0 + 2 * minute, nullptr, nullptr).size(), size_t { 3 });
        FleetEvent powerEnd = makeEvent(EventKind::AnomalyEnd, t0 + 2 * minute, 12, 1, 0, EventSeverity::Info);
        powerEnd.metric = QStringLiteral("power");
        board.add(powerEnd);
        auto withAnomaly = board.open(t0 + 2 * minute, nullptr, nullptr);
        QCOMPARE(withAnomaly.size(), size_t { 2 });
        const auto found = std::find_if(
            withAnomaly.begin(), withAnomaly.end(), [](const Problem &p) { return p.kind == Problem::Kind::Anomaly; });
        QVERIFY(found != withAnomaly.end());
        QCOMPARE(ProblemsModel::summary(*found), anomaly.text);
        QCOMPARE(board.gpusWith(Problem::Kind::Anomaly), std::vector<uint32_t> { 12 });
        FleetEvent end = makeEvent(EventKind::AnomalyEnd, t0 + 2 * minute, 12, 1, 0, EventSeverity::Info);
        end.metric = QStringLiteral("gpu_temp");
        board.add(end);
        QCOMPARE(board.open(t0 + 2 * minute, nullptr, nullptr).size(), size_t { 1 });
        // An end without a start, a job event, and a double-bit error that stays.
        board.add(makeEvent(EventKind::ThermalThrottleEnd, t0 + 2 * minute, 9, 1));
        board.add(makeEvent(EventKind::JobStart, t0 + 2 * minute, -1, -1));
        board.add(makeEvent(EventKind::EccDoubleBit, t0 + 2 * minute, 9, 1));
        QCOMPARE(board.open(t0 + 50 * minute, nullptr, nullptr).size(), size_t { 2 });
        board.clear();
        QVERIFY(board.open(t0, nullptr, nullptr).empty());
    }

    // Critical first; then the problem that hits the most GPUs through its jobs; then the oldest.
    void rankedBySeverityThenBlastRadius()
    {
        const TopologyPtr topology = testing::makeTopology();
        const JobsPtr jobs = makeJobs(*topology);
        ProblemBoard board;
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0, 41, 5)); // in the 4-GPU job
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0 + minute, 2, 0)); // in the 32-GPU job
        board.add(makeEvent(EventKind::PowerThrottleStart, t0 - minute, 46, 5)); // in no job
        board.add(makeEvent(EventKind::NodeDown, t0 + 2 * minute, -1, 2, 0, EventSeverity::Critical)); // GPUs 16-23
        board.add(makeEvent(EventKind::EccDoubleBit, t0 + 3 * minute, 44, 5, 0, EventSeverity::Critical)); // no job
        const auto open = board.open(t0 + 4 * minute, topology.get(), jobs.get());
        QCOMPARE(open.size(), size_t { 5 });
        QCOMPARE(open[0].kind, Problem::Kind::NodeDown);
        QCOMPARE(open[0].gpusHit, 8U);
        QCOMPARE(open[0].blastGpus, 32U); // its 8 GPUs are all in the big job
        QCOMPARE(open[0].jobIds, std::vector<uint64_t> { 7 });
        QCOMPARE(open[1].kind, Problem::Kind::EccDoubleBit);
        QCOMPARE(open[1].blastGpus, 1U);
        QCOMPARE(open[2].gpu, int64_t { 2 });
        QCOMPARE(open[2].blastGpus, 32U);
        QCOMPARE(open[3].gpu, int64_t { 41 });
        QCOMPARE(open[3].blastGpus, 4U);
        QCOMPARE(open[4].gpu, int64_t { 46 });
        QCOMPARE(ProblemsModel::placeName(open[0], topology.get()), QStringLiteral("r01-k02-n01"));
        QCOMPARE(ProblemsModel::placeName(open[3], topology.get()), QStringLiteral("r01-k03-n02 GPU 1"));
    }

    // A cooling or power fault is a rack's: the same throttling on several GPUs of one rack is one line for them.
    void throttlingOfARackIsOneProblem()
    {
        const TopologyPtr topology = testing::makeTopology();
        ProblemBoard board;
        for (int64_t gpu : { 16, 17, 24, 31 }) { // rack r01-k02: nodes 2 and 3, GPUs 16-31
            board.add(makeEvent(EventKind::ThermalThrottleStart, t0 + gpu * 1000, gpu, gpu / 8));
        }
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0, 40, 5)); // alone in rack r01-k03
        board.add(makeEvent(EventKind::PowerThrottleStart, t0, 18, 2)); // another kind in the same rack
        const auto open = board.open(t0 + minute, topology.get(), makeJobs(*topology).get());
        QCOMPARE(open.size(), size_t { 3 });
        const auto rack = std::find_if(open.begin(), open.end(), [](const Problem &p) { return p.rack >= 0; });
        QVERIFY(rack != open.end());
        QCOMPARE(rack->kind, Problem::Kind::ThermalThrottle);
        QCOMPARE(rack->gpus, (std::vector<uint32_t> { 16, 17, 24, 31 }));
        QCOMPARE(rack->sinceMs, t0 + 16'000);
        QCOMPARE(ProblemsModel::placeName(*rack, topology.get()), QStringLiteral("rack r01-k02 (4 GPUs)"));
        for (const auto &p : open) {
            if (p.rack < 0) {
                QCOMPARE(p.gpus.size(), size_t { 1 });
            }
        }
    }

    // The backend is untrusted: a GPU or node past the topology is no crash, and hits nothing.
    void placesPastTheTopologyHitNothing()
    {
        const TopologyPtr topology = testing::makeTopology();
        ProblemBoard board;
        board.add(makeEvent(EventKind::EccDoubleBit, t0, 4'000'000, 1, 0, EventSeverity::Critical));
        board.add(makeEvent(EventKind::NodeDown, t0, -1, 99, 0, EventSeverity::Critical));
        const auto open = board.open(t0, topology.get(), makeJobs(*topology).get());
        QCOMPARE(open.size(), size_t { 2 });
        for (const auto &p : open) {
            QCOMPARE(p.gpusHit, 0U);
            QCOMPARE(ProblemsModel::placeName(p, topology.get()), QStringLiteral("(not in this topology)"));
        }
    }

    // Shared incidents come first, whatever the severity of the single GPUs' problems; an update replaces what the
    // incident was (GPUs, headline, severity), one of an id not seen opens it, a close removes it.
    void incidentsRankFirstAndFollowTheirEvents()
    {
        const TopologyPtr topology = makeTopologyWithDomains();
        const JobsPtr jobs = makeJobs(*topology);
        ProblemBoard board;
        board.add(makeEvent(EventKind::EccDoubleBit, t0, 44, 5, 0, EventSeverity::Critical)); // no job
        board.add(makeEvent(EventKind::NodeDown, t0, -1, 2, 0, EventSeverity::Critical));
        board.add(makeIncident(EventKind::IncidentOpen, t0 + minute, 1, { { 40, 4 } }, QStringLiteral("cooling"),
            QStringLiteral("Cooling unit r01-crah1 failed: 4 GPUs throttling, 1 job"), 0, EventSeverity::Warning));
        auto open = board.open(t0 + 2 * minute, topology.get(), jobs.get());
        QCOMPARE(open.size(), size_t { 3 });
        QCOMPARE(open[0].kind, Problem::Kind::Incident); // a warning incident before two critical GPUs' problems
        QVERIFY(isSharedIncident(open[0]));
        QCOMPARE(open[0].gpus, (std::vector<uint32_t> { 40, 41, 42, 43 }));
        QCOMPARE(open[0].gpusHit, 4U);
        QCOMPARE(open[0].jobIds, std::vector<uint64_t> { 9 }); // the job running on them now
        QCOMPARE(open[0].sinceMs, t0 + minute);
        QCOMPARE(problemSummary(open[0]), QStringLiteral("Cooling unit r01-crah1 failed: 4 GPUs throttling, 1 job"));
        QCOMPARE(incidentCauseLabel(open[0]), QStringLiteral("COOLING"));
        QCOMPARE(incidentCauseLabel(open[1]), QString());
        QCOMPARE(problemPlace(open[0], topology.get()), QStringLiteral("cooling unit r01-crah1"));
        // A domain past the topology's table: named by where its GPUs are.
        QCOMPARE(problemPlace(open[0], testing::makeTopology().get()), QStringLiteral("r01-k03-n02"));

        // The update replaces it: more GPUs, another headline, critical now.
        board.add(makeIncident(EventKind::IncidentUpdate, t0 + minute, 1, { { 32, 16 } }, QStringLiteral("cooling"),
            QStringLiteral("Cooling unit r01-crah1 failed: 16 GPUs throttling, 1 job")));
        // An update of an incident never opened here (the stream began after its open) opens it.
        board.add(makeIncident(EventKind::IncidentUpdate, t0 + 3 * minute, 2, { { 0, 8 } }, QStringLiteral("power"),
            QStringLiteral("PDU r01-k01-a tripped: 1 node down"), 1, EventSeverity::Warning));
        open = board.open(t0 + 3 * minute, topology.get(), jobs.get());
        QCOMPARE(open.size(), size_t { 4 });
        QCOMPARE(open[0].incident->id, uint64_t { 1 }); // critical now: before the warning one
        QCOMPARE(open[0].gpus.size(), size_t { 16 });
        QCOMPARE(open[0].severity, EventSeverity::Critical);
        QVERIFY(problemSummary(open[0]).contains(QLatin1String("16 GPUs")));
        QCOMPARE(open[1].incident->id, uint64_t { 2 });
        QCOMPARE(problemPlace(open[1], topology.get()), QStringLiteral("PDU r01-k01-a"));
        QCOMPARE(board.incidentCount(), size_t { 2 });

        board.add(makeIncident(EventKind::IncidentClose, t0 + 4 * minute, 1, {}));
        board.add(makeIncident(EventKind::IncidentClose, t0 + 4 * minute, 99, {})); // never opened: nothing
        FleetEvent empty = makeEvent(EventKind::IncidentOpen, t0, -1, -1); // no incident with it: dropped
        board.add(empty);
        QCOMPARE(board.dropped(), uint64_t { 1 });
        open = board.open(t0 + 4 * minute, topology.get(), jobs.get());
        QCOMPARE(open.size(), size_t { 3 });
        QCOMPARE(open[0].incident->id, uint64_t { 2 });
        QCOMPARE(open[1].kind, Problem::Kind::NodeDown);
    }

    // A node's or a GPU's own incident (no domain) is a single problem: not first, not counted as an incident, and
    // not listed where the lines of its GPUs already say it (a double-bit ECC error, a node down).
    void aNodesOwnIncidentIsASingleProblem()
    {
        const TopologyPtr topology = makeTopologyWithDomains();
        const JobsPtr jobs = makeJobs(*topology);
        ProblemBoard board;
        board.add(makeEvent(EventKind::EccDoubleBit, t0, 44, 5, 0, EventSeverity::Critical));
        board.add(makeIncident(EventKind::IncidentOpen, t0, 1, { { 44, 1 } }, QStringLiteral("gpu"),
            QStringLiteral("r01-k03-n02 GPU 4: double-bit ECC error"), -1));
        board.add(makeIncident(EventKind::IncidentOpen, t0, 2, { { 8, 8 } }, QStringLiteral("node"),
            QStringLiteral("r01-k01-n02: rail link errors climbing, 1 job slowed"), -1, EventSeverity::Warning));
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0, 46, 5)); // warning, in no job: ranked last
        const auto open = board.open(t0 + minute, topology.get(), jobs.get());
        QCOMPARE(open.size(), size_t { 3 }); // the ECC line (its incident says the same), the node's, the throttle
        QCOMPARE(open[0].kind, Problem::Kind::EccDoubleBit); // critical first: no incident jumps the queue
        QCOMPARE(open[1].kind, Problem::Kind::Incident);
        QVERIFY(!isSharedIncident(open[1]));
        QCOMPARE(open[1].incident->id, uint64_t { 2 });
        QCOMPARE(problemPlace(open[1], topology.get()), QStringLiteral("r01-k01-n02"));
        QCOMPARE(incidentCauseLabel(open[1]), QStringLiteral("NODE"));
        const ProblemTally tally = tallyProblems(open);
        QCOMPARE(tally.incidents, 0U);
        QCOMPARE(tally.others, 3U);
    }

    // The backend's runs are untrusted: past the topology they are cut, never listed; an incident is bounded with the
    // other problems.
    void anIncidentsRunsAreBoundedByTheTopology()
    {
        const TopologyPtr topology = testing::makeTopology();
        ProblemBoard board;
        board.add(makeIncident(EventKind::IncidentOpen, t0, 1, { { 46, 4'000'000'000U }, { 10, 2 } }));
        const auto open = board.open(t0, topology.get(), nullptr);
        QCOMPARE(open.size(), size_t { 1 });
        QCOMPARE(open[0].gpus, (std::vector<uint32_t> { 10, 11, 46, 47 }));
        const auto noTopology = board.open(t0, nullptr, nullptr);
        QVERIFY(noTopology[0].gpus.size() > 1'000'000 && noTopology[0].gpus.size() <= ProblemBoard::maxIncidentGpus);
        QCOMPARE(noTopology[0].gpus.back(), ProblemBoard::maxIncidentGpus - 1);
        QCOMPARE(smallestPlaceHolding(open[0].gpus, *topology).level, Place::Level::Row);
        QCOMPARE(smallestPlaceHolding({ 16, 31 }, *topology).level, Place::Level::Rack);
        QCOMPARE(smallestPlaceHolding({ 16, 17 }, *topology).level, Place::Level::Node);
        QCOMPARE(smallestPlaceHolding({ 5 }, *topology).level, Place::Level::Gpu);
        QCOMPARE(smallestPlaceHolding({ 5, 4000 }, *topology).level, Place::Level::Fleet);
        QCOMPARE(gpuRuns(open[0].gpus), (std::vector<std::pair<uint32_t, uint32_t>> { { 10, 2 }, { 46, 2 } }));
    }

    // The symptoms an incident explains are its evidence: counted on it, not listed again. A symptom of a kind its
    // cause does not produce (a double-bit ECC error under a cooling incident), one that began well before it, or one
    // with GPUs outside it stays a line of its own.
    void symptomsAnIncidentCoversAreNotRepeated()
    {
        const TopologyPtr topology = testing::makeTopology();
        const JobsPtr jobs = makeJobs(*topology);
        ProblemBoard board;
        for (int64_t gpu = 16; gpu < 32; ++gpu) { // rack r01-k02 throttling
            board.add(makeEvent(EventKind::ThermalThrottleStart, t0 + gpu * 1000, gpu, gpu / 8));
        }
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0 - 10 * minute, 33, 4)); // outside the incident
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0 - 10 * minute, 15, 1)); // well before it
        board.add(makeEvent(EventKind::EccDoubleBit, t0 + minute, 20, 2, 0, EventSeverity::Critical)); // its own
        board.add(makeIncident(EventKind::IncidentOpen, t0 + 30'000, 5, { { 8, 24 } }, QStringLiteral("cooling"),
            QStringLiteral("Cooling unit r01-crah1 failed: 24 GPUs throttling, 1 job")));
        board.add(makeIncident(EventKind::IncidentOpen, t0, 6, { { 40, 8 } }, QStringLiteral("power")));
        board.add(makeEvent(EventKind::NodeDown, t0, -1, 5, 0, EventSeverity::Critical)); // GPUs 40-47: the PDU's
        const auto open = board.open(t0 + 2 * minute, topology.get(), jobs.get());
        QCOMPARE(open[0].kind, Problem::Kind::Incident);
        QCOMPARE(open[1].kind, Problem::Kind::Incident);
        const Problem &cooling = open[0].incident->id == 5 ? open[0] : open[1];
        const Problem &power = open[0].incident->id == 5 ? open[1] : open[0];
        QCOMPARE(cooling.covered, 16U);
        QCOMPARE(power.covered, 1U);
        QStringList rest;
        for (size_t i = 2; i < open.size(); ++i) {
            rest << QStringLiteral("%1 %2").arg(describe(open[i].kind)).arg(open[i].gpus.size());
        }
        rest.sort();
        QCOMPARE(rest,
            (QStringList { QStringLiteral("ECC double-bit 1"), QStringLiteral("Thermal throttling 1"),
                QStringLiteral("Thermal throttling 1") }));
        // Without the incident, the same symptoms are listed: the rack's throttling and the node down.
        board.add(makeIncident(EventKind::IncidentClose, t0 + 3 * minute, 5, {}));
        board.add(makeIncident(EventKind::IncidentClose, t0 + 3 * minute, 6, {}));
        const auto after = board.open(t0 + 3 * minute, topology.get(), jobs.get());
        QVERIFY(std::any_of(
            after.begin(), after.end(), [](const Problem &p) { return p.kind == Problem::Kind::NodeDown; }));
        QVERIFY(std::any_of(after.begin(), after.end(), [](const Problem &p) { return p.rack == 1; }));
    }

    // A symptom inside an incident's domain is its evidence before the incident's next update lists its GPU (the
    // backend joins it); inside a domain under it too (a rack's PDU on the busway that failed).
    void symptomsInsideAnIncidentsDomainAreItsEvidence()
    {
        const TopologyPtr topology = makeTopologyWithDomains();
        ProblemBoard board;
        board.add(makeIncident(EventKind::IncidentOpen, t0, 1, { { 16, 4 } }, QStringLiteral("cooling"),
            QStringLiteral("Cooling unit r01-crah1 failing"), 0));
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0 + minute, 25, 3)); // rack r01-k02: unit 0's
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0 + minute, 35, 4)); // rack r01-k03: not its
        board.add(makeIncident(EventKind::IncidentOpen, t0, 2, { { 0, 2 } }, QStringLiteral("power"),
            QStringLiteral("Busway r01-bus-a lost power"), 2));
        board.add(makeEvent(EventKind::NodeDown, t0, -1, 1, 0, EventSeverity::Critical)); // under PDU 1, on busway 2
        const auto open = board.open(t0 + 2 * minute, topology.get(), nullptr);
        QCOMPARE(open.size(), size_t { 3 });
        QVERIFY(isSharedIncident(open[0]) && isSharedIncident(open[1]));
        const Problem &cooling = open[0].incident->id == 1 ? open[0] : open[1];
        const Problem &power = open[0].incident->id == 1 ? open[1] : open[0];
        QCOMPARE(cooling.covered, 1U);
        QCOMPARE(power.covered, 1U);
        QCOMPARE(open[2].gpus, std::vector<uint32_t> { 35 });
        QCOMPARE(problemPlace(power, topology.get()), QStringLiteral("busway r01-bus-a"));
    }

    // Several GPUs of one job with the same kind of problem: one line for the job, with the GPUs behind it.
    void repeatsAreFoldedByJob()
    {
        const TopologyPtr topology = testing::makeTopology();
        const JobsPtr jobs = makeJobs(*topology);
        ProblemBoard board;
        for (int64_t gpu : { 3, 12, 27 }) { // three GPUs of pretrain-70b (0-31), on three nodes
            board.add(makeEvent(EventKind::EccDoubleBit, t0 + gpu * 1000, gpu, gpu / 8, 0, EventSeverity::Critical));
        }
        board.add(makeEvent(EventKind::EccDoubleBit, t0, 41, 5, 0, EventSeverity::Critical)); // eval: alone
        board.add(makeEvent(EventKind::EccDoubleBit, t0, 45, 5, 0, EventSeverity::Critical)); // in no job
        board.add(makeEvent(EventKind::EccDoubleBit, t0, 46, 5, 0, EventSeverity::Critical)); // in no job
        board.add(makeEvent(EventKind::Xid, t0, 4, 0, 79, EventSeverity::Critical)); // another kind: its own line
        board.add(makeEvent(EventKind::Xid, t0, 5, 0, 48, EventSeverity::Critical));
        board.add(makeEvent(EventKind::Xid, t0, 5, 0, 79, EventSeverity::Critical));
        const auto open = board.open(t0 + minute, topology.get(), jobs.get());
        QCOMPARE(open.size(), size_t { 5 });
        const auto ecc = std::find_if(open.begin(), open.end(),
            [](const Problem &p) { return p.kind == Problem::Kind::EccDoubleBit && p.foldedJob != 0; });
        QVERIFY(ecc != open.end());
        QCOMPARE(ecc->foldedJob, uint64_t { 7 });
        QCOMPARE(ecc->gpus, (std::vector<uint32_t> { 3, 12, 27 }));
        QCOMPARE(ecc->sinceMs, t0 + 3000);
        QCOMPARE(problemPlace(*ecc, topology.get()), QStringLiteral("job pretrain-70b"));
        QCOMPARE(problemSummary(*ecc), QStringLiteral("3 GPUs with double-bit ECC errors"));
        const auto xid = std::find_if(
            open.begin(), open.end(), [](const Problem &p) { return p.kind == Problem::Kind::XidBurst; });
        QVERIFY(xid != open.end());
        QCOMPARE(xid->foldedJob, uint64_t { 7 });
        QCOMPARE(xid->xids, (std::vector<std::pair<uint32_t, uint32_t>> { { 79, 2 }, { 48, 1 } }));
        QVERIFY2(problemSummary(*xid).startsWith(QLatin1String("2 GPUs with XID bursts: 79 (")),
            qPrintable(problemSummary(*xid)));
        // One GPU of a job, and GPUs in no job, stay lines of their own.
        QCOMPARE(std::count_if(open.begin(), open.end(), [](const Problem &p) { return p.foldedJob == 0; }), 3);
    }

    // The page's count and the health strip say the same thing from one tally.
    void theTallySaysWhatItCounts()
    {
        const TopologyPtr topology = testing::makeTopology();
        ProblemBoard board;
        QCOMPARE(tallyText(tallyProblems(board.open(t0, topology.get(), nullptr))), QStringLiteral("No open problems"));
        board.add(makeEvent(EventKind::EccDoubleBit, t0, 44, 5, 0, EventSeverity::Critical));
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0, 3, 0));
        QCOMPARE(tallyText(tallyProblems(board.open(t0, topology.get(), nullptr))),
            QStringLiteral("2 problems (1 critical)"));
        // The wall's banner says nothing of single problems; an open incident it names first, with what else is open.
        EventSeverity severity = EventSeverity::Info;
        const auto singles = board.open(t0, topology.get(), nullptr);
        QCOMPARE(leadIncidentLine(singles, tallyProblems(singles), &severity), QString());
        board.add(makeIncident(EventKind::IncidentOpen, t0, 1, { { 16, 8 } }));
        const auto open = board.open(t0, topology.get(), nullptr);
        const ProblemTally tally = tallyProblems(open);
        QCOMPARE(tally.incidents, 1U);
        QCOMPARE(tally.others, 2U);
        QCOMPARE(tallyText(tally), QStringLiteral("1 incident · 2 other problems (2 critical)"));
        QCOMPARE(leadIncidentLine(open, tally, &severity), QStringLiteral("COOLING · Incident 1 · 2 other problems"));
        QCOMPARE(severity, EventSeverity::Critical);
        board.add(makeIncident(EventKind::IncidentOpen, t0, 2, { { 32, 8 } }, QStringLiteral("network"),
            QStringLiteral("Leaf su01-l0 down"), 1, EventSeverity::Warning));
        const auto two = board.open(t0, topology.get(), nullptr);
        QCOMPARE(leadIncidentLine(two, tallyProblems(two), &severity),
            QStringLiteral("COOLING · Incident 1 · 1 more incident · 2 other problems"));
    }

    // The wall's page: a row per problem in rank order, where first, then what, since when and the jobs hit.
    // A backend sending events for ever more places, or ever more XID codes, cannot grow the board without end.
    void theBoardIsBounded()
    {
        ProblemBoard board;
        for (int64_t gpu = 0; gpu < int64_t { ProblemBoard::maxProblems } + 1000; ++gpu) {
            board.add(makeEvent(EventKind::ThermalThrottleStart, t0, gpu, -1));
        }
        QCOMPARE(board.open(t0, nullptr, nullptr).size(), ProblemBoard::maxProblems);
        QCOMPARE(board.dropped(), uint64_t { 1000 });
        board.add(makeIncident(EventKind::IncidentOpen, t0, 1, { { 0, 8 } })); // incidents share the bound
        QCOMPARE(board.incidentCount(), size_t { 0 });
        QCOMPARE(board.dropped(), uint64_t { 1001 });
        board.clear();
        for (uint32_t xid = 1; xid <= 100; ++xid) {
            board.add(makeEvent(EventKind::Xid, t0, 7, 0, xid));
        }
        const auto open = board.open(t0, nullptr, nullptr);
        QCOMPARE(open.size(), size_t { 1 });
        QCOMPARE(open[0].xids.size(), ProblemBoard::maxXidCodes);
        QCOMPARE(board.dropped(), uint64_t { 100 - ProblemBoard::maxXidCodes });
    }

    void theWallsBoard()
    {
        const TopologyPtr topology = testing::makeTopology();
        const JobsPtr jobs = makeJobs(*topology);
        ProblemBoard board;
        board.add(makeEvent(EventKind::Xid, t0, 3, 0, 79, EventSeverity::Critical));
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0, 41, 5));
        ProblemsBoard wall;
        wall.setProblems(board.open(t0 + minute, topology.get(), jobs.get()), topology, jobs, t0 + minute);
        const QStringList rows = wall.rowTexts();
        QCOMPARE(rows.size(), 2);
        QVERIFY2(rows[0].startsWith(QStringLiteral("r01-k01-n01 GPU 3  XID burst: 79")), qPrintable(rows[0]));
        QVERIFY2(
            rows[0].contains(QStringLiteral("(1 min)")) && rows[0].endsWith(QStringLiteral("pretrain-70b · 32 GPUs")),
            qPrintable(rows[0]));
        QVERIFY2(rows[1].endsWith(QStringLiteral("eval · 4 GPUs")), qPrintable(rows[1]));
        QCOMPARE(wall.criticalCount(), 1);
        QCOMPARE(wall.headline(), QStringLiteral("2 problems (1 critical)"));

        // An incident: first, its cause and headline, then its evidence; the headline counts it apart.
        const TopologyPtr withDomains = makeTopologyWithDomains();
        board.add(makeIncident(EventKind::IncidentOpen, t0, 4, { { 16, 16 } }, QStringLiteral("cooling"),
            QStringLiteral("Cooling unit r01-crah1 failing: 16 GPUs throttling, 1 job slowed"), 0,
            EventSeverity::Warning));
        wall.setProblems(board.open(t0 + minute, withDomains.get(), jobs.get()), withDomains, jobs, t0 + minute);
        const QStringList withIncident = wall.rowTexts();
        QCOMPARE(withIncident.size(), 3);
        QVERIFY2(withIncident[0].startsWith(QStringLiteral(
                     "COOLING · Cooling unit r01-crah1 failing: 16 GPUs throttling, 1 job slowed  8 of its GPUs")),
            qPrintable(withIncident[0]));
        QCOMPARE(wall.headline(), QStringLiteral("1 incident · 2 other problems (1 critical)"));
        QVERIFY(!wall.grab().isNull());
    }

    // The desk's dock at its default width (330 px, MainWindow's resizeDocks) reads whole: the entries wrap, each row
    // as tall as its lines, "open for" as wide as its text, nothing past the viewport; an incident's entry says its
    // cause, headline, evidence, GPUs and jobs.
    void theDockReadsWholeAtItsDefaultWidth()
    {
        const TopologyPtr topology = makeTopologyWithDomains();
        auto jobs = std::const_pointer_cast<JobList>(makeJobs(*topology));
        jobs->jobs[0].name = QStringLiteral("pretrain-llama-70b-long-context-run-3");
        jobs->jobs[1].name = QStringLiteral("eval-suite-1");
        ProblemBoard board;
        board.add(makeIncident(EventKind::IncidentOpen, t0, 1, { { 16, 16 }, { 40, 4 } }, QStringLiteral("cooling"),
            QStringLiteral("Cooling unit r01-crah1 failing: 20 GPUs throttling, 2 jobs slowed"), 0));
        board.add(makeEvent(EventKind::Xid, t0 + 74 * minute, 3, 0, 48, EventSeverity::Critical));
        board.add(makeEvent(EventKind::Xid, t0 + 74 * minute, 3, 0, 79, EventSeverity::Critical));
        board.add(makeEvent(EventKind::Xid, t0 + 74 * minute, 3, 0, 13, EventSeverity::Critical));
        board.add(makeEvent(EventKind::EccDoubleBit, t0, 41, 5, 0, EventSeverity::Critical));
        board.add(makeEvent(EventKind::EccDoubleBit, t0, 42, 5, 0, EventSeverity::Critical));
        board.add(makeEvent(EventKind::NodeDown, t0, -1, 0, 0, EventSeverity::Critical));
        ConsoleSession session(ConsoleSession::Options {});
        ProblemsPage page(&session, ProblemsPage::Look::Desk);
        page.resize(330, 700);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        ProblemsModel *model = page.model();
        const int64_t now = t0 + 75 * minute;
        const std::vector<Problem> open = board.open(now, topology.get(), jobs.get());
        // The double-bit ECC errors of eval-suite-1 under the cooling incident: a GPU's own fault, folded by job.
        QVERIFY(std::any_of(open.begin(), open.end(), [](const Problem &p) { return p.foldedJob == 9; }));
        model->setProblems(open, topology, jobs, now);
        page.fitRows();
        QCOMPARE(model->rowCount(), 4);
        auto *table = page.findChild<QTableView *>();
        QVERIFY(table != nullptr);
        QVERIFY(table->wordWrap());
        QCOMPARE(table->textElideMode(), Qt::ElideNone);
        int used = 0;
        for (int c = 0; c < ProblemsModel::ColumnCount; ++c) {
            used += table->isColumnHidden(c) ? 0 : table->columnWidth(c);
        }
        QVERIFY2(used <= table->viewport()->width(),
            qPrintable(QStringLiteral("%1 > %2").arg(used).arg(table->viewport()->width())));
        const QFontMetrics metrics(table->font());
        const int margins = table->iconSize().width() + 6 * table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin);
        for (int row = 0; row < model->rowCount(); ++row) {
            const QString entry = model->index(row, ProblemsModel::EntryColumn).data().toString();
            const QRect cell = table->visualRect(model->index(row, ProblemsModel::EntryColumn));
            const QRect needed
                = metrics.boundingRect(QRect(0, 0, cell.width() - margins, 10'000), Qt::TextWordWrap, entry);
            QVERIFY2(needed.height() <= table->rowHeight(row),
                qPrintable(QStringLiteral("row %1: %2 px of text in %3 px: %4")
                               .arg(row)
                               .arg(needed.height())
                               .arg(table->rowHeight(row))
                               .arg(entry)));
            const QString since = model->index(row, ProblemsModel::SinceColumn).data().toString();
            QVERIFY2(
                metrics.horizontalAdvance(since) < table->columnWidth(ProblemsModel::SinceColumn), qPrintable(since));
        }
        QCOMPARE(model->index(0, ProblemsModel::SinceColumn).data().toString(), QStringLiteral("1 h 15 min"));
        const QStringList incident
            = model->index(0, ProblemsModel::EntryColumn).data().toString().split(QLatin1Char('\n'));
        QCOMPARE(incident.value(0), QStringLiteral("COOLING · cooling unit r01-crah1"));
        QCOMPARE(
            incident.value(1), QStringLiteral("Cooling unit r01-crah1 failing: 20 GPUs throttling, 2 jobs slowed"));
        QVERIFY2(incident.value(2).startsWith(QLatin1String("8 of its GPUs began throttling")),
            qPrintable(incident.value(2)));
        QCOMPARE(incident.value(3),
            QStringLiteral("20 GPUs hit · jobs: pretrain-llama-70b-long-context-run-3, eval-suite-1 (36 GPUs)"));
    }

    void theTableOverThem()
    {
        const TopologyPtr topology = testing::makeTopology();
        const JobsPtr jobs = makeJobs(*topology);
        ProblemsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        ProblemBoard board;
        board.add(makeEvent(EventKind::Xid, t0, 3, 0, 79, EventSeverity::Critical));
        board.add(makeEvent(EventKind::ThermalThrottleStart, t0, 41, 5));
        board.add(makeEvent(EventKind::NodeDown, t0, -1, 3, 0, EventSeverity::Critical));
        const int64_t now = t0 + 2 * minute;
        model.setProblems(board.open(now, topology.get(), jobs.get()), topology, jobs, now);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), int { ProblemsModel::ColumnCount });
        const auto text = [&model](int row, int column) { return model.index(row, column).data().toString(); };
        QCOMPARE(text(0, ProblemsModel::SeverityColumn), QStringLiteral("critical"));
        QCOMPARE(text(0, ProblemsModel::JobsColumn), QStringLiteral("pretrain-70b"));
        QCOMPARE(text(0, ProblemsModel::BlastColumn), QStringLiteral("32"));
        QCOMPARE(text(0, ProblemsModel::SinceColumn), QStringLiteral("2 min"));
        QCOMPARE(text(2, ProblemsModel::JobsColumn), QStringLiteral("eval"));
        const auto key = model.problemAt(2)->key();

        model.setKindFilter({ Problem::Kind::ThermalThrottle });
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.shownCount(), 1);
        QCOMPARE(model.totalCount(), 3);
        QCOMPARE(model.rowOf(key), 0);
        model.setKindFilter({});
        QCOMPARE(model.rowCount(), 3);
        model.setProblems({}, topology, jobs, now);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.rowOf(key), -1);
    }
};

QTEST_MAIN(TestProblems)
#include "tst_problems.moc"
