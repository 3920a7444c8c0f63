// SPDX-License-Identifier: Apache-2.0
// Writes the seed corpora, fuzz/corpus/<target>/, from the real encoders (topology and frame parts and QueryRange
// parts' headers as the backend sends them, remote-write bodies as a sender builds them, view strings as the console
// formats them) and a few answers, requests and files by hand. Run once, by hand:
//   build/fuzz/bin/fuzz_seeds .     (from the source tree; the files are checked in)
#include "core/fleetshape.h"
#include "core/frame.h"
#include "core/metriccatalog.h"
#include "fuzz/fuzzinput.h"
#include "model/viewstate.h"
#include "model/wallplaylist.h"
#include "service/frameencoder.h"
#include "service/summary.h"

#include "prometheus/remote.pb.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <snappy.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace fleetscope::backend;
using fleetscope::fuzz::appendPart;
namespace fs = std::filesystem;

fs::path g_root;

void write(const std::string &target, const std::string &name, const std::string &bytes)
{
    const fs::path dir = g_root / "fuzz" / "corpus" / target;
    fs::create_directories(dir);
    std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string readText(const fs::path &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// --- remotewrite: a mode byte (fuzz_remotewrite.cpp), then the body.

std::string writeRequest(int hosts, int gpus, const char *nodeLabel, int samples, bool jobLabels)
{
    prometheus::WriteRequest request;
    for (const char *field : { "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL" }) {
        for (int h = 0; h < hosts; ++h) {
            for (int g = 0; g < gpus; ++g) {
                auto *ts = request.add_timeseries();
                const std::string host = "r01-k01-n0" + std::to_string(h + 1);
                const std::vector<std::pair<std::string, std::string>> labels
                    = { { "__name__", field }, { nodeLabel, host }, { "gpu", std::to_string(g) },
                          { "UUID", "GPU-5e0d3c2a-0000-4000-8000-00000000000" + std::to_string(g) },
                          { "modelName", "NVIDIA H100 80GB HBM3" }, { "DCGM_FI_DRIVER_VERSION", "550.90.07" },
                          { "job", "dcgm-exporter" } };
                for (const auto &[name, value] : labels) {
                    auto *l = ts->add_labels();
                    l->set_name(name);
                    l->set_value(value);
                }
                if (jobLabels) {
                    auto *l = ts->add_labels();
                    l->set_name("exported_pod");
                    l->set_value("train-llm-0");
                }
                for (int s = 0; s < samples; ++s) {
                    auto *sample = ts->add_samples();
                    sample->set_timestamp(1'700'000'000'000 + 15'000 * s);
                    sample->set_value(40.5 + g + s);
                }
            }
        }
    }
    return request.SerializeAsString();
}

std::string snappyOf(const std::string &bytes)
{
    std::string out;
    snappy::Compress(bytes.data(), bytes.size(), &out);
    return out;
}

void remoteWriteSeeds()
{
    const std::string small = writeRequest(1, 2, "Hostname", 1, false);
    const std::string wider = writeRequest(2, 4, "hostname", 2, true);
    prometheus::WriteRequest odd; // NaN and a stale marker's bits, a negative time, an empty value
    auto *ts = odd.add_timeseries();
    for (const auto &[name, value] :
        std::vector<std::pair<std::string, std::string>> { { "__name__", "DCGM_FI_DEV_XID_ERRORS" },
            { "Hostname", "n\xc3\xa9" }, { "gpu", "0" }, { "err_msg", "" } }) {
        auto *l = ts->add_labels();
        l->set_name(name);
        l->set_value(value);
    }
    ts->add_samples()->set_value(std::numeric_limits<double>::quiet_NaN());
    ts->add_samples()->set_timestamp(-1);
    const std::string oddBytes = odd.SerializeAsString();
    write("remotewrite", "snappy-small", std::string(1, '\0') + snappyOf(small));
    write("remotewrite", "snappy-wider", std::string(1, '\0') + snappyOf(wider));
    write("remotewrite", "snappy-odd", std::string(1, '\0') + snappyOf(oddBytes));
    write("remotewrite", "raw-small", std::string(1, '\1') + small);
    write("remotewrite", "raw-wider", std::string(1, '\1') + wider);
    write("remotewrite", "raw-odd", std::string(1, '\1') + oddBytes);
    write("remotewrite", "receiver-small", std::string(1, '\2') + snappyOf(small));
    write("remotewrite", "receiver-wider", std::string(1, '\2') + snappyOf(wider));
}

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

// --- promjson: a mode byte (fuzz_promjson.cpp), then the answer's body.

void promJsonSeeds()
{
    const std::string vector
        = R"({"status":"success","data":{"resultType":"vector","result":[)"
          R"({"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","Hostname":"r01-k01-n01","gpu":"0",)"
          R"("UUID":"GPU-5e0d3c2a-0000-4000-8000-000000000000","modelName":"NVIDIA H100 80GB HBM3",)"
          R"("DCGM_FI_DRIVER_VERSION":"550.90.07","hall":"h1","row":"r01","rack":"r01-k01",)"
          R"("exported_namespace":"ml","exported_pod":"train-0","container":"main"},)"
          R"("value":[1700000100.000,"41"]},)"
          R"({"metric":{"hostname":"r01-k01-n02","gpu":"1","hpc_job":"4711","hpc_user":"ada"},)"
          R"("value":[1700000100.5,"NaN"]},)"
          R"({"metric":{"Hostname":"r01-k01-n02","gpu":"2"},"value":[1700000100,"+Inf"]}]}})";
    const std::string matrix = R"({"status":"success","data":{"resultType":"matrix","result":[)"
                               R"({"metric":{"Hostname":"r01-k01-n01","gpu":"0"},"values":[[1700000000,"40"],)"
                               R"([1700000015.000,"41.5"],[1700000030.25,"-Inf"]]},)"
                               R"({"metric":{"Hostname":"r01-k01-n01","gpu":"1"},"values":[[1700000000,"1e3"]]},)"
                               R"({"metric":{"hostname":"r01-k01-n02","gpu":"0"},"values":[]}]}})";
    const std::string error
        = R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": parse error"})";
    write("promjson", "vector-labels", std::string(1, '\0') + vector);
    write("promjson", "vector-placement", std::string(1, '\1') + vector);
    write("promjson", "vector-jobs", std::string(1, '\2') + vector);
    write("promjson", "matrix", std::string(1, '\3') + matrix);
    write("promjson", "error", std::string(1, '\0') + error);
    write("promjson", "empty-vector",
        std::string(1, '\1') + R"({"status":"success","data":{"resultType":"vector","result":[]}})");
}

// --- topologyfile: a syntax byte (even JSON, odd YAML), then the file.

void topologyFileSeeds()
{
    write("topologyfile", "example-json", std::string(1, '\0') + readText(g_root / "docs" / "topology-example.json"));
    write("topologyfile", "example-yaml", std::string(1, '\1') + readText(g_root / "docs" / "topology-example.yaml"));
    write("topologyfile", "nvl72-json",
        std::string(1, '\0')
            + R"({"site":"lab","gpusPerNode":4,"halls":[{"name":"h1","rows":[{"name":"r01","racks":[)"
              R"({"name":"r01-k01","nvlinkDomain":true,"hosts":["t01","t02",{"hostname":"t03","gpus":2}]},)"
              R"({"name":"r01-k02","gpusPerNode":8,"hosts":["n01"]}]}]}]})");
    write("topologyfile", "small-yaml",
        std::string(1, '\1')
            + "site: lab\ngpusPerNode: 8\nhalls:\n  - name: h1\n    rows:\n      - name: \"07\"\n        racks:\n"
              "          - name: r07-k01\n            hosts: [n01, {hostname: n02, gpus: 4}]\n"
              "          - name: r07-k02\n            nvlinkDomain: false\n            hosts:\n              - n03\n");
}

// --- httphead: one connection's bytes, requests one after another.

void httpHeadSeeds()
{
    write("httphead", "scrape",
        "GET /metrics HTTP/1.1\r\nHost: r01-k01-n01:9400\r\nUser-Agent: Prometheus/2.53.0\r\n"
        "Accept: application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1\r\n"
        "Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n");
    write("httphead", "scrapes-pipelined",
        "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\nHEAD /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    write("httphead", "remote-write",
        "POST /api/v1/write HTTP/1.1\r\nHost: fleetscope:9201\r\nContent-Encoding: snappy\r\n"
        "Content-Type: application/x-protobuf\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\nContent-Length: 5\r\n"
        "\r\nabcdePOST /api/v1/write HTTP/1.1\r\nContent-Length: 0\r\nExpect: 100-continue\r\n\r\n");
    write("httphead", "http10-keep-alive",
        "GET /metrics?x=1 HTTP/1.0\r\nConnection: Keep-Alive, Upgrade\r\n\r\nGET / HTTP/1.0\r\n\r\n");
    write("httphead", "chunked",
        "POST /api/v1/write HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n");
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

// --- tokenfile: the file's text.

void tokenFileSeeds()
{
    write("tokenfile", "two-tokens",
        "# console tokens, one per line\n3q2+7w==AbCdEf0123456789\n\n  console-wall-7f3a  \r\n#retired: old\n");
    write("tokenfile", "one-token", "s3cr3t-t0k3n");
    write("tokenfile", "comments-only", "# none yet\n\n");
}

// --- configfile: a mode byte (fuzz_configfile.cpp: even the text alone, odd through the command line), then the
// file.

void configFileSeeds()
{
    const std::string packaged = readText(g_root / "packaging" / "backend.yaml");
    write("configfile", "packaged-text", std::string(1, '\0') + packaged);
    write("configfile", "packaged-options", std::string(1, '\1') + packaged);
    const std::string small = "listen: 127.0.0.1:50051\ngpus: 512\nscenario: cooling-failure\n"
                              "insecure-listen: true\nexporter-listen: \"127.0.0.1:9400\"\n";
    write("configfile", "small-text", std::string(1, '\0') + small);
    write("configfile", "small-options", std::string(1, '\1') + small);
    write("configfile", "bad-flag", std::string(1, '\1') + "insecure-listen: maybe\n");
    write("configfile", "list", std::string(1, '\0') + "allow:\n  - 10.0.0.0/8\n  - 192.168.0.0/16\ngpus: [1, 2]\n");
}

// --- viewstring: the text, as ViewState::toString() writes it (Copy view) and as a person pastes it.

std::vector<fleetscope::ViewState> sampleViews()
{
    using fleetscope::ViewState;
    ViewState incident; // the header's example
    incident.place = QStringLiteral("rack:37");
    incident.fleetGpus = 20000;
    incident.selectedGpu = 3301;
    incident.metric = QStringLiteral("gpu_temp");
    incident.live = false;
    incident.timeMs = 1714533120000; // 2024-05-01T03:12:00Z
    incident.arrangement = QStringLiteral("compact");
    incident.zoom = 4.5;
    incident.centreX = 812.5;
    incident.centreY = 233;
    ViewState everything = incident;
    everything.place = QStringLiteral("node:131071");
    everything.fleetGpus = 1048576;
    everything.selectedGpu = 1048575;
    everything.metric = QStringLiteral("power_usage");
    everything.colourMap = QStringLiteral("coolwarm");
    everything.timeMs = 1714533120123;
    everything.arrangement = QStringLiteral("jobs");
    everything.zoom = 0.1;
    everything.centreX = -12.345678901234567;
    everything.centreY = 1.0 / 3.0;
    everything.range = QStringLiteral("auto");
    everything.changeWindowS = 300;
    ViewState row;
    row.place = QStringLiteral("row:0");
    row.metric = QStringLiteral("gpu_util");
    row.range = QStringLiteral("auto");
    row.changeWindowS = 60;
    return { ViewState {}, incident, everything, row };
}

void viewStringSeeds()
{
    const char *names[] = { "defaults", "incident", "every-field", "live-row" };
    const auto views = sampleViews();
    for (size_t i = 0; i < views.size(); ++i) {
        write("viewstring", names[i], views[i].toString().toStdString());
    }
    // Pasted: blanks around it, keys in another order, t=live.
    write("viewstring", "pasted", "  fs1;a=compact;t=live;z=2@100.5,-3e2;p=gpu:12\n");
}

// --- playlist: the file, as docs/wall-playlist-example.json shows it, and pages written by Qt's JSON writer.

std::string playlistJson(const std::vector<fleetscope::WallPage> &pages)
{
    using fleetscope::WallPage;
    const WallPage defaults;
    QJsonArray array;
    for (const WallPage &page : pages) {
        QJsonObject o;
        o.insert(QStringLiteral("show"), WallPage::kindName(page.kind));
        o.insert(QStringLiteral("seconds"), page.seconds);
        if (!page.metric.isEmpty()) {
            o.insert(QStringLiteral("metric"), page.metric);
        }
        if (page.kind == WallPage::Kind::Replay) {
            o.insert(QStringLiteral("minutes"), page.replayMinutes);
            o.insert(QStringLiteral("speed"), page.replaySpeed);
        }
        if (page.kind == WallPage::Kind::View) {
            o.insert(QStringLiteral("view"), page.view);
        }
        array.append(o);
    }
    QJsonObject root;
    root.insert(QStringLiteral("pages"), array);
    return QJsonDocument(root).toJson(QJsonDocument::Indented).toStdString();
}

void playlistSeeds()
{
    using fleetscope::WallPage;
    write("playlist", "example", readText(g_root / "docs" / "wall-playlist-example.json"));
    write("playlist", "defaults", playlistJson(fleetscope::WallPlaylist::defaultPages()));
    std::vector<WallPage> every(7);
    const WallPage::Kind kinds[] = { WallPage::Kind::Fleet, WallPage::Kind::HottestRow, WallPage::Kind::Summary,
        WallPage::Kind::Events, WallPage::Kind::Problems, WallPage::Kind::Replay, WallPage::Kind::View };
    for (size_t i = 0; i < every.size(); ++i) {
        every[i].kind = kinds[i];
        every[i].seconds = 3 + static_cast<int>(i) * 7;
    }
    every[0].metric = QStringLiteral("power_usage");
    every[1].metric = QStringLiteral("gpu_temp");
    every[5].metric = QStringLiteral("gpu_util");
    every[5].replayMinutes = 5;
    every[5].replaySpeed = 60;
    every[6].view = sampleViews()[1].toString();
    write("playlist", "every-kind", playlistJson(every));
    std::vector<WallPage> views(2);
    for (size_t i = 0; i < views.size(); ++i) {
        views[i].kind = WallPage::Kind::View;
        views[i].view = sampleViews()[i + 2].toString();
    }
    write("playlist", "views", playlistJson(views));
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_seeds SOURCE_DIR\n");
        return 2;
    }
    g_root = argv[1];
    remoteWriteSeeds();
    topologySeeds();
    framePartSeeds();
    promJsonSeeds();
    topologyFileSeeds();
    httpHeadSeeds();
    answerSeeds();
    tokenFileSeeds();
    configFileSeeds();
    viewStringSeeds();
    playlistSeeds();
    return 0;
}
