// SPDX-License-Identifier: Apache-2.0
// Wire -> model for a job's account (GetJob's JobReport), ListJobs' brief of it and GetSummary's goodput and losses,
// against a simulated fleet's topology: a good report decoded exactly, and every kind of hostile part dropped within
// its bound, said, never kept.
#include "client/answerdecode.h"
#include "client/jobdecode.h"
#include "client/wiretext.h"

#include <QElapsedTimer>
#include <QTest>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

using namespace fleetscope;
namespace pb = fleetscope::telemetry::v1;

namespace {
constexpr int64_t t0 = 1'767'225'600'000; // 2026-01-01
constexpr uint64_t generation = 77;
constexpr float nanF = std::numeric_limits<float>::quiet_NaN();
constexpr double infD = std::numeric_limits<double>::infinity();

bool anyContains(const QStringList &lines, const QString &part)
{
    return std::any_of(lines.begin(), lines.end(), [&part](const QString &l) { return l.contains(part); });
}

// A job on GPUs 8..23 of the fleet, watched for two hours, with one of each part.
pb::JobReport goodReport()
{
    pb::JobReport r;
    auto *job = r.mutable_job();
    job->set_id(4711);
    job->set_name("train-llm-16");
    job->set_owner("ana");
    job->set_start_time_ms(t0);
    auto *run = job->add_gpu_runs();
    run->set_first(8);
    run->set_count(16);
    job->set_goodput(0.75);
    job->set_phase(pb::JOB_PHASE_COMPUTE);
    job->set_straggler_count(1);
    r.set_as_of_ms(t0 + 2 * 3600 * 1000);
    r.set_watched_from_ms(t0);
    r.set_gpu_hours(32);
    r.set_productive_gpu_hours(24);
    r.set_goodput(0.75);
    auto *loss = r.add_losses();
    loss->set_cause(pb::LOSS_CAUSE_INCIDENT);
    loss->set_gpu_hours(5);
    loss->set_incident_id(12);
    loss->set_domain(3);
    loss->set_gpu(-1);
    loss->set_node(-1);
    loss->set_job_id(4711);
    loss->set_what("incident 12: leaf su01-l1 down");
    auto *slow = r.add_losses();
    slow->set_cause(pb::LOSS_CAUSE_STRAGGLER);
    slow->set_gpu_hours(3);
    slow->set_gpu(13);
    slow->set_node(-1);
    slow->set_job_id(4711);
    auto *s = r.add_stragglers();
    s->set_gpu(13);
    s->set_score(2.5F);
    s->set_metric_id("sm_clock");
    s->set_value(1410);
    s->set_job_median(1980);
    s->set_hold_back(0.28F);
    s->set_since_ms(t0 + 3600 * 1000);
    s->set_gpu_hours_lost(3);
    s->set_reason("SM clock 1,410 MHz against the job's 1,980 MHz for 6 min");
    const std::pair<pb::JobPhase, int64_t> spans[] = { { pb::JOB_PHASE_COMPUTE, 0 }, { pb::JOB_PHASE_STALL, 3000000 },
        { pb::JOB_PHASE_RESTART, 3600000 }, { pb::JOB_PHASE_COMPUTE, 3700000 } };
    for (size_t i = 0; i < std::size(spans); ++i) {
        auto *p = r.add_phases();
        p->set_phase(spans[i].first);
        p->set_from_ms(t0 + spans[i].second);
        p->set_to_ms(i + 1 < std::size(spans) ? t0 + spans[i + 1].second : r.as_of_ms());
    }
    r.mutable_phases(1)->set_incident_id(12);
    r.mutable_phases(1)->set_why("leaf su01-l1 down");
    for (int i = 0; i < 3; ++i) {
        auto *b = r.add_band();
        b->set_time_ms(t0 + i * 60000);
        b->set_p10(80.0F + static_cast<float>(i));
        b->set_median(90);
        b->set_p90(98);
        b->set_reporting(16);
    }
    r.set_phase(pb::JOB_PHASE_COMPUTE);
    r.set_step_seconds(12.5);
    r.set_all_reduce_share(0.18);
    r.set_restarts(1);
    r.set_checkpoint_limit_seconds(90);
    return r;
}
} // namespace

class TestJobDecode : public QObject
{
    Q_OBJECT

    TopologyPtr m_topology;

private Q_SLOTS:
    // 64 GPUs in 8 nodes of 8, and a leaf switch for each half of the fleet under a spine, and two PDUs.
    void initTestCase()
    {
        auto t = std::make_shared<Topology>();
        t->generation = generation;
        t->gpuCount = 64;
        for (uint32_t n = 0; n < 8; ++n) {
            t->nodes.push_back({ QStringLiteral("node%1").arg(n), {}, {}, {}, 0, n * 8, 8 });
            t->nodeOfGpu.insert(t->nodeOfGpu.end(), 8, n);
        }
        t->domains = { { DomainKind::SpinePlane, QStringLiteral("spine"), -1, 0 },
            { DomainKind::LeafSwitch, QStringLiteral("leaf1"), 0, 0 },
            { DomainKind::LeafSwitch, QStringLiteral("leaf2"), 0, 1 }, { DomainKind::Pdu, QStringLiteral("pdu-a") },
            { DomainKind::Pdu, QStringLiteral("pdu-b") } };
        m_topology = std::move(t);
    }

    void aGoodReportIsDecodedExactly()
    {
        QString failure;
        const auto r = decodeJobReport(goodReport(), *m_topology, &failure);
        QVERIFY2(r, qPrintable(failure));
        QVERIFY2(r->problems.isEmpty(), qPrintable(r->problems.join(QLatin1Char('\n'))));
        QCOMPARE(r->topologyGeneration, generation);
        QCOMPARE(r->job.id, uint64_t(4711));
        QCOMPARE(r->job.name, QStringLiteral("train-llm-16"));
        QCOMPARE(r->job.owner, QStringLiteral("ana"));
        QCOMPARE(r->job.gpus.size(), size_t(16));
        QCOMPARE(r->job.gpus.front(), 8U);
        QCOMPARE(r->job.gpus.back(), 23U);
        QCOMPARE(r->job.goodput, 0.75);
        QCOMPARE(r->job.phase, JobPhase::Compute);
        QCOMPARE(r->job.stragglerCount, 1U);
        QCOMPARE(r->asOfMs, t0 + 7200000);
        QCOMPARE(r->watchedFromMs, t0);
        QCOMPARE(r->gpuHours, 32.0);
        QCOMPARE(r->productiveGpuHours, 24.0);
        QCOMPARE(r->goodput, 0.75);
        QCOMPARE(r->losses.size(), size_t(2));
        const GoodputLoss &l = r->losses[0];
        QCOMPARE(l.cause, LossCause::Incident);
        QCOMPARE(l.gpuHours, 5.0);
        QCOMPARE(l.incidentId, uint64_t(12));
        QCOMPARE(l.domain, int64_t(3));
        QCOMPARE(l.gpu, int64_t(-1));
        QCOMPARE(l.node, int64_t(-1));
        QCOMPARE(l.jobId, uint64_t(4711));
        QCOMPARE(l.what, QStringLiteral("incident 12: leaf su01-l1 down"));
        QCOMPARE(r->losses[1].cause, LossCause::Straggler);
        QCOMPARE(r->losses[1].gpu, int64_t(13));
        QCOMPARE(r->losses[1].domain, int64_t(-1)); // absent on the wire
        QCOMPARE(r->stragglers.size(), size_t(1));
        const Straggler &s = r->stragglers[0];
        QCOMPARE(s.gpu, 13U);
        QCOMPARE(s.score, 2.5F);
        QCOMPARE(s.metricId, QStringLiteral("sm_clock"));
        QCOMPARE(s.value, 1410.0F);
        QCOMPARE(s.jobMedian, 1980.0F);
        QCOMPARE(s.holdBack, 0.28F);
        QCOMPARE(s.sinceMs, t0 + 3600000);
        QCOMPARE(s.gpuHoursLost, 3.0);
        QCOMPARE(s.reason, QStringLiteral("SM clock 1,410 MHz against the job's 1,980 MHz for 6 min"));
        QCOMPARE(r->phases.size(), size_t(4));
        QCOMPARE(r->phases[1].phase, JobPhase::Stall);
        QCOMPARE(r->phases[1].fromMs, t0 + 3000000);
        QCOMPARE(r->phases[1].toMs, t0 + 3600000);
        QCOMPARE(r->phases[1].incidentId, uint64_t(12));
        QCOMPARE(r->phases[1].why, QStringLiteral("leaf su01-l1 down"));
        QCOMPARE(r->phases[2].phase, JobPhase::Restart);
        QCOMPARE(r->phases[3].toMs, r->asOfMs);
        QCOMPARE(r->band.size(), size_t(3));
        QCOMPARE(r->band[2].timeMs, t0 + 120000);
        QCOMPARE(r->band[2].p10, 82.0F);
        QCOMPARE(r->band[2].median, 90.0F);
        QCOMPARE(r->band[2].p90, 98.0F);
        QCOMPARE(r->band[2].reporting, 16U);
        QCOMPARE(r->phase, JobPhase::Compute);
        QCOMPARE(r->stepSeconds, 12.5);
        QCOMPARE(r->allReduceShare, 0.18);
        QCOMPARE(r->restarts, 1U);
        QCOMPARE(r->checkpointLimitSeconds, 90.0);
    }

    // A report whose job fails ListJobs' checks, or whose times make no span, is nothing to show.
    void aBadJobOrWatchFailsTheReport()
    {
        QString failure;
        pb::JobReport r = goodReport();
        r.mutable_job()->mutable_gpu_runs(0)->set_count(60); // 8 .. 68 of 64
        QVERIFY(!decodeJobReport(r, *m_topology, &failure));
        QVERIFY2(failure.contains(QStringLiteral("of a fleet of 64")), qPrintable(failure));

        r = goodReport();
        r.mutable_job()->add_gpus(3); // both runs and GPUs
        failure.clear();
        QVERIFY(!decodeJobReport(r, *m_topology, &failure));
        QVERIFY(!failure.isEmpty());

        r = goodReport();
        r.set_watched_from_ms(r.as_of_ms() + 1);
        failure.clear();
        QVERIFY(!decodeJobReport(r, *m_topology, &failure));
        QVERIFY2(failure.contains(QStringLiteral("no span of sane times")), qPrintable(failure));

        r = goodReport();
        r.set_as_of_ms(std::numeric_limits<int64_t>::max());
        failure.clear();
        QVERIFY(!decodeJobReport(r, *m_topology, &failure));

        r = goodReport();
        r.set_watched_from_ms(-5);
        failure.clear();
        QVERIFY(!decodeJobReport(r, *m_topology, &failure));
    }

    // The job's own start, end and last checkpoint are checked as the watch's are: the timeline rounds and subtracts
    // them. 0 stays allowed where it means none.
    void insaneJobTimesFailTheReport()
    {
        constexpr int64_t huge = std::numeric_limits<int64_t>::max();
        const std::function<void(pb::Job *)> breaks[] = {
            [](pb::Job *j) { j->set_start_time_ms(huge); },
            [](pb::Job *j) { j->set_end_time_ms(huge); },
            [](pb::Job *j) { j->set_last_checkpoint_ms(huge); },
            [](pb::Job *j) { j->set_last_checkpoint_ms(latestJobTimeMs + 1); },
        };
        for (const auto &b : breaks) {
            pb::JobReport r = goodReport();
            b(r.mutable_job());
            QString failure;
            QVERIFY(!decodeJobReport(r, *m_topology, &failure));
            QVERIFY2(failure.contains(QStringLiteral("not all sane times")), qPrintable(failure));
        }
        pb::JobReport r = goodReport();
        r.mutable_job()->set_last_checkpoint_ms(0);
        r.mutable_job()->set_end_time_ms(0);
        QString failure;
        QVERIFY2(decodeJobReport(r, *m_topology, &failure), qPrintable(failure));
    }

    // A band point's GPUs reporting are the job's: more than its 16 is dropped, though the fleet has 64.
    void bandReportingIsBoundByTheJob()
    {
        pb::JobReport r = goodReport();
        r.mutable_band(1)->set_reporting(17);
        r.mutable_band(2)->set_reporting(64);
        QString failure;
        const auto report = decodeJobReport(r, *m_topology, &failure);
        QVERIFY2(report, qPrintable(failure));
        QCOMPARE(report->band.size(), size_t { 1 });
        QCOMPARE(report->band[0].reporting, 16U);
        QVERIFY2(anyContains(report->problems, QStringLiteral("17 GPUs reporting in a job of 16")),
            qPrintable(report->problems.join(QLatin1Char('\n'))));
    }

    // An answer is the job asked for: by id, or by name when the id asked is 0.
    void anAnswerForAnotherJobIsRefused()
    {
        const pb::JobReport r = goodReport();
        QVERIFY(jobAnswerMismatch(r, 4711, {}).isEmpty());
        QVERIFY(jobAnswerMismatch(r, 0, QStringLiteral("train-llm-16")).isEmpty());
        QVERIFY(jobAnswerMismatch(r, 4712, {}).contains(QStringLiteral("not job 4712")));
        const QString wrong = jobAnswerMismatch(r, 0, QStringLiteral("train-llm-32"));
        QVERIFY2(wrong.contains(QStringLiteral("not \"train-llm-32\"")), qPrintable(wrong));
        QVERIFY(!jobAnswerMismatch(r, 0, QStringLiteral("train-llm-1")).isEmpty());
        QVERIFY(!jobAnswerMismatch(r, 0, {}).isEmpty());
    }

    // A backend may claim millions of entries: no more than the bounds is ever kept or reserved, and it is quick.
    void oversizedListsAreCutAtTheirBounds()
    {
        pb::JobReport r = goodReport();
        r.clear_band();
        r.clear_phases();
        for (int i = 0; i < 200000; ++i) {
            auto *b = r.add_band();
            b->set_time_ms(t0 + i);
            b->set_p90(1);
            auto *p = r.add_phases();
            p->set_from_ms(t0);
            p->set_to_ms(t0);
        }
        for (int i = 0; i < 10000; ++i) {
            r.add_losses()->set_gpu(-1);
            r.add_stragglers()->set_gpu(8);
        }
        QElapsedTimer timer;
        timer.start();
        QString failure;
        const auto d = decodeJobReport(r, *m_topology, &failure);
        qInfo("a report of 200,000 band points and spans and 10,000 losses and stragglers: %lld ms", timer.elapsed());
        QVERIFY2(d, qPrintable(failure));
        QCOMPARE(d->band.size(), JobReport::maxBandPoints);
        QCOMPARE(d->band.capacity(), JobReport::maxBandPoints);
        QCOMPARE(d->phases.size(), JobReport::maxPhaseSpans);
        QCOMPARE(d->losses.size(), JobReport::maxLosses);
        QVERIFY(d->losses.capacity() <= JobReport::maxLosses);
        QCOMPARE(d->stragglers.size(), size_t(2)); // GPU 13, and 8 once; the rest listed before
        QVERIFY(d->stragglers.capacity() <= JobReport::maxStragglers);
        QVERIFY(anyContains(d->problems, QStringLiteral("dropped 198560 band points past the first 1440")));
        QVERIFY(anyContains(d->problems, QStringLiteral("dropped 9938 losses past the first 64")));
        QVERIFY(d->problems.size() <= maxJobReportProblems + 1);
        QVERIFY2(d->problems.last().startsWith(QStringLiteral("and ")), qPrintable(d->problems.last()));
    }

    void badIndicesAreDropped()
    {
        pb::JobReport r = goodReport();
        r.mutable_losses(0)->set_domain(static_cast<uint32_t>(m_topology->domains.size()));
        r.mutable_losses(1)->set_gpu(64);
        auto *node = r.add_losses();
        node->set_gpu(-1);
        node->set_node(static_cast<int64_t>(m_topology->nodes.size()));
        auto *negative = r.add_losses();
        negative->set_gpu(-7);
        auto *fine = r.add_losses();
        fine->set_cause(static_cast<pb::LossCause>(99)); // a newer backend's cause
        fine->set_gpu(-1);
        fine->set_node(static_cast<int64_t>(m_topology->nodes.size()) - 1);
        fine->set_gpu_hours(1);
        r.mutable_stragglers(0)->set_gpu(40); // in the fleet, not in the job
        auto *twice = r.add_stragglers();
        twice->set_gpu(40);
        auto *outside = r.add_stragglers();
        outside->set_gpu(1U << 31U);
        auto *kept = r.add_stragglers();
        kept->set_gpu(23);
        kept->set_metric_id("sm clock; rm -rf"); // no view could carry it
        r.mutable_band(1)->set_reporting(65);
        r.set_phase(static_cast<pb::JobPhase>(42));
        QString failure;
        const auto d = decodeJobReport(r, *m_topology, &failure);
        QVERIFY2(d, qPrintable(failure));
        QCOMPARE(d->losses.size(), size_t(1));
        QCOMPARE(d->losses[0].cause, LossCause::Unspecified);
        QCOMPARE(d->losses[0].node, static_cast<int64_t>(m_topology->nodes.size()) - 1);
        QCOMPARE(d->stragglers.size(), size_t(1));
        QCOMPARE(d->stragglers[0].gpu, 23U);
        QVERIFY(d->stragglers[0].metricId.isEmpty());
        QCOMPARE(d->band.size(), size_t(2));
        QCOMPARE(d->phase, JobPhase::Unwatched);
        QCOMPARE(d->problems.size(), 8);
        QVERIFY(anyContains(d->problems, QStringLiteral("dropped loss 1: GPU 64 of a fleet of 64")));
        QVERIFY(anyContains(d->problems, QStringLiteral("dropped straggler 0: GPU 40 is not the job's")));
        QVERIFY(anyContains(d->problems, QStringLiteral("65 GPUs reporting in a job of")));
    }

    void nonFiniteAndOutOfRangeFiguresAreDropped()
    {
        pb::JobReport r = goodReport();
        r.set_goodput(std::nan(""));
        r.set_all_reduce_share(1.5);
        r.set_step_seconds(-infD);
        r.set_checkpoint_limit_seconds(infD);
        r.mutable_losses(0)->set_gpu_hours(std::nan(""));
        r.mutable_losses(1)->set_gpu_hours(33); // more than the job's 32
        r.mutable_stragglers(0)->set_hold_back(1.01F);
        auto *s = r.add_stragglers();
        s->set_gpu(14);
        s->set_score(nanF);
        auto *t = r.add_stragglers();
        t->set_gpu(15);
        t->set_value(std::numeric_limits<float>::infinity());
        r.mutable_band(0)->set_median(nanF);
        r.mutable_band(1)->set_p10(95); // above the median
        r.mutable_band(2)->set_p90(101);
        QString failure;
        auto d = decodeJobReport(r, *m_topology, &failure);
        QVERIFY2(d, qPrintable(failure));
        QCOMPARE(d->goodput, 0.0);
        QCOMPARE(d->allReduceShare, 0.0);
        QCOMPARE(d->stepSeconds, 0.0);
        QCOMPARE(d->checkpointLimitSeconds, 0.0);
        QCOMPARE(d->gpuHours, 32.0);
        QVERIFY(d->losses.empty());
        QVERIFY(d->stragglers.empty());
        QVERIFY(d->band.empty());
        QCOMPARE(d->problems.size(), 4 + 2 + 3 + 3);

        // GPU-hours past the fleet's over the time watched (64 GPUs x 2 h), or productive past all: both dropped.
        r = goodReport();
        r.set_gpu_hours(128.5);
        d = decodeJobReport(r, *m_topology, &failure);
        QCOMPARE(d->gpuHours, 0.0);
        QCOMPARE(d->productiveGpuHours, 0.0);
        QVERIFY(d->losses.empty()); // each past the (now) 0 GPU-hours
        r = goodReport();
        r.set_productive_gpu_hours(32.5);
        d = decodeJobReport(r, *m_topology, &failure);
        QCOMPARE(d->gpuHours, 0.0);
        QVERIFY(anyContains(d->problems, QStringLiteral("dropped the GPU-hours: 32.5 productive of 32")));
    }

    // Spans go oldest first and do not overlap; points go strictly forward: what breaks the order is dropped.
    void reversedAndOutOfOrderSpansAreDropped()
    {
        pb::JobReport r = goodReport();
        r.mutable_phases(1)->set_to_ms(r.phases(1).from_ms() - 1); // reversed
        auto *back = r.add_phases(); // starts before the last ends
        back->set_from_ms(t0 + 10);
        back->set_to_ms(t0 + 20);
        auto *late = r.add_phases();
        late->set_from_ms(latestJobTimeMs + 1);
        late->set_to_ms(latestJobTimeMs + 2);
        r.mutable_band(1)->set_time_ms(t0); // the same time as the point before
        QString failure;
        const auto d = decodeJobReport(r, *m_topology, &failure);
        QVERIFY2(d, qPrintable(failure));
        QCOMPARE(d->phases.size(), size_t(3));
        QCOMPARE(d->phases[1].phase, JobPhase::Restart);
        for (size_t i = 1; i < d->phases.size(); ++i) {
            QVERIFY(d->phases[i].fromMs >= d->phases[i - 1].toMs);
        }
        QCOMPARE(d->band.size(), size_t(2));
        QCOMPARE(d->band[1].timeMs, t0 + 120000);
        QCOMPARE(d->problems.size(), 4);
        QVERIFY(anyContains(d->problems, QStringLiteral("before the span before it ends")));
    }

    // Texts of megabytes are cut without being read whole, control characters made spaces.
    void hugeStringsAreCut()
    {
        pb::JobReport r = goodReport();
        const std::string ten(10U << 20U, 'x');
        r.mutable_job()->set_name("a\nb" + ten);
        r.mutable_job()->set_owner(ten);
        r.mutable_losses(0)->set_what(ten);
        r.mutable_stragglers(0)->set_reason("\x1b[31m" + ten);
        r.mutable_stragglers(0)->set_metric_id(ten);
        r.mutable_phases(1)->set_why(ten);
        QElapsedTimer timer;
        timer.start();
        QString failure;
        const auto d = decodeJobReport(r, *m_topology, &failure);
        qInfo("a report with six texts of 10 MB: %lld ms", timer.elapsed());
        QVERIFY2(d, qPrintable(failure));
        QCOMPARE(d->job.name.size(), maxJobText);
        QVERIFY(d->job.name.startsWith(QStringLiteral("a bxx")));
        QCOMPARE(d->job.owner.size(), maxJobText);
        QCOMPARE(d->losses[0].what.size(), maxJobReasonText);
        QCOMPARE(d->stragglers[0].reason.size(), maxJobReasonText);
        QVERIFY(d->stragglers[0].reason.startsWith(QStringLiteral("[31mxx")));
        QVERIFY(d->stragglers[0].metricId.isEmpty());
        QCOMPARE(d->phases[1].why.size(), maxJobReasonText);
        QVERIFY(d->problems.isEmpty());
    }

    // ListJobs' brief of the account: kept when it holds together, the job kept without it otherwise.
    void aJobListCarriesTheAccountInBrief()
    {
        pb::ListJobsResponse response;
        *response.add_jobs() = goodReport().job();
        auto *odd = response.add_jobs();
        *odd = goodReport().job();
        odd->set_id(2);
        odd->mutable_gpu_runs(0)->set_first(30);
        odd->set_goodput(std::nan(""));
        auto *many = response.add_jobs();
        *many = goodReport().job();
        many->set_id(3);
        many->mutable_gpu_runs(0)->set_first(46);
        many->set_straggler_count(17);
        auto *none = response.add_jobs();
        *none = goodReport().job();
        none->set_id(4);
        none->clear_goodput();
        none->set_phase(static_cast<pb::JobPhase>(9));
        none->clear_gpu_runs();
        none->add_gpus(2);
        QString error;
        const auto list = decodeJobs(response, *m_topology, &error);
        QCOMPARE(list->jobs.size(), size_t(4));
        QCOMPARE(list->jobs[0].goodput, 0.75);
        QCOMPARE(list->jobs[0].phase, JobPhase::Compute);
        QCOMPARE(list->jobs[0].stragglerCount, 1U);
        QCOMPARE(list->jobs[1].goodput, -1.0);
        QCOMPARE(list->jobs[1].stragglerCount, 0U);
        QCOMPARE(list->jobs[2].goodput, -1.0);
        QCOMPARE(list->jobs[2].phase, JobPhase::Unwatched);
        QCOMPARE(list->jobs[3].goodput, -1.0);
        QCOMPARE(list->jobs[3].phase, JobPhase::Unwatched);
        QVERIFY2(error.contains(QStringLiteral("dropped the account of 2 job(s)")), qPrintable(error));
    }

    // GetSummary's jobs' goodput and losses, bounded by its fleet rollup.
    void aSummaryCarriesTheJobsGoodput()
    {
        const auto summaryOf = [] {
            pb::Summary s;
            s.set_from_ms(0);
            s.set_to_ms(10 * 3600000);
            s.mutable_fleet()->set_name("fleet");
            s.mutable_fleet()->set_gpu_count(64);
            s.set_jobs_accounted(3);
            s.set_goodput(0.8);
            s.set_job_gpu_hours(500);
            s.set_productive_gpu_hours(400);
            for (int i = 0; i < 300; ++i) {
                auto *l = s.add_losses();
                l->set_cause(pb::LOSS_CAUSE_STRAGGLER);
                l->set_gpu_hours(0.25);
                l->set_gpu(i % 70); // six past the fleet of each 70
                l->set_node(-1);
                l->set_jobs(1);
                l->set_job_id(99);
            }
            return s;
        };
        QString failure;
        auto s = decodeSummary(summaryOf(), &failure);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        QCOMPARE(s->jobsAccounted, 3U);
        QCOMPARE(s->goodput, 0.8);
        QCOMPARE(s->jobGpuHours, 500.0);
        QCOMPARE(s->productiveGpuHours, 400.0);
        QCOMPARE(s->losses.size(), maxSummaryLosses - 6); // 128 looked at, 6 of them past the fleet
        QCOMPARE(s->losses[0].jobId, uint64_t(0));
        QVERIFY(anyContains(s->problems, QStringLiteral("dropped 172 job losses past the first 128")));
        QVERIFY(anyContains(s->problems, QStringLiteral("dropped 6 job losses (the first: GPU 64 of a fleet of 64)")));

        for (const auto &[goodput, hours, productive] :
            { std::tuple { std::nan(""), 500.0, 400.0 }, std::tuple { 1.5, 500.0, 400.0 },
                std::tuple { 0.8, infD, 400.0 }, std::tuple { 0.8, 500.0, 501.0 }, std::tuple { 0.8, -infD, 0.0 } }) {
            pb::Summary bad = summaryOf();
            bad.set_goodput(goodput);
            bad.set_job_gpu_hours(hours);
            bad.set_productive_gpu_hours(productive);
            s = decodeSummary(bad, &failure);
            QCOMPARE(s->jobsAccounted, 0U);
            QVERIFY(s->losses.empty());
            QVERIFY(anyContains(s->problems, QStringLiteral("dropped the jobs' goodput and losses")));
        }
    }
};

QTEST_GUILESS_MAIN(TestJobDecode)
#include "tst_jobdecode.moc"
