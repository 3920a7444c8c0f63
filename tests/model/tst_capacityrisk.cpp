// SPDX-License-Identifier: Apache-2.0
// Capacity at risk: which racks are in trouble from the health bytes, every GPU of those racks counted, the running
// jobs with GPUs there, schedulable units and the healthy GPUs stranded in them; frames and job lists of another
// generation count nothing. The summary page showing it: tests/widgets/summary/tst_summaryrepeatoffenders.cpp.
#include "model/capacityrisk.h"
#include "tests/model/testtopology.h"

#include <QTest>

using namespace fleetscope;
using fleetscope::testing::makeTopology;

namespace {
Job job(uint64_t id, std::vector<uint32_t> gpus, bool running = true)
{
    Job j;
    j.id = id;
    j.name = QStringLiteral("job-%1").arg(id);
    j.owner = QStringLiteral("team");
    j.gpus = std::move(gpus);
    j.endTimeMs = running ? 0 : 1;
    return j;
}
} // namespace

class TestCapacityRisk : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void racksInTroubleAndTheirJobs()
    {
        const TopologyPtr topology = makeTopology();
        Frame frame;
        frame.topologyGeneration = topology->generation;
        frame.health.assign(topology->gpuCount, health::Ok);
        // Rack 1: a GPU throttling while warm (thermal) and one warm without throttling (not trouble on its own).
        frame.health[3] = health::Warning | health::throttledFlag;
        frame.health[4] = health::Warning;
        // Rack 3: an XID (hardware) and an offline GPU (hardware).
        frame.health[33] = health::Ok | health::xidFlag;
        frame.health[40] = health::Offline;
        // Rack 2: throttling without being warm is power capping, not trouble.
        frame.health[20] = health::Ok | health::throttledFlag;

        auto jobs = std::make_shared<JobList>();
        jobs->topologyGeneration = topology->generation;
        jobs->jobs = { job(1, { 0, 1, 2, 16, 17 }), job(2, { 18, 19 }), job(3, { 32, 33, 34, 35, 40 }),
            job(4, { 5, 6 }, false) };

        const CapacityAtRisk risk = computeCapacityAtRisk(*topology, frame, jobs.get());
        QCOMPARE(risk.fleetGpus, 48U);
        QCOMPARE(risk.gpusAtRisk, 32U); // racks 1 and 3, 16 GPUs each
        QCOMPARE(risk.racks.size(), size_t(2));
        QCOMPARE(risk.racks[0].rack, 2U); // two troubled GPUs first
        QCOMPARE(risk.racks[0].hardware, 2U);
        QCOMPARE(risk.racks[0].thermal, 0U);
        QCOMPARE(risk.racks[1].rack, 0U);
        QCOMPARE(risk.racks[1].thermal, 1U);
        QCOMPARE(risk.racks[1].hardware, 0U);
        // Job 3 (5 GPUs in rack 3), job 1 (3 of 5 in rack 1); job 2 only in rack 2; job 4 has ended.
        QCOMPARE(risk.jobs.size(), size_t(2));
        QCOMPARE(risk.jobs[0].id, 3U);
        QCOMPARE(risk.jobs[0].gpusAtRisk, 5U);
        QCOMPARE(risk.jobs[1].id, 1U);
        QCOMPARE(risk.jobs[1].gpus, 5U);
        QCOMPARE(risk.jobs[1].gpusAtRisk, 3U);
        // Schedulable units (HGX: the node): nodes 0 (GPUs 3, 4), 4 (33) and 5 (40) are not fully healthy (node 2's
        // GPU 20, throttling at OK, is); their healthy GPUs (6, 7 and 7) are stranded.
        QCOMPARE(risk.units.nodes, 6U);
        QCOMPARE(risk.units.healthyNodes, 3U);
        QCOMPARE(risk.units.racks, 0U);
        QCOMPARE(risk.units.strandedGpus, 6U + 7U + 7U);
        QCOMPARE(risk.units.gpusInHealthy, 24U);
    }

    // An NVL72 fleet's unit is the rack: one GPU down strands the other 71 (here the rack's other 15).
    void nvlinkRacksAreOneUnit()
    {
        auto topology = std::make_shared<Topology>(*makeTopology());
        for (auto &rack : topology->racks) {
            rack.nvlinkDomain = true;
        }
        Frame frame;
        frame.topologyGeneration = topology->generation;
        frame.health.assign(topology->gpuCount, health::Ok);
        frame.health[17] = health::Ok | health::eccFlag;
        const CapacityAtRisk risk = computeCapacityAtRisk(*topology, frame, nullptr);
        QCOMPARE(risk.units.nodes, 0U);
        QCOMPARE(risk.units.racks, 3U);
        QCOMPARE(risk.units.healthyRacks, 2U);
        QCOMPARE(risk.units.strandedGpus, 15U);
    }

    void anotherGenerationCountsNothing()
    {
        const TopologyPtr topology = makeTopology();
        Frame frame;
        frame.topologyGeneration = topology->generation + 1;
        frame.health.assign(topology->gpuCount, health::Critical);
        QCOMPARE(computeCapacityAtRisk(*topology, frame, nullptr).gpusAtRisk, 0U);
        frame.topologyGeneration = topology->generation;
        frame.health.resize(10); // a frame of the wrong size is not read out of bounds
        QCOMPARE(computeCapacityAtRisk(*topology, frame, nullptr).gpusAtRisk, 0U);
        frame.health.assign(topology->gpuCount, health::Ok);
        frame.health[0] = health::Critical;
        JobList jobs;
        jobs.topologyGeneration = 99;
        jobs.jobs = { job(1, { 0 }) };
        const auto risk = computeCapacityAtRisk(*topology, frame, &jobs);
        QCOMPARE(risk.gpusAtRisk, 16U);
        QVERIFY(risk.jobs.empty());
    }
};

QTEST_GUILESS_MAIN(TestCapacityRisk)
#include "tst_capacityrisk.moc"
