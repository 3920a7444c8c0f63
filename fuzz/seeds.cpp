// SPDX-License-Identifier: Apache-2.0
// Writes the seed corpora, fuzz/corpus/<target>/, from the real encoders (topology and frame parts as the backend
// sends them, remote-write bodies as a sender builds them) and a few answers and files by hand. Run once, by hand:
//   build/fuzz/bin/fuzz_seeds .     (from the source tree; the files are checked in)
#include "core/fleetshape.h"
#include "core/frame.h"
#include "fuzz/fuzzinput.h"
#include "service/frameencoder.h"

#include "prometheus/remote.pb.h"

#include <snappy.h>

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

// --- frameparts: FramePart messages with length prefixes, for the 64-GPU topology of fuzz_frameparts.cpp.

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
    const auto seed = [&](const char *name, const std::vector<std::vector<pb::FramePart>> &frames) {
        std::string input;
        for (const auto &parts : frames) {
            for (const auto &part : parts) {
                appendPart(&input, part.SerializeAsString());
            }
        }
        write("frameparts", name, input);
    };
    seed("one-part", { encodeFrame(frameOf(1, gpus), few, generation) });
    seed("four-parts", { encodeFrame(frameOf(2, gpus), few, generation, 16) });
    seed("every-metric", { encodeFrame(frameOf(3, gpus), all, generation, 32) });
    seed("two-frames",
        { encodeFrame(frameOf(4, gpus), few, generation, 32), encodeFrame(frameOf(5, gpus), few, generation, 32) });
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
    seed("uint16", { parts });
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
    return 0;
}
