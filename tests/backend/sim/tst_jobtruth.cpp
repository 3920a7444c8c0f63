// SPDX-License-Identifier: Apache-2.0
// The simulator's stragglers and restarts, and its ground truth of where each job's GPU-time went (JobTruth): checked
// from the frames it produces and against a twin simulator without the fault.
#include "sim/simulatedfleet.h"
#include "sim/simulator.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

using namespace fleetscope::backend;

namespace {
struct Range
{
    uint32_t first = 0;
    uint32_t count = 0;
};

Range gpusOf(const Simulator &sim, const Simulator::Job &job)
{
    const auto &shape = sim.shape();
    const uint32_t first = shape.nodes[job.firstNode].firstGpu;
    const auto &last = shape.nodes[job.firstNode + job.nodeCount - 1];
    return { first, last.firstGpu + last.gpuCount - first };
}

const Simulator::Job *jobById(const Simulator &sim, uint64_t id)
{
    for (const auto &job : sim.jobs()) {
        if (job.id == id) {
            return &job;
        }
    }
    return nullptr;
}

const Simulator::Job *jobOfGpu(const Simulator &sim, uint32_t gpu)
{
    for (const auto &job : sim.jobs()) {
        const auto r = gpusOf(sim, job);
        if (gpu >= r.first && gpu < r.first + r.count) {
            return &job;
        }
    }
    return nullptr;
}

float plane(const Frame &f, MetricId id, uint32_t gpu)
{
    return f.planes[static_cast<size_t>(id)][gpu];
}

double median(std::vector<float> v)
{
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

// productive + every loss == GPU-time, and each part is itself consistent.
void checkBalanced(const JobTruth::Account &a)
{
    const double tolerance = 1e-9 * std::max(1.0, a.gpuSeconds);
    QVERIFY2(std::abs(a.productive + a.lost() - a.gpuSeconds) <= tolerance,
        qPrintable(QStringLiteral("job %1").arg(a.jobId)));
    QVERIFY(a.productive >= -tolerance);
    QVERIFY(a.checkpoint >= 0 && a.stall >= 0 && a.restart >= 0 && a.straggler >= 0);
    QVERIFY(std::abs(a.restart - a.restartLoading - a.rework) <= tolerance);
    double stalls = 0;
    for (const auto &s : a.stalls) {
        stalls += s.gpuSeconds;
    }
    double stragglers = 0;
    for (const auto &s : a.stragglers) {
        stragglers += s.gpuSeconds;
    }
    QVERIFY(std::abs(stalls - a.stall) <= tolerance);
    QVERIFY(std::abs(stragglers - a.straggler) <= tolerance);
}
} // namespace

class TestJobTruth : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void theScenarioIsNamed()
    {
        QCOMPARE(Scenario::byName("straggler").value_or(Scenario::Kind::None), Scenario::Kind::Straggler);
    }

    // One GPU of the largest job loses 20 % of its clock at the onset: it runs slower and draws less than its peers,
    // and the whole job's utilisation drops by the same factor (against a twin fleet without the scenario).
    void aStragglerSlowsItsWholeJob()
    {
        Simulator sim(10240, 1, 5.0, Scenario::Kind::Straggler);
        Simulator twin(10240, 1, 5.0, Scenario::Kind::None);
        while (sim.nowSeconds() < Scenario::onsetSeconds) {
            sim.step();
            twin.step();
        }
        QVERIFY(sim.stagedStraggler() >= 0);
        const auto gpu = static_cast<uint32_t>(sim.stagedStraggler());
        const auto *job = jobOfGpu(sim, gpu);
        QVERIFY(job != nullptr);
        for (const auto &other : sim.jobs()) {
            QVERIFY(other.nodeCount <= job->nodeCount);
        }
        const uint64_t jobId = job->id;
        const auto range = gpusOf(sim, *job);
        QVERIFY(range.count >= 16);

        double slowed = 0, plain = 0;
        int computing = 0;
        while (sim.nowSeconds() < Scenario::onsetSeconds + 1800) {
            sim.step();
            twin.step();
            const auto f = sim.snapshot();
            const auto g = twin.snapshot();
            std::vector<float> clocks, powers;
            double util = 0, twinUtil = 0;
            for (uint32_t k = range.first; k < range.first + range.count; ++k) {
                util += plane(*f, MetricId::GpuUtil, k);
                twinUtil += plane(*g, MetricId::GpuUtil, k);
                if (k != gpu) {
                    clocks.push_back(plane(*f, MetricId::SmClock, k));
                    powers.push_back(plane(*f, MetricId::Power, k));
                }
            }
            util /= range.count;
            twinUtil /= range.count;
            if (twinUtil < 90 || std::isnan(util)) {
                continue; // checkpoint, all-reduce dip or stall: the pace shows in compute
            }
            ++computing;
            slowed += util;
            plain += twinUtil;
            QVERIFY(plane(*f, MetricId::SmClock, gpu) <= 0.81 * median(clocks));
            QVERIFY(plane(*f, MetricId::Power, gpu) < median(powers));
        }
        QVERIFY(computing > 50);
        const double ratio = slowed / plain;
        qInfo("job %llu (%u GPUs): utilisation %.3f of its twin's over %d computing steps", qulonglong(jobId),
            range.count, ratio, computing);
        QVERIFY(std::abs(ratio - (1.0 - Scenario::stragglerDrop)) < 0.02);

        // The truth: the episode, and the pace lost charged to that GPU.
        const auto &episodes = sim.jobTruth().episodes();
        const auto episode = std::find_if(episodes.begin(), episodes.end(),
            [&](const JobTruth::Episode &e) { return e.gpu == gpu && e.kind == JobTruth::StragglerKind::Clock; });
        QVERIFY(episode != episodes.end());
        QCOMPARE(episode->jobId, jobId);
        QVERIFY(std::abs(episode->startSeconds - Scenario::onsetSeconds) <= sim.stepSeconds());
        QVERIFY(std::isinf(episode->endSeconds));
        QCOMPARE(episode->drop, Scenario::stragglerDrop);
        const auto *account = sim.jobTruth().account(jobId);
        QVERIFY(account != nullptr);
        checkBalanced(*account);
        QVERIFY(!account->stragglers.empty());
        QCOMPARE(account->stragglers.front().gpu, gpu);
        // A fifth of its computing time: productive x 0.2 / 0.8 (no other slow GPU in this job this half hour).
        QVERIFY(std::abs(account->straggler - account->productive * 0.25) < 0.02 * account->productive);
    }

    // A PDU trip powers off the nodes corded to it alone: their jobs stall, and when power is back they restart:
    // ~15 % utilisation for 2 to 5 minutes, the work since the last checkpoint redone, checkpoints counted again from
    // the restart's end; the frame source's job says when the last completed checkpoint was.
    void aNodeDownRestartsItsJob()
    {
        SimulationOptions options;
        options.gpuCount = 10240;
        options.seed = 2;
        options.interval = std::chrono::milliseconds(1000);
        options.speed = 10.0; // one step of 10 s
        options.scenario = Scenario::Kind::PduTrip;
        SimulatedFleet fleet(options);
        const Simulator &sim = fleet.simulator();
        fleet.firstFrame();
        // The jobs that lost a node, as their stall began: their productive work since the last checkpoint then.
        struct Watched
        {
            uint64_t id;
            double productive;
            double sinceCheckpoint;
            double lastCheckpoint;
        };
        std::vector<Watched> watched;
        while (sim.nowSeconds() < Scenario::onsetSeconds + 60) {
            fleet.poll();
            for (const auto &job : sim.jobs()) {
                if (job.lostGpus
                    && std::none_of(watched.begin(), watched.end(), [&](const Watched &w) { return w.id == job.id; })) {
                    const auto *a = sim.jobTruth().account(job.id);
                    QVERIFY(a != nullptr);
                    watched.push_back({ job.id, a->productive, a->sinceCheckpoint, job.lastCheckpointSeconds });
                }
            }
        }
        QVERIFY2(!watched.empty(), "the PDU trip took no job's node down");
        for (const auto &w : watched) {
            const auto *a = sim.jobTruth().account(w.id);
            QCOMPARE(a->restarts, 0U);
            QVERIFY(!a->stalls.empty());
            QCOMPARE(a->stalls.front().cause, JobTruth::StallCause::Domain);
            QVERIFY(a->stalls.front().domain >= 0);
        }
        // Power back at onset + 900 s: each restarts.
        std::vector<uint64_t> restarted;
        while (sim.nowSeconds() < Scenario::onsetSeconds + 900 + 60) {
            fleet.poll();
        }
        for (const auto &w : watched) {
            const auto *job = jobById(sim, w.id);
            if (job == nullptr) {
                continue; // ended meanwhile
            }
            const auto *a = sim.jobTruth().account(w.id);
            QCOMPARE(a->restarts, 1U);
            QVERIFY(job->restarting);
            QVERIFY(job->restartUntilSeconds - sim.nowSeconds() <= 300);
            QVERIFY(job->restartUntilSeconds - sim.nowSeconds() >= 120 - 60 - sim.stepSeconds());
            // The work since the checkpoint redone: no longer productive, now rework.
            QVERIFY(std::abs(a->rework - w.sinceCheckpoint) < 1e-6 * w.sinceCheckpoint);
            QVERIFY(std::abs(a->productive - (w.productive - w.sinceCheckpoint)) < 1e-6 * w.productive);
            QVERIFY(a->restartLoading > 0);
            checkBalanced(*a);
            // Loading: its GPUs at about 15 %.
            const auto f = sim.snapshot();
            const auto r = gpusOf(sim, *job);
            double util = 0;
            for (uint32_t k = r.first; k < r.first + r.count; ++k) {
                util += plane(*f, MetricId::GpuUtil, k);
            }
            QVERIFY(std::abs(util / r.count - 15.0) < 2.0);
            QCOMPARE(job->lastCheckpointSeconds, w.lastCheckpoint); // none completed while it was down
            restarted.push_back(w.id);
        }
        QVERIFY(!restarted.empty());
        // The first checkpoint after: a full cadence after the restart's end.
        const auto target = restarted.front();
        double cadenceFrom = 0, every = 0;
        while (const auto *job = jobById(sim, target)) {
            if (!job->restarting && every == 0) {
                cadenceFrom = job->cadenceFromSeconds;
                every = job->checkpointEverySeconds;
                QVERIFY(std::abs(cadenceFrom - job->restartUntilSeconds) < 1e-9);
            }
            if (every > 0 && sim.nowSeconds() > cadenceFrom + every + 60) {
                break;
            }
            fleet.poll();
        }
        const auto *job = jobById(sim, target);
        if (job == nullptr) {
            QSKIP("the restarted job ended before its next checkpoint");
        }
        QCOMPARE(job->lastCheckpointSeconds, cadenceFrom + every);
        const auto jobs = fleet.jobs();
        const auto info = std::find_if(jobs.begin(), jobs.end(), [&](const JobInfo &j) { return j.id == target; });
        QVERIFY(info != jobs.end());
        // As the frame source says it: simulated seconds before now at 10x, in wall-clock milliseconds.
        const double secondsAgo = (sim.nowSeconds() - job->lastCheckpointSeconds) / options.speed;
        const int64_t startToCheckpoint = info->lastCheckpointMs - info->startMs;
        QVERIFY(std::abs(startToCheckpoint
                    - std::llround((job->lastCheckpointSeconds - job->startSeconds) / options.speed * 1000.0))
            <= 1);
        QVERIFY(secondsAgo > 0 && secondsAgo < 10);
        QCOMPARE(sim.jobTruth().account(target)->sinceCheckpoint > 0, true);
    }

    // Every job's account balances, through stragglers, domain faults, a flapping node and restarts over a simulated
    // day, checked every simulated hour.
    void everyAccountBalances()
    {
        Simulator sim(10240, 5, 60.0, Scenario::Kind::NodeFlap);
        sim.setStragglerRate(20 * StragglerModel::documentedRatePerGpuDay);
        sim.setDomainFaultScale(10);
        std::set<uint64_t> seen, restarted, slowed;
        size_t nodeDowns = 0;
        while (sim.nowSeconds() < 86400) {
            sim.step();
            for (const auto &e : sim.takeEvents()) {
                nodeDowns += e.kind == FleetEvent::Kind::NodeDown ? 1 : 0;
            }
            if (sim.steps() % 60 != 0) {
                continue;
            }
            for (const auto &[id, a] : sim.jobTruth().accounts()) {
                checkBalanced(a);
                seen.insert(id);
                if (a.restarts > 0) {
                    QVERIFY(a.restartLoading > 0);
                    restarted.insert(id);
                }
                if (a.straggler > 0) {
                    slowed.insert(id);
                }
                if (a.endSeconds < sim.nowSeconds()) {
                    QVERIFY(jobById(sim, id) == nullptr);
                    QVERIFY(a.endSeconds >= sim.nowSeconds() - 3600);
                }
            }
            for (const auto &job : sim.jobs()) {
                QVERIFY(sim.jobTruth().account(job.id) != nullptr);
            }
        }
        qInfo("%zu jobs accounted, %zu nodes down, %zu jobs restarted, %zu slowed, %zu straggler episodes", seen.size(),
            nodeDowns, restarted.size(), slowed.size(), sim.jobTruth().episodes().size());
        QVERIFY(!restarted.empty());
        QVERIFY(!slowed.empty());
    }

    // Two simulators of the same arguments give the same frames and the same truth.
    void deterministic()
    {
        Simulator a(4096, 7, 30.0, Scenario::Kind::Straggler);
        Simulator b(4096, 7, 30.0, Scenario::Kind::Straggler);
        a.setStragglerRate(50 * StragglerModel::documentedRatePerGpuDay);
        b.setStragglerRate(50 * StragglerModel::documentedRatePerGpuDay);
        for (int i = 0; i < 600; ++i) {
            a.step();
            b.step();
            const auto fa = a.snapshot();
            const auto fb = b.snapshot();
            for (const auto id : { MetricId::GpuUtil, MetricId::SmClock, MetricId::Power }) {
                const auto &pa = fa->planes[static_cast<size_t>(id)];
                const auto &pb = fb->planes[static_cast<size_t>(id)];
                QVERIFY(std::memcmp(pa.data(), pb.data(), pa.size() * sizeof(float)) == 0);
            }
        }
        QCOMPARE(a.jobTruth().episodes().size(), b.jobTruth().episodes().size());
        QVERIFY(a.jobTruth().episodes().size() > 1);
        for (size_t i = 0; i < a.jobTruth().episodes().size(); ++i) {
            const auto &x = a.jobTruth().episodes()[i];
            const auto &y = b.jobTruth().episodes()[i];
            QVERIFY(x.gpu == y.gpu && x.jobId == y.jobId && x.startSeconds == y.startSeconds && x.drop == y.drop);
        }
        QCOMPARE(a.jobTruth().accounts().size(), b.jobTruth().accounts().size());
        for (const auto &[id, x] : a.jobTruth().accounts()) {
            const auto *y = b.jobTruth().account(id);
            QVERIFY(y != nullptr);
            QCOMPARE(x.productive, y->productive);
            QCOMPARE(x.straggler, y->straggler);
        }
    }

    // At the documented rate, a week of 10,240 GPUs has about rate x GPUs x 7 stragglers (a Poisson count: a loose
    // band), each a drop of 8 to 30 % lasting 1 to 10 hours, and the busy ones recorded as episodes.
    void theDocumentedRate()
    {
        Simulator sim(10240, 11, 600.0);
        sim.setStragglerRate(StragglerModel::documentedRatePerGpuDay);
        while (sim.nowSeconds() < 7 * 86400) {
            sim.step();
        }
        const auto &faults = sim.stragglers().faults();
        const double expected = StragglerModel::documentedRatePerGpuDay * 10240 * 7;
        qInfo("%zu stragglers in a week (expected %.1f)", faults.size(), expected);
        QVERIFY(faults.size() >= 0.6 * expected && faults.size() <= 1.4 * expected);
        for (const auto &f : faults) {
            QVERIFY(f.drop >= StragglerModel::minDrop && f.drop <= StragglerModel::maxDrop);
            const double hours = (f.endSeconds - f.onsetSeconds) / 3600.0;
            QVERIFY(hours >= StragglerModel::minHours - 1e-9 && hours <= StragglerModel::maxHours + 1e-9);
        }
        std::vector<uint32_t> withEpisode;
        for (const auto &e : sim.jobTruth().episodes()) {
            if (e.kind == JobTruth::StragglerKind::Clock) {
                withEpisode.push_back(e.gpu);
            }
        }
        std::sort(withEpisode.begin(), withEpisode.end());
        withEpisode.erase(std::unique(withEpisode.begin(), withEpisode.end()), withEpisode.end());
        QVERIFY(withEpisode.size() >= 0.8 * faults.size() * 0.9);
    }
};

QTEST_GUILESS_MAIN(TestJobTruth)
#include "tst_jobtruth.moc"
