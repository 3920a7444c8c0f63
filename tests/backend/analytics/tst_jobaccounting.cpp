// SPDX-License-Identifier: Apache-2.0
// The fleet's job accounting on frames built by hand: a job computing with its all-reduce dips, checkpointing,
// stalling (idle too long; a node down, then restarting with the work since its checkpoint lost), held back by a
// GPU with a slow clock, stalled under an incident; its GPU-time always adding up; its spans and band bounded over a
// long life; the fleet's ledger over a range; reports by id and name while frames are accounted on another thread;
// the cost of a frame at a million GPUs. Over the simulator: tst_jobaccounting_sim.
#include "analytics/jobaccounting.h"
#include "analytics/jobledger.h"
#include "jobchecks.h"
#include "jobrig.h"

#include <QElapsedTimer>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>

using namespace fleetscope::backend;
using namespace fleetscope::backend::jobchecks;

class TestJobAccounting : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void computeWithDips()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(10 * minute);
        const JobReport r = rig.report();
        QCOMPARE(r.phase, JobPhase::Compute);
        QCOMPARE(r.phases.size(), size_t(1));
        QCOMPARE(r.phases[0].phase, JobPhase::Compute);
        QCOMPARE(r.watchedFromMs, rig.origin);
        QVERIFY2(std::abs(r.stepSeconds - 30) < 1.5, qPrintable(QString::number(r.stepSeconds)));
        QVERIFY2(std::abs(r.allReduceShare - 0.1) < 0.02, qPrintable(QString::number(r.allReduceShare)));
        QVERIFY(r.goodput > 0.999);
        QVERIFY(r.stragglers.empty());
        QCOMPARE(r.checkpointLimitSeconds, JobAccounting::checkpointLimitSeconds);
        QCOMPARE(r.band.size(), size_t(600));
        QCOMPARE(r.band.front().reporting, 16U);
        QCOMPARE(r.band.front().p10, 97.0F);
        QCOMPARE(r.band.back().median, 38.0F); // the last frame is in a dip
        checkAddsUp(r);
    }

    void aCheckpoint()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(5 * minute);
        rig.idle(45 * second);
        QCOMPARE(rig.report().phase, JobPhase::Checkpoint);
        checkAddsUp(rig.report());
        rig.compute(5 * minute);
        const JobReport r = rig.report();
        QCOMPARE(r.phase, JobPhase::Compute);
        QCOMPARE(r.phases.size(), size_t(3));
        QCOMPARE(r.phases[1].phase, JobPhase::Checkpoint);
        QCOMPARE(r.phases[1].toMs - r.phases[1].fromMs, 45 * second);
        QCOMPARE(r.phases[1].fromMs, r.phases[0].toMs);
        QVERIFY(std::abs(lossOf(r, LossCause::Checkpoint) - 16 * 45 / 3600.0) < 1e-9);
        QCOMPARE(lossOf(r, LossCause::Stall), 0.0);
        QCOMPARE(r.restarts, 0U);
        checkAddsUp(r);
    }

    void idleTooLongIsAStall()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(5 * minute);
        rig.idle(100 * second);
        QCOMPARE(rig.report().phase, JobPhase::Checkpoint);
        rig.idle(500 * second);
        const JobReport r = rig.report();
        QCOMPARE(r.phase, JobPhase::Stall);
        QCOMPARE(r.phases.size(), size_t(2));
        // The whole idle span became a stall, from its start.
        QCOMPARE(r.phases[1].phase, JobPhase::Stall);
        QCOMPARE(r.phases[1].toMs - r.phases[1].fromMs, 600 * second);
        QCOMPARE(lossOf(r, LossCause::Checkpoint), 0.0);
        QVERIFY(std::abs(lossOf(r, LossCause::Stall) - 16 * 600 / 3600.0) < 1e-9);
        checkAddsUp(r);
        // The fleet's ledger moved it too.
        const GoodputSummary s = rig.accounting.between(rig.origin, rig.now);
        QCOMPARE(s.jobs, 1U);
        QCOMPARE(s.losses.size(), size_t(1));
        QCOMPARE(s.losses[0].cause, LossCause::Stall);
        QCOMPARE(s.losses[0].jobs, 1U);
    }

    void aNodeDownStallsThenRestarts()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(3 * minute);
        rig.idle(45 * second);
        const int64_t checkpointEnd = rig.now - rig.every;
        rig.compute(6 * minute);
        const int64_t stallStart = rig.now - rig.every;
        rig.util(0.0F);
        rig.nodeDown(1, true);
        for (int i = 0; i < 180; ++i) {
            rig.step();
        }
        JobReport r = rig.report();
        QCOMPARE(r.phase, JobPhase::Stall);
        QCOMPARE(r.phases.back().why, std::string("r01-k01-n02 down"));
        rig.nodeDown(1, false);
        rig.idle(3 * minute, 15.0F);
        r = rig.report();
        QCOMPARE(r.phase, JobPhase::Restart);
        QCOMPARE(r.restarts, 1U);
        rig.compute(5 * minute);
        r = rig.report();
        QCOMPARE(r.phase, JobPhase::Compute);
        QCOMPARE(r.restarts, 1U);
        std::vector<JobPhase> phases;
        for (const auto &s : r.phases) {
            phases.push_back(s.phase);
        }
        const std::vector<JobPhase> expected = { JobPhase::Compute, JobPhase::Checkpoint, JobPhase::Compute,
            JobPhase::Stall, JobPhase::Restart, JobPhase::Compute };
        QVERIFY(phases == expected);
        QCOMPARE(r.phases[4].why, std::string("restart after r01-k01-n02 down"));
        // Lost: the work since the checkpoint, and the restart's 3 minutes.
        const double rework = 16.0 * static_cast<double>(stallStart - checkpointEnd) / 3'600'000.0;
        QVERIFY2(std::abs(lossOf(r, LossCause::Restart) - (rework + 16 * 3 / 60.0)) < 1e-6,
            qPrintable(QString::number(lossOf(r, LossCause::Restart))));
        QVERIFY(std::abs(lossOf(r, LossCause::Stall) - 16 * 3 / 60.0) < 1e-6);
        const auto stall = std::find_if(
            r.losses.begin(), r.losses.end(), [](const GoodputLoss &l) { return l.cause == LossCause::Stall; });
        QCOMPARE(stall->node, int64_t(1));
        QCOMPARE(stall->jobId, uint64_t(7));
        checkAddsUp(r);
    }

    void aSlowClockHoldsTheJobBack()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 64, rig.origin) };
        // Peers within 1% of each other; GPU 13 20% slow, drawing less.
        for (uint32_t g = 0; g < 64; ++g) {
            rig.plane(MetricId::SmClock)[g]
                = clockMHz * (1.0F + 0.01F * static_cast<float>(static_cast<int>(g % 3) - 1));
            rig.plane(MetricId::GpuTemp)[g] = 60.0F + static_cast<float>(g % 5);
        }
        rig.plane(MetricId::SmClock)[13] = clockMHz * 0.8F;
        rig.plane(MetricId::Power)[13] = 650.0F * 0.85F;
        rig.compute(90 * second);
        QVERIFY(rig.report().stragglers.empty()); // not yet persistent
        rig.compute(10 * minute);
        const JobReport r = rig.report();
        QCOMPARE(r.stragglers.size(), size_t(1));
        const Straggler &s = r.stragglers[0];
        QCOMPARE(s.gpu, 13U);
        QCOMPARE(s.metric, MetricId::SmClock);
        QVERIFY2(std::abs(s.holdBack - 0.2F) < 0.01F, qPrintable(QString::number(s.holdBack)));
        QVERIFY(s.score > 3.5F);
        QCOMPARE(s.value, clockMHz * 0.8F);
        QVERIFY(s.gpuHoursLost > 0);
        QCOMPARE(s.sinceMs, rig.origin);
        QVERIFY2(s.reason.find("SM clock 1,584 MHz against the job's 1,980 MHz for ") == 0, s.reason.c_str());
        QCOMPARE(rig.accounting.briefs().at(0).stragglerCount, 1U);
        const auto loss = std::find_if(
            r.losses.begin(), r.losses.end(), [](const GoodputLoss &l) { return l.cause == LossCause::Straggler; });
        QVERIFY(loss != r.losses.end());
        QCOMPARE(loss->gpu, int64_t(13));
        QVERIFY(std::abs(loss->gpuHours - s.gpuHoursLost) < 1e-9);
        // Slow from the first frame: 20% of the whole run lost, the 2 minutes before it was found included.
        QVERIFY2(std::abs(r.goodput - 0.8) < 0.01, qPrintable(QString::number(r.goodput)));
        checkAddsUp(r);
    }

    // Heat alone holds nobody back (a GPU downstream in its chassis runs hot for good); hot and slowing, it is a
    // straggler whose heat is the reason.
    void heatCountsOnlyWithAPaceDeficit()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 64, rig.origin) };
        rig.plane(MetricId::GpuTemp)[5] = 62.0F + 15.0F; // hot, full clock
        rig.plane(MetricId::GpuTemp)[9] = 62.0F + 15.0F; // hot and 3% slow: throttling
        rig.plane(MetricId::SmClock)[9] = clockMHz * 0.97F;
        rig.compute(10 * minute);
        const JobReport r = rig.report();
        QCOMPARE(r.stragglers.size(), size_t(1));
        QCOMPARE(r.stragglers[0].gpu, 9U);
        QCOMPARE(r.stragglers[0].metric, MetricId::GpuTemp);
        QVERIFY2(r.stragglers[0].holdBack > 0.02F, qPrintable(QString::number(r.stragglers[0].holdBack)));
        checkAddsUp(r);
    }

    void aStallUnderAnIncident()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(5 * minute);
        auto incident = std::make_shared<Incident>();
        incident->id = 42;
        incident->domain = 5;
        incident->cause = "network";
        incident->gpuCount = 8;
        incident->gpuRuns = { { 3, 1 }, { 40, 7 } };
        FleetEvent open(0, FleetEvent::Kind::IncidentOpen, FleetEvent::Severity::Critical, -1, -1, "Leaf su01-l1 down");
        open.incident = incident;
        rig.util(0.0F);
        rig.plane(MetricId::RailLinkState)[3] = 0.0F;
        rig.step({ open });
        for (int i = 0; i < 299; ++i) {
            rig.step();
        }
        JobReport r = rig.report();
        QCOMPARE(r.phase, JobPhase::Stall);
        QCOMPARE(r.phases.back().incidentId, uint64_t(42));
        QCOMPARE(r.phases.back().why, std::string("Leaf su01-l1 down"));
        QCOMPARE(r.losses.at(0).cause, LossCause::Incident);
        QCOMPARE(r.losses.at(0).incidentId, uint64_t(42));
        QCOMPARE(r.losses.at(0).domain, int64_t(5));
        QVERIFY(std::abs(r.losses.at(0).gpuHours - 16 * 5 / 60.0) < 1e-6);
        QCOMPARE(lossOf(r, LossCause::Stall), 0.0);
        // Closed while the link stays down: a stall of its own from then.
        FleetEvent close = open;
        close.kind = FleetEvent::Kind::IncidentClose;
        rig.step({ close });
        rig.idle(minute, 0.0F);
        r = rig.report();
        QCOMPARE(r.phases.back().incidentId, uint64_t(0));
        QVERIFY(lossOf(r, LossCause::Stall) > 0);
        QVERIFY(std::abs(lossOf(r, LossCause::Incident) - 16 * 5 / 60.0) < 1e-6);
        const GoodputSummary s = rig.accounting.between(rig.origin, rig.now);
        QCOMPARE(s.losses.at(0).cause, LossCause::Incident);
        QCOMPARE(s.losses.at(0).incidentId, uint64_t(42));
        QCOMPARE(s.losses.at(0).jobs, 1U);
        checkAddsUp(r);
    }

    void boundedOverALongLife()
    {
        // Three days of frames every 10 s, phases turning every 30 and 20 s: thousands of spans, 25,920 band points.
        Rig rig;
        rig.every = 10 * second;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        QElapsedTimer timer;
        timer.start();
        for (int i = 0; i < 3 * 24 * 60; ++i) {
            rig.compute(30 * second);
            rig.idle(20 * second);
            rig.compute(10 * second);
        }
        const JobReport r = rig.report();
        qInfo("3 days of frames every 10 s: %lld ms", static_cast<long long>(timer.elapsed()));
        QCOMPARE(r.phases.size(), JobReport::maxPhaseSpans);
        QVERIFY(r.band.size() <= JobReport::maxBandPoints);
        QVERIFY(r.band.size() >= JobReport::maxBandPoints / 2);
        QVERIFY(std::is_sorted(r.band.begin(), r.band.end(),
            [](const JobBandPoint &a, const JobBandPoint &b) { return a.timeMs < b.timeMs; }));
        QCOMPARE(r.phases.front().fromMs, r.watchedFromMs);
        QCOMPARE(r.phases.back().toMs, r.asOfMs);
        for (size_t i = 1; i < r.phases.size(); ++i) {
            QCOMPARE(r.phases[i].fromMs, r.phases[i - 1].toMs);
        }
        QVERIFY(r.losses.size() <= JobReport::maxLosses);
        checkAddsUp(r);
    }

    void theLedgerOverARange()
    {
        Rig rig;
        rig.every = 5 * second;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin), Rig::job(8, "train-b", 16, 32, rig.origin) };
        for (int i = 0; i < 6; ++i) {
            rig.compute(29 * minute);
            rig.idle(minute);
        }
        rig.compute(minute); // the last checkpoint ends
        const GoodputSummary all = rig.accounting.between(rig.origin, rig.now);
        QCOMPARE(all.jobs, 2U);
        const double hours = static_cast<double>(rig.now - rig.every - rig.origin) / 3'600'000.0;
        QVERIFY2(std::abs(all.jobGpuHours - 48 * hours) < 1e-6, qPrintable(QString::number(all.jobGpuHours)));
        double lost = 0;
        for (const auto &l : all.losses) {
            lost += l.gpuHours;
        }
        QVERIFY(std::abs(all.productiveGpuHours + lost - all.jobGpuHours) < 1e-6);
        QCOMPARE(all.losses.size(), size_t(1));
        QCOMPARE(all.losses[0].cause, LossCause::Checkpoint);
        QCOMPARE(all.losses[0].jobs, 2U);
        QVERIFY(std::abs(all.losses[0].gpuHours - 48 * 6 / 60.0) < 1e-6);
        // An hour in the middle, not on the hour: about 48 GPU-hours, prorated.
        const GoodputSummary hour = rig.accounting.between(rig.origin + 90 * minute, rig.origin + 150 * minute);
        QVERIFY2(std::abs(hour.jobGpuHours - 48) < 48 * 0.05, qPrintable(QString::number(hour.jobGpuHours)));
        QCOMPARE(hour.jobs, 2U);
        QCOMPARE(rig.accounting.between(rig.now + 3'600'000, rig.now + 7'200'000).jobs, 0U);
        QCOMPARE(rig.accounting.between(rig.now, rig.origin).jobs, 0U);
    }

    void reportsByIdAndName()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin), Rig::job(8, "train-b", 16, 16, rig.origin) };
        rig.compute(minute);
        JobReport r;
        QVERIFY(rig.accounting.report(0, "train-b", &r));
        QCOMPARE(r.job.id, uint64_t(8));
        QCOMPARE(r.job.owner, std::string("ml"));
        QVERIFY(!rig.accounting.report(9, {}, &r));
        QVERIFY(!rig.accounting.report(0, "train-c", &r));
        QVERIFY(!rig.accounting.report(0, {}, &r));
        QCOMPARE(rig.accounting.briefs().size(), size_t(2));
        // Job 8 ends; a new run of the same name starts: the name finds the running one, the id the ended one.
        rig.jobs[1].endMs = rig.now;
        rig.compute(minute);
        rig.jobs.push_back(Rig::job(9, "train-b", 32, 16, rig.now));
        rig.compute(minute);
        QVERIFY(rig.accounting.report(0, "train-b", &r));
        QCOMPARE(r.job.id, uint64_t(9));
        QCOMPARE(r.watchedFromMs, r.job.startMs);
        QVERIFY(rig.accounting.report(8, {}, &r));
        QCOMPARE(r.phase, JobPhase::Ended);
        checkAddsUp(r);
        // Job 7 vanishes from the producer's list: ended too.
        rig.jobs.erase(rig.jobs.begin());
        rig.compute(minute);
        QVERIFY(rig.accounting.report(7, {}, &r));
        QCOMPARE(r.phase, JobPhase::Ended);
        QCOMPARE(r.job.endMs, r.asOfMs);
        // An hour after their ends they are dropped.
        rig.every = minute;
        rig.compute(62 * minute);
        QVERIFY(!rig.accounting.report(7, {}, &r));
        QVERIFY(!rig.accounting.report(8, {}, &r));
        QCOMPARE(rig.accounting.briefs().size(), size_t(1));
    }

    void readersWhileFramesAreAccounted()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 32, rig.origin), Rig::job(8, "train-b", 32, 32, rig.origin) };
        rig.compute(second);
        std::atomic<bool> stop { false };
        std::atomic<int> reads { 0 };
        std::atomic<int> wrong { 0 };
        std::thread reader([&] {
            while (!stop.load()) {
                JobReport r;
                if (rig.accounting.report(0, "train-a", &r)) {
                    double lost = 0;
                    for (const auto &l : r.losses) {
                        lost += l.gpuHours;
                    }
                    if (std::abs(r.productiveGpuHours + lost - r.gpuHours) > 1e-6) {
                        ++wrong;
                    }
                }
                rig.accounting.briefs();
                rig.accounting.between(rig.origin, rig.origin + 3'600'000);
                ++reads;
            }
        });
        // At least 20 rounds, and on until the reader has read 20 times (or a minute has passed).
        QElapsedTimer timer;
        timer.start();
        int frames = 0;
        for (int i = 0; i < 20 || (reads.load() < 20 && timer.elapsed() < 60'000); ++i) {
            rig.compute(minute);
            rig.idle(45 * second);
            frames += 105;
        }
        stop = true;
        reader.join();
        qInfo("%d reads while %d frames were accounted", reads.load(), frames);
        QVERIFY(reads.load() > 0);
        QCOMPARE(wrong.load(), 0);
    }

    void silentTelemetryIsNotAStall()
    {
        Rig rig;
        rig.jobs = { Rig::job(7, "train-a", 0, 16, rig.origin) };
        rig.compute(5 * minute);
        // Every GPU of it without a value and without health: the scrape is missing, not the job.
        std::fill_n(rig.frame.health.begin(), 16, fleetscope::health::NoData);
        rig.idle(3 * minute, noValue);
        JobReport r = rig.report();
        QCOMPARE(r.phase, JobPhase::Unwatched);
        QCOMPARE(r.phases.back().phase, JobPhase::Unwatched);
        QCOMPARE(lossOf(r, LossCause::Stall), 0.0);
        QVERIFY(std::abs(lossOf(r, LossCause::Unspecified) - 16 * 3 / 60.0) < 1e-6);
        checkAddsUp(r);
        std::fill_n(rig.frame.health.begin(), 16, fleetscope::health::Ok);
        rig.compute(minute);
        r = rig.report();
        QCOMPARE(r.phase, JobPhase::Compute);
        QCOMPARE(r.phases.size(), size_t(3));
        checkAddsUp(r);
    }

    void theLedgerKeepsTheLargestKeys()
    {
        // 5,000 GPUs' straggler losses in one hour, GPU g losing g + 1 GPU-seconds: the 999 largest kept, the rest
        // summed into one entry, the sum unchanged.
        JobLedger ledger;
        const int64_t t0 = 1'700'000'000'000;
        ledger.advance(t0 + 1000);
        ledger.post(t0, t0 + 1000, 1, 20000, 0);
        double total = 0;
        for (int g = 0; g < 5000; ++g) {
            GoodputLoss loss;
            loss.cause = LossCause::Straggler;
            loss.gpu = g;
            ledger.postLoss(t0 + 1000, t0 + 1000, 1 + static_cast<uint64_t>(g % 7), loss, (g + 1) / 3600.0);
            total += (g + 1) / 3600.0;
        }
        const GoodputSummary s = ledger.between(t0, t0 + 1000);
        QCOMPARE(s.losses.size(), GoodputSummary::maxLosses);
        QCOMPARE(s.jobs, 1U);
        double sum = 0;
        for (const auto &l : s.losses) {
            sum += l.gpuHours;
        }
        QVERIFY2(std::abs(sum - total) < 1e-6 * total, qPrintable(QStringLiteral("%1 != %2").arg(sum).arg(total)));
        // The largest told apart; one line for the rest (the hour's and the summary's).
        QCOMPARE(std::count_if(s.losses.begin(), s.losses.end(),
                     [](const GoodputLoss &l) { return l.cause == LossCause::Unspecified && l.what == "the rest"; }),
            std::ptrdiff_t(1));
        const auto largest = std::find_if(
            s.losses.begin(), s.losses.end(), [](const GoodputLoss &l) { return l.cause == LossCause::Straggler; });
        QCOMPARE(largest->gpu, int64_t(4999));
        QCOMPARE(largest->jobs, 1U);
        QVERIFY(std::is_sorted(s.losses.begin(), s.losses.end(),
            [](const GoodputLoss &a, const GoodputLoss &b) { return a.gpuHours > b.gpuHours; }));
        // Half of the hour's covered time: half of everything.
        QVERIFY(std::abs(ledger.between(t0 + 500, t0 + 2000).jobGpuHours - 10000) < 1e-6);
    }

    void costAtAMillionGpus()
    {
        // 2,048 jobs of 512 GPUs on 1,048,576 GPUs: a frame's accounting, printed, not asserted.
        constexpr uint32_t gpus = 1U << 20U;
        Rig rig(gpus);
        for (uint32_t j = 0; j < 2048; ++j) {
            rig.jobs.push_back(Rig::job(j + 1, "job-" + std::to_string(j), j * 512, 512, rig.origin));
        }
        for (uint32_t g = 0; g < gpus; g += 97) {
            rig.plane(MetricId::SmClock)[g] = clockMHz * 0.9F;
        }
        // Frames 10 s apart each score the stragglers too; at a frame a second, one in five does.
        const auto time = [&rig](int frames, int64_t every) {
            rig.every = every;
            std::vector<qint64> times;
            QElapsedTimer timer;
            for (int i = 0; i < frames; ++i) {
                timer.start();
                rig.step();
                times.push_back(timer.nsecsElapsed() / 1000);
            }
            std::sort(times.begin(), times.end());
            return static_cast<double>(times[times.size() / 2]) / 1000.0;
        };
        const double scoring = time(7, 10 * second);
        const double plain = time(9, second);
        qInfo("a frame's accounting at 1,048,576 GPUs, 2,048 jobs: median %.1f ms scoring stragglers, %.1f ms not",
            scoring, plain);
        QCOMPARE(rig.accounting.briefs().size(), size_t(2048));
        checkAddsUp(rig.report(1));
    }
};

QTEST_GUILESS_MAIN(TestJobAccounting)
#include "tst_jobaccounting.moc"
