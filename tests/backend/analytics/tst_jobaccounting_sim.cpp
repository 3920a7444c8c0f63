// SPDX-License-Identifier: Apache-2.0
// The fleet's job accounting over the simulator, through the fleet's analytics as the backend runs them, against the
// simulator's own ground truth (JobTruth): a plain job reads as computing with its checkpoints at the simulator's
// cadence; the straggler scenario's GPU ranked first in its job, holding it back by its drop; a flapping node's job
// stalling and restarting; and each job's goodput near the truth's in a fleet with stragglers and faults.
#include "analytics/fleetanalytics.h"
#include "jobchecks.h"
#include "sim/jobtruth.h"
#include "sim/simulatedfleet.h"
#include "sim/simulator.h"

#include <QDateTime>
#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace fleetscope::backend;
using namespace fleetscope::backend::jobchecks;

namespace {

// Steps a simulator for that many simulated seconds, each frame judged by the fleet's analytics.
void run(Simulator *sim, FleetAnalytics *analytics, double seconds)
{
    const double until = sim->nowSeconds() + seconds;
    while (sim->nowSeconds() < until) {
        sim->step();
        auto frame = sim->snapshot();
        frame->sampleTimeMs = static_cast<int64_t>(std::llround(sim->nowSeconds() * 1000));
        std::vector<FleetEvent> events = sim->takeEvents();
        analytics->judge(frame.get(), jobsOf(*sim), &events);
    }
}

const Simulator::Job *jobOfGpu(const Simulator &sim, uint32_t gpu)
{
    for (const auto &job : sim.jobs()) {
        const auto &first = sim.shape().nodes[job.firstNode];
        const auto &last = sim.shape().nodes[job.firstNode + job.nodeCount - 1];
        if (gpu >= first.firstGpu && gpu < last.firstGpu + last.gpuCount) {
            return &job;
        }
    }
    return nullptr;
}

} // namespace

class TestJobAccountingSim : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aPlainSimulatedJob()
    {
        // Two simulated hours in steps of 5 s.
        Simulator sim(1024, 7, 5.0);
        FleetAnalytics analytics(sim.shape());
        const JobAccounts *accounts = analytics.jobAccounts();
        QVERIFY(accounts != nullptr);
        const double from = sim.nowSeconds();
        run(&sim, &analytics, 7200);
        int checked = 0;
        for (const auto &job : sim.jobs()) {
            JobReport r;
            QVERIFY(accounts->report(job.id, {}, &r));
            checkAddsUp(r);
            const double watched = static_cast<double>(r.asOfMs - r.watchedFromMs) / 1000.0;
            const bool plain = std::none_of(r.phases.begin(), r.phases.end(),
                [](const JobPhaseSpan &s) { return s.phase == JobPhase::Stall || s.phase == JobPhase::Restart; });
            if (!plain || watched < 2.5 * job.checkpointEverySeconds) {
                continue;
            }
            ++checked;
            QVERIFY2(secondsIn(r, JobPhase::Compute) > 0.9 * watched, qPrintable(QString::number(job.id)));
            QVERIFY2(r.goodput > 0.9 && r.goodput <= 1.0, qPrintable(QString::number(r.goodput)));
            QVERIFY(r.stragglers.empty());
            // Its checkpoints at the simulator's cadence, each about 45 s.
            std::vector<int64_t> starts;
            for (const auto &s : r.phases) {
                // Not one under way when the watch began or ended.
                if (s.phase != JobPhase::Checkpoint || s.fromMs == r.watchedFromMs || s.toMs == r.asOfMs) {
                    continue;
                }
                starts.push_back(s.fromMs);
                QVERIFY2(std::abs(static_cast<double>(s.toMs - s.fromMs) / 1000.0 - 45) <= 10,
                    qPrintable(QString::number(s.toMs - s.fromMs)));
            }
            QVERIFY2(starts.size() >= 2, qPrintable(QString::number(job.id)));
            for (size_t i = 1; i < starts.size(); ++i) {
                const double gap = static_cast<double>(starts[i] - starts[i - 1]) / 1000.0;
                QVERIFY2(std::abs(gap - job.checkpointEverySeconds) <= 10,
                    qPrintable(QStringLiteral("%1 against %2").arg(gap).arg(job.checkpointEverySeconds)));
            }
            QVERIFY(r.stepSeconds > 0);
        }
        qInfo("%d plain simulated jobs checked", checked);
        QVERIFY(checked >= 1);
        const GoodputSummary s
            = accounts->between(static_cast<int64_t>(from * 1000), static_cast<int64_t>(sim.nowSeconds() * 1000));
        QVERIFY(s.jobs > 0);
        QVERIFY(s.productiveGpuHours > 0.5 * s.jobGpuHours);
    }

    void theStragglerScenario()
    {
        Simulator sim(1024, 3, 5.0, Scenario::Kind::Straggler);
        FleetAnalytics analytics(sim.shape());
        run(&sim, &analytics, 30 * 60);
        QVERIFY(sim.stagedStraggler() >= 0);
        const auto gpu = static_cast<uint32_t>(sim.stagedStraggler());
        const Simulator::Job *job = jobOfGpu(sim, gpu);
        QVERIFY(job != nullptr);
        JobReport r;
        QVERIFY(analytics.jobAccounts()->report(job->id, {}, &r));
        checkAddsUp(r);
        QVERIFY(!r.stragglers.empty());
        const Straggler &first = r.stragglers[0];
        QCOMPARE(first.gpu, gpu);
        QCOMPARE(first.metric, MetricId::SmClock);
        QVERIFY2(
            std::abs(first.holdBack - Scenario::stragglerDrop) < 0.02F, qPrintable(QString::number(first.holdBack)));
        for (size_t i = 1; i < r.stragglers.size(); ++i) {
            QVERIFY2(r.stragglers[i].holdBack < 0.05F, r.stragglers[i].reason.c_str());
        }
        qInfo("%s; lost %.2f GPU-h", first.reason.c_str(), first.gpuHoursLost);
        // Against the truth: the GPU-hours it cost, within a tenth (ours counts from when it persisted).
        const JobTruth::Account *truth = sim.jobTruth().account(job->id);
        QVERIFY(truth != nullptr);
        double truthLost = 0;
        for (const auto &s : truth->stragglers) {
            truthLost += s.gpu == gpu ? s.gpuSeconds / 3600.0 : 0.0;
        }
        qInfo("straggler loss: %.2f GPU-h, the simulator's %.2f; goodput %.3f, the simulator's %.3f",
            lossOf(r, LossCause::Straggler), truthLost, r.goodput, truth->goodput());
        QVERIFY(lossOf(r, LossCause::Straggler) > 0.75 * truthLost);
        QVERIFY(lossOf(r, LossCause::Straggler) < 1.05 * truthLost);
        QVERIFY(std::abs(r.goodput - truth->goodput()) < 0.03);
    }

    void aFlappingNodeRestartsItsJob()
    {
        Simulator sim(1024, 5, 5.0, Scenario::Kind::NodeFlap);
        FleetAnalytics analytics(sim.shape());
        run(&sim, &analytics, 40 * 60);
        uint32_t restarts = 0;
        for (const auto &[id, truth] : sim.jobTruth().accounts()) {
            JobReport r;
            if (!analytics.jobAccounts()->report(id, {}, &r)) {
                continue;
            }
            checkAddsUp(r);
            if (truth.restarts == 0) {
                continue;
            }
            restarts += r.restarts;
            qInfo("job %llu: %u restarts, the simulator's %u; restart loss %.2f GPU-h, the simulator's %.2f; stall "
                  "%.2f, the simulator's %.2f",
                static_cast<unsigned long long>(id), r.restarts, truth.restarts, lossOf(r, LossCause::Restart),
                truth.restart / 3600.0, lossOf(r, LossCause::Stall) + lossOf(r, LossCause::Incident),
                truth.stall / 3600.0);
            QVERIFY(r.restarts >= 1);
            QVERIFY(lossOf(r, LossCause::Restart) > 0);
            QVERIFY(std::any_of(
                r.phases.begin(), r.phases.end(), [](const JobPhaseSpan &s) { return s.phase == JobPhase::Restart; }));
            QVERIFY(std::abs(r.goodput - truth.goodput()) < 0.05);
        }
        QVERIFY(restarts > 0);
    }

    void theHistoryStartsTheAccounts()
    {
        // A simulated backend with 30 minutes of history: its jobs' accounts start with the frames held from before
        // the start (FleetAnalytics::warm), not at the first live frame.
        SimulationOptions options;
        options.gpuCount = 1024;
        options.seed = 7;
        options.history = std::chrono::minutes(30);
        const int64_t before = QDateTime::currentMSecsSinceEpoch();
        const auto source = simulatedSource(options);
        const JobAccounts *accounts = source->jobAccounts();
        QVERIFY(accounts != nullptr);
        int checked = 0;
        for (const JobInfo &job : source->jobs()) {
            if (job.endMs != 0 || job.startMs > before - 40 * 60'000) {
                continue;
            }
            JobReport r;
            QVERIFY(accounts->report(job.id, {}, &r));
            QVERIFY2(r.watchedFromMs < before - 25 * 60'000,
                qPrintable(
                    QStringLiteral("watched from %1 s before the start").arg((before - r.watchedFromMs) / 1000)));
            QVERIFY(r.asOfMs >= before - 60'000);
            QVERIFY(r.phases.size() >= 1);
            checkAddsUp(r);
            ++checked;
        }
        qInfo("%d jobs accounted from the history", checked);
        QVERIFY(checked > 0);
    }

    void goodputNearTheTruth()
    {
        // Stragglers at 50 times docs/FAULTS.md's rate, with the simulator's own faults, for three hours.
        Simulator sim(1024, 11, 5.0);
        sim.setStragglerRate(50 * 0.001);
        FleetAnalytics analytics(sim.shape());
        run(&sim, &analytics, 3 * 3600);
        double worst = 0;
        int compared = 0;
        int slowed = 0; // jobs a straggler slowed
        for (const auto &[id, truth] : sim.jobTruth().accounts()) {
            JobReport r;
            if (!analytics.jobAccounts()->report(id, {}, &r) || r.gpuHours < 1) {
                continue;
            }
            checkAddsUp(r);
            ++compared;
            slowed += truth.stragglers.empty() ? 0 : 1;
            const double diff = std::abs(r.goodput - truth.goodput());
            worst = std::max(worst, diff);
            if (diff >= 0.03) {
                qInfo("job %llu: goodput %.3f, the simulator's %.3f (%u stragglers, %u restarts)",
                    static_cast<unsigned long long>(id), r.goodput, truth.goodput(),
                    static_cast<unsigned>(truth.stragglers.size()), truth.restarts);
            }
        }
        qInfo("%d jobs compared (%d slowed by stragglers); the largest goodput difference from the truth %.3f",
            compared, slowed, worst);
        QVERIFY(compared > 5);
        QVERIFY(slowed > 0);
        QVERIFY(worst < 0.05);
    }
};

QTEST_GUILESS_MAIN(TestJobAccountingSim)
#include "tst_jobaccounting_sim.moc"
