// SPDX-License-Identifier: Apache-2.0
// What is wrong right now: events folded into problems (XID bursts split by three quiet minutes, throttles and nodes
// down from start to end, double-bit ECC kept), ranked by severity and by the GPUs of the jobs they hit, and the table
// over them checked by QAbstractItemModelTester.
#include "app/problemsmodel.h"
#include "model/problems.h"
#include "tests/model/testtopology.h"
#include "widgets/wall/problemsboard.h"

#include <QAbstractItemModelTester>
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
        QVERIFY(text(0, ProblemsModel::SinceColumn).endsWith(QLatin1String("(2 min)")));
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
