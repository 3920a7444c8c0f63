// SPDX-License-Identifier: Apache-2.0
// The console's reassembly of a Subscribe stream: the input is cut into FramePart messages (fuzzinput.h) and fed to
// one FrameAssembler, in order, as the telemetry session does, against a fixed topology of 64 GPUs made by the
// backend's encoder. A frame it completes must have every plane and health byte of the fleet.
#include "client/protodecode.h"
#include "fuzz/fuzzinput.h"
#include "service/frameencoder.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <cmath>

namespace {

using namespace fleetscope;

// The seeds (seeds.cpp) are frames for this topology.
constexpr uint32_t fleetGpus = 64;
constexpr uint64_t generation = 7;

TopologyPtr fixedTopology()
{
    QString error;
    auto topology
        = decodeTopology(backend::encodeTopology(backend::FleetShape::forGpuCount(fleetGpus), generation), &error);
    if (!topology || topology->gpuCount != fleetGpus) {
        __builtin_trap();
    }
    return topology;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const TopologyPtr topology = fixedTopology();
    FrameAssembler assembler(topology);
    size_t sum = 0;
    for (const auto bytes : fuzz::splitParts(data, size, 32)) {
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
        if (frame.health.size() != fleetGpus || frame.topologyGeneration != generation) {
            __builtin_trap();
        }
        for (const auto &plane : frame.planes) {
            if (plane.values.size() != fleetGpus) {
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
