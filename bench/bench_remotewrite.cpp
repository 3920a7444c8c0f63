// SPDX-License-Identifier: Apache-2.0
// The remote-write receiver's cost per sample against the poll path's, for the same fleet and metrics in one run:
// the simulator's dcgm-exporter page (8 fields a GPU, the pod labels of its running jobs) as vmagent would push it
// (blocks of 10,000 series, each with the page's labels plus instance and job, snappy-compressed) and as Prometheus
// would answer the poll path's instant queries (one JSON answer per field). Baseline: a memcpy of the pushed bytes.
//
// Usage: bench_remotewrite [reps] [gpus]   (defaults 3, 102400)
#include "prometheus/promjson.h"
#include "remotewrite/remotewritesource.h"
#include "remotewriteblocks.h"
#include "timing.h"

#include <httplib.h>
#include <malloc.h>
#include <sys/resource.h>

#include <fmt/format.h>

#include <cstring>
#include <thread>

namespace be = fleetscope::backend;
using namespace fleetscope::bench;

namespace {

const std::vector<be::MetricId> &fields = pushedFields();

// Bytes malloc has handed out and not taken back (heap and mmapped blocks).
size_t heapInUse()
{
    const auto info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

long peakRssMiB()
{
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

} // namespace

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
    const auto gpus = static_cast<uint32_t>(argc > 2 ? std::max(8, std::atoi(argv[2])) : 102400);
    const auto &catalog = be::metricCatalog();

    // A simulated fleet after half an hour, with its running jobs (for the pod labels), as the exporter page shows it.
    const std::string page = simulatedPage(gpus);

    // One window's pushes per run, each in a window of its own (after the start's).
    constexpr int64_t windowMs = 10000;
    // An hour ahead: after the receiver's start whenever the data is ready (take() is given these times as its clock).
    const int64_t first = (be::nowUnixMs() / windowMs + 360) * windowMs;
    std::vector<std::vector<std::string>> windows;
    size_t rawBytes = 0;
    size_t samples = 0;
    size_t pushedBytes = 0;
    for (int r = 0; r < reps + 1; ++r) {
        windows.push_back(pushedBlocks(page, first + r * windowMs + 1, &rawBytes, &samples));
    }
    for (const auto &b : windows.front()) {
        pushedBytes += b.size();
    }

    // The poll path's answers for the same fields, and its parser.
    std::vector<std::string> answers;
    size_t jsonBytes = 0;
    for (const auto id : fields) {
        answers.push_back(promAnswer(page, catalog[static_cast<size_t>(id)].dcgmField, first));
        jsonBytes += answers.back().size();
        answers.back().reserve(answers.back().size() + 64);
    }

    // What this process holds before the receiver exists; the receiver's heap is measured against it.
    const size_t heapBefore = heapInUse();
    // The receiver, its layout learnt from one push of every GPU's temperature over HTTP, windows of 10 s.
    be::RemoteWriteSource receiver([](const std::string &) {});
    be::RemoteWriteSource::Options rw;
    const int port = 19000 + static_cast<int>(be::nowUnixMs() % 1000);
    rw.listen = fmt::format("127.0.0.1:{}", port);
    rw.windowMs = windowMs;
    rw.delayMs = 0;
    std::string error;
    httplib::Client client("127.0.0.1", port);
    const bool started = startLearningFrom(
        receiver, rw, page,
        [&client](const std::string &block) {
            const auto r
                = client.Post("/api/v1/write", { { "Content-Encoding", "snappy" } }, block, "application/x-protobuf");
            return r && r->status == 204;
        },
        &error);
    if (!started) {
        fmt::print(stderr, "receiver: {}\n", error);
        return 1;
    }
    const uint32_t n = receiver.shape().gpuCount;
    size_t heapPeak = heapInUse();

    fmt::print("{} GPUs ({} pushed), {} fields, {} samples a window; {} blocks; median of {} runs; ms\n", gpus, n,
        fields.size(), samples, windows.front().size(), reps);
    fmt::print("  pushed: {:.1f} MB snappy ({:.1f} MB protobuf), {:.1f} bytes a sample; polled: {:.1f} MB JSON, "
               "{:.1f} bytes a sample\n",
        static_cast<double>(pushedBytes) / 1e6, static_cast<double>(rawBytes) / 1e6,
        static_cast<double>(pushedBytes) / static_cast<double>(samples), static_cast<double>(jsonBytes) / 1e6,
        static_cast<double>(jsonBytes) / static_cast<double>(samples));

    std::string copy(pushedBytes, '\0');
    const double memcpyMs = medianMs(reps, [&] {
        size_t at = 0;
        for (const auto &b : windows.front()) {
            std::memcpy(copy.data() + at, b.data(), b.size());
            at += b.size();
        }
    });

    // The receiver as the HTTP handler calls it (one thread), then the window's close (its frame).
    std::vector<double> takeMs;
    std::vector<double> closeMs;
    int bad = 0;
    for (int r = 1; r <= reps; ++r) {
        const int64_t at = first + r * windowMs + 1;
        const auto start = std::chrono::steady_clock::now();
        for (const auto &block : windows[static_cast<size_t>(r)]) {
            std::string reason;
            bad += receiver.take({ "snappy", "application/x-protobuf", "0.1.0" }, block, at, &reason) == 204 ? 0 : 1;
        }
        const auto taken = std::chrono::steady_clock::now();
        heapPeak = std::max(heapPeak, heapInUse()); // the window open, the state and the frames held
        const auto frame = receiver.closeWindows(at + windowMs);
        const auto closed = std::chrono::steady_clock::now();
        heapPeak = std::max(heapPeak, heapInUse());
        takeMs.push_back(std::chrono::duration<double, std::milli>(taken - start).count());
        closeMs.push_back(std::chrono::duration<double, std::milli>(closed - taken).count());
        if (!frame || frame->sampleTimeMs != at) {
            fmt::print(stderr, "run {}: no frame for the window\n", r);
            return 1;
        }
    }
    const auto stats = receiver.stats();
    if (bad > 0 || stats.samples.dropped() > 0) {
        fmt::print(stderr, "{} requests refused, {} samples dropped\n", bad, stats.samples.dropped());
        return 1;
    }

    be::PromJson json;
    std::vector<be::PromSample> parsed;
    bool ok = true;
    const double pollMs = medianMs(reps, [&] {
        for (auto &a : answers) {
            ok = json.parseVector(&a, size_t { gpus } * 2 + 64, false, &parsed, &error, true) && ok;
        }
    });
    if (!ok) {
        fmt::print(stderr, "PromJson: {}\n", error);
        return 1;
    }

    const double take = median(takeMs);
    const double close = median(closeMs);
    const double perSecond = static_cast<double>(samples) / ((take + close) / 1000.0);
    fmt::print("  memcpy of the pushed bytes              {:>9.1f}\n", memcpyMs);
    fmt::print("  receiver: decode, map, fold (1 thread) {:>9.1f}   {:.0f} ns a sample\n", take,
        take * 1e6 / static_cast<double>(samples));
    fmt::print("  receiver: close the window (frame)      {:>9.1f}\n", close);
    fmt::print(
        "  receiver: samples a second on one core  {:>9.0f}   ({:.2f} cores for {} GPUs x {} fields every 10 s)\n",
        perSecond, static_cast<double>(samples) / 10.0 / perSecond, gpus, fields.size());
    fmt::print("  poll path: parse the JSON answers       {:>9.1f}   {:.0f} ns a sample (the server's encoding not "
               "counted)\n",
        pollMs, pollMs * 1e6 / static_cast<double>(samples));
    fmt::print("  receiver / memcpy {:.0f}x; poll parse / receiver {:.2f}x\n", (take + close) / memcpyMs,
        pollMs / (take + close));
    fmt::print("  receiver's heap at its peak {:.0f} MiB ({:.0f} bytes a GPU); peak RSS of this process {} MiB (the "
               "pre-encoded windows and answers included)\n",
        static_cast<double>(heapPeak - heapBefore) / 1048576.0,
        static_cast<double>(heapPeak - heapBefore) / static_cast<double>(n), peakRssMiB());
    receiver.stop();
    return 0;
}
