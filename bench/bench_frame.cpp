// SPDX-License-Identifier: Apache-2.0
// The cost of one frame through the pipeline, at 10k / 100k / 1M GPUs, against a memcpy of the same bytes measured
// in the same run: simulate, encode to FrameParts, serialise (what gRPC sends), parse and reassemble in the client.
//
//   build/dev/bin/bench_frame [repetitions]
#include "bench/timing.h"
#include "bench/wiredecode.h"
#include "client/protodecode.h"
#include "service/frameencoder.h"
#include "sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace be = fleetscope::backend;
using fleetscope::bench::medianMs;

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 9;
    // The eight metrics a console usually streams: temperatures, power, utilisations, clock, memory, XID count.
    const std::vector<be::MetricId> all
        = { be::MetricId::GpuTemp, be::MetricId::MemTemp, be::MetricId::Power, be::MetricId::GpuUtil,
              be::MetricId::MemCopyUtil, be::MetricId::SmClock, be::MetricId::FbUsed, be::MetricId::XidErrors };
    fmt::print("metrics per frame: {} (the simulator computes all {}); median of {} runs; times in ms\n\n", all.size(),
        be::metricCatalog().size(), reps);
    fmt::print("{:>9} {:>6} {:>7} {:>7} {:>9} {:>7} {:>8} {:>7} {:>10} {:>13} {:>13}\n", "GPUs", "MiB", "memcpy",
        "step", "snapshot", "encode", "serial.", "decode", "frame cost", "encode/memcpy", "decode/memcpy");
    for (const uint32_t gpus : { 10240U, 102400U, 1048576U }) {
        be::Simulator sim(gpus, 1);
        sim.step();
        const size_t bytes = static_cast<size_t>(gpus) * (all.size() * sizeof(float) + 1);
        std::vector<char> src(bytes, 1);
        std::vector<char> dst(bytes);
        const double memcpyMs = medianMs(reps, [&] { std::memcpy(dst.data(), src.data(), bytes); });

        const double stepMs = medianMs(reps, [&] { sim.step(); });
        std::shared_ptr<be::Frame> frame;
        const double snapshotMs = medianMs(reps, [&] { frame = sim.snapshot(); });
        std::vector<be::pb::FramePart> parts;
        const double encodeMs = medianMs(reps, [&] { parts = be::encodeFrame(*frame, all, 1); });
        std::vector<std::string> wire(parts.size());
        const double serialiseMs = medianMs(reps, [&] {
            for (size_t i = 0; i < parts.size(); ++i) {
                parts[i].SerializeToString(&wire[i]);
            }
        });

        QString error;
        const auto topology = fleetscope::decodeTopology(be::encodeTopology(sim.shape(), 1), &error);
        fleetscope::FramePtr decoded;
        const double decodeMs = medianMs(reps, [&] { decoded = fleetscope::bench::decodeWire(topology, wire); });
        if (!decoded) {
            fmt::print(stderr, "decode failed\n");
            return 1;
        }
        // What one frame costs the backend: simulate, snapshot, encode, serialise.
        const double frameCost = stepMs + snapshotMs + encodeMs + serialiseMs;
        fmt::print(
            "{:>9} {:>6.1f} {:>7.3f} {:>7.2f} {:>9.2f} {:>7.2f} {:>8.2f} {:>7.2f} {:>10.1f} {:>13.1f} {:>13.1f}\n",
            gpus, bytes / 1048576.0, memcpyMs, stepMs, snapshotMs, encodeMs, serialiseMs, decodeMs, frameCost,
            (encodeMs + serialiseMs) / memcpyMs, decodeMs / memcpyMs);
    }
    return 0;
}
