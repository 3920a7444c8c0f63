// SPDX-License-Identifier: Apache-2.0
// The heatmap at 10k / 100k / 1M GPUs: a received frame to its textures against a memcpy of the same bytes, paint
// time of the shader at 1M GPUs in 1920x1080 and 3840x2160 views at several zooms, and a naive CPU baseline (fill a
// QImage per frame, draw it scaled with QPainter) measured in the same run. Needs a display with OpenGL:
//
//   xvfb-run -a -s "-screen 0 3840x2160x24" build/dev/bin/bench_heatmap [paints per row]
#include "bench/timing.h"
#include "client/protodecode.h"
#include "common/heap.h"
#include "model/autorange.h"
#include "model/rateofchange.h"
#include "service/frameencoder.h"
#include "sim/simulator.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QPaintEvent>
#include <QPainter>
#include <QTimer>
#include <QWindow>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace be = fleetscope::backend;
using fleetscope::ColorMap;
using fleetscope::FramePtr;
using fleetscope::HeatmapView;
using fleetscope::MetricInfo;
using fleetscope::TopologyPtr;

namespace {

// The heatmap's own colours for what is not a GPU value (widgets/heatmapview.cpp).
constexpr QRgb backgroundColour = 0xff15171c;
constexpr QRgb aisleColour = 0xff22252c;
constexpr QRgb noDataColour = 0xff8a8f99;

struct Stats
{
    double median = 0;
    double p95 = 0;
};

Stats stats(std::vector<double> ms)
{
    const fleetscope::bench::Distribution d(std::move(ms));
    return { d.quantile(0.5), d.quantile(0.95) };
}

double elapsedMs(const QElapsedTimer &timer)
{
    return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

// The map's paint as the console runs it (the shaders on OpenGL, or the CPU's passes and QPainter), plus glFinish
// on OpenGL so that the time is the GPU's (or llvmpipe's) work, not just the time to queue it: from the paint event of
// the map's surface (the view's child) to mapPainted, which the surface's paint emits once it has drawn.
class TimedHeatmapView : public HeatmapView
{
public:
    TimedHeatmapView()
    {
        setBackgroundPreparation(false); // all of a new frame's work inside the paint timed
        for (QWidget *surface : findChildren<QWidget *>(Qt::FindDirectChildrenOnly)) {
            surface->installEventFilter(this);
        }
        connect(this, &HeatmapView::mapPainted, this, [this] {
            if (QOpenGLContext *context = QOpenGLContext::currentContext()) {
                context->functions()->glFinish();
            }
            if (m_timer.isValid()) {
                paintMs.push_back(elapsedMs(m_timer));
                m_timer.invalidate();
            }
        });
    }
    std::vector<double> paintMs;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Paint) {
            m_timer.start();
        }
        return HeatmapView::eventFilter(watched, event);
    }
    void childEvent(QChildEvent *event) override
    {
        if (event->added() && event->child()->isWidgetType()) {
            event->child()->installEventFilter(this); // the surface
        }
        HeatmapView::childEvent(event);
    }

private:
    QElapsedTimer m_timer;
};

// The naive baseline: the whole layout as a QImage (one pixel per cell) filled on the CPU for each frame, drawn
// scaled into a plain widget where the heatmap would draw it. Nearest-neighbour scaling: below one pixel per GPU it
// drops GPUs instead of showing the worst of them, so it does less than the shader.
class NaiveView : public QWidget
{
public:
    std::vector<double> paintMs;
    QImage image;
    QRectF target;

    void fill(const fleetscope::HeatmapLayout &layout, const fleetscope::Frame &frame, const MetricInfo &metric,
        const ColorMap &map)
    {
        if (image.width() != layout.width || image.height() != layout.height) {
            image = QImage(layout.width, layout.height, QImage::Format_RGB32);
        }
        const std::vector<float> &values = frame.plane(metric.id)->values;
        for (int y = 0; y < layout.height; ++y) {
            auto *line = reinterpret_cast<QRgb *>(image.scanLine(y));
            const int32_t *cells = layout.cells.data() + static_cast<size_t>(y) * layout.width;
            for (int x = 0; x < layout.width; ++x) {
                const int32_t gpu = cells[x];
                if (gpu < 0) {
                    line[x] = aisleColour;
                    continue;
                }
                const float v = values[static_cast<size_t>(gpu)];
                const auto state = fleetscope::health::stateOf(frame.health[static_cast<size_t>(gpu)]);
                line[x] = (std::isnan(v) || state == fleetscope::health::Offline || state == fleetscope::health::NoData)
                    ? noDataColour
                    : map.map(v, metric.rangeMin, metric.rangeMax);
            }
        }
    }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QElapsedTimer timer;
        timer.start();
        QPainter painter(this);
        painter.fillRect(rect(), QColor::fromRgb(backgroundColour));
        painter.drawImage(target, image);
        painter.end();
        paintMs.push_back(elapsedMs(timer));
    }
};

void showAndWait(QWidget &widget)
{
    widget.show();
    QElapsedTimer timer;
    timer.start();
    while ((widget.windowHandle() == nullptr || !widget.windowHandle()->isExposed()) && timer.elapsed() < 10000) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    }
    QCoreApplication::processEvents();
}

// Big fleets are laid out on a worker thread: wait for the layout before measuring what depends on it.
void waitForLayout(HeatmapView &view)
{
    if (view.isLayoutPending()) {
        QEventLoop loop;
        QObject::connect(&view, &HeatmapView::layoutReady, &loop, &QEventLoop::quit);
        QTimer::singleShot(30000, &loop, &QEventLoop::quit);
        loop.exec();
    }
    if (view.isLayoutPending()) {
        fmt::print(stderr, "no layout after 30 s\n");
        std::exit(1);
    }
}

struct Fleet
{
    TopologyPtr topology;
    FramePtr frames[2];
    MetricInfo metric;
};

// A simulated fleet, through the client's decode path: the topology and two consecutive frames of GPU temperature.
Fleet makeFleet(uint32_t gpus)
{
    be::Simulator sim(gpus, 1);
    for (int i = 0; i < 5; ++i) {
        sim.step(60.0); // warm the fleet up to working temperatures
    }
    Fleet fleet;
    QString error;
    fleet.topology = fleetscope::decodeTopology(be::encodeTopology(sim.shape(), 1), &error);
    for (int i = 0; i < 2; ++i) {
        sim.step();
        auto snap = sim.snapshot();
        snap->sampleTimeMs = 1'700'000'000'000 + static_cast<int64_t>(sim.steps()) * 1000;
        fleetscope::FrameAssembler assembler(fleet.topology);
        for (const auto &part : be::encodeFrame(*snap, { be::MetricId::GpuTemp }, 1)) {
            if (auto r = assembler.add(part); r.frame) {
                fleet.frames[i] = r.frame;
            }
        }
    }
    be::pb::ListMetricsResponse catalog;
    be::fillMetricCatalog(&catalog);
    for (const auto &m : catalog.metrics()) {
        if (m.id() == "gpu_temp") {
            fleet.metric = fleetscope::decodeMetricInfo(m);
        }
    }
    if (!fleet.topology || !fleet.frames[0] || !fleet.frames[1] || fleet.metric.id.isEmpty()) {
        fmt::print(stderr, "cannot build a fleet of {} GPUs: {}\n", gpus, error.toStdString());
        std::exit(1);
    }
    return fleet;
}

// 1. From a received frame to its textures, against a memcpy of the same bytes into a preallocated buffer.
void benchUpload(QString *renderer)
{
    fmt::print(
        "Frame to texture: setFrame + uploadPending (GL uploads + glFinish, or the copies the CPU's passes keep), "
        "alternating two frames; memcpy of "
        "the same bytes (plane + health) into a warm buffer. Mean per frame, ms.\n\n");
    fmt::print("{:>9} {:>8} {:>6} {:>9} {:>9} {:>15}\n", "GPUs", "MiB", "reps", "memcpy", "upload", "upload/memcpy");
    for (const uint32_t gpus : { 10240U, 102400U, 1048576U }) {
        const Fleet fleet = makeFleet(gpus);
        TimedHeatmapView view;
        view.resize(1280, 800);
        view.setTopology(fleet.topology);
        view.setMetric(fleet.metric);
        showAndWait(view);
        waitForLayout(view);
        view.setFrame(fleet.frames[0]);
        view.uploadPending(); // the layout and the first frame
        *renderer = view.rendererDescription();

        const int reps = gpus <= 10240U ? 4000 : gpus <= 102400U ? 1000 : 200;
        const auto &plane0 = fleet.frames[0]->plane(fleet.metric.id)->values;
        const auto &plane1 = fleet.frames[1]->plane(fleet.metric.id)->values;
        const size_t planeBytes = plane0.size() * sizeof(float);
        const size_t bytes = planeBytes + fleet.frames[0]->health.size();
        std::vector<char> dst(bytes, 1);
        QElapsedTimer timer;
        timer.start();
        for (int i = 0; i < reps; ++i) {
            const auto &f = *fleet.frames[i % 2];
            std::memcpy(dst.data(), (i % 2 != 0 ? plane1 : plane0).data(), planeBytes);
            std::memcpy(dst.data() + planeBytes, f.health.data(), f.health.size());
        }
        const double memcpyMs = elapsedMs(timer) / reps;
        volatile char sink = dst[bytes / 2]; // keep the copies
        (void)sink;

        timer.restart();
        for (int i = 0; i < reps; ++i) {
            view.setFrame(fleet.frames[(i + 1) % 2]);
            view.uploadPending();
        }
        const double uploadMs = elapsedMs(timer) / reps;
        fmt::print("{:>9} {:>8.2f} {:>6} {:>9.4f} {:>9.4f} {:>15.1f}\n", gpus, static_cast<double>(bytes) / 1048576.0,
            reps, memcpyMs, uploadMs, uploadMs / memcpyMs);
    }
    fmt::print("\n");
}

// 2 and 3. Paint at 1M GPUs: the map's paint (paintMap, + glFinish on OpenGL) against the naive CPU fill + QPainter in
// the same geometry. Two kinds of shader paint: an animation repaint (half-way between two frames, nothing new: what
// the display's rate costs) and a new frame (upload, per-frame passes and paint, alternating two frames).
void benchPaint(int paints, const QString &grabDir)
{
    const Fleet fleet = makeFleet(1048576U);
    const auto layout = fleetscope::HeatmapLayout::floorPlan(*fleet.topology);
    fmt::print("Paint, 1,048,576 GPUs (layout {} x {} cells), {} paints per row; ms, median / p95.\n"
               "anim = an animation repaint, the map's paint (+ glFinish) half-way between two frames (nothing new);\n"
               "frame = a new frame: setFrame, then the map's paint (upload + per-frame passes + paint, + glFinish);\n"
               "naive = fill a QImage of the layout with each pixel's GPU colour on the CPU + QPainter::drawImage "
               "scaled into a QWidget, fill + paint.\n\n",
        layout.width, layout.height, paints);
    fmt::print("{:>9} {:<22} {:>7} {:>15} {:>15} {:>10} {:>11} {:>11} {:>11} {:>11}\n", "view", "zoom", "px/GPU",
        "anim med/p95", "frame med/p95", "naive fill", "naive paint", "naive total", "naive/anim", "naive/frame");

    struct Zoom
    {
        const char *name;
        double pxPerGpu; // 0: fitted; < 0: factor on the fitted size
    };
    const Zoom zooms[]
        = { { "fit", 0 }, { "fit x0.5 (aggregating)", -0.5 }, { "8 px per GPU", 8 }, { "40 px (values drawn)", 40 } };

    // FLEETSCOPE_BENCH_ROW=SIZE/ZOOM (for example 3840/3) runs one row alone, to profile it.
    const QStringList only = qEnvironmentVariable("FLEETSCOPE_BENCH_ROW").split(QLatin1Char('/'));
    for (const QSize size : { QSize(1920, 1080), QSize(3840, 2160) }) {
        if (only.size() == 2 && only[0].toInt() != size.width()) {
            continue;
        }
        qint64 now = 0; // the view's clock, so that an animation paint is always half-way
        TimedHeatmapView view;
        view.setClock([&now] { return now; });
        view.setTopology(fleet.topology);
        view.setMetric(fleet.metric);
        view.resize(size);
        showAndWait(view);
        waitForLayout(view);
        NaiveView naive;
        naive.resize(size);
        showAndWait(naive);

        for (const Zoom &zoom : zooms) {
            if (only.size() == 2 && only[1].toLong() != &zoom - zooms) {
                continue;
            }
            view.setAnimated(true);
            view.setFrame(fleet.frames[0]);
            view.repaint();
            view.setFrame(fleet.frames[1]);
            now += 500; // half of the 1 s between the frames
            view.zoomToFit();
            const QPointF centre(size.width() / 2.0, size.height() / 2.0);
            if (zoom.pxPerGpu < 0) {
                view.zoomAt(centre, -zoom.pxPerGpu);
            } else if (zoom.pxPerGpu > 0) {
                view.zoomAt(centre, zoom.pxPerGpu / view.cellSize());
            }
            view.repaint(); // uploads the frame, runs the per-frame passes
            view.paintMs.clear();
            const quint64 passesBefore = view.resolveCount() + view.screenCount();
            for (int i = 0; i < paints; ++i) {
                view.repaint();
            }
            if (view.resolveCount() + view.screenCount() != passesBefore) {
                fmt::print(stderr, "an animation repaint ran a per-frame pass\n");
            }
            const Stats anim = stats(view.paintMs);
            if (!grabDir.isEmpty()) { // to see what was measured
                view.grabMap().save(QStringLiteral("%1/%2x%3-%4.png")
                                        .arg(grabDir)
                                        .arg(size.width())
                                        .arg(size.height())
                                        .arg(&zoom - zooms));
            }
            // New frames: each paint uploads one and runs the per-frame passes.
            std::vector<double> frameMs;
            QElapsedTimer timer;
            for (int i = 0; i < paints; ++i) {
                timer.start();
                view.setFrame(fleet.frames[i % 2]);
                view.repaint();
                frameMs.push_back(elapsedMs(timer));
            }
            const Stats frame = stats(view.paintMs.size() > static_cast<size_t>(paints)
                    ? std::vector<double>(view.paintMs.end() - paints, view.paintMs.end())
                    : frameMs);

            // The naive path in the same geometry.
            const double cell = view.cellSize();
            const QPointF first = view.layout().gpuCells[0];
            const QPointF origin = view.cellRect(0).topLeft() - first * cell / view.devicePixelRatioF();
            naive.target = QRectF(
                origin, QSizeF(view.layout().width * cell, view.layout().height * cell) / view.devicePixelRatioF());
            std::vector<double> fillMs;
            std::vector<double> totalMs;
            naive.paintMs.clear();
            for (int i = 0; i < paints; ++i) {
                timer.start();
                naive.fill(view.layout(), *fleet.frames[i % 2], fleet.metric, view.colorMap());
                fillMs.push_back(elapsedMs(timer));
                naive.repaint();
                totalMs.push_back(elapsedMs(timer));
            }
            const Stats fill = stats(fillMs);
            const Stats naivePaint = stats(naive.paintMs);
            const Stats naiveTotal = stats(totalMs);

            fmt::print("{:>9} {:<22} {:>7.2f} {:>7.2f} / {:<6.2f} {:>7.2f} / {:<6.2f} {:>10.2f} {:>11.2f} {:>11.2f} "
                       "{:>11.2f} {:>11.2f}\n",
                fmt::format("{}x{}", size.width(), size.height()), zoom.name, cell, anim.median, anim.p95, frame.median,
                frame.p95, fill.median, naivePaint.median, naiveTotal.median, naiveTotal.median / anim.median,
                naiveTotal.median / frame.median);
        }
    }
    fmt::print("\n");
}

} // namespace

// 3. What the console computes per frame besides the upload (auto range, rate of change) and per layout change
// (floor plan, compact, by job), against a memcpy of the plane measured in the same run.
void benchAnalysis()
{
    fmt::print("Per frame: auto range (robustRange, p1-p99) and RateOfChange::apply (60 s window, steady state, "
               "1 s frames) against a memcpy of the plane; per layout change: the three arrangements. Median, ms.\n\n");
    fmt::print("{:>9} {:>8} {:>9} {:>11} {:>11} {:>10} {:>9} {:>8} {:>8}\n", "GPUs", "memcpy", "range", "range/memcpy",
        "rate", "rate/memcpy", "floor", "compact", "by job");
    for (const uint32_t gpus : { 10240U, 102400U, 1048576U }) {
        be::Simulator sim(gpus, 1);
        QString error;
        const auto topology = fleetscope::decodeTopology(be::encodeTopology(sim.shape(), 1), &error);
        auto jobs = std::make_shared<fleetscope::JobList>();
        jobs->topologyGeneration = 1;
        jobs->runningJobOfGpu.assign(gpus, -1);
        for (const auto &simJob : sim.jobs()) {
            fleetscope::Job job;
            job.id = simJob.id;
            job.name = QStringLiteral("job-%1").arg(simJob.id);
            const uint32_t first = sim.shape().nodes[simJob.firstNode].firstGpu;
            const auto &last = sim.shape().nodes[simJob.firstNode + simJob.nodeCount - 1];
            for (uint32_t g = first; g < last.firstGpu + last.gpuCount; ++g) {
                job.gpus.push_back(g);
                jobs->runningJobOfGpu[g] = static_cast<int32_t>(jobs->jobs.size());
            }
            jobs->jobs.push_back(std::move(job));
        }
        // Frames a second apart: the plane of GPU temperature, as the client decodes it.
        std::vector<FramePtr> frames;
        for (int i = 0; i < 80; ++i) {
            sim.step();
            auto frame = std::make_shared<fleetscope::Frame>();
            frame->sequence = static_cast<uint64_t>(i);
            frame->sampleTimeMs = 1'700'000'000'000 + i * 1000;
            frame->topologyGeneration = 1;
            auto snap = sim.snapshot();
            frame->planes.push_back({ QStringLiteral("gpu_temp"), snap->plane(be::MetricId::GpuTemp) });
            frame->health = snap->health;
            frames.push_back(std::move(frame));
        }
        const auto &plane = frames.back()->planes[0].values;
        std::vector<float> copy(plane.size());
        const int reps = 15;
        const auto median = [reps](const std::function<void()> &fn) { return fleetscope::bench::medianMs(reps, fn); };
        const double memcpyMs = median([&] { std::memcpy(copy.data(), plane.data(), plane.size() * sizeof(float)); });
        const double rangeMs = median([&] { (void)fleetscope::robustRange(plane, 0.01, 0.99, false); });
        fleetscope::RateOfChange rate(QStringLiteral("gpu_temp"));
        for (int i = 0; i < 65; ++i) {
            (void)rate.apply(frames[static_cast<size_t>(i)]);
        }
        size_t next = 65;
        const double rateMs = median([&] { (void)rate.apply(frames[next++]); });
        const double floorMs = median([&] { (void)fleetscope::HeatmapLayout::floorPlan(*topology); });
        const double compactMs = median([&] { (void)fleetscope::HeatmapLayout::compact(*topology, 16.0 / 9.0); });
        const double byJobMs
            = median([&] { (void)fleetscope::HeatmapLayout::byJob(*topology, jobs.get(), 16.0 / 9.0); });
        fmt::print("{:>9} {:>8.3f} {:>9.3f} {:>11.1f} {:>11.3f} {:>10.1f} {:>9.1f} {:>8.1f} {:>8.1f}\n", gpus, memcpyMs,
            rangeMs, rangeMs / memcpyMs, rateMs, rateMs / memcpyMs, floorMs, compactMs, byJobMs);
    }
    fmt::print("\n");
}

int main(int argc, char **argv)
{
    fleetscope::heap::keepFreedMemory(); // as the console does (common/heap.h)
    HeatmapView::requestSurfaceFormat();
    QApplication app(argc, argv);
    const int paints = argc > 1 ? std::max(3, std::atoi(argv[1])) : 40;
    if (qEnvironmentVariable("FLEETSCOPE_BENCH_ONLY") == QStringLiteral("analysis")) {
        benchAnalysis();
        return 0;
    }
    QString renderer;
    // FLEETSCOPE_BENCH_ONLY=paint: the paint rows alone.
    if (qEnvironmentVariable("FLEETSCOPE_BENCH_ONLY") != QStringLiteral("paint")) {
        benchAnalysis();
        benchUpload(&renderer);
        fmt::print("Map drawn by: {}\n\n", renderer.toStdString());
    }
    // FLEETSCOPE_BENCH_GRAB=DIR saves one image of each paint row there.
    benchPaint(paints, qEnvironmentVariable("FLEETSCOPE_BENCH_GRAB"));
    return 0;
}
