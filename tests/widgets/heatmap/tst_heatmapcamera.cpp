// SPDX-License-Identifier: Apache-2.0
// HeatmapCamera without a window or a GL context: fit, zoom, pan, the zoom morph on a test clock, picking, and the
// refit of a place's cells when the window changes size.
#include "widgets/heatmap/heatmapcamera.h"

#include <QTest>

#include <cmath>

using namespace fleetscope;

namespace {

// A layout of w x h cells, every cell a GPU in row-major order except a gap column in the middle.
HeatmapLayout grid(int w, int h)
{
    HeatmapLayout layout;
    layout.width = w;
    layout.height = h;
    layout.cells.assign(static_cast<size_t>(w) * static_cast<size_t>(h), HeatmapLayout::gap);
    int32_t gpu = 0;
    for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
            if (x == w / 2) {
                continue;
            }
            layout.cells[static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)] = gpu++;
            layout.gpuCells.emplace_back(x, y);
        }
    }
    return layout;
}

bool near(double a, double b, double eps = 1e-6)
{
    return std::abs(a - b) <= eps;
}

// The layout's rectangle in logical pixels.
QRectF mapRect(const HeatmapCamera &camera, int w, int h)
{
    return QRectF(camera.cellRect({ 0, 0 }).topLeft(), camera.cellRect({ w - 1, h - 1 }).bottomRight());
}

} // namespace

class TestHeatmapCamera : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void fitsLayoutsOfEveryShape_data()
    {
        QTest::addColumn<int>("layoutW");
        QTest::addColumn<int>("layoutH");
        QTest::addColumn<QSizeF>("window");
        QTest::addColumn<double>("dpr");
        QTest::newRow("wide layout, wide window") << 160 << 40 << QSizeF(800, 600) << 1.0;
        QTest::newRow("tall layout, wide window") << 20 << 200 << QSizeF(800, 600) << 1.0;
        QTest::newRow("square, tall window") << 50 << 50 << QSizeF(300, 900) << 1.0;
        QTest::newRow("a million, 1080p") << 1457 << 1119 << QSizeF(1920, 1080) << 1.0;
        QTest::newRow("a million, 1080p at 2x") << 1457 << 1119 << QSizeF(1920, 1080) << 2.0;
        QTest::newRow("small, 1.5x") << 33 << 7 << QSizeF(640, 400) << 1.5;
    }
    void fitsLayoutsOfEveryShape()
    {
        QFETCH(int, layoutW);
        QFETCH(int, layoutH);
        QFETCH(QSizeF, window);
        QFETCH(double, dpr);
        HeatmapCamera camera;
        camera.setViewport(window, dpr);
        camera.setLayoutSize(layoutW, layoutH);
        QVERIFY(camera.isFitted());
        const QRectF map = mapRect(camera, layoutW, layoutH);
        QVERIFY2(QRectF(QPointF(0, 0), window).adjusted(-1e-9, -1e-9, 1e-9, 1e-9).contains(map),
            qPrintable(QStringLiteral("%1,%2 %3x%4").arg(map.x()).arg(map.y()).arg(map.width()).arg(map.height())));
        // Fills one dimension: within one cell (whole pixels per cell from 4 on) of the window's width or height.
        const double cell = map.width() / layoutW;
        QVERIFY(window.width() - map.width() <= cell + 1 || window.height() - map.height() <= cell + 1);
        // Centred (to whole pixels).
        QVERIFY(std::abs((window.width() - map.right()) - map.left()) <= 2.0);
        QVERIFY(std::abs((window.height() - map.bottom()) - map.top()) <= 2.0);
        // Whole physical pixels per cell from four on.
        const double physical = camera.placement().cellSize;
        QVERIFY(physical < 4.0 || physical == std::floor(physical));
    }

    void fitKeepsTheMarginsFree()
    {
        HeatmapCamera camera;
        camera.setViewport(QSizeF(800, 600), 1.0);
        camera.setLayoutSize(100, 100);
        camera.setFitMargins(64, 20);
        const QRectF map = mapRect(camera, 100, 100);
        QVERIFY(map.left() >= 64);
        QVERIFY(map.top() >= 20);
    }

    void zoomKeepsThePointUnderTheAnchor()
    {
        HeatmapCamera camera;
        camera.setViewport(QSizeF(800, 600), 1.5);
        camera.setLayoutSize(100, 80);
        const QPointF anchor(300.5, 211.25);
        const auto cellAtAnchor = [&] {
            const auto p = camera.placement();
            return QPointF((anchor.x() * 1.5 - p.originX) / p.cellSize, (anchor.y() * 1.5 - p.originY) / p.cellSize);
        };
        const QPointF before = cellAtAnchor();
        const double cell = camera.placement().cellSize;
        camera.zoomAt(anchor, 1.25);
        QVERIFY(!camera.isFitted());
        QVERIFY(near(camera.placement().cellSize, cell * 1.25));
        QVERIFY(near(cellAtAnchor().x(), before.x()));
        QVERIFY(near(cellAtAnchor().y(), before.y()));
        camera.zoomAt(anchor, 0.9);
        QVERIFY(near(cellAtAnchor().x(), before.x()));
        QVERIFY(near(cellAtAnchor().y(), before.y()));
    }

    void zoomStaysWithinItsLimits_data()
    {
        QTest::addColumn<double>("dpr");
        QTest::newRow("1") << 1.0;
        QTest::newRow("1.5") << 1.5;
        QTest::newRow("2") << 2.0;
    }
    void zoomStaysWithinItsLimits()
    {
        QFETCH(double, dpr);
        // A small layout: the biggest cell is 96 logical pixels, i.e. 96 x dpr physical.
        HeatmapCamera camera;
        camera.setViewport(QSizeF(800, 600), dpr);
        camera.setLayoutSize(20, 10);
        camera.zoomAt({ 400, 300 }, 1000.0);
        QVERIFY(near(camera.placement().cellSize, HeatmapCamera::maxCellSize * dpr));
        QVERIFY(near(camera.cellRect({ 0, 0 }).width(), HeatmapCamera::maxCellSize));
        // Out: no smaller than half the fitted size.
        const double fitted = camera.fittedPlacement().cellSize;
        camera.zoomAt({ 400, 300 }, 1e-6);
        QVERIFY(near(camera.placement().cellSize, fitted / 2));
        // A huge layout: never below a quarter of a physical pixel.
        camera.setLayoutSize(4000, 4000);
        camera.fit();
        camera.zoomAt({ 400, 300 }, 1e-6);
        QVERIFY(near(camera.placement().cellSize, HeatmapCamera::minCellSize));
        QVERIFY(near(camera.cellRect({ 0, 0 }).width(), HeatmapCamera::minCellSize / dpr));
    }

    void panMovesAndKeepsAQuarterOnScreen()
    {
        HeatmapCamera camera;
        camera.setViewport(QSizeF(800, 600), 2.0);
        camera.setLayoutSize(100, 80);
        const QRectF before = camera.cellRect({ 10, 10 });
        camera.panBy({ 30, -12.5 });
        QVERIFY(!camera.isFitted());
        const QRectF after = camera.cellRect({ 10, 10 });
        QVERIFY(near(after.x() - before.x(), 30));
        QVERIFY(near(after.y() - before.y(), -12.5));
        // Far off the edge: stopped with at least a quarter of the window's width of map on screen.
        camera.panBy({ -100000, 0 });
        const QRectF map = mapRect(camera, 100, 80);
        QVERIFY(map.right() >= 800 / 4.0 - 1e-6);
        QVERIFY(map.right() < 800);
    }

    void morphsOnTheClock()
    {
        qint64 now = 1000;
        HeatmapCamera camera;
        camera.setClock([&now] { return now; });
        camera.setViewport(QSizeF(800, 600), 1.0);
        camera.setLayoutSize(100, 80);
        const auto start = camera.placement();
        const QRect place(40, 30, 10, 5);
        camera.zoomToCells(place, true);
        QVERIFY(camera.isMorphing());
        QVERIFY(!camera.isFitted());
        // t = 0: where it was.
        QVERIFY(near(camera.placement().cellSize, start.cellSize));
        QVERIFY(near(camera.placement().originX, start.originX));
        // Half-way in time: eased half-way, the cell size geometrically between the two.
        now += HeatmapCamera::zoomMs / 2;
        QVERIFY(camera.settleMorph());
        camera.setClock([] { return qint64(1) << 40; });
        const auto end = camera.placement();
        camera.setClock([&now] { return now; });
        QVERIFY(near(camera.placement().cellSize, std::sqrt(start.cellSize * end.cellSize), 1e-9));
        // The end: the place's cells fill 90% of the window's width, centred.
        now += HeatmapCamera::zoomMs;
        QVERIFY(!camera.settleMorph());
        QVERIFY(!camera.isMorphing());
        const QRectF shown
            = QRectF(camera.cellRect(place.topLeft()).topLeft(), camera.cellRect(place.bottomRight()).bottomRight());
        QVERIFY(near(shown.width(), 0.9 * 800, 1e-6));
        QVERIFY(near(shown.center().x(), 400) && near(shown.center().y(), 300));
        QCOMPARE(camera.fittedCells(), place);
        // Without animation: there at once.
        camera.zoomToCells({}, false);
        QVERIFY(camera.isFitted());
    }

    void pickingRoundTrips()
    {
        const HeatmapLayout layout = grid(21, 9);
        for (const double dpr : { 1.0, 1.5, 2.0 }) {
            HeatmapCamera camera;
            camera.setViewport(QSizeF(640, 400), dpr);
            camera.setLayoutSize(layout.width, layout.height);
            camera.zoomAt({ 100, 100 }, 1.7);
            camera.panBy({ 13, 7 });
            for (int gpu = 0; gpu < static_cast<int>(layout.gpuCells.size()); ++gpu) {
                const QRectF r = camera.gpuRect(layout, gpu);
                if (r.right() < 0 || r.bottom() < 0 || r.left() > 640 || r.top() > 400) {
                    continue;
                }
                QCOMPARE(camera.gpuAt(layout, r.center()), gpu);
            }
            // Outside the layout, and a gap inside it.
            const QRectF first = camera.gpuRect(layout, 0);
            QCOMPARE(camera.gpuAt(layout, first.topLeft() - QPointF(first.width(), 0)), -1);
            QCOMPARE(camera.gpuAt(layout, first.topLeft() - QPointF(0, first.height())), -1);
            const QRectF last = camera.gpuRect(layout, static_cast<int>(layout.gpuCells.size()) - 1);
            QCOMPARE(camera.gpuAt(layout, last.bottomRight() + QPointF(1, 1)), -1);
            QCOMPARE(camera.gpuAt(layout, camera.cellRect({ 10, 4 }).center()), -1); // the gap column
            QCOMPARE(camera.gpuRect(layout, -1), QRectF());
            QCOMPARE(camera.gpuRect(layout, static_cast<int>(layout.gpuCells.size())), QRectF());
        }
    }

    void viewPositionSurvivesAnotherWindowSize()
    {
        HeatmapCamera camera;
        camera.setViewport(QSizeF(800, 600), 1.0);
        camera.setLayoutSize(100, 80);
        QCOMPARE(camera.viewPosition().zoom, 0.0); // fitted
        camera.zoomAt({ 200, 200 }, 3);
        const auto position = camera.viewPosition();
        const QPointF centreCell(position.centreX, position.centreY);
        camera.fit();
        camera.setViewport(QSizeF(1000, 500), 1.0);
        camera.setViewPosition(position);
        QVERIFY(near(camera.placement().cellSize, position.zoom));
        // The same cell at the new window's centre.
        const auto p = camera.placement();
        QVERIFY(near((500 - p.originX) / p.cellSize, centreCell.x()));
        QVERIFY(near((250 - p.originY) / p.cellSize, centreCell.y()));
        camera.setViewPosition({});
        QVERIFY(camera.isFitted());
    }

    // A place zoomed to stays fitted when the window changes size (a dock opens), until the user zooms or pans.
    void aPlaceIsRefittedOnResize()
    {
        HeatmapCamera camera;
        camera.setViewport(QSizeF(1200, 800), 1.0);
        camera.setLayoutSize(200, 120);
        const QRect place(150, 90, 40, 20);
        camera.zoomToCells(place, false);
        const auto shown = [&] {
            return QRectF(
                camera.cellRect(place.topLeft()).topLeft(), camera.cellRect(place.bottomRight()).bottomRight());
        };
        QVERIFY(QRectF(0, 0, 1200, 800).contains(shown()));
        camera.setViewport(QSizeF(500, 800), 1.0);
        QVERIFY2(QRectF(0, 0, 500, 800).contains(shown()), "the place is cut off after the resize");
        QVERIFY(near(shown().width(), 0.9 * 500));
        camera.setViewport(QSizeF(500, 200), 1.0);
        QVERIFY(QRectF(0, 0, 500, 200).contains(shown()));
        // The user pans: from then on the view stays where it was put.
        camera.panBy({ 10, 0 });
        QCOMPARE(camera.fittedCells(), QRect());
        const QRectF put = shown();
        camera.setViewport(QSizeF(900, 700), 1.0);
        QCOMPARE(shown(), put);
    }
};

QTEST_GUILESS_MAIN(TestHeatmapCamera)
#include "tst_heatmapcamera.moc"
