// SPDX-License-Identifier: Apache-2.0
// The console's reassembly of a Subscribe stream: the first byte picks the fleet (bits 0-1: 64, 8,192, 131,072 or
// 1,048,576 GPUs, topologies made by the backend's encoder) and the subscription (bit 2: the default set, or the four
// metrics the seeds carry named); the rest is cut into FramePart messages (fuzzinput.h) and fed to one FrameAssembler,
// in order, as the telemetry session does. A frame it completes must have every plane and health byte of the fleet,
// its planes distinct and, when named, exactly those subscribed. The fleets past 64 are where a part's claims multiply
// (a part of no GPU with many empty planes once sized each of them to the fleet): an input of a few kB that makes
// the assembler allocate past libFuzzer's memory limit is a finding.
#include "client/protodecode.h"
#include "fuzz/fuzzinput.h"
#include "service/frameencoder.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace fleetscope;

// The seeds (wireseeds.cpp) are frames for these topologies.
constexpr std::array<uint32_t, 4> fleetGpus = { 64, 8192, 131072, 1U << 20U };
constexpr uint64_t generation = 7;

TopologyPtr topologyOf(uint32_t gpus)
{
    QString error;
    auto topology = decodeTopology(backend::encodeTopology(backend::FleetShape::forGpuCount(gpus), generation), &error);
    if (!topology || topology->gpuCount != gpus) {
        __builtin_trap();
    }
    return topology;
}

// Made once, before the first input: a million GPUs' topology takes seconds under the sanitizers, past libFuzzer's
// time limit for one input.
std::array<TopologyPtr, 4> g_topologies;

const std::vector<std::string> &subscription()
{
    static const std::vector<std::string> ids = { "gpu_temp", "power", "gpu_util", "health" };
    return ids;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    // A metric id that is not UTF-8 fails the parse, as on the wire, without protobuf's line on stderr each time.
    google::protobuf::SetLogHandler(nullptr);
    for (size_t i = 0; i < fleetGpus.size(); ++i) {
        g_topologies[i] = topologyOf(fleetGpus[i]);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const TopologyPtr &topology = g_topologies[data[0] & 3U];
    const uint32_t n = topology->gpuCount;
    const bool subscribed = (data[0] & 4U) != 0;
    FrameAssembler assembler(topology, subscribed ? subscription() : std::vector<std::string> {});
    size_t sum = 0;
    for (const auto bytes : fuzz::splitParts(data + 1, size - 1, 32)) {
        pb::FramePart part;
        if (!part.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
            return 0;
        }
        const auto result = assembler.add(part);
        if (result.frame && !result.error.isEmpty()) {
            __builtin_trap(); // a frame and a reason to drop it
        }
        if (!result.frame) {
            continue;
        }
        const Frame &frame = *result.frame;
        if (frame.health.size() != n || frame.topologyGeneration != generation) {
            __builtin_trap();
        }
        if (frame.planes.size() > static_cast<size_t>(maxCatalogueMetrics)
            || (subscribed && frame.planes.size() != subscription().size())) {
            __builtin_trap(); // planes other than those subscribed
        }
        for (size_t i = 0; i < frame.planes.size(); ++i) {
            const auto &plane = frame.planes[i];
            if (plane.values.size() != n || plane.values.capacity() != n) {
                __builtin_trap(); // a plane not the fleet's size, or holding room past it
            }
            for (size_t k = 0; k < i; ++k) {
                if (frame.planes[k].metricId == plane.metricId) {
                    __builtin_trap(); // one metric twice
                }
            }
            if (subscribed
                && std::find(subscription().begin(), subscription().end(), plane.metricId.toStdString())
                    == subscription().end()) {
                __builtin_trap();
            }
            for (const float v : plane.values) {
                sum += std::isnan(v) ? 1 : 0;
            }
        }
        for (const auto h : frame.health) {
            sum += h;
        }
    }
    fuzz::sink = sum;
    return 0;
}
