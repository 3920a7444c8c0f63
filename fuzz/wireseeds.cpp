// SPDX-License-Identifier: Apache-2.0
// Seeds for what a backend sends the console, from the backend's own encoders: topology streams, frame parts, and the
// answers of QueryRange, StreamEvents, ListJobs, GetSummary and ListMetrics, and GetJob's.
#include "core/fleetshape.h"
#include "core/frame.h"
#include "core/incident.h"
#include "core/metriccatalog.h"
#include "fuzz/fuzzinput.h"
#include "fuzz/seeds.h"
#include "service/frameencoder.h"
#include "service/jobencoder.h"
#include "service/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace fleetscope::backend;
using fleetscope::fuzz::appendPart;
using fleetscope::fuzz::seeds::write;

// --- topology: an aspect byte, then TopologyPart messages with length prefixes (fuzzinput.h).

void topologySeeds()
{
    struct Seed
    {
        const char *name;
        uint32_t gpus;
        Hardware hardware;
        uint32_t nodesPerPart;
    };
    for (const Seed &s :
        { Seed { "hgx-8", 8, Hardware::HgxH100, 4096 }, Seed { "hgx-64-parts", 64, Hardware::HgxH100, 3 },
            Seed { "hgx-200", 200, Hardware::HgxH100, 16 }, Seed { "nvl72-144", 144, Hardware::Gb200Nvl72, 20 } }) {
        std::string input(1, static_cast<char>(12)); // aspect 13/8, about a screen's
        for (const auto &part : encodeTopology(FleetShape::forGpuCount(s.gpus, 1, s.hardware), 7, s.nodesPerPart)) {
            appendPart(&input, part.SerializeAsString());
        }
        write("topology", s.name, input);
    }
    // A fleet's shape from bytes (the high bit of the first byte): whatever the bytes, nearly always a topology.
    for (const auto &[name, seed] :
        std::vector<std::pair<const char *, uint8_t>> { { "shape-a", 3 }, { "shape-b", 101 } }) {
        std::string input(1, static_cast<char>(0x80 | 12));
        uint32_t x = seed;
        for (int i = 0; i < 256; ++i) {
            x = x * 1103515245U + 12345U;
            input.push_back(static_cast<char>(x >> 24U));
        }
        write("topology", name, input);
    }
}

// --- frameparts: a mode byte (fuzz_frameparts.cpp: bits 0-1 the fleet, 64, 8,192, 131,072 or 1,048,576 GPUs; bit 2 the
// four metrics below named), then FramePart messages with length prefixes.

Frame frameOf(uint64_t sequence, uint32_t gpus)
{
    Frame frame;
    frame.sequence = sequence;
    frame.sampleTimeMs = 1'700'000'000'000 + static_cast<int64_t>(sequence) * 1000;
    frame.health.assign(gpus, 0);
    frame.health[3] = 2;
    for (size_t m = 0; m < frame.planes.size(); ++m) {
        frame.planes[m].resize(gpus);
        for (uint32_t g = 0; g < gpus; ++g) {
            frame.planes[m][g] = static_cast<float>(m * 10 + g % 7);
        }
    }
    frame.planes[0][5] = std::numeric_limits<float>::quiet_NaN();
    return frame;
}

void framePartSeeds()
{
    constexpr uint32_t gpus = 64;
    constexpr uint64_t generation = 7;
    const std::vector<MetricId> few = { MetricId::GpuTemp, MetricId::Power, MetricId::GpuUtil, MetricId::HealthState };
    std::vector<MetricId> all;
    for (size_t m = 0; m < static_cast<size_t>(MetricId::Count); ++m) {
        all.push_back(static_cast<MetricId>(m));
    }
    // mode: the fuzzer's first byte; at most `parts` parts of each frame (the fuzzer reads 8 kB at most).
    const auto seed = [&](const char *name, uint8_t mode, const std::vector<std::vector<pb::FramePart>> &frames,
                          size_t parts = 64) {
        std::string input(1, static_cast<char>(mode));
        for (const auto &frame : frames) {
            for (size_t i = 0; i < frame.size() && i < parts; ++i) {
                appendPart(&input, frame[i].SerializeAsString());
            }
        }
        write("frameparts", name, input);
    };
    seed("one-part", 4, { encodeFrame(frameOf(1, gpus), few, generation) });
    seed("four-parts", 4, { encodeFrame(frameOf(2, gpus), few, generation, 16) });
    seed("every-metric", 0, { encodeFrame(frameOf(3, gpus), all, generation, 32) });
    seed("two-frames", 4,
        { encodeFrame(frameOf(4, gpus), few, generation, 32), encodeFrame(frameOf(5, gpus), few, generation, 32) });
    // The first parts of frames of the large fleets, where a part's claims (its part count, GPU count and planes) are
    // multiplied by the fleet: 8,192 GPUs in parts of 128, and a million.
    seed("fleet-8192-subscribed", 5, { encodeFrame(frameOf(7, 8192), few, generation, 128) }, 2);
    seed("fleet-8192-default", 1, { encodeFrame(frameOf(8, 8192), { MetricId::GpuTemp }, generation, 256) }, 2);
    seed("fleet-1m-subscribed", 7, { encodeFrame(frameOf(9, 1U << 20U), few, generation, 96) }, 1);
    seed("fleet-131072-default", 2,
        { encodeFrame(frameOf(10, 131072), { MetricId::Power, MetricId::GpuUtil }, generation, 64) }, 3);
    // The 16-bit encoding, which the backend can send but the encoder above does not: 0xFFFF is no value.
    auto parts = encodeFrame(frameOf(6, gpus), { MetricId::GpuTemp }, generation, 32);
    for (auto &part : parts) {
        auto *plane = part.mutable_planes(0);
        std::string values;
        for (uint32_t g = 0; g < part.gpu_count(); ++g) {
            const uint16_t raw = g == 1 ? 0xFFFF : static_cast<uint16_t>(g * 100);
            values.push_back(static_cast<char>(raw & 0xffU));
            values.push_back(static_cast<char>(raw >> 8U));
        }
        plane->set_encoding(pb::PLANE_ENCODING_UINT16);
        plane->set_scale(0.01F);
        plane->set_offset(20.0F);
        plane->set_values(values);
    }
    seed("uint16", 0, { parts });
}

// --- answers: a mode byte (fuzz_answers.cpp: answer, topology, none), then messages with length prefixes, for the
// topologies of 8 and 64 HGX GPUs.

void answerSeeds()
{
    // QueryRange: the request, then parts as the service writes them.
    const auto rangeSeed = [](const char *name, uint8_t mode, const std::vector<MetricId> &metrics,
                               const std::vector<uint32_t> &gpus, size_t rows, size_t rowsPerPart) {
        pb::QueryRangeRequest query;
        for (const MetricId m : metrics) {
            query.add_metric_ids(metricCatalog()[static_cast<size_t>(m)].key);
        }
        *query.mutable_gpus() = { gpus.begin(), gpus.end() };
        query.set_from_ms(1'700'000'000'000);
        query.set_to_ms(1'700'000'000'000 + static_cast<int64_t>(rows) * 15'000);
        query.set_step_ms(15'000);
        std::string input(1, static_cast<char>(mode));
        appendPart(&input, query.SerializeAsString());
        for (const MetricId m : metrics) {
            for (size_t r0 = 0; r0 < rows || r0 == 0; r0 += rowsPerPart) {
                auto part = rangePartHeader(m, gpus);
                const size_t r1 = std::min(rows, r0 + rowsPerPart);
                std::vector<float> values;
                for (size_t r = r0; r < r1; ++r) {
                    part.add_times_ms(query.from_ms() + static_cast<int64_t>(r) * 15'000);
                    part.add_sample_times_ms(query.from_ms() + static_cast<int64_t>(r) * 15'000 - 700);
                    for (size_t c = 0; c < gpus.size(); ++c) {
                        values.push_back(r == 1 && c == 0 ? std::numeric_limits<float>::quiet_NaN()
                                                          : static_cast<float>(40 + r + c));
                    }
                }
                part.set_values(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
                appendPart(&input, part.SerializeAsString());
                if (rows == 0) {
                    break;
                }
            }
        }
        write("answers", name, input);
    };
    rangeSeed("range-8", 0, { MetricId::GpuTemp, MetricId::Power }, { 0, 3, 7 }, 6, 4);
    rangeSeed("range-64", 4, { MetricId::GpuUtil }, { 10, 11, 12, 40, 63 }, 3, 3);
    rangeSeed("range-empty", 0x10, { MetricId::GpuTemp }, { 2 }, 0, 1);

    // StreamEvents: events as the service writes them (telemetryservice.cpp).
    const auto event = [](int64_t time, uint64_t sequence, pb::EventKind kind, pb::Severity severity, int64_t gpu,
                           int64_t node, uint64_t job, uint32_t xid, const char *text, const char *metric) {
        pb::Event e;
        e.set_time_ms(time);
        e.set_sequence(sequence);
        e.set_kind(kind);
        e.set_severity(severity);
        e.set_gpu(gpu);
        e.set_node(node);
        e.set_job_id(job);
        e.set_xid(xid);
        e.set_text(text);
        e.set_metric_id(metric);
        return e.SerializeAsString();
    };
    const int64_t t0 = 1'700'000'000'000;
    std::string events(1, '\1');
    appendPart(&events,
        event(t0, 1, pb::EVENT_KIND_XID, pb::SEVERITY_CRITICAL, 5, 0, 0, 79,
            "XID 79 on r01-k01-n01 GPU 5: GPU has fallen off the bus", ""));
    appendPart(
        &events, event(t0 + 1000, 2, pb::EVENT_KIND_NODE_DOWN, pb::SEVERITY_CRITICAL, -1, 0, 0, 0, "node down", ""));
    appendPart(&events,
        event(t0 + 2000, 3, pb::EVENT_KIND_ANOMALY_START, pb::SEVERITY_WARNING, 7, 0, 4711, 0,
            "GPU 7 runs hot against its job's peers", "gpu_temp"));
    appendPart(
        &events, event(t0 + 3000, 4, pb::EVENT_KIND_JOB_END, pb::SEVERITY_INFO, -1, -1, 4711, 0, "job ended", ""));
    write("answers", "events-8", events);
    events[0] = static_cast<char>(0x11); // without a topology
    write("answers", "events-none", events);

    // Incident events on 200 HGX GPUs (mode 0x09): a leaf's, opened, updated and closed, as encodeIncident writes them,
    // and a single GPU's without a domain.
    const auto incidentEvent = [](int64_t time, uint64_t sequence, pb::EventKind kind, const Incident &incident,
                                   int64_t gpu, const char *text) {
        pb::Event e;
        e.set_time_ms(time);
        e.set_sequence(sequence);
        e.set_kind(kind);
        e.set_severity(pb::SEVERITY_CRITICAL);
        e.set_gpu(gpu);
        e.set_node(gpu >= 0 ? gpu / 8 : -1);
        e.set_text(text);
        encodeIncident(incident, e.mutable_incident());
        return e.SerializeAsString();
    };
    const FleetShape incidentShape = FleetShape::forGpuCount(200, 1, Hardware::HgxH100);
    Incident leaf;
    leaf.id = 1;
    leaf.startSeconds = 1'700'000'000.0;
    leaf.domain = -1;
    for (size_t d = 0; d < incidentShape.domains.size(); ++d) {
        if (incidentShape.domains[d].kind == DomainKind::LeafSwitch && incidentShape.domains[d].rail == 5) {
            leaf.domain = static_cast<int64_t>(d);
            break;
        }
    }
    leaf.cause = "network";
    leaf.evidence = "24 of 25 GPUs behind leaf su01-l5 lost their link within 4 s; no other leaf did";
    for (uint32_t g = 5; g < 200; g += 8) {
        leaf.gpuRuns.emplace_back(g, 1);
    }
    leaf.gpuRuns.pop_back();
    leaf.gpuCount = static_cast<uint32_t>(leaf.gpuRuns.size());
    leaf.jobs = { 4711, 4712 };
    Incident gpu;
    gpu.id = 2;
    gpu.startSeconds = 1'700'000'030.0;
    gpu.cause = "gpu";
    gpu.evidence = "XID 79: GPU has fallen off the bus";
    gpu.gpuCount = 1;
    gpu.gpuRuns = { { 42, 1 } };
    gpu.jobs = { 4711 };
    std::string incidents(1, static_cast<char>(1 | 8));
    appendPart(&incidents,
        incidentEvent(t0, 10, pb::EVENT_KIND_INCIDENT_OPEN, leaf, -1, "Leaf su01-l5 down: 24 GPUs lost their link"));
    appendPart(&incidents,
        incidentEvent(
            t0 + 30'000, 11, pb::EVENT_KIND_INCIDENT_OPEN, gpu, 42, "XID 79 on r01-k02-n02 GPU 2: fallen off the bus"));
    leaf.gpuRuns.emplace_back(197, 1);
    leaf.gpuCount += 1;
    appendPart(&incidents,
        incidentEvent(
            t0 + 60'000, 12, pb::EVENT_KIND_INCIDENT_UPDATE, leaf, -1, "Leaf su01-l5 down: 25 GPUs lost their link"));
    appendPart(&incidents,
        incidentEvent(t0 + 600'000, 13, pb::EVENT_KIND_INCIDENT_CLOSE, leaf, -1, "Leaf su01-l5 back: 25 GPUs linked"));
    write("answers", "events-incidents-200", incidents);
    incidents[0] = static_cast<char>(0x11); // without a topology
    write("answers", "events-incidents-none", incidents);

    // ListJobs: running jobs, then an ended one on GPUs a running one holds now.
    pb::ListJobsResponse jobs;
    const auto job = [&jobs](uint64_t id, const char *name, const std::vector<uint32_t> &gpus, int64_t end) {
        auto *j = jobs.add_jobs();
        j->set_id(id);
        j->set_name(name);
        j->set_owner("ada");
        *j->mutable_gpus() = { gpus.begin(), gpus.end() };
        j->set_start_time_ms(1'700'000'000'000);
        j->set_last_checkpoint_ms(end == 0 ? 1'700'000'600'000 : 0);
        j->set_end_time_ms(end);
    };
    job(4711, "train-llm", { 0, 1, 2, 3 }, 0);
    job(4712, "eval", { 4, 5 }, 0);
    job(4700, "old", { 0, 1, 6 }, 1'699'999'000'000);
    std::string jobsInput(1, static_cast<char>(2 | 4)); // 64 GPUs
    appendPart(&jobsInput, jobs.SerializeAsString());
    write("answers", "jobs-64", jobsInput);
    jobsInput[0] = 2; // 8 GPUs
    write("answers", "jobs-8", jobsInput);

    // ListJobs at 8,192 GPUs (bit 6), GPUs in runs as the encoder sends them: a running job on half the fleet, and
    // ended ones each run over all of it (hundreds of them once expanded to billions of entries).
    pb::ListJobsResponse runs;
    const auto runJob = [&runs](uint64_t id, uint32_t first, uint32_t count, int64_t end) {
        auto *j = runs.add_jobs();
        j->set_id(id);
        j->set_name("run-" + std::to_string(id));
        j->set_owner("ada");
        auto *run = j->add_gpu_runs();
        run->set_first(first);
        run->set_count(count);
        j->set_start_time_ms(1'700'000'000'000 + static_cast<int64_t>(id));
        j->set_end_time_ms(end);
    };
    runJob(1, 0, 4096, 0);
    runJob(2, 4096, 8, 0);
    for (uint64_t id = 3; id < 40; ++id) {
        runJob(id, 0, 8192, 1'700'000'100'000);
    }
    runs.set_ended_jobs_left_out(3);
    std::string runsInput(1, static_cast<char>(2 | 0x40)); // 8,192 GPUs
    appendPart(&runsInput, runs.SerializeAsString());
    write("answers", "jobs-8192-runs", runsInput);
    runsInput[0] = static_cast<char>(2 | 0x40 | 8); // 131,072 GPUs
    write("answers", "jobs-131072-runs", runsInput);

    // GetSummary: the backend's summarise over three frames of 64 GPUs, an XID and a job, with two repeat offenders.
    const FleetShape shape = FleetShape::forGpuCount(64);
    std::vector<std::shared_ptr<const Frame>> frames;
    for (uint64_t i = 1; i <= 3; ++i) {
        frames.push_back(std::make_shared<Frame>(frameOf(i, 64)));
    }
    TimedEvent xid;
    xid.sequence = 1;
    xid.timeMs = frames[1]->sampleTimeMs;
    xid.event.kind = FleetEvent::Kind::Xid;
    xid.event.severity = FleetEvent::Severity::Critical;
    xid.event.gpu = 3;
    xid.event.node = 0;
    xid.event.xid = 79;
    JobInfo train;
    train.id = 4711;
    train.name = "train-llm";
    train.owner = "ada";
    train.gpuCount = 16;
    train.startMs = frames[0]->sampleTimeMs;
    pb::Summary answer
        = summarise(shape, frames, { xid }, { train }, frames[0]->sampleTimeMs, frames[2]->sampleTimeMs + 1000, 20);
    for (const auto &[gpu, score] : std::vector<std::pair<uint32_t, double>> { { 3, 4.5 }, { 17, 1.25 } }) {
        auto *o = answer.add_repeat_offenders();
        o->set_gpu(gpu);
        o->set_score(score);
        o->set_xids(score);
        o->set_serious_xids(1);
        o->set_throttle_hours(0.5);
    }
    answer.set_top_percent_failure_share(0.4);
    std::string summaryInput(1, static_cast<char>(3 | 4));
    appendPart(&summaryInput, answer.SerializeAsString());
    write("answers", "summary-64", summaryInput);

    // ListMetrics: the catalogue as the service lists it for a simulated fleet (mode bit 5).
    pb::ListMetricsResponse catalogue;
    const FleetShape catalogueShape = FleetShape::forGpuCount(64, 1, Hardware::HgxH100);
    fillMetricCatalog(&catalogue, &catalogueShape);
    std::string catalogueInput(1, static_cast<char>(0x20));
    appendPart(&catalogueInput, catalogue.SerializeAsString());
    write("answers", "catalogue", catalogueInput);
}

// --- jobdecode: a mode byte (fuzz_jobdecode.cpp: bits 0-1 the fleet, bit 2 a Summary), then one message, from the
// backend's job encoder: a job's account on 16 GPUs of the 64-GPU fleet, the same on 8 GPUs listed one by one of the
// fleet of 8, and a summary's goodput.

void jobSeeds()
{
    JobReport report;
    report.job.id = 4711;
    report.job.name = "train-llm-16";
    report.job.owner = "ana";
    report.job.firstGpu = 8;
    report.job.gpuCount = 16;
    report.job.startMs = 1'767'225'600'000;
    report.watchedFromMs = report.job.startMs;
    report.asOfMs = report.job.startMs + 7'200'000;
    report.gpuHours = 32;
    report.productiveGpuHours = 24;
    report.goodput = 0.75;
    report.losses = { { LossCause::Incident, 5, 12, 1, -1, -1, 4711, 0, "incident 12: leaf su01-l1 down" },
        { LossCause::Straggler, 3, 0, -1, 13, -1, 4711, 0, "GPU 13 18% slow" } };
    report.stragglers = { { 13, 2.5F, MetricId::SmClock, 1410, 1980, 0.28F, report.job.startMs + 3'600'000, 3,
        "SM clock 1,410 MHz against the job's 1,980 MHz for 6 min" } };
    const std::pair<JobPhase, int64_t> spans[] = { { JobPhase::Compute, 0 }, { JobPhase::Stall, 3'000'000 },
        { JobPhase::Restart, 3'600'000 }, { JobPhase::Compute, 3'700'000 } };
    for (size_t i = 0; i < std::size(spans); ++i) {
        const int64_t to = i + 1 < std::size(spans) ? spans[i + 1].second : 7'200'000;
        report.phases.push_back({ spans[i].first, report.job.startMs + spans[i].second, report.job.startMs + to,
            i == 1 ? 12U : 0U, i == 1 ? "leaf su01-l1 down" : "" });
    }
    for (int i = 0; i < 12; ++i) {
        report.band.push_back({ report.job.startMs + i * 600'000, 80.0F + static_cast<float>(i % 3), 90, 98, 16 });
    }
    report.phase = JobPhase::Compute;
    report.stepSeconds = 12.5;
    report.allReduceShare = 0.18;
    report.restarts = 1;
    report.checkpointLimitSeconds = 120;
    const auto seed = [](const char *name, uint8_t mode, const JobReport &r) {
        pb::JobReport answer;
        std::string error;
        if (!encodeJobReport(r, &answer, &error)) {
            std::fprintf(stderr, "%s: %s\n", name, error.c_str());
            return;
        }
        write("jobdecode", name, std::string(1, static_cast<char>(mode)) + answer.SerializeAsString());
    };
    seed("report-64", 1, report);
    JobReport listed = report;
    listed.job.firstGpu = 0;
    listed.job.gpuCount = 8;
    listed.job.gpus = { 0, 1, 2, 3, 4, 5, 6, 7 };
    listed.losses[1].gpu = 5;
    listed.stragglers[0].gpu = 5;
    listed.gpuHours = 16;
    listed.productiveGpuHours = 12;
    for (auto &point : listed.band) {
        point.reporting = 8;
    }
    seed("report-8-listed", 0, listed);

    GoodputSummary goodput;
    goodput.jobs = 3;
    goodput.jobGpuHours = 500;
    goodput.productiveGpuHours = 400;
    goodput.losses = report.losses;
    for (auto &loss : goodput.losses) {
        loss.jobId = 0;
        loss.jobs = 1;
    }
    pb::Summary summary;
    summary.set_from_ms(report.job.startMs);
    summary.set_to_ms(report.job.startMs + 36'000'000);
    summary.mutable_fleet()->set_name("fleet");
    summary.mutable_fleet()->set_gpu_count(64);
    encodeGoodput(goodput, &summary);
    write("jobdecode", "summary-64", std::string(1, static_cast<char>(4 | 1)) + summary.SerializeAsString());
}

} // namespace

namespace fleetscope::fuzz::seeds {

void wireSeeds()
{
    topologySeeds();
    framePartSeeds();
    answerSeeds();
    jobSeeds();
}

} // namespace fleetscope::fuzz::seeds
