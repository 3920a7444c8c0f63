// SPDX-License-Identifier: Apache-2.0
// Sample -> pixel: from a frame's sample time (stamped by the simulator backend on this machine's clock, loopback)
// to the end of the first paint that shows it (framePresented; on OpenGL then glFinish), over 300 frames at 10,240
// and 102,400 GPUs, through the real client library, session and map. Also sample -> received by the client, so the
// difference is the console's own share. Needs a display (the map draws on the CPU where OpenGL is software):
//
//   xvfb-run -a -s "-screen 0 1920x1080x24" build/dev/bin/bench_latency [frames] [interval-ms]
#include "app/consolesession.h"
#include "app/embeddedbackend.h"
#include "app/pages/mappage.h"
#include "bench/timing.h"
#include "common/heap.h"
#include "widgets/heatmap/heatmapview.h"

#include <QApplication>
#include <QDateTime>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QOpenGLWidget>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

using namespace fleetscope;

namespace {

struct Percentiles
{
    double p50 = 0;
    double p99 = 0;
    double max = 0;
};

Percentiles percentiles(std::vector<double> v)
{
    const bench::Distribution d(std::move(v));
    return { d.quantile(0.5), d.quantile(0.99), d.max() };
}

struct Result
{
    Percentiles received;
    Percentiles painted;
    size_t frames = 0;
    bool ok = false;
};

Result measure(int gpus, int frames, int intervalMs, bool animated)
{
    Result result;
    ConsoleSession session({});
    MapPage page(&session, animated);
    page.resize(1600, 900);
    page.show();
    EmbeddedBackend backend(gpus, 1, { QStringLiteral("--interval-ms"), QString::number(intervalMs) });
    QObject::connect(&backend, &EmbeddedBackend::ready, &session, &ConsoleSession::connectTo);
    backend.start();

    std::map<int64_t, double> receivedAt; // sample time -> ms after the sample, by this machine's clock
    std::vector<double> received;
    std::vector<double> painted;
    int64_t lastPainted = 0;
    int skipped = 0;
    QObject::connect(&session, &ConsoleSession::liveFrame, [&](const FramePtr &frame) {
        receivedAt[frame->sampleTimeMs]
            = static_cast<double>(QDateTime::currentMSecsSinceEpoch() - frame->sampleTimeMs);
    });
    HeatmapView *view = page.heatmap();
    QEventLoop loop;
    QObject::connect(view, &HeatmapView::framePresented, [&] {
        const FramePtr frame = view->frame();
        if (!frame || frame->sampleTimeMs <= lastPainted || !receivedAt.count(frame->sampleTimeMs)) {
            return;
        }
        if (auto *gl = view->findChild<QOpenGLWidget *>()) { // the shaders' surface: wait for the GPU
            gl->makeCurrent();
            gl->context()->functions()->glFinish();
            gl->doneCurrent();
        }
        const double ms = static_cast<double>(QDateTime::currentMSecsSinceEpoch() - frame->sampleTimeMs);
        lastPainted = frame->sampleTimeMs;
        if (skipped < 5) { // the first frames pay for the layout and texture allocation
            ++skipped;
            return;
        }
        painted.push_back(ms);
        received.push_back(receivedAt[frame->sampleTimeMs]);
        if (static_cast<int>(painted.size()) >= frames) {
            loop.quit();
        }
    });
    QTimer::singleShot(std::max(120000, frames * intervalMs * 4), &loop, &QEventLoop::quit);
    loop.exec();
    result.frames = painted.size();
    result.ok = static_cast<int>(painted.size()) >= frames;
    result.received = percentiles(received);
    result.painted = percentiles(painted);
    return result;
}

} // namespace

int main(int argc, char *argv[])
{
    heap::keepFreedMemory(); // as the console does (common/heap.h)
    HeatmapView::requestSurfaceFormat();
    QApplication app(argc, argv);
    const int frames = argc > 1 ? std::max(10, std::atoi(argv[1])) : 300;
    const int intervalMs = argc > 2 ? std::max(50, std::atoi(argv[2])) : 200;
    std::printf("sample -> pixel, %d frames at %d ms, 1600x900 map\n", frames, intervalMs);
    std::printf(
        "%10s %10s  %28s  %28s\n", "GPUs", "animation", "sample->received p50/p99/max", "sample->painted p50/p99/max");
    for (const int gpus : { 10240, 102400 }) {
        for (const bool animated : { false, true }) {
            const Result r = measure(gpus, frames, intervalMs, animated);
            std::printf("%10d %10s  %8.0f %8.0f %8.0f ms  %8.0f %8.0f %8.0f ms%s\n", gpus, animated ? "on" : "off",
                r.received.p50, r.received.p99, r.received.max, r.painted.p50, r.painted.p99, r.painted.max,
                r.ok ? "" : fmt::format("  (only {} frames)", r.frames).c_str());
            std::fflush(stdout);
        }
    }
    return 0;
}
