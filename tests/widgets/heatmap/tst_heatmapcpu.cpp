// SPDX-License-Identifier: Apache-2.0
// The map drawn on the CPU: which renderer a software OpenGL gets, the CPU's passes against the shaders pixel for
// pixel, what a new frame redoes of them, and the renderer's worker. tst_heatmapview tests what the map shows.
#include "tests/widgets/heatmap/heatmaptesting.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapcpurenderer.h"
#include "widgets/heatmap/heatmapglsurface.h"
#include "widgets/heatmap/heatmapimagebuffer.h"
#include "widgets/heatmap/heatmapoverlay.h"
#include "widgets/heatmap/heatmapview.h"

#include <QApplication>
#include <QOpenGLWidget>
#include <QTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

using namespace fleetscope;
using namespace fleetscope::heatmaptesting;

class TestHeatmapCpu : public QObject
{
    Q_OBJECT

    // 16 GPUs in a 4 x 4 layout, in inferno, handed to the renderer, which reads the values (the caller's) until it
    // has prepared them.
    static std::shared_ptr<Frame> feedSixteenGpus(HeatmapCpuRenderer &renderer, const std::vector<float> &values)
    {
        HeatmapLayout layout;
        layout.width = 4;
        layout.height = 4;
        for (int32_t g = 0; g < 16; ++g) {
            layout.cells.push_back(g);
        }
        const auto frame = std::make_shared<Frame>();
        frame->health.assign(16, health::Ok);
        renderer.allocate(16);
        renderer.uploadLayout(std::make_shared<const HeatmapLayout>(layout));
        renderer.uploadFrame(frame, values, frame->health, false);
        renderer.uploadColorMap(ColorMap::byName(QStringLiteral("inferno")));
        return frame;
    }

    // Those 16 GPUs, 8 pixels a cell, on a 20-100 range.
    static HeatmapScene sixteenGpuScene(QSize framebuffer)
    {
        HeatmapScene scene;
        scene.framebuffer = framebuffer;
        scene.cellSize = 8;
        scene.layoutSize = QSize(4, 4);
        scene.hasData = true;
        scene.rangeMin = 20;
        scene.rangeMax = 100;
        return scene;
    }

private Q_SLOTS:
    // On the CPU, a new frame runs pass 1 but not the whole per-pixel pass 2: where only values changed the colours
    // follow in pass 3, and a GPU that loses its value (hatched now) has its row's pixels redone. Both drawn right.
    void aFrameOfNewValuesRunsNoPerPixelPassOnTheCpu()
    {
        HeatmapView view;
        if (view.passes() != HeatmapView::Passes::Cpu) {
            QSKIP("the map draws through the shaders here (FLEETSCOPE_HEATMAP_PASSES or a graphics card)");
        }
        view.setAnimated(false);
        QVERIFY(showSmallFleet(view));
        const quint64 resolved = view.resolveCount();
        const quint64 screened = view.screenCount();
        view.setFrame(frameWith(2, 50));
        QVERIFY(paint(view));
        QCOMPARE(view.resolveCount(), resolved + 1);
        QCOMPARE(view.screenCount(), screened);
        QVERIFY(closeTo(pixelOf(view, view.grabMap(), 10), view.colorMap().map(50 + 10 * 0.75F, 20, 100)));
        auto gap = std::const_pointer_cast<Frame>(frameWith(3, 40));
        gap->planes[0].values[10] = std::numeric_limits<float>::quiet_NaN();
        view.setFrame(gap);
        QVERIFY(paint(view));
        QCOMPARE(view.screenCount(), screened);
        const QRgb hatched = pixelOf(view, view.grabMap(), 10);
        const QRgb light = 0x8a8f99;
        const QRgb dark = qRgb(qRed(light) * 55 / 100, qGreen(light) * 55 / 100, qBlue(light) * 55 / 100);
        QVERIFY2(closeTo(hatched, light) || closeTo(hatched, dark), qPrintable(QColor(hatched).name()));
        QVERIFY(closeTo(pixelOf(view, view.grabMap(), 11), view.colorMap().map(40 + 11 * 0.75F, 20, 100)));
    }

    // What the CPU redoes of pass 2 for a new frame (the rows where a GPU's kind or flags changed), and what it leaves
    // as it was (rows and columns that were and stay background), make the image a whole pass draws: frames in which
    // GPUs lose and regain values, go offline and come back, are outlined and dimmed, then a zoom out, drawn one after
    // the other into one view and alone into a fresh one, every pixel compared.
    void aPartialPassDrawsWhatAWholeOneDraws()
    {
        const auto topology = fleet(3, 4);
        const auto frameAt = [&topology](uint64_t sequence) { return scatteredFrame(*topology, sequence, true); };
        const auto marksAt = [&topology](uint64_t sequence) {
            std::vector<uint32_t> marked;
            for (uint32_t g = static_cast<uint32_t>(sequence); g < topology->gpuCount; g += 11) {
                marked.push_back(g);
            }
            return marked;
        };
        const auto setUp = [&](HeatmapView &view) {
            view.setAnimated(false);
            view.resize(640, 400);
            view.setTopology(topology);
            view.setMetric(temperature());
            view.setFrame(frameAt(1));
            view.show();
            return QTest::qWaitForWindowExposed(&view) && paint(view);
        };
        HeatmapView running;
        if (running.passes() != HeatmapView::Passes::Cpu) {
            QSKIP("the map draws through the shaders here (FLEETSCOPE_HEATMAP_PASSES or a graphics card)");
        }
        QVERIFY(setUp(running));
        running.zoomAt(running.cellRect(40).center(), 9.0 / running.cellSize()); // edges and frames in each cell
        QVERIFY(paint(running));
        const quint64 screened = running.screenCount();
        for (uint64_t sequence = 2; sequence <= 6; ++sequence) {
            running.setFrame(frameAt(sequence));
            running.setMarkedGpus(marksAt(sequence));
            QVERIFY(paint(running));
        }
        QCOMPARE(running.screenCount(), screened); // no whole pass 2 since the zoom
        // Zoomed out past the fit: the map a small island in the background, where the cells were a moment ago.
        running.zoomToFit();
        running.zoomAt(QPointF(running.width() / 2.0, running.height() / 2.0), 0.4);
        QVERIFY(paint(running));
        HeatmapView fresh;
        QVERIFY(setUp(fresh));
        fresh.setViewPosition(running.viewPosition());
        fresh.setFrame(frameAt(6));
        fresh.setMarkedGpus(marksAt(6));
        QVERIFY(paint(fresh));
        QCOMPARE(differingPixels(running.grabMap(), fresh.grabMap()), 0);
    }

    // Below a pixel per GPU pass 2 reduces each pixel's GPUs mapped onto the colour range: a new range alone (no pass
    // 1), new frames after it and a zoom in and out again draw what a fresh view draws.
    void aggregatedPixelsFollowTheRange()
    {
        const auto topology = fleet(16, 32); // 8,192 GPUs: fitted, several to a pixel
        const auto frameAt = [&topology](uint64_t sequence) { return scatteredFrame(*topology, sequence, false); };
        const auto setUp = [&](HeatmapView &view, uint64_t sequence) {
            view.setAnimated(false);
            view.resize(120, 80);
            view.setTopology(topology);
            view.setMetric(temperature());
            view.setFrame(frameAt(sequence));
            view.show();
            return QTest::qWaitForWindowExposed(&view) && paint(view);
        };
        HeatmapView running;
        if (running.passes() != HeatmapView::Passes::Cpu) {
            QSKIP("the map draws through the shaders here (FLEETSCOPE_HEATMAP_PASSES or a graphics card)");
        }
        QVERIFY(setUp(running, 1));
        if (running.cellSize() >= 1.0) { // hi-DPI: more physical pixels than cells when fitted
            running.zoomAt(QPointF(60, 40), 0.6 / running.cellSize());
        }
        QVERIFY(running.cellSize() < 1.0);
        const HeatmapView::ViewPosition aggregated = running.viewPosition();
        QVERIFY(paint(running));
        running.setRange(40, 70);
        QVERIFY(paint(running));
        running.setFrame(frameAt(2));
        QVERIFY(paint(running));
        running.zoomAt(QPointF(60, 40), 3.0 / running.cellSize()); // cells of pixels: pass 1 maps nothing
        QVERIFY(paint(running));
        running.setRange(30, 90);
        running.setFrame(frameAt(3));
        QVERIFY(paint(running));
        running.setViewPosition(aggregated);
        QVERIFY(paint(running));
        HeatmapView fresh;
        QVERIFY(setUp(fresh, 3));
        fresh.setRange(30, 90);
        fresh.setViewPosition(aggregated);
        QVERIFY(paint(fresh));
        QCOMPARE(fresh.cellSize(), running.cellSize());
        QCOMPARE(differingPixels(running.grabMap(), fresh.grabMap()), 0);
    }

    // Below a pixel per GPU, a pixel takes the worst value of the GPUs under it, mapped onto the range: a value
    // beyond the range takes the range's end, GPUs without a value are left out (the reduction takes the worst value
    // before mapping it, which the mapping cannot reorder).
    void theWorstOfAFootprintIsItsWorstValueMapped()
    {
        int ready = 0;
        HeatmapCpuRenderer renderer([&ready] { ++ready; });
        HeatmapLayout layout;
        layout.width = 4;
        layout.height = 4;
        for (int32_t g = 0; g < 16; ++g) {
            layout.cells.push_back(g);
        }
        const float none = std::numeric_limits<float>::quiet_NaN();
        // GPU g sits at cell (g % 4, g / 4); a pixel covers 2 x 2 cells.
        const std::vector<float> values { 30, 40, 10, 20, //
            50, 60, 25, 30, //
            150, 0, none, none, //
            0, 0, 45, none };
        const auto frame = std::make_shared<Frame>();
        frame->health.assign(16, health::Ok);
        renderer.allocate(16);
        renderer.uploadLayout(std::make_shared<const HeatmapLayout>(layout));
        renderer.uploadFrame(frame, values, frame->health, false);
        const ColorMap &inferno = ColorMap::byName(QStringLiteral("inferno"));
        renderer.uploadColorMap(inferno);
        HeatmapScene scene = sixteenGpuScene(QSize(2, 2));
        scene.cellSize = 0.5;
        scene.worst = true;
        renderer.paint(scene, 1.0);
        QVERIFY(QTest::qWaitFor([&] { return ready > 0; }, 5000));
        const QImage &image = renderer.paint(scene, 1.0);
        QVERIFY(renderer.isCurrent());
        QCOMPARE(image.size(), QSize(2, 2));
        QList<QRgb> drawn { image.pixel(0, 0), image.pixel(1, 0), image.pixel(0, 1), image.pixel(1, 1) };
        QList<QRgb> expected { inferno.map(60, 20, 100), inferno.map(30, 20, 100), inferno.map(100, 20, 100),
            inferno.map(45, 20, 100) };
        std::sort(drawn.begin(), drawn.end());
        std::sort(expected.begin(), expected.end());
        QCOMPARE(drawn, expected);
    }

    // The CPU renderer on its own: while a frame is prepared on its worker, a paint shows the image shown last, or
    // none when that image is of another size or its pixels were given up by a preparation since (a window resized
    // and back while the worker ran: the image of the first size would read memory freed by the second).
    void theCpuRendererNeverShowsAnImageItNoLongerHas()
    {
        int ready = 0;
        HeatmapCpuRenderer renderer([&ready] { ++ready; });
        const std::vector<float> values(16, 50.0F);
        const auto frame = feedSixteenGpus(renderer, values);
        const auto sceneOf = sixteenGpuScene;
        const auto settle = [&](QSize size) {
            const int before = ready;
            renderer.paint(sceneOf(size), 1.0); // starts the worker
            return QTest::qWaitFor([&] { return ready > before; }, 5000);
        };
        QVERIFY(settle(QSize(64, 48)));
        QVERIFY(renderer.paint(sceneOf(QSize(64, 48)), 1.0).size() == QSize(64, 48));
        QVERIFY(renderer.isCurrent());
        // Another size, prepared (a new buffer), never composed; then the first size again.
        QVERIFY(settle(QSize(96, 80)));
        const QImage &meanwhile = renderer.paint(sceneOf(QSize(64, 48)), 1.0);
        QVERIFY(!renderer.isCurrent());
        QVERIFY(meanwhile.isNull());
        const int before = ready;
        QVERIFY(QTest::qWaitFor([&] { return ready > before; }, 5000));
        const QImage &shown = renderer.paint(sceneOf(QSize(64, 48)), 1.0);
        QVERIFY(renderer.isCurrent());
        QCOMPARE(shown.size(), QSize(64, 48));
        QCOMPARE(shown.pixel(12, 12), ColorMap::byName(QStringLiteral("inferno")).map(50, 20, 100));
    }

    // The image buffers grow off the paint: memory allocated and touched elsewhere is adopted with the image's size
    // and pixels kept, a smaller one is refused, and a later reshape up to it allocates nothing.
    void imageBuffersAdoptMemoryTouchedElsewhere()
    {
        HeatmapImageBuffer buffer;
        QImage &image = buffer.reshape(QSize(4, 2), QImage::Format_RGB32);
        for (int i = 0; i < 8; ++i) {
            image.setPixel(i % 4, i / 4, 0xff000000U + static_cast<QRgb>(i));
        }
        image.setDevicePixelRatio(2);
        QVERIFY(!buffer.holds(QSize(8, 8)));
        buffer.adopt(HeatmapImageBuffer::pixelsFor(QSize(8, 8)));
        QVERIFY(buffer.holds(QSize(8, 8)));
        QCOMPARE(buffer.image().size(), QSize(4, 2));
        QCOMPARE(buffer.image().devicePixelRatio(), 2.0);
        for (int i = 0; i < 8; ++i) {
            QCOMPARE(buffer.image().pixel(i % 4, i / 4), 0xff000000U + static_cast<QRgb>(i));
        }
        const uchar *adopted = buffer.image().constBits();
        buffer.adopt(HeatmapImageBuffer::pixelsFor(QSize(4, 4))); // smaller: kept as it was
        QCOMPARE(buffer.image().constBits(), adopted);
        QCOMPARE(buffer.reshape(QSize(8, 8), QImage::Format_RGB32).constBits(), adopted);

        // The CPU renderer's copy shown during a preparation keeps showing the same image when its buffer grows.
        int ready = 0;
        HeatmapCpuRenderer renderer([&ready] { ++ready; });
        const std::vector<float> values(16, 50.0F);
        const auto frame = feedSixteenGpus(renderer, values);
        const HeatmapScene scene = sixteenGpuScene(QSize(64, 48));
        renderer.paint(scene, 1.0);
        QVERIFY(QTest::qWaitFor([&] { return ready > 0; }, 5000));
        const QRgb fifty = ColorMap::byName(QStringLiteral("inferno")).map(50, 20, 100);
        QCOMPARE(renderer.paint(scene, 1.0).pixel(12, 12), fifty);
        std::vector<float> hotter(16, 90.0F);
        renderer.uploadFrame(frame, hotter, frame->health, false);
        QCOMPARE(renderer.paint(scene, 1.0).pixel(12, 12), fifty); // the copy, while the worker prepares
        QVERIFY(!renderer.shownBuffer().holds(QSize(640, 480)));
        renderer.shownBuffer().adopt(HeatmapImageBuffer::pixelsFor(QSize(640, 480)));
        QVERIFY(renderer.shownBuffer().holds(QSize(640, 480)));
        QCOMPARE(renderer.paint(scene, 1.0).pixel(12, 12), fifty);
        QVERIFY(!renderer.isCurrent());
        QVERIFY(QTest::qWaitFor([&] { return ready > 1; }, 5000));
        QCOMPARE(
            renderer.paint(scene, 1.0).pixel(12, 12), ColorMap::byName(QStringLiteral("inferno")).map(90, 20, 100));
    }

    // Where OpenGL rasterises on the CPU or is missing, the map draws with its CPU passes and the window holds no
    // OpenGL widget at all, so Qt composes it with its raster engine; on a graphics card, through the shaders.
    void aSoftwareOpenGlLeavesTheWindowWithoutOpenGl()
    {
        if (qEnvironmentVariableIsSet("FLEETSCOPE_HEATMAP_PASSES")) {
            QSKIP("the renderer is chosen by FLEETSCOPE_HEATMAP_PASSES here");
        }
        HeatmapView view;
        QVERIFY(showSmallFleet(view, QSize(400, 300)));
        const QString gl = HeatmapGlSurface::probe();
        const bool software = gl.isEmpty() || gl.contains(QLatin1String("llvmpipe"))
            || gl.contains(QLatin1String("softpipe")) || gl.contains(QLatin1String("swrast"));
        QCOMPARE(view.passes(), software ? HeatmapView::Passes::Cpu : HeatmapView::Passes::Gpu);
        QCOMPARE(view.findChild<QOpenGLWidget *>() == nullptr, software);
        QVERIFY(view.rendererDescription().contains(software ? QLatin1String("CPU") : QLatin1String("shaders")));
        // Drawn either way: the GPU's colour, not the background.
        const QRgb expected = ColorMap::byName(QStringLiteral("viridis")).map(20, 20, 100);
        QVERIFY(closeTo(pixelOf(view, view.grabMap(), 0), expected));
        if (gl.isEmpty()) {
            return; // no shaders to switch to
        }
        // Switched by hand to the other renderer and back: each draws the state it is handed at once.
        for (const auto passes : { software ? HeatmapView::Passes::Gpu : HeatmapView::Passes::Cpu,
                 software ? HeatmapView::Passes::Cpu : HeatmapView::Passes::Gpu }) {
            view.setPasses(passes);
            QCOMPARE(view.passes(), passes);
            QVERIFY(paint(view));
            QVERIFY(closeTo(pixelOf(view, view.grabMap(), 0), expected));
        }
        QCOMPARE(view.findChild<QOpenGLWidget *>() == nullptr, software);
    }

    // The passes on the CPU's threads (the default on a software OpenGL, as here) draw what the shaders draw: each
    // scene painted both ways, every pixel compared.
    void cpuPassesDrawWhatTheShadersDraw_data()
    {
        QTest::addColumn<int>("scene");
        QTest::newRow("cells, morphing halfway") << 0;
        QTest::newRow("worst of the GPUs under a pixel, morphing") << 1;
        QTest::newRow("mean of the GPUs under a pixel, morphing") << 2;
        QTest::newRow("cells: stale, outlined, a domain, dimmed, ring, banner") << 3;
        QTest::newRow("zoomed in: edges, frames, a domain, values, ring") << 4;
        QTest::newRow("under a pixel: stale, outlined, a domain, dimmed, ring") << 5;
    }

    void cpuPassesDrawWhatTheShadersDraw()
    {
        if (HeatmapGlSurface::probe().isEmpty()) {
            QSKIP("no OpenGL 3.3 here (tst_heatmapview_nogl): nothing to compare the CPU's passes with");
        }
        QFETCH(int, scene);
        const bool dense = scene == 1 || scene == 2 || scene == 5;
        const auto topology = dense ? fleet(40, 40) : fleet(3, 4);
        // Values below, inside and above the range, some missing, some GPUs offline, the previous frame's missing
        // elsewhere.
        const auto frameAt = [&topology](uint64_t sequence, float base, uint32_t missing) {
            auto f = std::make_shared<Frame>();
            f->sequence = sequence;
            f->sampleTimeMs = 10000 + static_cast<int64_t>(sequence) * 1000;
            f->topologyGeneration = 1;
            std::vector<float> values(topology->gpuCount);
            f->health.assign(topology->gpuCount, health::Ok);
            for (uint32_t g = 0; g < topology->gpuCount; ++g) {
                values[g] = g % 17 == missing ? std::numeric_limits<float>::quiet_NaN()
                                              : base + static_cast<float>((g * 37) % 101) * 0.97F;
                if (g % 23 == 5) {
                    f->health[g] = health::Offline;
                }
            }
            f->planes.push_back({ QStringLiteral("gpu_temp"), std::move(values) });
            return FramePtr(f);
        };
        const FramePtr first = frameAt(1, 5, 3);
        const FramePtr second = frameAt(2, 12, 8);
        std::array<QImage, 2> images;
        for (size_t k = 0; k < images.size(); ++k) {
            const auto passes = k == 0 ? HeatmapView::Passes::Cpu : HeatmapView::Passes::Gpu;
            qint64 now = 1000;
            HeatmapView view;
            view.setPasses(passes);
            view.setClock([&now] { return now; });
            view.resize(dense ? 320 : 640, dense ? 200 : 400);
            view.setTopology(topology);
            view.setMetric(temperature());
            view.setFrame(first);
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            QVERIFY(paint(view));
            QCOMPARE(view.passes(), passes);
            view.setFrame(second);
            now += 500; // halfway to the second frame
            if (scene == 2) {
                view.setAggregation(HeatmapView::Aggregation::Mean);
            }
            if (scene >= 3) {
                view.setStaleNote(QStringLiteral("Data is 42 s old"));
                std::vector<uint32_t> marked;
                for (uint32_t g = 0; g < topology->gpuCount; g += 7) {
                    marked.push_back(g);
                }
                view.setMarkedGpus(marked);
                view.setDomainGpus({ { 3, topology->gpuCount / 3 } }); // an incident's domain, around some marked
                view.setFocusRange(16, topology->gpuCount / 2);
                view.setSelectedGpu(static_cast<int>(topology->gpuCount / 3));
            }
            if (scene == 4) {
                view.zoomAt(view.cellRect(60).center(), 48.0 / view.cellSize());
                QVERIFY(view.cellSize() >= HeatmapOverlay::valueCell);
            }
            if (dense && view.cellSize() >= 1.0) { // hi-DPI: more physical pixels than cells when fitted
                view.zoomAt(QPointF(view.width() / 2.0, view.height() / 2.0), 0.8 / view.cellSize());
            }
            QCOMPARE(view.cellSize() < 1.0, dense);
            QVERIFY(paint(view));
            images[k] = view.grabMap().convertToFormat(QImage::Format_RGB32);
        }
        QCOMPARE(images[0].size(), images[1].size());
        int differing = 0;
        QPoint firstDifference;
        for (int y = 0; y < images[0].height(); ++y) {
            for (int x = 0; x < images[0].width(); ++x) {
                const QRgb a = images[0].pixel(x, y);
                const QRgb b = images[1].pixel(x, y);
                if (std::abs(qRed(a) - qRed(b)) > 1 || std::abs(qGreen(a) - qGreen(b)) > 1
                    || std::abs(qBlue(a) - qBlue(b)) > 1) {
                    if (differing++ == 0) {
                        firstDifference = QPoint(x, y);
                    }
                }
            }
        }
        QVERIFY2(differing == 0,
            qPrintable(QStringLiteral("%1 pixels differ, the first at (%2, %3): %4 on the CPU, %5 by the shaders")
                           .arg(differing)
                           .arg(firstDifference.x())
                           .arg(firstDifference.y())
                           .arg(QColor(images[0].pixel(firstDifference)).name(),
                               QColor(images[1].pixel(firstDifference)).name())));
    }
};

int main(int argc, char *argv[])
{
    HeatmapView::requestSurfaceFormat();
    QApplication app(argc, argv);
    TestHeatmapCpu test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_heatmapcpu.moc"
