// SPDX-License-Identifier: Apache-2.0
// The fleet's job accounting at its edges, on frames built by hand: a gap of hours in the frames, a job listed again
// after it ended, GPUs outside the fleet, a straggler beside an incident, frames too coarse to see all-reduces, a
// restart's rework over the hours it covers. Its GPU-time always adds up. The common cases: tst_jobaccounting.
#include "analytics/jobaccounting.h"
#include "jobchecks.h"
#include "jobrig.h"

#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace fleetscope::backend;
using namespace fleetscope::backend::jobchecks;

namespace {
constexpr int64_t hour = 60 * minute;
}

class TestJobAccountingEdges : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aGapOfHoursIsNotWatched()
    {
        Rig rig;
        // On an hour's start, so that the gap's hours are whole ones of the ledger.
        rig.origin -= rig.origin % hour;
        rig.now = rig.origin;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(10 * minute);
        // The upstream is down for 3 h; the first frame back shows the job stalled on a node down.
        rig.now += 3 * hour;
        rig.nodeDown(1, true);
        rig.util(0.0F);
        rig.nodeDown(1, true);
        rig.step();
        const JobReport r = rig.report();
        checkAddsUp(r);
        QCOMPARE(r.phase, JobPhase::Stall);
        // At a frame a second, the span charged to the stall is its 10 s floor; the rest was not watched.
        QVERIFY2(lossOf(r, LossCause::Stall) <= 16 * 10.0 / 3600 + 1e-9,
            qPrintable(QString::number(lossOf(r, LossCause::Stall))));
        QVERIFY(lossOf(r, LossCause::Unspecified) >= 16 * (3 * hour - 10 * second) / 3'600'000.0 - 1e-9);
        QCOMPARE(r.phases.back().phase, JobPhase::Stall);
        QCOMPARE(r.phases[r.phases.size() - 2].phase, JobPhase::Unwatched);
        // The ledger has the gap's middle hour as the job's, all of it lost to nothing known.
        const GoodputSummary s = rig.accounting.between(rig.origin + hour, rig.origin + 2 * hour);
        QVERIFY2(std::abs(s.jobGpuHours - 16) < 1e-6, qPrintable(QString::number(s.jobGpuHours)));
        QCOMPARE(s.productiveGpuHours, 0.0);
        QCOMPARE(s.losses.size(), size_t(1));
        QCOMPARE(s.losses[0].cause, LossCause::Unspecified);
        QVERIFY(std::abs(s.losses[0].gpuHours - 16) < 1e-6);
    }

    // Slurm requeues a job under its id: listed ended for two minutes, then running again. Its time away is a stall,
    // its return a restart that loses the work since its checkpoint.
    void aJobListedAgainAfterItEnded()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(5 * minute);
        rig.idle(45 * second);
        rig.compute(5 * minute);
        const int64_t endedAt = rig.now;
        rig.jobs[0].endMs = endedAt;
        rig.idle(2 * minute, 0.0F);
        QCOMPARE(rig.report().phase, JobPhase::Ended);
        rig.jobs[0].endMs = 0;
        rig.idle(30 * second, 15.0F); // loading its checkpoint
        rig.compute(5 * minute);
        const JobReport r = rig.report();
        checkAddsUp(r);
        QCOMPARE(r.phase, JobPhase::Compute);
        QCOMPARE(r.job.endMs, int64_t(0));
        QCOMPARE(r.restarts, 1U);
        const double away = 16 * (2 * minute + second) / 3'600'000.0;
        QVERIFY2(std::abs(lossOf(r, LossCause::Stall) - away) < 1e-6,
            qPrintable(QString::number(lossOf(r, LossCause::Stall))));
        // The 5 minutes since the checkpoint redone, and the 30 s loading it.
        const double rework = 16 * 5 * minute / 3'600'000.0;
        const double restart = lossOf(r, LossCause::Restart);
        QVERIFY2(restart > rework && restart < rework + 16 * 40 * second / 3'600'000.0,
            qPrintable(QString::number(restart)));
    }

    // Missing from a poll, a job is ended when last seen; listed again, it ran on: its time unlisted is a stall, with
    // no restart and no work lost.
    void aJobMissingFromAPoll()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(5 * minute);
        const auto jobs = rig.jobs;
        rig.jobs.clear();
        rig.compute(second);
        QCOMPARE(rig.report().phase, JobPhase::Ended);
        rig.jobs = jobs;
        rig.compute(5 * minute);
        const JobReport r = rig.report();
        checkAddsUp(r);
        QCOMPARE(r.phase, JobPhase::Compute);
        QCOMPARE(r.job.endMs, int64_t(0));
        QCOMPARE(r.restarts, 0U);
        QCOMPARE(lossOf(r, LossCause::Restart), 0.0);
        QVERIFY2(std::abs(lossOf(r, LossCause::Stall) - 16 * 2.0 / 3600) < 1e-9,
            qPrintable(QString::number(lossOf(r, LossCause::Stall))));
    }

    // A job listing a GPU outside the fleet (a node the shape does not hold) is the same job frame after frame; when
    // its GPUs do change, those it keeps keep their straggler records; with none left in the fleet nothing is charged.
    void gpusOutsideTheFleet()
    {
        Rig rig;
        JobInfo job = Rig::job(7, "train-a", 0, 1001, rig.origin);
        for (uint32_t g = 0; g < 16; ++g) {
            job.gpus.push_back(g);
        }
        job.gpus.push_back(1000);
        rig.jobs = { job };
        rig.plane(MetricId::SmClock)[5] = clockMHz * 0.8F;
        rig.compute(5 * minute);
        JobReport r = rig.report();
        QCOMPARE(r.stragglers.size(), size_t(1));
        QCOMPARE(r.stragglers[0].gpu, 5U);
        const double lost = r.stragglers[0].gpuHoursLost;
        QVERIFY(lost > 0);
        // Resized: GPUs 12-15 let go; GPU 5 is still the straggler it was, its GPU-hours lost kept.
        rig.jobs[0].gpus.erase(rig.jobs[0].gpus.begin() + 12, rig.jobs[0].gpus.begin() + 16);
        rig.compute(second);
        r = rig.report();
        QCOMPARE(r.stragglers.size(), size_t(1));
        QCOMPARE(r.stragglers[0].gpu, 5U);
        QVERIFY(r.stragglers[0].gpuHoursLost > lost);
        // None of its GPUs in the fleet: its account stands still, charged nothing, its old GPUs not watched.
        rig.jobs[0].gpus = { 1000 };
        rig.compute(10 * second);
        const double gpuHours = rig.report().gpuHours;
        rig.compute(minute);
        r = rig.report();
        QCOMPARE(r.gpuHours, gpuHours);
        double losses = 0;
        for (const auto &l : r.losses) {
            losses += l.gpuHours;
        }
        QVERIFY(std::abs(r.productiveGpuHours + losses - r.gpuHours) < 1e-9);
    }

    // An incident on other GPUs of the job (a link flapping on node 5) while GPU 13 straggles: the pace lost is the
    // straggler's, as its own gpu_hours_lost says; once the incident covers GPU 13 itself, it is the incident's.
    void aStragglerBesideAnIncident()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 64, rig.origin) };
        rig.plane(MetricId::SmClock)[13] = clockMHz * 0.8F;
        auto incident = std::make_shared<Incident>();
        incident->id = 42;
        incident->domain = 5;
        incident->gpuCount = 8;
        incident->gpuRuns = { { 40, 8 } };
        FleetEvent open(0, FleetEvent::Kind::IncidentOpen, FleetEvent::Severity::Warning, -1, -1, "Leaf flapping");
        open.incident = incident;
        rig.step({ open });
        rig.compute(10 * minute);
        JobReport r = rig.report();
        QCOMPARE(r.stragglers.size(), size_t(1));
        QCOMPARE(lossOf(r, LossCause::Incident), 0.0);
        QVERIFY(std::abs(lossOf(r, LossCause::Straggler) - r.stragglers[0].gpuHoursLost) < 1e-9);
        checkAddsUp(r);
        auto wider = std::make_shared<Incident>(*incident);
        wider->gpuRuns = { { 8, 8 }, { 40, 8 } };
        FleetEvent update = open;
        update.kind = FleetEvent::Kind::IncidentUpdate;
        update.incident = wider;
        const double straggler = lossOf(r, LossCause::Straggler);
        rig.step({ update });
        rig.compute(minute);
        r = rig.report();
        QCOMPARE(lossOf(r, LossCause::Straggler), straggler);
        QVERIFY(lossOf(r, LossCause::Incident) > 0);
        checkAddsUp(r);
    }

    // A frame every 61 s walks through the 30 s step and lands in its 3 s all-reduce now and then: aliased, not seen.
    void coarseFramesSeeNoDips()
    {
        Rig rig;
        rig.every = 61 * second;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(3 * hour);
        JobReport r = rig.report();
        QCOMPARE(r.phase, JobPhase::Compute);
        QCOMPARE(r.stepSeconds, 0.0);
        QCOMPARE(r.allReduceShare, 0.0);
        QVERIFY(r.goodput > 0.999);
        checkAddsUp(r);
        // Back to a frame a second: its dips are seen again, the coarse hours not in the share.
        rig.every = second;
        rig.compute(10 * minute);
        r = rig.report();
        QVERIFY2(std::abs(r.stepSeconds - 30) < 1.5, qPrintable(QString::number(r.stepSeconds)));
        QVERIFY2(std::abs(r.allReduceShare - 0.1) < 0.02, qPrintable(QString::number(r.allReduceShare)));
        checkAddsUp(r);
    }

    // Three hours without a checkpoint, then a node down and a restart: the 3 h of work redone are booked back over
    // the hours they were done in, not all in the restart's hour (which then showed 48 GPU-hours of rework in an
    // hour of 16 GPUs).
    void reworkOverTheHoursItCovers()
    {
        Rig rig;
        rig.origin -= rig.origin % hour;
        rig.now = rig.origin;
        rig.every = 5 * second;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(3 * hour);
        rig.util(0.0F);
        rig.nodeDown(1, true);
        for (const int64_t end = rig.now + minute; rig.now < end;) {
            rig.step();
        }
        rig.nodeDown(1, false);
        rig.compute(10 * minute);
        const JobReport r = rig.report();
        QCOMPARE(r.restarts, 1U);
        checkAddsUp(r);
        const auto restartIn = [](const GoodputSummary &s) {
            double sum = 0;
            for (const auto &l : s.losses) {
                sum += l.cause == LossCause::Restart ? l.gpuHours : 0.0;
            }
            return sum;
        };
        for (int h = 0; h < 4; ++h) {
            const GoodputSummary s = rig.accounting.between(rig.origin + h * hour, rig.origin + (h + 1) * hour);
            qInfo("hour %d: %.3f GPU-hours, %.3f productive, %.3f lost to restarts", h, s.jobGpuHours,
                s.productiveGpuHours, restartIn(s));
            QVERIFY(restartIn(s) <= s.jobGpuHours + 1e-6);
        }
        const GoodputSummary first = rig.accounting.between(rig.origin, rig.origin + hour);
        QVERIFY2(std::abs(restartIn(first) - 16) < 0.05, qPrintable(QString::number(restartIn(first))));
        QVERIFY(first.productiveGpuHours < 0.05);
        const GoodputSummary all = rig.accounting.between(rig.origin, rig.now);
        QVERIFY(std::abs(restartIn(all) - lossOf(r, LossCause::Restart)) < 1e-6);
    }
};

QTEST_GUILESS_MAIN(TestJobAccountingEdges)
#include "tst_jobaccounting_edges.moc"
