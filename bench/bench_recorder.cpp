// SPDX-License-Identifier: Apache-2.0
// The flight recorder on simulator frames (the four default metrics, one-second steps after ten simulated minutes of
// warm-up): bytes per stored value per metric and overall, record() per frame against a memcpy of the same bytes in
// the same run, and frameAt() over random times (mean and worst) and stepping frame by frame (replay). Each size runs
// on the simulator's values as sent, and on the same values rounded as DCGM reports them (whole °C, whole %, power
// in mW): the simulator sends full-precision floats that no real exporter would.
//
//   build/dev/bin/bench_recorder [frames] [gpus...]        default: 120 frames at 10240 and 102400 GPUs
//   build/dev/bin/bench_recorder --sweep                   encodings compared at 10240 GPUs, 240 frames
#include "bench/timing.h"
#include "core/metriccatalog.h"
#include "model/flightrecorder.h"
#include "sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace be = fleetscope::backend;
using fleetscope::FlightRecorder;
using fleetscope::FlightRecorderOptions;
using fleetscope::Frame;
using fleetscope::FramePtr;
using fleetscope::bench::median;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// As DCGM reports them: temperatures in whole °C, utilisation in whole %, power in milliwatts.
float dcgmRounded(be::MetricId id, float v)
{
    if (std::isnan(v)) {
        return v;
    }
    switch (id) {
    case be::MetricId::GpuTemp:
    case be::MetricId::MemTemp:
    case be::MetricId::GpuUtil:
    case be::MetricId::SmClock:
        return std::round(v);
    case be::MetricId::Power:
        return static_cast<float>(std::round(double(v) * 1000.0) / 1000.0);
    default:
        return v;
    }
}

FramePtr frameOf(const be::Simulator &sim, bool rounded)
{
    const auto snap = sim.snapshot();
    auto f = std::make_shared<Frame>();
    f->sequence = sim.steps();
    f->sampleTimeMs = 1'700'000'000'000LL + std::llround(sim.nowSeconds() * 1000);
    f->topologyGeneration = 1;
    for (const auto id : be::defaultMetrics()) {
        std::vector<float> values = snap->plane(id);
        if (rounded) {
            for (auto &v : values) {
                v = dcgmRounded(id, v);
            }
        }
        f->planes.push_back({ QString::fromStdString(be::metricCatalog()[static_cast<size_t>(id)].key), values });
    }
    f->health = snap->health;
    return f;
}

std::string describe(const FlightRecorderOptions &o)
{
    return fmt::format("{}{} {} K={} zstd {}", o.decimal ? "" : "nodec ",
        o.reference == FlightRecorderOptions::Reference::Keyframe ? "key" : "prev",
        o.delta == FlightRecorderOptions::Delta::Xor ? "xor" : "delta", o.keyframeInterval, o.zstdLevel);
}

void run(uint32_t gpus, int frames, bool rounded, const FlightRecorderOptions &options, bool header)
{
    be::Simulator sim(gpus, 1);
    for (int i = 0; i < 60; ++i) {
        sim.step(10.0);
    }
    FlightRecorder recorder(options);
    std::vector<double> recordMs;
    std::vector<double> memcpyMs;
    std::vector<char> copy;
    for (int i = 0; i < frames; ++i) {
        sim.step(1.0);
        const FramePtr frame = frameOf(sim, rounded);
        const size_t planeBytes = gpus * sizeof(float);
        copy.resize(frame->planes.size() * planeBytes + gpus);
        auto start = Clock::now();
        for (size_t p = 0; p < frame->planes.size(); ++p) {
            std::memcpy(copy.data() + p * planeBytes, frame->planes[p].values.data(), planeBytes);
        }
        std::memcpy(copy.data() + frame->planes.size() * planeBytes, frame->health.data(), gpus);
        memcpyMs.push_back(msSince(start));
        start = Clock::now();
        if (!recorder.record(frame)) {
            fmt::print(stderr, "record refused a frame\n");
            std::exit(1);
        }
        recordMs.push_back(msSince(start));
    }

    // Random seeks: each lands in some group, mostly not the one decoded last.
    std::mt19937_64 rng(42);
    const int64_t first = recorder.earliestMs();
    const int64_t span = recorder.latestMs() - first + 1;
    std::vector<double> seekMs;
    for (int i = 0; i < 40; ++i) {
        const int64_t t = first + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
        const auto start = Clock::now();
        const auto f = recorder.frameAt(t);
        seekMs.push_back(msSince(start));
        if (!f) {
            fmt::print(stderr, "seek found nothing\n");
            std::exit(1);
        }
    }
    // Replay: step through every frame in order.
    double replayMs = 0;
    for (const int64_t t : recorder.sampleTimes()) {
        const auto start = Clock::now();
        recorder.frameAt(t);
        replayMs += msSince(start);
    }
    replayMs /= static_cast<double>(recorder.frameCount());

    const auto stats = recorder.metricStats();
    if (header) {
        fmt::print("{:>8} {:>7} {:<20} {:>6}", "GPUs", "values", "encoding", "frames");
        for (const auto &s : stats) {
            fmt::print(" {:>9}", s.metricId.toStdString());
        }
        fmt::print(" {:>7} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}\n", "health", "B/value", "MiB/h", "record",
            "memcpy", "rec/cpy", "seek", "worst");
        fmt::print("{:>8} {:>7} {:<20} {:>6}", "", "", "", "");
        for (size_t i = 0; i < stats.size(); ++i) {
            fmt::print(" {:>9}", "B/value");
        }
        fmt::print(
            " {:>7} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}\n", "B/GPU", "overall", "", "ms", "ms", "", "ms", "ms");
    }
    fmt::print("{:>8} {:>7} {:<20} {:>6}", gpus, rounded ? "DCGM" : "sim", describe(options), recorder.frameCount());
    for (const auto &s : stats) {
        fmt::print(" {:>9.3f}", double(s.compressedBytes) / double(s.values));
    }
    const double perValue = double(recorder.compressedBytes()) / double(recorder.storedValues());
    const double perFrameBytes = double(recorder.compressedBytes()) / double(recorder.frameCount());
    fmt::print(" {:>7.3f} {:>8.3f} {:>7.0f} {:>7.2f} {:>7.3f} {:>7.0f} {:>7.2f} {:>7.2f}  replay {:.2f} ms/frame\n",
        double(recorder.healthBytes()) / double(recorder.frameCount()) / gpus, perValue,
        perFrameBytes * 3600 / 1048576.0, median(recordMs), median(memcpyMs), median(recordMs) / median(memcpyMs),
        std::accumulate(seekMs.begin(), seekMs.end(), 0.0) / double(seekMs.size()),
        *std::max_element(seekMs.begin(), seekMs.end()), replayMs);
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    using O = FlightRecorderOptions;
    if (argc > 1 && std::string(argv[1]) == "--sweep") {
        bool header = true;
        for (const bool rounded : { false, true }) {
            for (const auto ref : { O::Reference::Previous, O::Reference::Keyframe }) {
                for (const auto delta : { O::Delta::Xor, O::Delta::IntegerDelta }) {
                    for (const uint32_t k : { 8U, 16U, 32U }) {
                        O o;
                        o.reference = ref;
                        o.delta = delta;
                        o.keyframeInterval = k;
                        run(10240, 240, rounded, o, header);
                        header = false;
                    }
                }
            }
            for (const int level : { 3, 6 }) {
                O o;
                o.zstdLevel = level;
                run(10240, 240, rounded, o, false);
            }
            O floatBits;
            floatBits.decimal = false;
            run(10240, 240, rounded, floatBits, false);
        }
        return 0;
    }
    const int frames = argc > 1 ? std::max(1, std::atoi(argv[1])) : 120;
    std::vector<uint32_t> sizes;
    for (int i = 2; i < argc; ++i) {
        sizes.push_back(static_cast<uint32_t>(std::atoi(argv[i])));
    }
    if (sizes.empty()) {
        sizes = { 10240, 102400 };
    }
    fmt::print("default encoding; {} one-second frames; B/value = compressed bytes (planes, health, bookkeeping) per "
               "plane value; MiB/h = an hour of frames at 1 Hz; record and memcpy are medians; seek: mean and worst of "
               "40 random times\n\n",
        frames);
    bool header = true;
    for (const uint32_t gpus : sizes) {
        for (const bool rounded : { false, true }) {
            run(gpus, frames, rounded, O {}, header);
            header = false;
        }
    }
    return 0;
}
