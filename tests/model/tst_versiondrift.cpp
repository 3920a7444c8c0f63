// SPDX-License-Identifier: Apache-2.0
// Driver and VBIOS drift: the versions, the GPUs off their job's or rack's majority, and the problems they make.
#include "model/problems.h"
#include "model/versiondrift.h"
#include "testtopology.h"

#include <QTest>

#include <cmath>

using namespace fleetscope;

namespace {

const QString oldDriver = QStringLiteral("550.54.15");
const QString newDriver = QStringLiteral("550.127.08");
const QString oldBios = QStringLiteral("96.00.99.00.01");
const QString newBios = QStringLiteral("96.00.A5.00.01");

// The test topology (3 racks of 2 nodes of 8 GPUs) with every node on the old versions.
std::shared_ptr<Topology> uniform()
{
    auto t = std::const_pointer_cast<Topology>(testing::makeTopology());
    for (auto &node : t->nodes) {
        node.driverVersion = oldDriver;
        node.firmwareVersion = oldBios;
    }
    return t;
}

JobList jobsOf(const Topology &t, const std::vector<std::pair<uint32_t, uint32_t>> &ranges)
{
    JobList jobs;
    jobs.topologyGeneration = t.generation;
    jobs.runningJobOfGpu.assign(t.gpuCount, -1);
    for (const auto &[first, count] : ranges) {
        Job job;
        job.id = 100 + jobs.jobs.size();
        job.name = QStringLiteral("job-%1").arg(job.id);
        job.startTimeMs = 1000;
        for (uint32_t g = first; g < first + count; ++g) {
            job.gpus.push_back(g);
            jobs.runningJobOfGpu[g] = static_cast<int32_t>(jobs.jobs.size());
        }
        jobs.jobs.push_back(job);
    }
    return jobs;
}

} // namespace

class TestVersionDrift : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // One version everywhere: one category, nothing flagged, no problem.
    void aUniformFleetHasNoDrift()
    {
        const auto t = uniform();
        const JobList jobs = jobsOf(*t, { { 0, 32 } });
        const VersionDrift drift = computeVersionDrift(*t, &jobs);
        QVERIFY(drift.isUniform());
        QCOMPARE(drift.versions.size(), size_t { 1 });
        QCOMPARE(drift.versions[0].gpus, 48U);
        QVERIFY(drift.flaggedGpus.empty());
        QVERIFY(driftProblems(drift).empty());
        const std::vector<float> plane = drift.plane(*t);
        QVERIFY(std::all_of(plane.begin(), plane.end(), [](float v) { return v == 0.0F; }));
        QCOMPARE(drift.metric().categories, QStringList { QStringLiteral("driver 550.54.15 · VBIOS 96.00.99.00.01") });
    }

    // A rack half way through a rollout (node 2 of rack 2 updated, node 3 not) and a job across it: the job's GPUs on
    // the minority version are flagged, and so are the rack's. The categories are most GPUs first.
    void aJobAcrossARolloutIsFlagged()
    {
        auto t = uniform();
        t->nodes[2].driverVersion = newDriver;
        t->nodes[2].firmwareVersion = newBios;
        const JobList jobs = jobsOf(*t, { { 0, 24 }, { 32, 16 } }); // nodes 0-2 (rack 1 and half of rack 2), rack 3
        const VersionDrift drift = computeVersionDrift(*t, &jobs);
        QCOMPARE(drift.versions.size(), size_t { 2 });
        QCOMPARE(drift.versions[0].driver, oldDriver);
        QCOMPARE(drift.versions[0].gpus, 40U);
        QCOMPARE(drift.versions[1].label(), QStringLiteral("driver 550.127.08 · VBIOS 96.00.A5.00.01"));
        QCOMPARE(drift.versions[1].gpus, 8U);
        // The job (16 old, 8 new) and rack 2 (8 and 8: the tie goes to the fleet's more common version).
        QCOMPARE(drift.groups.size(), size_t { 2 });
        QCOMPARE(drift.groups[0].jobId, uint64_t { 100 });
        QCOMPARE(drift.groups[0].gpus, 24U);
        QCOMPARE(drift.groups[0].majority, 0);
        QCOMPARE(drift.groups[0].offGpus.size(), size_t { 8 });
        QCOMPARE(drift.groups[1].rack, int64_t { 1 });
        QCOMPARE(drift.groups[1].offGpus.front(), 16U);
        QCOMPARE(drift.flaggedGpus.size(), size_t { 8 });
        QCOMPARE(drift.flaggedGpus.front(), 16U);
        QCOMPARE(drift.flaggedGpus.back(), 23U);
        const std::vector<float> plane = drift.plane(*t);
        QCOMPARE(plane[15], 0.0F);
        QCOMPARE(plane[16], 1.0F);
        QCOMPARE(plane[24], 0.0F);

        std::vector<Problem> problems = driftProblems(drift);
        rankProblems(&problems, &jobs);
        QCOMPARE(problems.size(), size_t { 2 });
        // The job's first (a warning), blast radius its 24 GPUs; the rack's only information.
        QCOMPARE(problems[0].kind, Problem::Kind::Drift);
        QCOMPARE(problems[0].severity, EventSeverity::Warning);
        QCOMPARE(problems[0].driftJob, uint64_t { 100 });
        QCOMPARE(problems[0].blastGpus, 24U);
        QCOMPARE(problems[0].jobIds, std::vector<uint64_t> { 100 });
        QCOMPARE(problems[0].sinceMs, int64_t { 1000 });
        QCOMPARE(problemSummary(problems[0]),
            QStringLiteral("job job-100: 8 of 24 GPUs on driver 550.127.08 · VBIOS 96.00.A5.00.01; the rest on "
                           "driver 550.54.15 · VBIOS 96.00.99.00.01"));
        QCOMPARE(problemPlace(problems[0], t.get()), QStringLiteral("rack r01-k02 (8 GPUs)"));
        QCOMPARE(problems[1].severity, EventSeverity::Info);
        QCOMPARE(problems[1].rack, int64_t { 1 });
        QVERIFY(problems[0].key() != problems[1].key());
    }

    // A node the rollout missed: only its rack notices; a job wholly on it is uniform.
    void aNodeTheRolloutMissedIsItsRacks()
    {
        auto t = uniform();
        t->nodes[5].driverVersion = QStringLiteral("535.183.01");
        const JobList jobs = jobsOf(*t, { { 40, 8 } });
        const VersionDrift drift = computeVersionDrift(*t, &jobs);
        QCOMPARE(drift.groups.size(), size_t { 1 });
        QCOMPARE(drift.groups[0].rack, int64_t { 2 });
        QCOMPARE(drift.versions[1].label(), QStringLiteral("driver 535.183.01 · VBIOS 96.00.99.00.01"));
        QCOMPARE(drift.flaggedGpus.size(), size_t { 8 });
        QCOMPARE(drift.flaggedGpus.front(), 40U);
    }

    // The backend is untrusted: jobs of another generation are ignored, GPU indices past the fleet skipped; a node
    // with no versions reported is "unknown"; more versions than colours share the last category.
    void untrustedInputsAreChecked()
    {
        auto t = uniform();
        t->nodes[1].driverVersion.clear();
        t->nodes[1].firmwareVersion.clear();
        JobList jobs = jobsOf(*t, { { 0, 16 } });
        jobs.jobs[0].gpus.push_back(4'000'000'000U);
        VersionDrift drift = computeVersionDrift(*t, &jobs);
        QCOMPARE(drift.versions[1].label(), QStringLiteral("unknown"));
        QCOMPARE(drift.groups[0].gpus, 16U); // the index past the fleet is not counted
        jobs.topologyGeneration = t->generation + 1;
        drift = computeVersionDrift(*t, &jobs);
        QCOMPARE(drift.groups.size(), size_t { 1 }); // the rack's only
        QCOMPARE(drift.groups[0].jobId, uint64_t { 0 });

        for (size_t k = 0; k < t->nodes.size(); ++k) {
            t->nodes[k].driverVersion = QStringLiteral("1.%1").arg(k);
        }
        drift = computeVersionDrift(*t, nullptr);
        QCOMPARE(drift.versions.size(), size_t { 6 });
        QCOMPARE(drift.categoryNames().size(), 6);
        // A plane for another generation is no data, not garbage.
        auto other = std::make_shared<Topology>(*t);
        other->generation += 1;
        const std::vector<float> plane = drift.plane(*other);
        QVERIFY(std::all_of(plane.begin(), plane.end(), [](float v) { return std::isnan(v); }));
    }

    void manyVersionsShareTheLastCategory()
    {
        // One rack of 12 single-GPU nodes, each on its own driver.
        Topology big;
        big.generation = 1;
        big.racks.push_back({ QStringLiteral("r01-k01"), 0, 0, 0, 12, false });
        for (uint32_t k = 0; k < 12; ++k) {
            big.nodes.push_back(
                { QStringLiteral("n%1").arg(k), QString(), QStringLiteral("9.%1").arg(k), QString(), 0, k, 1 });
            big.nodeOfGpu.push_back(k);
        }
        big.gpuCount = 12;
        const VersionDrift drift = computeVersionDrift(big, nullptr);
        QCOMPARE(drift.versions.size(), size_t { 12 });
        const QStringList names = drift.categoryNames();
        QCOMPARE(names.size(), VersionDrift::maxCategories);
        QCOMPARE(names.back(), QStringLiteral("5 other versions"));
        const std::vector<float> plane = drift.plane(big);
        QCOMPARE(*std::max_element(plane.begin(), plane.end()), float(VersionDrift::maxCategories - 1));
        QCOMPARE(drift.metric().rangeMax, float(VersionDrift::maxCategories - 1));
    }
};

QTEST_GUILESS_MAIN(TestVersionDrift)
#include "tst_versiondrift.moc"
