// SPDX-License-Identifier: Apache-2.0
// Wire -> model for the answers besides topology and frames (tst_protodecode's): the metric catalogue, text meant for
// people, job listings and the executive summary, and every kind of malformed entry we drop.
#include "client/answerdecode.h"
#include "client/historydecode.h"
#include "client/wiretext.h"
#include "core/incident.h"
#include "service/frameencoder.h"
#include "sim/simulator.h"
#include "tests/client/decodetesting.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

using namespace fleetscope;
using namespace fleetscope::decodetesting;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;

class TestAnswerDecode : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The catalogue names what views carry (metric ids), what labels show (names, units) and what the colour scale
    // divides by (ranges): each entry is checked on its own, a bad one dropped with a line saying why.
    void metricCatalogueEntriesAreChecked()
    {
        pb::ListMetricsResponse response;
        const auto add = [&response](const std::string &id, float min, float max) {
            auto *m = response.add_metrics();
            m->set_id(id);
            m->set_name("GPU temperature");
            m->set_unit("°C");
            m->set_range_min(min);
            m->set_range_max(max);
            return m;
        };
        const float inf = std::numeric_limits<float>::infinity();
        add("gpu_temp", 20, 95)->set_colour_map("thermal");
        add("gpu temp", 20, 95); // a space: no view could carry it
        add(std::string(65, 'a'), 0, 1); // one past the longest id
        add(std::string("gpu\0temp", 8), 0, 1); // a NUL inside
        add("gpu_temp", 0, 1); // listed before
        add("nan_range", std::nanf(""), 1); // no span to divide by
        add("inf_range", 0, inf);
        add("huge_span", -3e38F, 3e38F); // the span overflows single precision
        add("flat_huge", 3e38F, 3e38F); // min + 1 is min at this magnitude
        add("reversed", 10, 5)->set_colour_map("no such map!"); // a reversed range is taken as min .. min + 1
        auto *noisy = add("noisy", 0, 100);
        noisy->set_name("line one\nline\ttwo\x1b[31m" + std::string(1 << 20, 'x'));
        noisy->set_unit(std::string(1000, 'u'));
        noisy->set_dcgm_field("");

        QStringList problems;
        const auto metrics = decodeMetricCatalogue(response, &problems);
        QStringList ids;
        for (const auto &m : metrics) {
            ids << m.id;
        }
        QCOMPARE(ids, QStringList({ QStringLiteral("gpu_temp"), QStringLiteral("reversed"), QStringLiteral("noisy") }));
        QCOMPARE(problems.size(), 8);
        QVERIFY2(problems.at(0).contains(QStringLiteral("'gpu temp'")), qPrintable(problems.at(0)));
        QVERIFY2(problems.at(3).contains(QStringLiteral("listed before")), qPrintable(problems.at(3)));
        QVERIFY2(problems.at(4).contains(QStringLiteral("no finite span")), qPrintable(problems.at(4)));
        for (const QString &p : problems) {
            QVERIFY2(p.size() < 200, qPrintable(p)); // a hostile id is not repeated in full
        }
        QCOMPARE(metrics[0].colourMap, QStringLiteral("thermal"));
        QCOMPARE(metrics[0].unit, QStringLiteral("°C"));
        QCOMPARE(metrics[1].rangeMin, 10.0F);
        QCOMPARE(metrics[1].rangeMax, 11.0F);
        QVERIFY(metrics[1].colourMap.isEmpty()); // the console's default instead
        QCOMPARE(metrics[2].name.size(), maxMetricNameLength);
        QVERIFY(metrics[2].name.startsWith(QStringLiteral("line one line two [31mx")));
        QVERIFY(metrics[2].name.endsWith(QChar(0x2026)));
        QCOMPARE(metrics[2].unit.size(), maxMetricUnitLength);
        for (const auto &m : metrics) {
            QVERIFY(std::isfinite(m.rangeMax - m.rangeMin) && m.rangeMax > m.rangeMin);
        }
    }

    void metricCatalogueIsBounded()
    {
        pb::ListMetricsResponse response;
        for (int i = 0; i < maxCatalogueMetrics + 44; ++i) {
            auto *m = response.add_metrics();
            m->set_id("m" + std::to_string(i));
            m->set_range_max(1);
        }
        QStringList problems;
        const auto metrics = decodeMetricCatalogue(response, &problems);
        QCOMPARE(metrics.size(), size_t(maxCatalogueMetrics));
        QCOMPARE(problems.size(), 1);
        QVERIFY2(problems.at(0).contains(QStringLiteral("lists 300 metrics")), qPrintable(problems.at(0)));
        QCOMPARE(metrics.back().name, QStringLiteral("m255")); // no name: the id stands for it
    }

    // Names, versions, serials, job names and event texts are for people: cut to a length a label can lay out, with no
    // control character (a line break or a terminal escape) left in them.
    void backendTextIsCutAndPrintable()
    {
        be::Simulator sim(64, 1);
        auto parts = be::encodeTopology(sim.shape(), generation);
        QCOMPARE(parts.size(), size_t(1));
        auto &part = parts[0];
        part.mutable_rows(0)->set_name("row\nA" + std::string(1 << 20, 'a'));
        part.mutable_racks(0)->set_name("k\x01\x02 01");
        part.mutable_nodes(0)->set_hostname("\x1b]0;owned\x07host\u202e" + std::string(300, 'h'));
        part.mutable_nodes(0)->set_driver_version("550\r\n");
        part.mutable_nodes(0)->set_gpu_serials(0, "1650924060 01"); // a space
        part.mutable_nodes(0)->set_gpu_serials(1, std::string(33, '7'));
        part.mutable_nodes(0)->set_gpu_serials(2, "1650924060\x7f");
        QString error;
        const auto topology = decodeTopology(parts, &error);
        QVERIFY2(topology, qPrintable(error));
        QCOMPARE(topology->rows[0].name.size(), maxNameText);
        QVERIFY(topology->rows[0].name.startsWith(QStringLiteral("row Aaaa")));
        QCOMPARE(topology->racks[0].name, QStringLiteral("k 01"));
        const QString host = topology->nodes[0].hostname;
        QCOMPARE(host.size(), maxHostnameText);
        QVERIFY2(host.startsWith(QStringLiteral("]0;owned host hhh")), qPrintable(host.left(30)));
        QCOMPARE(topology->nodes[0].driverVersion, QStringLiteral("550"));
        QCOMPARE(topology->gpuSerials[0], std::string());
        QCOMPARE(topology->gpuSerials[1], std::string());
        QCOMPARE(topology->gpuSerials[2], std::string());
        QCOMPARE(topology->gpuSerials[3], sim.shape().gpuSerial(3));

        pb::ListJobsResponse jobs;
        auto *job = jobs.add_jobs();
        job->set_id(1);
        job->set_name(std::string(1 << 20, 'j'));
        job->set_owner("ana\tb");
        job->set_start_time_ms(1000);
        job->add_gpus(0);
        const auto list = decodeJobs(jobs, *topology, &error);
        QVERIFY(list);
        QCOMPARE(list->jobs.at(0).name.size(), maxJobText);
        QCOMPARE(list->jobs.at(0).owner, QStringLiteral("ana b"));
        // Cut where a character outside the BMP would be split: the whole character goes.
        const QString emoji = wireText(std::string(maxJobText - 2, 'e') + "\xF0\x9F\x94\xA5" + "tail", maxJobText);
        QCOMPARE(emoji.size(), maxJobText - 1);
        QVERIFY(!emoji.at(emoji.size() - 2).isHighSurrogate());
        QVERIFY(emoji.endsWith(QChar(0x2026)));

        pb::Event event;
        event.set_sequence(1);
        event.set_time_ms(1000);
        event.set_kind(pb::EVENT_KIND_XID);
        event.set_gpu(0);
        event.set_node(0);
        event.set_text("XID 79\n" + std::string(100000, 'x'));
        QString problem;
        const auto decoded = decodeEvent(event, topology.get(), &problem);
        QVERIFY2(decoded, qPrintable(problem));
        QCOMPARE(decoded->text.size(), maxMessageText);
        QVERIFY(decoded->text.startsWith(QStringLiteral("XID 79 xxx")));
    }

    void jobsMapGpusAndBadJobsAreDropped()
    {
        be::Simulator sim(64, 1);
        const auto topology = topologyFor(sim);
        QVERIFY(topology);
        pb::ListJobsResponse response;
        auto addJob = [&response](uint64_t id, std::initializer_list<uint32_t> gpus, int64_t end = 0) {
            auto *job = response.add_jobs();
            job->set_id(id);
            job->set_name("job-" + std::to_string(id));
            job->set_owner("ana");
            job->set_start_time_ms(1000);
            job->set_end_time_ms(end);
            for (uint32_t g : gpus) {
                job->add_gpus(g);
            }
        };
        addJob(1, { 0, 1, 2, 3 });
        addJob(2, { 8, 9, 64 }); // GPU 64 is outside a fleet of 64
        addJob(3, { 12, 11 }); // out of order
        addJob(4, { 3, 4 }); // GPU 3 is job 1's
        addJob(5, { 40, 41 });
        addJob(6, { 0, 1 }, 900000); // ended: may have held GPUs that running jobs hold now
        QString error;
        const auto jobs = decodeJobs(response, *topology, &error);
        QVERIFY(jobs);
        QCOMPARE(jobs->topologyGeneration, generation);
        QCOMPARE(jobs->jobs.size(), size_t(3));
        QCOMPARE(jobs->jobs[0].id, 1U);
        QCOMPARE(jobs->jobs[1].id, 5U);
        QCOMPARE(jobs->jobs[2].id, 6U);
        QVERIFY(!jobs->jobs[2].isRunning());
        QVERIFY2(error.contains(QStringLiteral("dropped 3 job(s)")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("GPU 64 of a fleet of 64")), qPrintable(error));
        QCOMPARE(jobs->runningJobOn(2)->id, 1U);
        QCOMPARE(jobs->runningJobOn(41)->id, 5U);
        QVERIFY(jobs->runningJobOn(8) == nullptr); // job 2 was dropped whole
        QVERIFY(jobs->runningJobOn(4) == nullptr);
        QVERIFY(jobs->runningJobOn(1000) == nullptr);
        QCOMPARE(jobs->runningJobOfGpu.size(), size_t(64));
    }

    // A job's GPUs as runs: each run is checked against the fleet before it is expanded (a run of 2^32 - 1 GPUs
    // allocates nothing), runs must ascend without touching, and a job may not list GPUs both ways.
    void jobRunsAreCheckedBeforeTheyAreExpanded()
    {
        be::Simulator sim(64, 1);
        const auto topology = topologyFor(sim);
        QVERIFY(topology);
        pb::ListJobsResponse response;
        auto addJob = [&response](uint64_t id, std::initializer_list<std::pair<uint32_t, uint32_t>> runs) {
            auto *job = response.add_jobs();
            job->set_id(id);
            job->set_name("job-" + std::to_string(id));
            job->set_start_time_ms(1000);
            for (const auto &[first, count] : runs) {
                auto *run = job->add_gpu_runs();
                run->set_first(first);
                run->set_count(count);
            }
            return job;
        };
        addJob(1, { { 0, 8 }, { 16, 8 } });
        addJob(2, { { 8, 0xFFFFFFFFU } }); // past the fleet, and first + count wraps around 2^32
        addJob(3, { { 0xFFFFFFF0U, 0x20 } });
        addJob(4, { { 40, 0 } }); // an empty run
        addJob(5, { { 48, 4 }, { 50, 4 } }); // overlapping runs
        addJob(6, { { 7, 2 } }); // GPU 7 is job 1's
        addJob(7, { { 32, 4 } })->add_gpus(36); // both ways
        addJob(8, { { 56, 8 } });
        response.set_ended_jobs_left_out(12);
        QString error;
        const auto jobs = fleetscope::decodeJobs(response, *topology, &error);
        QCOMPARE(jobs->jobs.size(), size_t(2));
        QCOMPARE(jobs->jobs[0].id, 1U);
        QCOMPARE(jobs->jobs[0].gpus.size(), size_t(16));
        QCOMPARE(jobs->jobs[0].gpus[8], 16U);
        QCOMPARE(jobs->jobs[1].id, 8U);
        QCOMPARE(jobs->runningJobOn(63)->id, 8U);
        QVERIFY(jobs->runningJobOn(8) == nullptr);
        QVERIFY(jobs->runningJobOn(48) == nullptr);
        QVERIFY2(error.contains(QStringLiteral("dropped 6 job(s)")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("GPUs 8 to 4294967303 of a fleet of 64")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("both one by one and as runs")), qPrintable(error));
        QCOMPARE(jobs->endedJobsLeftOut, 12U);
        QCOMPARE(jobs->runningJobsLeftOut, 0U);
    }

    // Ended jobs' GPUs are checked as running jobs' are, and the list's GPU entries are bounded: an answer of hundreds
    // of ended jobs each run over the whole fleet once expanded to billions of entries (at 260,000 of them over 8,192
    // GPUs), the session stuck for good. Past maxJobGpuEntries the oldest ended jobs are left out, counted and said.
    void endedJobsAreBoundedByTheFleet()
    {
        QString why;
        const auto topology = decodeTopology(be::encodeTopology(be::FleetShape::forGpuCount(8192), generation), &why);
        QVERIFY(topology);
        const uint64_t bound = maxJobGpuEntries(8192);
        QCOMPARE(bound, uint64_t { 1U << 18U });
        pb::ListJobsResponse response;
        auto addJob = [&response](uint64_t id, uint32_t first, uint32_t count, int64_t end) {
            auto *job = response.add_jobs();
            job->set_id(id);
            job->set_name("job-" + std::to_string(id));
            job->set_start_time_ms(static_cast<int64_t>(id));
            job->set_end_time_ms(end);
            auto *run = job->add_gpu_runs();
            run->set_first(first);
            run->set_count(count);
        };
        addJob(1, 0, 8192, 0); // running, the whole fleet
        for (uint64_t id = 2; id <= 301; ++id) {
            addJob(id, 0, 8192, 5000); // ended, each over the whole fleet
        }
        response.set_ended_jobs_left_out(7);
        QString error;
        const auto jobs = decodeJobs(response, *topology, &error);
        // The running job's 8,192 entries and 31 ended jobs' fill the bound exactly; the 269 oldest are left out.
        const uint64_t endedKept = (bound - 8192) / 8192;
        QCOMPARE(endedKept, uint64_t { 31 });
        QCOMPARE(jobs->jobs.size(), size_t(1 + endedKept));
        QCOMPARE(jobs->jobs[0].id, 1U);
        QCOMPARE(jobs->jobs[1].id, 301U - endedKept + 1); // the newest kept, in the wire's order
        QCOMPARE(jobs->jobs.back().id, 301U);
        uint64_t entries = 0;
        for (const auto &job : jobs->jobs) {
            entries += job.gpus.size();
        }
        QVERIFY(entries <= bound);
        QCOMPARE(jobs->endedJobsLeftOut, 7U + 300U - uint32_t(endedKept));
        QCOMPARE(jobs->runningJobsLeftOut, 0U);
        QCOMPARE(jobs->runningJobOn(8191)->id, 1U);
        QVERIFY2(error.contains(QStringLiteral("left out 0 running and 269 ended job(s) past the 262144 GPU entries")),
            qPrintable(error));
    }

    // A job's times are the clock's to subtract from (how long a driver version has run): none before the epoch, and
    // an end not before its start. A start of 0 (not known) is fine.
    void jobTimesAreChecked()
    {
        QString why;
        const auto topology = decodeTopology(be::encodeTopology(be::FleetShape::forGpuCount(64), generation), &why);
        QVERIFY(topology);
        pb::ListJobsResponse response;
        auto addJob = [&response](uint64_t id, int64_t start, int64_t checkpoint, int64_t end) {
            auto *job = response.add_jobs();
            job->set_id(id);
            job->set_start_time_ms(start);
            job->set_last_checkpoint_ms(checkpoint);
            job->set_end_time_ms(end);
            job->add_gpus(static_cast<uint32_t>(id));
        };
        addJob(1, 0, 0, 0);
        addJob(2, std::numeric_limits<int64_t>::min(), 0, 0);
        addJob(3, 1000, -5, 0);
        addJob(4, 1000, 0, 999);
        addJob(5, 1000, 0, std::numeric_limits<int64_t>::min());
        addJob(6, 1000, 1500, 2000);
        QString error;
        const auto jobs = decodeJobs(response, *topology, &error);
        QCOMPARE(jobs->jobs.size(), size_t(2));
        QCOMPARE(jobs->jobs[0].id, 1U);
        QCOMPARE(jobs->jobs[1].id, 6U);
        QVERIFY2(error.startsWith(QStringLiteral("dropped 4 job(s): job 2 () has a time before the epoch, or ends "
                                                 "before it starts")),
            qPrintable(error));
    }

    // Running jobs that each walk the fleet before the GPU another holds: the entries looked at count against the bound
    // too, so the work of a listing stays a small multiple of the fleet whatever the backend sends; the dropped jobs
    // are described ten at most, the rest counted.
    void runningJobsLookedAtAreBounded()
    {
        QString why;
        const auto topology = decodeTopology(be::encodeTopology(be::FleetShape::forGpuCount(8192), generation), &why);
        QVERIFY(topology);
        pb::ListJobsResponse response;
        auto *holder = response.add_jobs();
        holder->set_id(1);
        holder->add_gpus(8191);
        for (uint64_t id = 2; id <= 1001; ++id) {
            auto *job = response.add_jobs();
            job->set_id(id);
            auto *run = job->add_gpu_runs();
            run->set_first(0);
            run->set_count(8192);
        }
        QString error;
        const auto jobs = decodeJobs(response, *topology, &error);
        QCOMPARE(jobs->jobs.size(), size_t(1));
        QCOMPARE(jobs->runningJobOn(8191)->id, 1U);
        QVERIFY(jobs->runningJobOn(0) == nullptr);
        // 1 entry, then 8,192 looked at for each job until the bound: 31 jobs dropped for GPU 8191, 969 left out.
        QCOMPARE(jobs->runningJobsLeftOut, 969U);
        QVERIFY2(error.contains(QStringLiteral("dropped 31 job(s): job 2 () holds GPU 8191, which running job 1 "
                                               "holds too")),
            qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("; and 21 more")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("left out 969 running and 0 ended job(s)")), qPrintable(error));
        QVERIFY(error.size() < 4000);
    }

    // GetSummary's repeat offenders, failure share and unit hours: what an untrusted backend sends is bounded.
    static pb::Summary summaryOf(uint32_t gpus, int64_t hours)
    {
        pb::Summary s;
        s.set_from_ms(0);
        s.set_to_ms(hours * 3600000);
        s.mutable_fleet()->set_name("fleet");
        s.mutable_fleet()->set_gpu_count(gpus);
        return s;
    }

    static pb::RepeatOffender *addRepeat(pb::Summary *s, uint32_t gpu, float score)
    {
        auto *o = s->add_repeat_offenders();
        o->set_gpu(gpu);
        o->set_score(score);
        o->set_xids(score);
        return o;
    }

    void summaryRepeatOffendersAreBounded()
    {
        pb::Summary answer = summaryOf(64, 24);
        addRepeat(&answer, 5, 40.5F)->set_throttle_hours(2.5F);
        addRepeat(&answer, 64, 30.0F); // past the fleet
        addRepeat(&answer, 7, std::nanf(""));
        addRepeat(&answer, 8, 20.0F)->set_pcie_replays(-1.0F);
        addRepeat(&answer, 9, std::numeric_limits<float>::infinity());
        addRepeat(&answer, 5, 10.0F); // listed twice
        addRepeat(&answer, 63, 1.0F);
        answer.set_top_percent_failure_share(0.72);
        QString failure;
        const auto s = decodeSummary(answer, &failure);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        QCOMPARE(s->repeatOffenders.size(), size_t(2));
        QCOMPARE(s->repeatOffenders[0].gpu, 5U);
        QCOMPARE(s->repeatOffenders[0].score, 40.5);
        QCOMPARE(s->repeatOffenders[0].xids, 40.5);
        QCOMPARE(s->repeatOffenders[0].throttleHours, 2.5);
        QCOMPARE(s->repeatOffenders[1].gpu, 63U);
        QCOMPARE(s->topPercentFailureShare, 0.72);
        QCOMPARE(s->problems.size(), 5);
        QVERIFY(s->problems.filter(QStringLiteral("GPU 64")).first().contains(QStringLiteral("outside the fleet")));
        QVERIFY(s->problems.filter(QStringLiteral("GPU 5 ")).first().contains(QStringLiteral("listed twice")));

        // At most 1000 kept, the rest named as dropped; a share outside 0..1 is 0.
        pb::Summary many = summaryOf(4096, 24);
        for (uint32_t g = 0; g < 1500; ++g) {
            addRepeat(&many, g, 2000.0F - static_cast<float>(g));
        }
        many.set_top_percent_failure_share(1.5);
        const auto m = decodeSummary(many, &failure);
        QVERIFY(failure.isEmpty());
        QCOMPARE(m->repeatOffenders.size(), maxRepeatOffenders);
        QCOMPARE(m->repeatOffenders.back().gpu, 999U);
        QCOMPARE(m->topPercentFailureShare, 0.0);
        QCOMPARE(m->problems.size(), 2);
        QCOMPARE(m->problems[0], QStringLiteral("dropped 500 repeat offenders past the first 1000"));
        QVERIFY(m->problems[1].contains(QStringLiteral("outside 0..1")));
        many.set_top_percent_failure_share(std::nan(""));
        QCOMPARE(decodeSummary(many, &failure)->topPercentFailureShare, 0.0);
    }

    // A 16 MiB summary can hold millions of entries of two bytes each: rows, racks and jobs are copied no further than
    // the fleet's GPUs, and kept while their GPUs add up to no more than it (rows and racks divide the fleet, running
    // jobs hold distinct GPUs); offenders no further than the 1,000 a request may ask for; a fleet rollup of more GPUs
    // than a topology may have is no summary; and at most 50 problems are described, the rest counted.
    void summaryListsAreBoundedByTheFleet()
    {
        pb::Summary answer = summaryOf(64, 1);
        for (int i = 0; i < 100000; ++i) {
            answer.add_rows(); // empty: no name, no GPUs
        }
        for (int i = 0; i < 10; ++i) {
            auto *rack = answer.add_racks();
            rack->set_name("k" + std::to_string(i));
            rack->set_gpu_count(8); // 80 GPUs in racks of a fleet of 64: the last two dropped
        }
        for (uint32_t g = 0; g < 5000; ++g) {
            auto *o = answer.add_offenders();
            o->set_gpu(g % 64);
            o->set_failures(1);
        }
        answer.mutable_fleet()->set_failures(3);
        answer.set_total_failures(3);
        QString failure;
        const auto s = decodeSummary(answer, &failure);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        QCOMPARE(s->rows.size(), size_t(64));
        QCOMPARE(s->racks.size(), size_t(8));
        QCOMPARE(s->offenders.size(), size_t(3));
        QCOMPARE(s->problems.size(), maxSummaryProblems + 1);
        QCOMPARE(s->problems[0], QStringLiteral("dropped 99936 row rollups past the fleet's 64 GPUs"));
        QCOMPARE(s->problems[1], QStringLiteral("dropped 4000 offenders past the first 1000"));
        QVERIFY2(
            s->problems[2].contains(QStringLiteral("dropped rack k8: past the fleet's 64 GPUs, which the racks share")),
            qPrintable(s->problems[2]));
        // The two racks, then 997 offenders (64 of them listed twice, the rest past the total of 3).
        QCOMPARE(s->problems.back(),
            QStringLiteral("and %1 more problems like these").arg(2 + 997 - (maxSummaryProblems - 2)));

        pb::Summary huge = summaryOf(maxGpus + 1, 1);
        const auto h = decodeSummary(huge, &failure);
        QVERIFY2(failure.contains(QStringLiteral("more than a topology may have")), qPrintable(failure));
    }

    // Jobs may share GPUs (Slurm jobs sharing a node each count its GPUs, time-slicing, MIG): their GPU-hours past
    // the fleet's GPUs x the range are a real answer, kept whole. Goodput left out while jobs ran is no 0 %.
    void summaryGoodputOfSharedGpusIsKept()
    {
        const auto summaryOf = [] {
            pb::Summary s;
            s.set_from_ms(0);
            s.set_to_ms(10 * 3600000);
            s.mutable_fleet()->set_name("fleet");
            s.mutable_fleet()->set_gpu_count(64);
            s.set_jobs_accounted(12);
            s.set_goodput(0.9);
            s.set_job_gpu_hours(5000); // 7.8 x the fleet's 640
            s.set_productive_gpu_hours(4500);
            auto *l = s.add_losses();
            l->set_cause(pb::LOSS_CAUSE_STALL);
            l->set_gpu_hours(400); // past the fleet's 640 GPU-hours once shared: within the jobs' 5,000
            l->set_gpu(-1);
            l->set_node(-1);
            l->set_jobs(3);
            return s;
        };
        QString failure;
        auto s = decodeSummary(summaryOf(), &failure);
        QVERIFY2(s, qPrintable(failure));
        QVERIFY2(s->problems.isEmpty(), qPrintable(s->problems.join(QLatin1Char('\n'))));
        QCOMPARE(s->jobsAccounted, 12U);
        QCOMPARE(s->goodput, 0.9);
        QCOMPARE(s->jobGpuHours, 5000.0);
        QCOMPARE(s->productiveGpuHours, 4500.0);
        QCOMPARE(s->losses.size(), size_t { 1 });
        QCOMPARE(s->losses[0].gpuHours, 400.0);

        pb::Summary none = summaryOf();
        none.clear_goodput();
        s = decodeSummary(none, &failure);
        QVERIFY2(s, qPrintable(failure));
        QCOMPARE(s->jobsAccounted, 0U); // what the page reads as no goodput, never 0 %
        QVERIFY(s->losses.empty());
        QVERIFY(std::any_of(s->problems.begin(), s->problems.end(),
            [](const QString &p) { return p.contains(QStringLiteral("no goodput came with them")); }));

        for (const double hours : { std::numeric_limits<double>::infinity(), std::nan(""), -1.0 }) {
            pb::Summary bad = summaryOf();
            bad.set_job_gpu_hours(hours);
            s = decodeSummary(bad, &failure);
            QCOMPARE(s->jobsAccounted, 0U);
            QVERIFY(s->losses.empty());
        }
    }

    void summaryUnitHoursAreChecked_data()
    {
        QTest::addColumn<double>("lost");
        QTest::addColumn<double>("stranded");
        QTest::addColumn<uint32_t>("units");
        QTest::addColumn<uint32_t>("healthy");
        QTest::addColumn<bool>("kept");
        // 64 GPUs over 24 hours: at most 1,536 GPU-hours can be lost.
        QTest::newRow("good") << 120.0 << 45.0 << 8U << 7U << true;
        QTest::newRow("all lost") << 1536.0 << 0.0 << 8U << 0U << true;
        QTest::newRow("more than the fleet has") << 1537.0 << 0.0 << 8U << 0U << false;
        QTest::newRow("negative") << -1.0 << 0.0 << 8U << 8U << false;
        QTest::newRow("NaN") << std::nan("") << 0.0 << 8U << 8U << false;
        QTest::newRow("infinite stranded") << 10.0 << std::numeric_limits<double>::infinity() << 8U << 8U << false;
        QTest::newRow("stranded above lost") << 10.0 << 11.0 << 8U << 8U << false;
        QTest::newRow("more healthy than units") << 10.0 << 1.0 << 8U << 9U << false;
        QTest::newRow("more units than GPUs") << 10.0 << 1.0 << 65U << 0U << false;
    }

    void summaryUnitHoursAreChecked()
    {
        QFETCH(double, lost);
        QFETCH(double, stranded);
        QFETCH(uint32_t, units);
        QFETCH(uint32_t, healthy);
        QFETCH(bool, kept);
        pb::Summary answer = summaryOf(64, 24);
        answer.set_unit_gpu_hours_lost(lost);
        answer.set_stranded_gpu_hours(stranded);
        answer.set_units(units);
        answer.set_healthy_units_at_end(healthy);
        QString failure;
        const auto s = decodeSummary(answer, &failure);
        QVERIFY(failure.isEmpty()); // the rest of the summary stands
        QCOMPARE(s->problems.isEmpty(), kept);
        QCOMPARE(s->unitHours.units, kept ? units : 0U);
        QCOMPARE(s->unitHours.healthyUnitsAtEnd, kept ? healthy : 0U);
        QCOMPARE(s->unitHours.lostGpuHours, kept ? lost : 0.0);
        QCOMPARE(s->unitHours.strandedGpuHours, kept ? stranded : 0.0);
    }
    // An incident event as the backend encodes it: its incident arrives whole, its domain one of the topology's.
    void incidentEventsCarryTheirIncident()
    {
        // The bounds on both sides of the wire are one fact.
        QCOMPARE(maxIncidentRuns, be::maxIncidentRuns);
        QCOMPARE(maxIncidentJobs, be::maxIncidentJobs);
        be::Simulator sim(1024, 1);
        const auto topology = topologyFor(sim);
        QVERIFY(topology);
        QVERIFY(topology->domains.size() > 40);
        be::Incident incident;
        incident.id = 42;
        incident.startSeconds = 1'700'000'000.5;
        incident.domain = 40;
        incident.cause = "network";
        incident.evidence = "31 of 32 GPUs behind leaf su01-l5 lost their link within 4 s;\tno other leaf did";
        incident.gpuCount = 31;
        incident.gpuRuns = { { 5, 1 }, { 13, 30 } };
        incident.jobs = { 7, 3 };
        pb::Event event;
        event.set_sequence(12);
        event.set_kind(pb::EVENT_KIND_INCIDENT_OPEN);
        event.set_severity(pb::SEVERITY_CRITICAL);
        event.set_gpu(-1);
        event.set_node(-1);
        event.set_text("Leaf su01-l5 down: 31 GPUs lost their link");
        be::encodeIncident(incident, event.mutable_incident());
        QString problem;
        const auto decoded = decodeEvent(event, topology.get(), &problem);
        QVERIFY2(decoded, qPrintable(problem));
        QCOMPARE(decoded->kind, EventKind::IncidentOpen);
        QVERIFY(decoded->incident);
        const Incident &got = *decoded->incident;
        QCOMPARE(got.id, 42U);
        QCOMPARE(got.startMs, int64_t { 1'700'000'000'500 });
        QCOMPARE(got.domain, int64_t { 40 });
        QCOMPARE(got.cause, QStringLiteral("network"));
        QVERIFY2(got.evidence.endsWith(QStringLiteral("4 s; no other leaf did")), qPrintable(got.evidence));
        QCOMPARE(got.gpuCount, 31U);
        QCOMPARE(got.gpuRuns, (std::vector<std::pair<uint32_t, uint32_t>> { { 5, 1 }, { 13, 30 } }));
        QCOMPARE(got.jobs, (std::vector<uint64_t> { 7, 3 }));
        QCOMPARE(got.jobCount, 2U);
        // Its update and close too; a single GPU's incident names no domain.
        event.set_kind(pb::EVENT_KIND_INCIDENT_CLOSE);
        event.mutable_incident()->clear_domain();
        const auto closed = decodeEvent(event, topology.get(), &problem);
        QVERIFY2(closed && closed->incident, qPrintable(problem));
        QCOMPARE(closed->kind, EventKind::IncidentClose);
        QCOMPARE(closed->incident->domain, int64_t { -1 });
        event.set_kind(pb::EVENT_KIND_INCIDENT_UPDATE);
        QVERIFY(decodeEvent(event, topology.get(), &problem));
        // Another kind of event carries none, whatever it was sent with.
        event.set_kind(pb::EVENT_KIND_XID);
        const auto xid = decodeEvent(event, topology.get(), &problem);
        QVERIFY2(xid, qPrintable(problem));
        QVERIFY(!xid->incident);
        // Texts are cut and made one line.
        event.set_kind(pb::EVENT_KIND_INCIDENT_UPDATE);
        event.mutable_incident()->set_cause(std::string(1000, 'c'));
        event.mutable_incident()->set_evidence(std::string(100000, 'e'));
        const auto cut = decodeEvent(event, topology.get(), &problem);
        QVERIFY2(cut && cut->incident, qPrintable(problem));
        QCOMPARE(cut->incident->cause.size(), maxNameText);
        QCOMPARE(cut->incident->evidence.size(), maxMessageText);
    }

    // Every bound an incident's lists and indices must keep: the event is dropped with the reason.
    void incidentBoundsAreChecked_data()
    {
        using Edit = std::function<void(pb::Event &)>;
        QTest::addColumn<Edit>("edit");
        QTest::addColumn<bool>("withTopology");
        QTest::addColumn<QString>("mentions");
        const auto run = [](pb::Incident *in, uint32_t first, uint32_t count) {
            auto *r = in->add_gpu_runs();
            r->set_first(first);
            r->set_count(count);
        };
        QTest::newRow("fine") << Edit([](pb::Event &) {}) << true << QString();
        QTest::newRow("no incident") << Edit([](pb::Event &e) { e.clear_incident(); }) << true
                                     << QStringLiteral("event 3 is an incident's without the incident");
        QTest::newRow("runs descending") << Edit([run](pb::Event &e) { run(e.mutable_incident(), 2, 1); }) << true
                                         << QStringLiteral("lists GPUs 2 + 1, not after the run before");
        QTest::newRow("runs overlapping") << Edit([run](pb::Event &e) { run(e.mutable_incident(), 19, 2); }) << true
                                          << QStringLiteral("lists GPUs 19 + 2");
        QTest::newRow("an empty run") << Edit([run](pb::Event &e) { run(e.mutable_incident(), 30, 0); }) << true
                                      << QStringLiteral("lists GPUs 30 + 0");
        QTest::newRow("a run past the fleet")
            << Edit([run](pb::Event &e) { run(e.mutable_incident(), 1000, 25); }) << true
            << QStringLiteral("lists GPUs 1000 + 25, not after the run before or past the fleet's 1024");
        QTest::newRow("a run past any fleet")
            << Edit([run](pb::Event &e) { run(e.mutable_incident(), 0xFFFFFFF0U, 0x20); }) << false
            << QStringLiteral("past the fleet's 1048576");
        QTest::newRow("too many runs") << Edit([run](pb::Event &e) {
            for (uint32_t i = 0; i < maxIncidentRuns; ++i) {
                run(e.mutable_incident(), 100 + 2 * i, 1);
            }
        }) << false << QStringLiteral("lists 4098 GPU runs and 2 jobs (at most 4096 and 256)");
        QTest::newRow("too many jobs") << Edit([](pb::Event &e) {
            for (uint32_t i = 0; i < maxIncidentJobs; ++i) {
                e.mutable_incident()->add_job_ids(100 + i);
            }
            e.mutable_incident()->set_job_count(1000);
        }) << true << QStringLiteral("lists 2 GPU runs and 258 jobs");
        QTest::newRow("fewer jobs counted than listed")
            << Edit([](pb::Event &e) { e.mutable_incident()->set_job_count(1); }) << true
            << QStringLiteral("1 jobs, 2 of them listed");
        QTest::newRow("more GPUs than the fleet")
            << Edit([](pb::Event &e) { e.mutable_incident()->set_gpu_count(1025); }) << true
            << QStringLiteral("claims 1025 GPUs of 1024");
        QTest::newRow("fewer GPUs than listed") << Edit([](pb::Event &e) { e.mutable_incident()->set_gpu_count(5); })
                                                << true << QStringLiteral("lists 6 GPUs but claims 5");
        QTest::newRow("a domain past the table") << Edit([](pb::Event &e) { e.mutable_incident()->set_domain(100000); })
                                                 << true << QStringLiteral("names domain 100000 of a table of");
        QTest::newRow("a domain, no topology to check it against")
            << Edit([](pb::Event &e) { e.mutable_incident()->set_domain(100000); }) << false << QString();
    }
    void incidentBoundsAreChecked()
    {
        QFETCH(std::function<void(pb::Event &)>, edit);
        QFETCH(bool, withTopology);
        QFETCH(QString, mentions);
        be::Simulator sim(1024, 1);
        const auto topology = topologyFor(sim);
        QVERIFY(topology);
        pb::Event event;
        event.set_sequence(3);
        event.set_kind(pb::EVENT_KIND_INCIDENT_UPDATE);
        event.set_gpu(-1);
        event.set_node(-1);
        auto *in = event.mutable_incident();
        in->set_id(8);
        in->set_domain(3);
        in->set_gpu_count(6);
        for (const auto &[first, count] : { std::pair { 8U, 2U }, std::pair { 16U, 4U } }) {
            auto *r = in->add_gpu_runs();
            r->set_first(first);
            r->set_count(count);
        }
        in->add_job_ids(1);
        in->add_job_ids(2);
        in->set_job_count(2);
        edit(event);
        QString problem;
        const auto decoded = decodeEvent(event, withTopology ? topology.get() : nullptr, &problem);
        QCOMPARE(bool(decoded), mentions.isEmpty());
        if (decoded) {
            QVERIFY(decoded->incident);
            QCOMPARE(decoded->incident->gpuRuns.size(), size_t { 2 });
        } else {
            QVERIFY2(problem.contains(mentions), qPrintable(problem));
        }
    }
};

QTEST_GUILESS_MAIN(TestAnswerDecode)
#include "tst_answerdecode.moc"
