// SPDX-License-Identifier: Apache-2.0
// The heatmap's pixels: grab the framebuffer and check that the pixel of GPU i has the colour the colour map gives
// its value; picking, zoom and pan, the morph between frames, stale and triage layers, selection, focus, tooltips.
// The arrangements and names are tst_heatmaplayouts', the CPU renderer's own workings tst_heatmapcpu's. Needs an X
// display (Xvfb in CI).
#include "model/versiondrift.h"
#include "tests/widgets/heatmap/heatmaptesting.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmappacer.h"
#include "widgets/heatmap/heatmapview.h"

#include <QApplication>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>

using namespace fleetscope;
using namespace fleetscope::heatmaptesting;

class TestHeatmapView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Under QT_SCALE_FACTOR (the hi-DPI runs), the view draws in physical pixels: the framebuffer is the widget's
    // size times the ratio, and one GPU per physical pixel is the fitted size of a fleet that needs it.
    void drawsInPhysicalPixels()
    {
        HeatmapView view;
        setUpSmallFleet(view, QSize(400, 300));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const double dpr = view.devicePixelRatioF();
        if (qEnvironmentVariableIsSet("QT_SCALE_FACTOR")) {
            QCOMPARE(dpr, qEnvironmentVariable("QT_SCALE_FACTOR").toDouble());
        }
        QVERIFY(paint(view));
        const QImage image = view.grabMap();
        QCOMPARE(image.width(), static_cast<int>(std::lround(400 * dpr)));
        QCOMPARE(image.height(), static_cast<int>(std::lround(300 * dpr)));
        // Cells are whole physical pixels when big enough to have borders.
        QVERIFY(view.cellSize() >= 4);
        QCOMPARE(view.cellSize(), std::floor(view.cellSize()));
    }

    void pixelsHaveTheColourOfTheirValue()
    {
        HeatmapView view;
        QVERIFY(showSmallFleet(view));
        const FramePtr frame = view.frame();
        const QImage image = view.grabMap();
        const ColorMap map = ColorMap::byName(QStringLiteral("viridis"));
        for (int gpu : { 0, 7, 8, 31, 50, 64, 95 }) {
            QCOMPARE(view.gpuAt(view.cellRect(gpu).center()), gpu);
            const float value = frame->planes[0].values[static_cast<size_t>(gpu)];
            const QRgb expected = map.map(value, 20, 100);
            const QRgb actual = pixelOf(view, image, gpu);
            QVERIFY2(closeTo(actual, expected),
                qPrintable(QStringLiteral("GPU %1 value %2: got %3, expected %4")
                               .arg(gpu)
                               .arg(value)
                               .arg(QColor(actual).name(), QColor(expected).name())));
        }
        // GPUs 0 and 95 are at opposite ends of the range: their colours differ clearly.
        QVERIFY(!closeTo(pixelOf(view, image, 0), pixelOf(view, image, 95)));
        // An aisle between racks is not a GPU and not a data colour.
        const QRectF a = view.cellRect(7);
        const QPointF aisle = QPointF(a.right() + a.width() / 2, a.center().y());
        QCOMPARE(view.gpuAt(aisle), -1);
    }

    // The triage layers draw as they should: the version layer one colour per driver / VBIOS version (the drift's
    // categories, the usual one steel blue) with the GPUs off their rack's versions outlined; the repeat-offender
    // and anomaly scores as any sequential metric of the backend's, on their own fixed ranges.
    void triageLayersDrawTheirColours()
    {
        auto topology = std::const_pointer_cast<Topology>(smallFleet());
        // Rack 1's second node on the next driver and VBIOS; rack 4's first on an old driver.
        topology->nodes[3].driverVersion = QStringLiteral("560");
        topology->nodes[3].firmwareVersion = QStringLiteral("97.00");
        topology->nodes[8].driverVersion = QStringLiteral("535");
        const VersionDrift drift = computeVersionDrift(*topology, nullptr);
        QCOMPARE(drift.versions.size(), size_t { 3 });
        const MetricInfo layer = drift.metric();
        auto frame = std::make_shared<Frame>();
        frame->topologyGeneration = topology->generation;
        frame->planes.push_back({ layer.id, drift.plane(*topology) });
        frame->health.assign(topology->gpuCount, health::Ok);

        HeatmapView view;
        view.resize(640, 400);
        view.setTopology(topology);
        view.setMetric(layer);
        view.setFrame(frame);
        view.setMarkedGpus(drift.flaggedGpus);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(paint(view));
        QImage image = view.grabMap();
        const ColorMap map = ColorMap::forMetric(layer);
        QCOMPARE(map.kind(), ColorMap::Kind::Categorical);
        QCOMPARE(map.categoryNames(), layer.categories);
        QCOMPARE(map.categoryColour(0), qRgb(0x4a, 0x6c, 0x8c)); // the usual version: calm
        for (int gpu : { 0, 23, 24, 31, 64, 71, 95 }) {
            const int category = drift.categoryOf(drift.versionOfNode[topology->nodeOfGpu[static_cast<size_t>(gpu)]]);
            QVERIFY2(closeTo(pixelOf(view, image, gpu), map.categoryColour(category)),
                qPrintable(
                    QStringLiteral("GPU %1 category %2: got %3, expected %4")
                        .arg(gpu)
                        .arg(category)
                        .arg(QColor(pixelOf(view, image, gpu)).name(), QColor(map.categoryColour(category)).name())));
        }
        QVERIFY(!closeTo(pixelOf(view, image, 24), pixelOf(view, image, 0)));
        QVERIFY(!closeTo(pixelOf(view, image, 64), pixelOf(view, image, 24)));
        const double dpr = view.devicePixelRatioF();
        const auto edgePixel = [&](int gpu) {
            const QRectF r = view.cellRect(gpu);
            return image.pixel(
                static_cast<int>((r.left() + r.width() / 2) * dpr), static_cast<int>(r.bottom() * dpr) - 1);
        };
        QCOMPARE(drift.flaggedGpus.size(), size_t { 16 });
        QCOMPARE(edgePixel(24), qRgb(255, 255, 255)); // off its rack's majority
        QCOMPARE(edgePixel(64), qRgb(255, 255, 255));
        QVERIFY(edgePixel(0) != qRgb(255, 255, 255));

        // The repeat-offender score (0 to 50, inferno) and the anomaly score (0 to 10).
        for (const auto &[id, top] :
            { std::pair { QStringLiteral("offender"), 50.0F }, std::pair { QStringLiteral("anomaly"), 10.0F } }) {
            MetricInfo score;
            score.id = id;
            score.name = id;
            score.unit = QStringLiteral("score");
            score.colourMap = QStringLiteral("inferno");
            score.rangeMax = top;
            auto scores = std::make_shared<Frame>();
            scores->sequence = 2;
            scores->topologyGeneration = topology->generation;
            std::vector<float> values(topology->gpuCount);
            for (size_t g = 0; g < values.size(); ++g) {
                values[g] = top * static_cast<float>(g) / 95.0F;
            }
            scores->planes.push_back({ id, values });
            scores->health.assign(topology->gpuCount, health::Ok);
            HeatmapView scoreView; // a view of its own: no transition from the layer's colours
            scoreView.resize(640, 400);
            scoreView.setTopology(topology);
            scoreView.setMetric(score);
            scoreView.setFrame(scores);
            scoreView.show();
            QVERIFY(QTest::qWaitForWindowExposed(&scoreView));
            QVERIFY(paint(scoreView));
            image = scoreView.grabMap();
            const ColorMap inferno = ColorMap::byName(QStringLiteral("inferno"));
            for (int gpu : { 0, 40, 95 }) {
                QVERIFY2(closeTo(pixelOf(scoreView, image, gpu), inferno.map(values[static_cast<size_t>(gpu)], 0, top)),
                    qPrintable(QStringLiteral("%1 GPU %2: got %3, expected %4")
                                   .arg(id)
                                   .arg(gpu)
                                   .arg(QColor(pixelOf(scoreView, image, gpu)).name(),
                                       QColor(inferno.map(values[static_cast<size_t>(gpu)], 0, top)).name())));
            }
        }
    }

    void noValueIsHatchedNotColoured()
    {
        HeatmapView view;
        view.resize(640, 400);
        view.setTopology(smallFleet());
        view.setMetric(temperature());
        auto frame = std::const_pointer_cast<Frame>(frameWith(1, 20));
        frame->planes[0].values[10] = std::numeric_limits<float>::quiet_NaN();
        frame->health[20] = health::Offline;
        view.setFrame(frame);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(paint(view));
        const QImage image = view.grabMap();
        for (int gpu : { 10, 20 }) {
            // The hatch alternates two greys across the cell: sample the whole cell and find both, and no colour of
            // the map.
            const QRect r = QRectF(view.cellRect(gpu).topLeft() * view.devicePixelRatioF(),
                view.cellRect(gpu).size() * view.devicePixelRatioF())
                                .toAlignedRect()
                                .adjusted(2, 2, -2, -2);
            const QRgb light = 0x8a8f99;
            const QRgb dark = qRgb(qRed(light) * 55 / 100, qGreen(light) * 55 / 100, qBlue(light) * 55 / 100);
            QSet<QRgb> colours;
            for (int y = r.top(); y <= r.bottom(); ++y) {
                for (int x = r.left(); x <= r.right(); ++x) {
                    const QRgb c = image.pixel(x, y);
                    QVERIFY2(closeTo(c, light) || closeTo(c, dark), qPrintable(QColor(c).name()));
                    colours.insert(closeTo(c, light) ? light : dark);
                }
            }
            QVERIFY2(colours.size() >= 2, qPrintable(QStringLiteral("GPU %1 is not hatched").arg(gpu)));
        }
    }

    void aFrameThatDoesNotFitIsIgnoredAndThePreviousStays()
    {
        HeatmapView view;
        view.resize(640, 400);
        view.setTopology(smallFleet());
        view.setMetric(temperature());
        const auto good = frameWith(1, 20);
        view.setFrame(good);
        auto bad = std::const_pointer_cast<Frame>(frameWith(2, 60));
        bad->health.resize(95);
        bad->planes[0].values.resize(95);
        QTest::ignoreMessage(QtWarningMsg, "ignoring a frame that does not match the topology shown");
        view.setFrame(bad);
        QCOMPARE(view.frame(), good);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(paint(view));
        const QImage image = view.grabMap();
        const QRgb expected = ColorMap::byName(QStringLiteral("viridis")).map(good->planes[0].values[40], 20, 100);
        QVERIFY(closeTo(pixelOf(view, image, 40), expected));
    }

    void newFramesRepaintWithNewColours()
    {
        HeatmapView view;
        view.setAnimated(false); // --no-animation: a new frame shows at once
        QVERIFY(showSmallFleet(view, QSize(400, 300)));
        const QRgb before = pixelOf(view, view.grabMap(), 5);
        view.setFrame(frameWith(2, 80));
        QVERIFY(paint(view));
        const QRgb after = pixelOf(view, view.grabMap(), 5);
        const ColorMap map = ColorMap::byName(QStringLiteral("viridis"));
        QVERIFY(closeTo(after, map.map(80 + 5 * 0.75F, 20, 100)));
        QVERIFY(!closeTo(before, after));
    }

    // Zoom anchored at the cursor keeps the GPU under it; pan moves cells by the drag; picking and colours stay
    // right at every zoom and pan; zoom to fit restores the fitted view.
    void zoomAndPanKeepPickingAndColoursRight()
    {
        HeatmapView view;
        const auto frame = setUpSmallFleet(view);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QRectF fitted = view.cellRect(50);
        const double fittedCell = view.cellSize();

        const QPointF anchor = view.cellRect(50).center();
        view.zoomAt(anchor, 2.0);
        QVERIFY(!view.isFitted());
        QCOMPARE(view.gpuAt(anchor), 50);
        QVERIFY(std::abs(view.cellSize() - 2 * fittedCell) < 1e-9);

        view.panBy(QPointF(-30, 12));
        const QRectF moved = view.cellRect(50);
        QVERIFY(std::abs(moved.center().x() - (anchor.x() - 30)) < 1e-6);
        QVERIFY(std::abs(moved.center().y() - (anchor.y() + 12)) < 1e-6);

        QVERIFY(paint(view));
        const QImage image = view.grabMap();
        const ColorMap map = ColorMap::byName(QStringLiteral("viridis"));
        int checked = 0;
        for (int gpu : { 49, 50, 51, 58 }) {
            const QRectF r = view.cellRect(gpu);
            if (!QRectF(view.rect()).contains(r)) {
                continue;
            }
            ++checked;
            QCOMPARE(view.gpuAt(r.center()), gpu);
            QVERIFY(closeTo(
                pixelOf(view, image, gpu), map.map(frame->planes[0].values[static_cast<size_t>(gpu)], 20, 100)));
        }

        QVERIFY(checked >= 2);
        // Keys: - zooms out around the centre, 0 fits again.
        QTest::keyClick(&view, Qt::Key_Minus);
        QVERIFY(view.cellSize() < 2 * fittedCell);
        QTest::keyClick(&view, Qt::Key_0);
        QVERIFY(view.isFitted());
        QCOMPARE(view.cellRect(50), fitted);
        // Zooming out stops at half the fitted size.
        view.zoomAt(QPointF(10, 10), 0.001);
        QVERIFY(std::abs(view.cellSize() - fittedCell / 2) < 1e-9);
    }

    // With more GPUs than pixels, a single hot GPU still shows (worst of), and the mean blends it away.
    void aHotGpuIsNeverHiddenWhenZoomedOut()
    {
        const auto topology = fleet(2, 80); // 2,560 GPUs, 719 cells wide
        auto frame = std::make_shared<Frame>();
        frame->topologyGeneration = 1;
        frame->planes.push_back({ QStringLiteral("gpu_temp"), std::vector<float>(topology->gpuCount, 20.0F) });
        frame->planes[0].values[1234] = 100.0F;
        frame->health.assign(topology->gpuCount, health::Ok);
        HeatmapView view;
        view.resize(320, 200);
        view.setTopology(topology);
        view.setMetric(temperature());
        view.setFrame(frame);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.cellSize() < 1.0);
        const QRgb hot = ColorMap::byName(QStringLiteral("viridis")).map(100, 20, 100);
        auto count = [&](const QImage &image) {
            int n = 0;
            for (int y = 0; y < image.height(); ++y) {
                for (int x = 0; x < image.width(); ++x) {
                    n += closeTo(image.pixel(x, y), hot) ? 1 : 0;
                }
            }
            return n;
        };
        QVERIFY(paint(view));
        QVERIFY(count(view.grabMap()) >= 1);
        view.setAggregation(HeatmapView::Aggregation::Mean);
        QVERIFY(paint(view));
        QCOMPARE(count(view.grabMap()), 0);
    }

    // Between two frames the shader interpolates: halfway in time, the colour is the colour map's at the halfway
    // value; at the end, the new frame's.
    void interpolationIsHalfwayHalfway()
    {
        qint64 now = 1000;
        HeatmapView view;
        view.setClock([&now] { return now; });
        view.resize(400, 300);
        view.setTopology(smallFleet());
        view.setMetric(temperature());
        auto first = std::const_pointer_cast<Frame>(frameWith(1, 20));
        first->sampleTimeMs = 10000;
        view.setFrame(first);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(paint(view));
        auto second = std::const_pointer_cast<Frame>(frameWith(2, 80));
        second->sampleTimeMs = 11000; // one second later: the transition lasts one second
        view.setFrame(second);
        const ColorMap map = ColorMap::byName(QStringLiteral("viridis"));
        const int gpu = 5;
        const float from = first->planes[0].values[gpu];
        const float to = second->planes[0].values[gpu];
        QVERIFY(paint(view));
        QVERIFY(closeTo(pixelOf(view, view.grabMap(), gpu), map.map(from, 20, 100)));
        now += 500;
        QCOMPARE(view.interpolation(), 0.5);
        QVERIFY(paint(view));
        const QRgb halfway = pixelOf(view, view.grabMap(), gpu);
        QVERIFY2(closeTo(halfway, map.map((from + to) / 2, 20, 100)),
            qPrintable(QStringLiteral("got %1, expected %2")
                           .arg(QColor(halfway).name(), QColor(map.map((from + to) / 2, 20, 100)).name())));
        now += 600;
        QVERIFY(paint(view));
        QVERIFY(closeTo(pixelOf(view, view.grabMap(), gpu), map.map(to, 20, 100)));
        QCOMPARE(view.interpolation(), 1.0);
    }

    // Old data is marked by a pattern no colour of the map has, and a banner; offline GPUs are hatched likewise.
    void staleDataIsPatternedNotJustColoured()
    {
        HeatmapView view;
        setUpSmallFleet(view);
        view.setStaleNote(QStringLiteral("Data is 42 s old"));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(paint(view));
        const QImage image = view.grabMap();
        const ColorMap map = ColorMap::byName(QStringLiteral("viridis"));
        auto inMap = [&](QRgb c) {
            for (int i = 0; i < ColorMap::size; ++i) {
                if (closeTo(c, map.at(i))) {
                    return true;
                }
            }
            return false;
        };
        // A dot lies on every 6th pixel in both directions; find the dots inside GPU 60's cell.
        const QRect r = QRectF(
            view.cellRect(60).topLeft() * view.devicePixelRatioF(), view.cellRect(60).size() * view.devicePixelRatioF())
                            .toAlignedRect()
                            .adjusted(2, 2, -2, -2);
        int dots = 0;
        for (int y = r.top(); y <= r.bottom(); ++y) {
            for (int x = r.left(); x <= r.right(); ++x) {
                if (x % 6 < 2 && y % 6 < 2) {
                    QVERIFY2(!inMap(image.pixel(x, y)), qPrintable(QColor(image.pixel(x, y)).name()));
                    ++dots;
                }
            }
        }
        QVERIFY(dots > 4);
        // The banner across the top.
        QVERIFY(closeTo(image.pixel(3, 3), qRgb(0xb0, 0x3a, 0x1e)) || qRed(image.pixel(3, 3)) > 150);
        // Fresh again: no dots.
        view.setStaleNote({});
        QVERIFY(paint(view));
        QVERIFY(inMap(view.grabMap().pixel(r.left() + (6 - r.left() % 6) % 6, r.top() + (6 - r.top() % 6) % 6)));
    }

    void clickSelectsAGpuAndRingsIt()
    {
        HeatmapView view;
        setUpSmallFleet(view);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy selected(&view, &HeatmapView::gpuSelected);
        const QPoint centre = view.cellRect(33).center().toPoint();
        QTest::mouseClick(&view, Qt::LeftButton, {}, centre);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(selected.first().at(0).toInt(), 33);
        QCOMPARE(view.selectedGpu(), 33);
        QVERIFY(paint(view));
        // The ring: white at its radius (0.75 cell, at least 6 physical pixels) from the cell's centre.
        const double dpr = view.devicePixelRatioF();
        const QRectF cell = view.cellRect(33);
        const double radius = std::max(6.0, cell.width() * dpr * 0.75);
        const QPointF c = cell.center() * dpr;
        const QImage image = view.grabMap();
        QCOMPARE(image.pixel(static_cast<int>(c.x() + radius + 1), static_cast<int>(c.y())), qRgb(255, 255, 255));
        // A click on an aisle clears the selection.
        const QRectF a = view.cellRect(7);
        QTest::mouseClick(&view, Qt::LeftButton, {}, QPointF(a.right() + a.width() / 2, a.center().y()).toPoint());
        QCOMPARE(view.selectedGpu(), -1);
    }

    // A place zoomed to stays fitted when the view changes size (a dock opens), instead of being cut off.
    void aPlaceStaysFittedWhenTheViewIsResized()
    {
        HeatmapView view;
        view.setAnimated(false);
        setUpSmallFleet(view);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QRect rack5 = view.cellsOf(80, 16); // the last rack, at the right of the second row
        view.zoomToCells(rack5);
        QVERIFY(paint(view));
        const auto shown = [&] { return view.cellRect(80).united(view.cellRect(95)); };
        QVERIFY(QRectF(view.rect()).contains(shown()));
        view.resize(340, 400);
        QVERIFY(QTest::qWaitFor([&] { return view.width() == 340; }, 5000));
        QVERIFY(paint(view));
        QVERIFY2(QRectF(view.rect()).contains(shown()), "the place is cut off after the resize");
        QVERIFY(shown().width() >= 0.85 * view.width());
        // The pixels follow: GPU 95's colour where its cell now is.
        const QImage image = view.grabMap();
        QVERIFY(closeTo(pixelOf(view, image, 95), view.colorMap().map(20 + 95 * 0.75F, 20, 100)));
        // Once the user pans, the view stays where it was put.
        view.panBy({ 20, 0 });
        const QRectF put = shown();
        view.resize(500, 400);
        QVERIFY(QTest::qWaitFor([&] { return view.width() == 500; }, 5000));
        QCOMPARE(shown(), put);
    }

    // The fleet fitted stays whole in the view when the view changes size (the docks, the timeline and the legend
    // taking their room) while a big fleet's layout is still being built on its worker, and after that layout
    // arrives: the GPUs at the corners of the first and the last row lie inside the view.
    void theFittedFleetStaysWholeThroughResizesAndALateLayout()
    {
        const auto big = fleet(64, 100); // 102,400 GPUs: laid out on a worker thread
        QVERIFY(big->gpuCount > HeatmapView::syncLayoutGpus);
        HeatmapView view;
        view.setAnimated(false);
        view.resize(1200, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy ready(&view, &HeatmapView::layoutReady);
        view.setTopology(big);
        QVERIFY(view.isLayoutPending());
        view.resize(1400, 400); // wide and short, as between the docks, the timeline and the legend: height-bound
        QVERIFY(QTest::qWaitFor([&] { return view.height() == 400; }, 5000));
        QVERIFY(ready.wait(10000));
        const int lastRow = (64 - 1) * 100 * 16; // the first GPU of the last row's first rack
        const int last = static_cast<int>(big->gpuCount) - 1;
        const auto whole = [&] {
            const QRectF inside = QRectF(view.rect());
            for (int gpu : { 0, 100 * 16 - 1, lastRow, last }) {
                const QRectF cell = view.cellRect(gpu);
                if (!inside.contains(cell)) {
                    qWarning("GPU %d at %g,%g outside %gx%g", gpu, cell.x(), cell.y(), inside.width(), inside.height());
                    return false;
                }
            }
            return true;
        };
        QVERIFY(view.isFitted());
        QVERIFY(whole());
        QVERIFY(paint(view));
        // Taller than wide (width-bound), then short again: refitted each time, the user having moved nothing.
        for (const QSize size : { QSize(700, 650), QSize(1300, 330) }) {
            view.resize(size);
            QVERIFY(QTest::qWaitFor([&] { return view.size() == size; }, 5000));
            QVERIFY(paint(view));
            QVERIFY(view.isFitted());
            QVERIFY2(whole(), qPrintable(QStringLiteral("%1x%2").arg(size.width()).arg(size.height())));
        }
    }

    // While the map moves it repaints on its own, at the display's rate where a paint is cheap and less often where a
    // paint costs much CPU (here 20 ms each: about 20 / 0.35 ms apart), and stops once nothing moves.
    void repaintsWhileMovingArePacedByTheirCpuCost()
    {
        int repaints = 0;
        HeatmapPacer pacer([&repaints] { ++repaints; });
        QVERIFY(!pacer.isRepainting());
        pacer.painted(true);
        QVERIFY(pacer.isRepainting());
        QCOMPARE(pacer.interval(), 16);
        QTRY_VERIFY(repaints > 0);
        for (int i = 0; i < 9; ++i) { // the first paint starts the measure, eight more end it
            const std::clock_t start = std::clock();
            while (std::clock() - start < CLOCKS_PER_SEC / 50) { }
            pacer.painted(true);
        }
        QVERIFY2(pacer.interval() >= 45 && pacer.interval() <= 150, qPrintable(QString::number(pacer.interval())));
        pacer.painted(false);
        QVERIFY(!pacer.isRepainting());
    }

    // Between two frames, an animation repaint (or a hover) redraws from what the per-frame pass resolved: no pass
    // runs again, yet the colours move.
    void animationRepaintsRunNoPerFramePass()
    {
        qint64 now = 0;
        HeatmapView view;
        view.setClock([&now] { return now; });
        QVERIFY(showSmallFleet(view));
        auto second = std::make_shared<Frame>(*frameWith(2, 60));
        second->sampleTimeMs = 1000;
        view.setFrame(second);
        QVERIFY(paint(view));
        const quint64 resolved = view.resolveCount();
        const quint64 screened = view.screenCount();
        const QRgb first = pixelOf(view, view.grabMap(), 10);
        now += 500;
        QVERIFY(paint(view));
        QVERIFY(view.interpolation() > 0.4 && view.interpolation() < 0.6);
        QCOMPARE(view.resolveCount(), resolved);
        QCOMPARE(view.screenCount(), screened);
        // A hover repaints nothing new either; a selection redraws the pixels (the ring), not the cells.
        QTest::mouseMove(&view, view.cellRect(20).center().toPoint());
        QVERIFY(paint(view));
        QCOMPARE(view.screenCount(), screened);
        view.setSelectedGpu(20);
        QVERIFY(paint(view));
        QCOMPARE(view.resolveCount(), resolved);
        QVERIFY(view.screenCount() > screened);
        view.setSelectedGpu(-1);
        QVERIFY(paint(view));
        const QRgb later = pixelOf(view, view.grabMap(), 10);
        QVERIFY(first != later);
        QCOMPARE(
            later, view.colorMap().map(20 + 10 * 0.75F + 40.0F * static_cast<float>(view.interpolation()), 20, 100));
    }

    // Drill-down zooms to a place's cells with a short morph (driven by the test clock), and a saved view position
    // comes back in a window of the same size.
    void zoomToCellsMorphsThereAndViewPositionsRoundTrip()
    {
        qint64 now = 0;
        HeatmapView view;
        view.setClock([&now] { return now; });
        setUpSmallFleet(view);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const double fitted = view.cellSize();
        const QRect rack4 = view.cellsOf(64, 16); // rack 4: 2 nodes x 8 GPUs
        QCOMPARE(rack4, QRect(9, 5, 8, 2));
        view.zoomToCells(rack4);
        QCOMPARE(view.cellSize(), fitted); // the morph has not started moving
        now += 125;
        QVERIFY(view.cellSize() > fitted);
        now += 200;
        QVERIFY(paint(view));
        const QRectF target = QRectF(view.cellRect(64)).united(view.cellRect(79));
        QVERIFY(QRectF(view.rect()).contains(target));
        QVERIFY(target.width() >= 0.85 * view.width() || target.height() >= 0.85 * view.height());
        QCOMPARE(view.gpuAt(view.cellRect(70).center()), 70);

        const auto position = view.viewPosition();
        const QRectF cell70 = view.cellRect(70);
        QVERIFY(position.zoom > 0);
        view.zoomToFit();
        QCOMPARE(view.viewPosition().zoom, 0.0);
        view.setViewPosition(position);
        QVERIFY(std::abs(view.cellRect(70).center().x() - cell70.center().x()) < 1e-6);
        QVERIFY(std::abs(view.cellRect(70).center().y() - cell70.center().y()) < 1e-6);
        QVERIFY(std::abs(view.cellRect(70).width() - cell70.width()) < 1e-6);
        // Back to the fleet: an empty rect morphs to the fitted view and ends fitted, even when the window changes
        // size on the way (the docks of the main window settle after the first frame).
        view.zoomToCells({});
        now += 100;
        view.resize(500, 320);
        QVERIFY(QTest::qWaitFor([&] { return view.width() == 500; }, 5000));
        now += 200;
        QVERIFY(paint(view));
        QVERIFY(view.isFitted());
        view.zoomToFit();
        const double refitted = view.cellSize();
        QVERIFY(refitted < fitted);
        QVERIFY(QRectF(view.rect()).contains(view.cellRect(95)));
        // Already fitted: nothing to morph.
        view.zoomToCells({});
        QVERIFY(view.isFitted());
        QCOMPARE(view.cellSize(), refitted);
    }

    // A job's GPUs are outlined wherever they are: a white frame inside each marked cell, none around the others.
    void markedGpusAreOutlined()
    {
        HeatmapView view;
        setUpSmallFleet(view);
        view.setMarkedGpus({ 5, 70, 500 }); // 500 is outside the fleet and ignored
        QCOMPARE(view.markedGpuCount(), size_t(2));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(paint(view));
        const QImage image = view.grabMap();
        const double dpr = view.devicePixelRatioF();
        const auto edgePixel = [&](int gpu) {
            const QRectF r = view.cellRect(gpu);
            return image.pixel(
                static_cast<int>((r.left() + r.width() / 2) * dpr), static_cast<int>(r.bottom() * dpr) - 1);
        };
        QCOMPARE(edgePixel(5), qRgb(255, 255, 255));
        QCOMPARE(edgePixel(70), qRgb(255, 255, 255));
        QVERIFY(edgePixel(6) != qRgb(255, 255, 255));
        // The inside keeps its value's colour.
        QVERIFY(
            closeTo(pixelOf(view, image, 5), ColorMap::byName(QStringLiteral("viridis")).map(20 + 5 * 0.75F, 20, 100)));
        view.setMarkedGpus({});
        QVERIFY(paint(view));
        QVERIFY(view.grabMap().pixel(static_cast<int>((view.cellRect(5).center().x()) * dpr),
                    static_cast<int>(view.cellRect(5).bottom() * dpr) - 1)
            != qRgb(255, 255, 255));
    }

    // The place drilled into stays in its colours; the rest of the fleet is dimmed to about a third.
    void gpusOutsideTheFocusAreDimmed()
    {
        HeatmapView view;
        const auto frame = setUpSmallFleet(view);
        view.setFocusRange(64, 16);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(paint(view));
        const QImage image = view.grabMap();
        const ColorMap map = ColorMap::byName(QStringLiteral("viridis"));
        QVERIFY(closeTo(pixelOf(view, image, 70), map.map(frame->planes[0].values[70], 20, 100)));
        const QRgb full = map.map(frame->planes[0].values[5], 20, 100);
        const QRgb dimmed = pixelOf(view, image, 5);
        QVERIFY2(std::abs(qGreen(dimmed) - qGreen(full) * 35 / 100) <= 2, qPrintable(QColor(dimmed).name()));
        view.setFocusRange(0, 0);
        QVERIFY(paint(view));
        QVERIFY(closeTo(pixelOf(view, view.grabMap(), 5), full));
    }

    void enterActivatesTheSelectedGpu()
    {
        HeatmapView view;
        setUpSmallFleet(view);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy activated(&view, &HeatmapView::gpuActivated);
        QTest::keyClick(&view, Qt::Key_Return);
        QCOMPARE(activated.count(), 0); // nothing selected or hovered
        view.setSelectedGpu(42);
        QTest::keyClick(&view, Qt::Key_Return);
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.first().at(0).toInt(), 42);
    }

    void tooltipNamesHostGpuValueAndUnit()
    {
        HeatmapView view;
        view.setTopology(smallFleet());
        view.setMetric(temperature());
        view.setFrame(frameWith(1, 20));
        const QString text = view.describeGpu(13);
        QVERIFY2(text.contains(QStringLiteral("rack0-n1")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("GPU 5")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("29.8 °C")), qPrintable(text)); // 20 + 13 x 0.75
        QVERIFY(view.describeGpu(96).isEmpty());
    }

    void tooltipNamesTheJobAndTheDataAge()
    {
        HeatmapView view;
        view.setWallClock([] { return qint64(1'700'000'012'500); });
        view.setTopology(smallFleet());
        view.setMetric(temperature());
        auto frame = std::const_pointer_cast<Frame>(frameWith(1, 20));
        frame->sampleTimeMs = 1'700'000'010'000;
        view.setFrame(frame);
        view.setJobs(someJobs());
        const QString busy = view.describeGpu(61);
        QVERIFY2(busy.contains(QStringLiteral("eval #9")), qPrintable(busy));
        QVERIFY2(busy.contains(QStringLiteral("2.5 s old")), qPrintable(busy));
        QVERIFY2(view.describeGpu(90).contains(QStringLiteral("idle")), qPrintable(view.describeGpu(90)));
        // Jobs of another topology generation are not believed.
        auto stale = std::const_pointer_cast<JobList>(someJobs());
        stale->topologyGeneration = 2;
        view.setJobs(stale);
        QVERIFY(!view.describeGpu(61).contains(QStringLiteral("eval")));
    }

    // A GPU's domains as the model words them, a line a cause (power, cooling, network), escaped; none where the fleet
    // has no domains.
    void tooltipNamesTheGpusDomains()
    {
        HeatmapView view;
        view.setTopology(smallFleet());
        view.setMetric(temperature());
        const QString without = view.describeGpu(13);
        QVERIFY(!without.isEmpty());
        auto topology = std::const_pointer_cast<Topology>(smallFleet());
        topology->domains = { { DomainKind::Pdu, QStringLiteral("r01-k02-a"), -1, -1 },
            { DomainKind::CoolingUnit, QStringLiteral("<crah1>"), -1, -1 },
            { DomainKind::LeafSwitch, QStringLiteral("su01-l5"), -1, 5 } };
        topology->racks[topology->nodeOf(13).rack].domains = { 0, 1 };
        topology->gpuLinks.assign(topology->gpuCount, {});
        topology->gpuLinks[13] = { 2, 17 };
        topology->generation += 1;
        view.setTopology(topology);
        const QString text = view.describeGpu(13);
        QVERIFY2(text.contains(QStringLiteral(
                     "<br>PDU r01-k02-a<br>cooling unit &lt;crah1&gt;<br>leaf su01-l5 port 17, rail 5<br>")),
            qPrintable(text));
        QCOMPARE(text.count(QStringLiteral("<br>")), without.count(QStringLiteral("<br>")) + 3);
        QVERIFY2(!view.describeGpu(12).contains(QStringLiteral("leaf")), qPrintable(view.describeGpu(12)));
    }
};

int main(int argc, char *argv[])
{
    HeatmapView::requestSurfaceFormat();
    QApplication app(argc, argv);
    TestHeatmapView test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_heatmapview.moc"
