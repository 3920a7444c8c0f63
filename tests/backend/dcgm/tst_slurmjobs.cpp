// SPDX-License-Identifier: Apache-2.0
// Slurm jobs from a Slurm exporter's node-to-job series (soperator's slurm_node_job and slurm_job_info), joined onto
// the fleet's nodes: from the simulator's own Slurm page, through the Prometheus API's JSON, by pod name, across
// polls (starts, ends, events), merged with the pod labels' jobs; and hostile series: huge counts, unknown hosts,
// duplicate jobs, long and unprintable labels, bad start times.
#include "core/fleetshape.h"
#include "dcgm/slurmjobs.h"
#include "prometheus/promjson.h"
#include "remotewrite/pushedslurm.h"
#include "sim/exporterpage.h"

#include <QElapsedTimer>
#include <QTest>

#include <algorithm>
#include <map>
#include <unordered_map>

using namespace fleetscope::backend;

namespace {

// The text format's lines (name{label="value",...} value) as series; HELP and TYPE skipped. Enough of the format for
// the pages this suite writes (values without escapes but \" and \\).
std::vector<SlurmJobs::Series> seriesOfPage(const std::string &page)
{
    std::vector<SlurmJobs::Series> out;
    size_t at = 0;
    while (at < page.size()) {
        size_t end = page.find('\n', at);
        end = end == std::string::npos ? page.size() : end;
        const std::string_view line(page.data() + at, end - at);
        at = end + 1;
        if (line.empty() || line.front() == '#') {
            continue;
        }
        SlurmJobs::Series s;
        const size_t brace = line.find('{');
        SlurmJobs::readLabel("__name__", line.substr(0, brace), &s);
        size_t p = brace + 1;
        while (p < line.size() && line[p] != '}') {
            const size_t eq = line.find('=', p);
            const std::string_view name = line.substr(p, eq - p);
            std::string value;
            size_t q = eq + 2;
            for (; line[q] != '"'; ++q) {
                if (line[q] == '\\') {
                    ++q;
                    value.push_back(line[q] == 'n' ? '\n' : line[q]);
                } else {
                    value.push_back(line[q]);
                }
            }
            SlurmJobs::readLabel(name, value, &s);
            p = q + 1;
            p += p < line.size() && line[p] == ',' ? 1 : 0;
        }
        out.push_back(std::move(s));
    }
    return out;
}

SlurmJobs::Series nodeJob(std::string id, std::string node)
{
    SlurmJobs::Series s;
    s.kind = SlurmJobs::Series::Kind::NodeJob;
    s.jobId = std::move(id);
    s.nodeName = std::move(node);
    return s;
}

SlurmJobs::Series jobInfo(std::string id, std::string name, std::string user, std::string start)
{
    SlurmJobs::Series s;
    s.kind = SlurmJobs::Series::Kind::JobInfo;
    s.jobId = std::move(id);
    s.jobName = std::move(name);
    s.userName = std::move(user);
    s.startTime = std::move(start);
    return s;
}

// A job on whole nodes [firstNode, firstNode + nodes).
JobInfo jobOn(const FleetShape &shape, uint64_t id, uint32_t firstNode, uint32_t nodes, std::string name,
    std::string owner, int64_t startMs)
{
    JobInfo job;
    job.id = id;
    job.name = std::move(name);
    job.owner = std::move(owner);
    job.firstGpu = shape.nodes[firstNode].firstGpu;
    const auto &last = shape.nodes[firstNode + nodes - 1];
    job.gpuCount = last.firstGpu + last.gpuCount - job.firstGpu;
    job.startMs = startMs;
    return job;
}

struct Fleet
{
    FleetShape shape = FleetShape::forGpuCount(256);
    std::map<std::string, uint32_t, std::less<>> hosts;
    Fleet()
    {
        for (uint32_t k = 0; k < shape.nodes.size(); ++k) {
            hosts.emplace(shape.nodes[k].hostname, k);
        }
    }
    SlurmJobs::NodeOf nodeOf() const
    {
        return [this](std::string_view host) {
            const auto it = hosts.find(host);
            return it == hosts.end() ? int64_t { -1 } : static_cast<int64_t>(it->second);
        };
    }
    // One poll of these series.
    void poll(SlurmJobs *slurm, const std::vector<SlurmJobs::Series> &series, int64_t sampleMs,
        std::vector<FleetEvent> *events = nullptr) const
    {
        std::vector<FleetEvent> ignored;
        slurm->begin();
        for (const auto &s : series) {
            slurm->add(s);
        }
        slurm->finish(sampleMs, shape, nodeOf(), events ? events : &ignored);
    }
};

constexpr int64_t nowMs = 1'780'000'000'000;

} // namespace

class TestSlurmJobs : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The simulator's Slurm page read back: each running job with its id, name, owner, start (to the second) and
    // every GPU of its nodes; an ended job is not on the page.
    void fromTheSimulatorsPage()
    {
        const Fleet fleet;
        std::vector<JobInfo> jobs { jobOn(fleet.shape, 4711, 0, 4, "train-llm-4711", "ml-research", nowMs - 3600500),
            jobOn(fleet.shape, 12, 5, 1, "eval \"quoted\" \\ name", "vision", nowMs - 60000),
            jobOn(fleet.shape, 99, 10, 2, "ended", "speech", nowMs - 7200000) };
        jobs[2].endMs = nowMs - 1000;
        const std::string page = ExporterPage::renderSlurm(fleet.shape, jobs);
        const auto series = seriesOfPage(page);
        QCOMPARE(series.size(), size_t { 4 + 1 + 2 });

        SlurmJobs slurm;
        std::vector<FleetEvent> events;
        fleet.poll(&slurm, series, nowMs, &events);
        QVERIFY(events.empty()); // the first poll's jobs ran before it
        const auto got = slurm.jobs();
        QCOMPARE(got.size(), size_t { 2 });
        for (size_t i = 0; i < 2; ++i) {
            const auto &expected = jobs[i];
            const auto &job = got[i]; // by start: the older first
            QCOMPARE(job.id, expected.id);
            QCOMPARE(job.name, expected.name);
            QCOMPARE(job.owner, expected.owner);
            QCOMPARE(job.startMs, expected.startMs / 1000 * 1000);
            QCOMPARE(job.endMs, int64_t { 0 });
            QCOMPARE(job.gpus, expected.gpuList());
        }
        QCOMPARE(slurm.report().jobs, size_t { 2 });
        QCOMPARE(slurm.report().badSeries, size_t { 0 });
        QVERIFY(slurm.claims(0) && slurm.claims(31) && !slurm.claims(32) && slurm.claims(40) && !slurm.claims(80));
        QCOMPARE(slurm.jobOfGpu()[40], uint64_t { 12 });
    }

    // The same through the Prometheus API's JSON, as the poller reads it: every label handed on, a series past the
    // bound refusing the whole answer.
    void throughPrometheusJson()
    {
        const Fleet fleet;
        // Written with ' for " (moc does not read raw strings).
        auto quoted = [](std::string text) {
            std::replace(text.begin(), text.end(), '\'', '"');
            return text;
        };
        std::string body = quoted("{'status':'success','data':{'resultType':'vector','result':["
                                  "{'metric':{'__name__':'slurm_node_job','job':'slurm','job_id':'7','node_name':'"
            + fleet.shape.nodes[3].hostname
            + "'},'value':[1780000000,'1']},"
              "{'metric':{'__name__':'slurm_job_info','job_id':'7','job_name':'a\\u00e9b','user_name':'alice',"
              "'start_time':'1779990000','job_state':'RUNNING'},'value':[1780000000,'1']}]}}");
        const std::string copy = body;
        PromJson json;
        SlurmJobs slurm;
        SlurmJobs::Series series;
        std::vector<SlurmJobs::Series> read;
        std::string error;
        QVERIFY2(json.parseVectorLabels(
                     &body, 10, [&](std::string_view n, std::string_view v) { SlurmJobs::readLabel(n, v, &series); },
                     [&](double) {
                         read.push_back(series);
                         series = {};
                     },
                     &error),
            error.c_str());
        fleet.poll(&slurm, read, nowMs);
        const auto jobs = slurm.jobs();
        QCOMPARE(jobs.size(), size_t { 1 });
        QCOMPARE(jobs[0].id, uint64_t { 7 });
        QCOMPARE(jobs[0].name,
            std::string("a\xc3\xa9"
                        "b"));
        QCOMPARE(jobs[0].owner, std::string("alice"));
        QCOMPARE(jobs[0].startMs, int64_t { 1779990000000 });
        QCOMPARE(jobs[0].gpus.size(), size_t { 8 });
        QCOMPARE(jobs[0].gpus.front(), fleet.shape.nodes[3].firstGpu);

        std::string again = copy;
        QVERIFY(!json.parseVectorLabels(
            &again, 1, [](std::string_view, std::string_view) {}, [](double) {}, &error));
        QVERIFY2(error.find("more than 1 series") != std::string::npos, error.c_str());
        std::string truncated = copy.substr(0, copy.size() / 2);
        QVERIFY(!json.parseVectorLabels(
            &truncated, 10, [](std::string_view, std::string_view) {}, [](double) {}, &error));
    }

    // soperator's node names are its worker pods': a name that is no hostname places the job through the pod names
    // dcgm-exporter's series carry on the node; one neither is counted, not guessed.
    void podNamesAndUnknownNodes()
    {
        const Fleet fleet;
        SlurmJobs slurm;
        slurm.noteAlias(2, "worker-2", fleet.shape.nodes.size());
        slurm.noteAlias(3, "worker-3", fleet.shape.nodes.size());
        slurm.noteAlias(3, "bad name with spaces", fleet.shape.nodes.size()); // not a name: ignored
        slurm.noteAlias(9999, "worker-9999", fleet.shape.nodes.size()); // no such node: ignored
        fleet.poll(&slurm, { nodeJob("5", "worker-2"), nodeJob("5", "worker-3"), nodeJob("6", "nowhere-1") }, nowMs);
        const auto jobs = slurm.jobs();
        QCOMPARE(jobs.size(), size_t { 1 });
        QCOMPARE(jobs[0].gpus.size(), size_t { 16 });
        QCOMPARE(jobs[0].gpus.front(), fleet.shape.nodes[2].firstGpu);
        QCOMPARE(jobs[0].name, std::string("5")); // no info: named by its id
        QCOMPARE(slurm.report().unknownNodes, size_t { 1 });
        QCOMPARE(slurm.report().unknownExample, std::string("nowhere-1"));

        // A pod that moved to another node goes with it; a node keeps a few names, the oldest forgotten.
        slurm.noteAlias(4, "worker-2", fleet.shape.nodes.size());
        for (int i = 0; i < 6; ++i) {
            slurm.noteAlias(5, "w5-" + std::to_string(i), fleet.shape.nodes.size());
        }
        fleet.poll(&slurm, { nodeJob("5", "worker-2"), nodeJob("8", "w5-0"), nodeJob("9", "w5-5") }, nowMs + 1000);
        const auto moved = slurm.jobs();
        QCOMPARE(moved[0].gpus.front(), fleet.shape.nodes[4].firstGpu);
        QCOMPARE(moved[0].gpus.size(), size_t { 8 });
        QCOMPARE(slurm.report().unknownNodes, size_t { 1 }); // w5-0, forgotten
        QVERIFY(slurm.claims(fleet.shape.nodes[5].firstGpu)); // job 9 on w5-5
    }

    // Two jobs on one node each have all of its GPUs (node-granular, as soperator's exporter allows); the GPU's one
    // job is the lower id. A node listed twice for a job counts once.
    void sharedNodesAndDuplicates()
    {
        const Fleet fleet;
        const auto &host = fleet.shape.nodes[1].hostname;
        SlurmJobs slurm;
        fleet.poll(&slurm,
            { nodeJob("30", host), nodeJob("20", host), nodeJob("20", host), jobInfo("20", "first", "u1", ""),
                jobInfo("20", "second", "u2", "") },
            nowMs);
        const auto jobs = slurm.jobs();
        QCOMPARE(jobs.size(), size_t { 2 });
        for (const auto &job : jobs) {
            QCOMPARE(job.gpus.size(), size_t { 8 });
        }
        QCOMPARE(slurm.jobOfGpu()[fleet.shape.nodes[1].firstGpu], uint64_t { 20 });
        QCOMPARE(slurm.report().duplicateInfo, size_t { 1 });
        const auto twenty = std::find_if(jobs.begin(), jobs.end(), [](const JobInfo &j) { return j.id == 20; });
        QCOMPARE(twenty->name, std::string("first"));
        QCOMPARE(twenty->startMs, nowMs); // no start time given: the poll's
    }

    // Hostile labels: ids too long or not ids, node names that are not names, names cut at a character boundary
    // with control bytes shown as '?', start times that are not times, more jobs than the bound.
    void hostileSeries()
    {
        const Fleet fleet;
        const auto &host = fleet.shape.nodes[0].hostname;
        SlurmJobs slurm;
        SlurmJobs::Series longId;
        SlurmJobs::readLabel("__name__", "slurm_node_job", &longId);
        SlurmJobs::readLabel("job_id", std::string(100, '1'), &longId);
        SlurmJobs::readLabel("node_name", host, &longId);
        SlurmJobs::Series longName;
        SlurmJobs::readLabel("__name__", "slurm_job_info", &longName);
        SlurmJobs::readLabel("job_id", "41", &longName);
        // 255 ASCII bytes, then a two-byte character across the bound, then more: cut before it.
        SlurmJobs::readLabel("job_name", std::string(255, 'x') + "\xc3\xa9" + std::string(5000, 'y'), &longName);
        SlurmJobs::readLabel("user_name", "bob\n\x01", &longName);
        fleet.poll(&slurm,
            { longId, nodeJob("", host), nodeJob("1 2", host), nodeJob("3", ""), nodeJob("4", "a\"b"),
                nodeJob("41", host), longName, nodeJob("42", fleet.shape.nodes[1].hostname),
                jobInfo("42", "n", "u", "-5"), nodeJob("43", fleet.shape.nodes[2].hostname),
                jobInfo("43", "n", "u", "99999999999999999999"), nodeJob("44", fleet.shape.nodes[3].hostname),
                jobInfo("44", "n", "u", "12abc"), nodeJob("45", fleet.shape.nodes[4].hostname),
                jobInfo("45", "n", "u", "946684799"), nodeJob("abc", fleet.shape.nodes[5].hostname),
                nodeJob("0", fleet.shape.nodes[6].hostname) },
            nowMs);
        const auto &report = slurm.report();
        QCOMPARE(report.badSeries, size_t { 5 });
        QVERIFY(!report.badExample.empty());
        QCOMPARE(report.badStartTimes, size_t { 4 });
        const auto jobs = slurm.jobs();
        std::map<uint64_t, JobInfo> byId;
        for (const auto &job : jobs) {
            byId[job.id] = job;
        }
        QCOMPARE(byId.size(), size_t { 7 });
        QCOMPARE(byId[41].name, std::string(255, 'x'));
        QCOMPARE(byId[41].owner, std::string("bob??"));
        for (const uint64_t id : { 42, 43, 44, 45 }) {
            QCOMPARE(byId[id].startMs, nowMs);
        }
        // Not numbers: hashed ids with the top bit, never a number's.
        const uint64_t abc = SlurmJobs::idOf("abc");
        QVERIFY(abc >> 63U);
        QCOMPARE(byId[abc].name, std::string("abc"));
        QVERIFY(SlurmJobs::idOf("0") >> 63U);
        QCOMPARE(SlurmJobs::idOf(""), uint64_t { 0 });
        QCOMPARE(SlurmJobs::idOf("18446744073709551615") >> 63U, uint64_t { 1 });

        // More jobs than the bound: the rest dropped and counted, in bounded time and memory.
        std::vector<SlurmJobs::Series> many;
        many.reserve(SlurmJobs::maxJobs + 100);
        for (size_t j = 1; j <= SlurmJobs::maxJobs + 100; ++j) {
            many.push_back(nodeJob(std::to_string(j), host));
        }
        QElapsedTimer timer;
        timer.start();
        fleet.poll(&slurm, many, nowMs + 1000);
        qInfo("%zu jobs on one node joined in %lld ms", many.size(), static_cast<long long>(timer.elapsed()));
        QCOMPARE(slurm.report().droppedJobs, size_t { 100 });
        // Ids 1 .. maxJobs run (41 to 45 among them, still running); "abc" and "0" ended at this poll.
        QCOMPARE(slurm.jobs().size(), SlurmJobs::maxJobs + 2);
    }

    // Across polls: a job seen for the first time starts, one no longer seen ends, both as events; ended jobs are
    // listed after the running for an hour.
    void startsAndEnds()
    {
        const Fleet fleet;
        SlurmJobs slurm;
        std::vector<FleetEvent> events;
        fleet.poll(&slurm, { nodeJob("1", fleet.shape.nodes[0].hostname) }, nowMs, &events);
        QVERIFY(events.empty());
        fleet.poll(&slurm,
            { nodeJob("2", fleet.shape.nodes[1].hostname),
                jobInfo("2", "train", "carol", std::to_string(nowMs / 1000 + 5)) },
            nowMs + 10000, &events);
        QCOMPARE(events.size(), size_t { 2 });
        QCOMPARE(events[0].kind, FleetEvent::Kind::JobEnd);
        QCOMPARE(events[0].jobId, uint64_t { 1 });
        QCOMPARE(events[0].node, int64_t { 0 });
        QCOMPARE(events[1].kind, FleetEvent::Kind::JobStart);
        QCOMPARE(events[1].jobId, uint64_t { 2 });
        QCOMPARE(events[1].node, int64_t { 1 });
        QVERIFY2(events[1].text.find("train") != std::string::npos, events[1].text.c_str());
        auto jobs = slurm.jobs();
        QCOMPARE(jobs.size(), size_t { 2 });
        QCOMPARE(jobs[0].id, uint64_t { 2 });
        QCOMPARE(jobs[0].startMs, (nowMs / 1000 + 5) * 1000);
        QCOMPARE(jobs[1].id, uint64_t { 1 });
        QCOMPARE(jobs[1].endMs, nowMs + 10000);
        QVERIFY(!slurm.claims(0));

        fleet.poll(&slurm, {}, nowMs + 10000 + SlurmJobs::keepEndedMs + 1, &events);
        jobs = slurm.jobs();
        QCOMPARE(jobs.size(), size_t { 1 }); // job 1 ended over an hour ago
        QCOMPARE(jobs[0].id, uint64_t { 2 });
        QVERIFY(jobs[0].endMs != 0);
    }

    // A job back after one poll without its node series (scontrol requeue keeps the id; a scrape that missed the
    // exporter's page looks the same): listed once, running, its start Slurm's when the exporter gives it, else the
    // first poll that saw it, not the poll it came back at.
    void jobBackAfterEnding()
    {
        const Fleet fleet;
        SlurmJobs slurm;
        std::vector<FleetEvent> events;
        const std::string start = std::to_string(nowMs / 1000 - 100);
        const std::vector<SlurmJobs::Series> both = { nodeJob("5", fleet.shape.nodes[2].hostname),
            jobInfo("5", "requeued", "dana", start), nodeJob("6", fleet.shape.nodes[3].hostname) };
        fleet.poll(&slurm, both, nowMs, &events);
        fleet.poll(&slurm, {}, nowMs + 10000, &events);
        QCOMPARE(slurm.jobs().size(), size_t { 2 });
        QVERIFY(slurm.jobs()[0].endMs != 0);
        fleet.poll(&slurm, both, nowMs + 20000, &events);
        const auto jobs = slurm.jobs();
        QCOMPARE(jobs.size(), size_t { 2 });
        QCOMPARE(jobs[0].id, uint64_t { 5 });
        QCOMPARE(jobs[0].endMs, int64_t { 0 });
        QCOMPARE(jobs[0].startMs, (nowMs / 1000 - 100) * 1000);
        QCOMPARE(jobs[1].id, uint64_t { 6 });
        QCOMPARE(jobs[1].endMs, int64_t { 0 });
        QCOMPARE(jobs[1].startMs, nowMs);
        QVERIFY(slurm.claims(fleet.shape.nodes[2].firstGpu));
    }

    // Both sources together: a pod job with a Slurm job's id is that job (Slurm's kept); running before ended; each
    // GPU's job Slurm's where Slurm claims it.
    void mergedWithPodJobs()
    {
        const Fleet fleet;
        SlurmJobs slurm;
        fleet.poll(
            &slurm, { nodeJob("7", fleet.shape.nodes[0].hostname), jobInfo("7", "slurm-seven", "u", "") }, nowMs);
        JobInfo pod;
        pod.id = (1ULL << 63U) | 5U;
        pod.name = "pod-job";
        pod.startMs = nowMs - 5000;
        pod.gpus = { 100, 101 };
        JobInfo sameId;
        sameId.id = 7;
        sameId.name = "hpc-label-seven";
        JobInfo ended;
        ended.id = 8;
        ended.name = "old";
        ended.startMs = nowMs - 100000;
        ended.endMs = nowMs - 50000;
        const auto jobs = SlurmJobs::merged(slurm.jobs(), { pod, sameId, ended });
        QCOMPARE(jobs.size(), size_t { 3 });
        QCOMPARE(jobs[0].name, std::string("pod-job"));
        QCOMPARE(jobs[1].name, std::string("slurm-seven"));
        QCOMPARE(jobs[2].name, std::string("old"));

        std::vector<uint64_t> pods(fleet.shape.gpuCount, 0);
        pods[0] = 1234; // under a Slurm job: Slurm's
        pods[100] = pod.id;
        std::vector<uint64_t> merged;
        slurm.mergedJobOfGpu(pods, &merged);
        QCOMPARE(merged[0], uint64_t { 7 });
        QCOMPARE(merged[7], uint64_t { 7 });
        QCOMPARE(merged[100], pod.id);
        QCOMPARE(merged[50], uint64_t { 0 });
    }

    // The push path's holder: a series counts from its push until a staleness marker or the lookback ends it; a
    // sender's retry of an older sample does not bring back the old one; past the bound new series are dropped.
    void pushedSeries()
    {
        const Fleet fleet;
        PushedSlurm pushed(fleet.shape);
        SlurmJobs slurm;
        std::vector<FleetEvent> events;
        pushed.join(nowMs, &slurm, &events);
        QVERIFY(slurm.jobs().empty()); // nothing ever pushed: nothing done
        auto one = [&](SlurmJobs::Series s, int64_t timeMs, bool stale = false) {
            return PushedSlurm::Pushed { std::move(s), timeMs, stale };
        };
        pushed.add({ one(nodeJob("1", fleet.shape.nodes[0].hostname), nowMs),
                       one(nodeJob("2", fleet.shape.nodes[1].hostname), nowMs),
                       one(jobInfo("1", "one", "ann", std::to_string(nowMs / 1000 - 60)), nowMs) },
            nowMs);
        pushed.join(nowMs + 1000, &slurm, &events);
        QCOMPARE(slurm.jobs().size(), size_t { 2 });
        QCOMPARE(slurm.jobs()[0].name, std::string("one"));
        QCOMPARE(pushed.held(), size_t { 3 });

        // Job 2's node series goes stale (its job ended); job 1's is pushed on, then retried with an older sample.
        pushed.add({ one(nodeJob("2", fleet.shape.nodes[1].hostname), nowMs + 2000, true),
                       one(nodeJob("1", fleet.shape.nodes[0].hostname), nowMs + 200000) },
            nowMs + 200000);
        pushed.add({ one(nodeJob("1", fleet.shape.nodes[0].hostname), nowMs + 1000) }, nowMs + 200000);
        pushed.join(nowMs + 3000, &slurm, &events);
        auto jobs = slurm.jobs();
        QCOMPARE(jobs.size(), size_t { 2 });
        QCOMPARE(jobs[0].id, uint64_t { 1 });
        QCOMPARE(jobs[1].id, uint64_t { 2 });
        QCOMPARE(jobs[1].endMs, nowMs + 3000);

        // Past the lookback job 1's info is forgotten, its node series (pushed later) still counts; then that too.
        pushed.join(nowMs + PushedSlurm::lookbackMs + 1000, &slurm, &events);
        QCOMPARE(pushed.held(), size_t { 1 });
        QVERIFY(slurm.claims(0));
        pushed.join(nowMs + 200000 + PushedSlurm::lookbackMs + 1, &slurm, &events);
        QCOMPARE(pushed.held(), size_t { 0 });
        QVERIFY(!slurm.claims(0));

        // A sender that makes up series: past the bound they are dropped, counted.
        const size_t bound = SlurmJobs::maxSeries(fleet.shape.nodes.size());
        std::vector<PushedSlurm::Pushed> many;
        for (size_t j = 0; j < bound + 7; ++j) {
            many.push_back(one(nodeJob(std::to_string(j + 1), fleet.shape.nodes[0].hostname), nowMs + 600000));
        }
        pushed.add(std::move(many), nowMs + 600000);
        QCOMPARE(pushed.held(), bound);
        QCOMPARE(pushed.dropped(), uint64_t { 7 });
    }

    // A sender's clock is not the receiver's: a sample stamped far ahead counts from the receive time plus the skew
    // allowed, so its series still leaves after the lookback (its job ends), not a year on.
    void pushedFromTheFuture()
    {
        const Fleet fleet;
        PushedSlurm pushed(fleet.shape);
        SlurmJobs slurm;
        std::vector<FleetEvent> events;
        const int64_t yearMs = int64_t { 365 } * 86400000;
        pushed.add({ PushedSlurm::Pushed { nodeJob("1", fleet.shape.nodes[0].hostname), nowMs + yearMs, false },
                       PushedSlurm::Pushed { nodeJob("2", fleet.shape.nodes[1].hostname), nowMs + 30000, false } },
            nowMs);
        pushed.join(nowMs + 1000, &slurm, &events);
        QCOMPARE(slurm.jobs().size(), size_t { 2 });
        // A skew within the bound is the sender's own: job 2's sample still counts from its stamp.
        pushed.join(nowMs + 30000 + PushedSlurm::lookbackMs, &slurm, &events);
        QVERIFY(slurm.claims(fleet.shape.nodes[1].firstGpu));
        pushed.join(nowMs + PushedSlurm::maxSkewMs + PushedSlurm::lookbackMs + 1, &slurm, &events);
        QCOMPARE(pushed.held(), size_t { 0 });
        const auto jobs = slurm.jobs();
        QCOMPARE(jobs.size(), size_t { 2 });
        QVERIFY(jobs[0].endMs != 0 && jobs[1].endMs != 0);
        QVERIFY(!slurm.claims(fleet.shape.nodes[0].firstGpu));
    }

    // A staleness marker ends its series only when it is not older than the sample held: a sender's retry of an
    // older request carrying the marker leaves a series pushed since alone, and a retried older sample does not
    // bring back a series its marker ended.
    void pushedStalenessInOrder()
    {
        const Fleet fleet;
        PushedSlurm pushed(fleet.shape);
        SlurmJobs slurm;
        std::vector<FleetEvent> events;
        auto one = [&](int64_t timeMs, bool stale) {
            return PushedSlurm::Pushed { nodeJob("1", fleet.shape.nodes[0].hostname), timeMs, stale };
        };
        pushed.add({ one(nowMs + 5000, false) }, nowMs + 5000);
        pushed.add({ one(nowMs + 1000, true) }, nowMs + 6000); // the retry of a request from before the job's requeue
        pushed.join(nowMs + 7000, &slurm, &events);
        QCOMPARE(pushed.held(), size_t { 1 });
        QVERIFY(slurm.claims(0));
        pushed.add({ one(nowMs + 8000, true) }, nowMs + 8000);
        pushed.join(nowMs + 9000, &slurm, &events);
        QCOMPARE(pushed.held(), size_t { 0 });
        QVERIFY(!slurm.claims(0));
        pushed.add({ one(nowMs + 5000, false) }, nowMs + 9500); // the first request, retried once more
        pushed.join(nowMs + 10000, &slurm, &events);
        QCOMPARE(pushed.held(), size_t { 0 });
        QVERIFY(!slurm.claims(0));
        // Pushed anew after its marker: it runs again.
        pushed.add({ one(nowMs + 11000, false) }, nowMs + 11000);
        pushed.join(nowMs + 12000, &slurm, &events);
        QCOMPARE(pushed.held(), size_t { 1 });
        QVERIFY(slurm.claims(0));
    }

    // The cost at the scale: 1,048,576 GPUs (131,072 nodes) all under 2,000 running jobs, one poll's join
    // (printed, not asserted), and every GPU claimed by its job.
    void atAMillionGpus()
    {
        const FleetShape shape = FleetShape::forGpuCount(1048576);
        std::unordered_map<std::string_view, uint32_t> hosts;
        for (uint32_t k = 0; k < shape.nodes.size(); ++k) {
            hosts.emplace(shape.nodes[k].hostname, k);
        }
        const SlurmJobs::NodeOf nodeOf = [&](std::string_view host) {
            const auto it = hosts.find(host);
            return it == hosts.end() ? int64_t { -1 } : static_cast<int64_t>(it->second);
        };
        const size_t jobs = 2000;
        const size_t nodes = shape.nodes.size();
        std::vector<SlurmJobs::Series> series;
        series.reserve(nodes + jobs);
        for (size_t k = 0; k < nodes; ++k) {
            series.push_back(nodeJob(std::to_string(k * jobs / nodes + 1), shape.nodes[k].hostname));
        }
        for (size_t j = 1; j <= jobs; ++j) {
            series.push_back(jobInfo(std::to_string(j), "train-" + std::to_string(j), "team", ""));
        }
        SlurmJobs slurm;
        std::vector<FleetEvent> events;
        for (int poll = 0; poll < 2; ++poll) {
            QElapsedTimer timer;
            timer.start();
            slurm.begin();
            for (const auto &s : series) {
                slurm.add(s);
            }
            slurm.finish(nowMs + poll * 1000, shape, nodeOf, &events);
            qInfo("poll %d: %zu series joined onto %u GPUs in %lld ms", poll, series.size(), shape.gpuCount,
                static_cast<long long>(timer.elapsed()));
        }
        QCOMPARE(slurm.report().jobs, jobs);
        QVERIFY(std::all_of(slurm.jobOfGpu().begin(), slurm.jobOfGpu().end(), [](uint64_t id) { return id != 0; }));
        QVERIFY(events.empty());
    }
};

QTEST_GUILESS_MAIN(TestSlurmJobs)
#include "tst_slurmjobs.moc"
