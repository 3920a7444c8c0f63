// SPDX-License-Identifier: Apache-2.0
// Shared domains on the map: the domain behind an incident highlighted (its GPUs framed in its colour where not
// outlined, its racks outlined around; nothing of it outside them; gone with the outline), drawn alike on the CPU and
// through the shaders; the by-fabric arrangement's scalable units named at fleet zoom, where the aisle above a block
// is too low for text, and its leaves named once a line is tall enough. Needs an X display (Xvfb in CI).
#include "model/heatmaplayout.h"
#include "tests/widgets/heatmap/heatmaptesting.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapglsurface.h"
#include "widgets/heatmap/heatmapview.h"

#include <QApplication>
#include <QTest>

#include <array>
#include <cmath>

using namespace fleetscope;
using namespace fleetscope::heatmaptesting;

Q_DECLARE_METATYPE(fleetscope::HeatmapView::Passes)

namespace {

// The domain's cyan, as the passes write it (10 bits, then 8), within a step or two.
bool isDomainColour(QRgb c)
{
    return std::abs(qRed(c) - qRed(domainColour)) <= 3 && std::abs(qGreen(c) - qGreen(domainColour)) <= 3
        && std::abs(qBlue(c) - qBlue(domainColour)) <= 3;
}

// Pixels of the domain's colour inside and outside an area of the image (device pixels).
std::pair<int, int> domainPixels(const QImage &image, const QRect &area)
{
    int inside = 0;
    int outside = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            if (isDomainColour(image.pixel(x, y))) {
                ++(area.contains(x, y) ? inside : outside);
            }
        }
    }
    return { inside, outside };
}

// fleet(rows, racksPerRow) cabled as the simulator cables an HGX fleet: scalable units of 32 nodes, a leaf per rail
// in each (su01-l0 ... su01-l7), port k to the unit's node k.
std::shared_ptr<Topology> fabricFleet(uint32_t rows, uint32_t racksPerRow)
{
    auto topology = std::make_shared<Topology>(*fleet(rows, racksPerRow));
    topology->gpuLinks.assign(topology->gpuCount, Topology::GpuLink {});
    uint32_t unit = 0;
    for (uint32_t n = 0; n < topology->nodes.size(); ++n) {
        if (n % 32 == 0) {
            unit = static_cast<uint32_t>(topology->domains.size());
            const QString name = QStringLiteral("su%1").arg(n / 32 + 1, 2, 10, QLatin1Char('0'));
            topology->domains.push_back({ DomainKind::ScalableUnit, name, -1, -1 });
            for (int32_t rail = 0; rail < 8; ++rail) {
                topology->domains.push_back(
                    { DomainKind::LeafSwitch, name + QStringLiteral("-l%1").arg(rail), -1, rail });
            }
        }
        topology->nodes[n].domains = { unit };
        for (uint32_t i = 0; i < 8; ++i) {
            topology->gpuLinks[topology->nodes[n].firstGpu + i] = { unit + 1 + i, n % 32 + 1 };
        }
    }
    return topology;
}

FramePtr coolFrame(uint32_t gpus)
{
    auto f = std::make_shared<Frame>();
    f->sequence = 1;
    f->topologyGeneration = 1;
    f->planes.push_back({ QStringLiteral("gpu_temp"), std::vector<float>(gpus, 20.0F) }); // viridis' darkest
    f->health.assign(gpus, health::Ok);
    return f;
}

} // namespace

class TestHeatmapDomains : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void domainIsHighlighted_data()
    {
        QTest::addColumn<HeatmapView::Passes>("passes");
        QTest::newRow("cpu") << HeatmapView::Passes::Cpu;
        QTest::newRow("shaders") << HeatmapView::Passes::Gpu;
    }

    // An incident's GPUs outlined in white and its domain (here rack 1, GPUs 16 to 31; the incident hits 16 to 23)
    // highlighted: the domain's other GPUs framed in cyan, the rack outlined in cyan around its cells, and no cyan
    // anywhere else; a new outline takes the highlight away.
    void domainIsHighlighted()
    {
        QFETCH(HeatmapView::Passes, passes);
        if (passes == HeatmapView::Passes::Gpu && HeatmapGlSurface::probe().isEmpty()) {
            QSKIP("no OpenGL 3.3 here: the shaders cannot run");
        }
        HeatmapView view;
        view.setPasses(passes);
        setUpSmallFleet(view);
        view.setMarkedGpus({ 16, 17, 18, 19, 20, 21, 22, 23 });
        view.setDomainGpus({ { 16, 16 }, { 90, 200 } }); // the second run is cut at the fleet's end
        QCOMPARE(view.domainGpuCount(), size_t { 16 + 6 });
        view.setDomainGpus({ { 16, 16 } });
        QCOMPARE(view.domainGpuCount(), size_t { 16 });
        QCOMPARE(view.markedGpuCount(), size_t { 8 });
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.passes(), passes);
        QVERIFY(paint(view));
        const QImage image = view.grabMap().convertToFormat(QImage::Format_RGB32);
        const double dpr = view.devicePixelRatioF();
        QVERIFY(view.cellSize() >= 4 * dpr);
        const auto bottomEdge = [&](int gpu) {
            const QRectF r = view.cellRect(gpu);
            return image.pixel(
                static_cast<int>((r.left() + r.width() / 2) * dpr), static_cast<int>(r.bottom() * dpr) - 1);
        };
        QCOMPARE(bottomEdge(16), qRgb(255, 255, 255)); // hit: the outline's white
        QVERIFY2(isDomainColour(bottomEdge(24)), qPrintable(QColor(bottomEdge(24)).name())); // behind it, not hit
        QVERIFY(!isDomainColour(bottomEdge(40)));
        QVERIFY(!isDomainColour(bottomEdge(8)));
        // The inside of a highlighted GPU keeps its value's colour.
        QVERIFY(closeTo(
            pixelOf(view, image, 24), ColorMap::byName(QStringLiteral("viridis")).map(20 + 24 * 0.75F, 20, 100)));
        // The rack's outline: cyan in the aisle just left of its first cell, none beyond a few pixels around it.
        const QRectF rack = view.cellRect(16) | view.cellRect(31);
        const QRectF cell = view.cellRect(24);
        // Strictly left of the rack's cells, in the aisle: the outline, not a GPU's frame.
        bool outlined = false;
        const int y = static_cast<int>(cell.center().y() * dpr);
        for (int x = static_cast<int>((rack.left() - 6) * dpr); x < static_cast<int>(rack.left() * dpr) - 1; ++x) {
            outlined = outlined || isDomainColour(image.pixel(x, y));
        }
        QVERIFY(outlined);
        // The outline lies at most 4 + 1.5 pixels out from the cells.
        const QRect around
            = QRectF((rack.topLeft() - QPointF(8, 8)) * dpr, (rack.size() + QSizeF(16, 16)) * dpr).toAlignedRect();
        const auto [inside, outside] = domainPixels(image, around);
        QVERIFY(inside > 0);
        QCOMPARE(outside, 0);

        // Another outline (a job's, the health strip's) is something else: the domain goes with it.
        view.setMarkedGpus({ 40 });
        QCOMPARE(view.domainGpuCount(), size_t { 0 });
        QVERIFY(paint(view));
        const QImage after = view.grabMap().convertToFormat(QImage::Format_RGB32);
        QCOMPARE(domainPixels(after, after.rect()), std::make_pair(0, 0));
    }

    // Between one and four pixels a GPU there is no room for a frame: the domain's GPUs not outlined are tinted
    // cyan, the same on the CPU and through the shaders; the highlight follows the GPUs into another arrangement.
    void smallCellsAreTintedAlike()
    {
        if (HeatmapGlSurface::probe().isEmpty()) {
            QSKIP("no OpenGL 3.3 here: nothing to compare the CPU's passes with");
        }
        const auto topology = fleet(10, 10);
        const FramePtr frame = scatteredFrame(*topology, 3, true);
        std::array<QImage, 3> images;
        for (size_t k = 0; k < images.size(); ++k) {
            HeatmapView view;
            view.setPasses(k == 1 ? HeatmapView::Passes::Gpu : HeatmapView::Passes::Cpu);
            view.setAnimated(false);
            view.resize(320, 200);
            view.setTopology(topology);
            view.setMetric(temperature());
            view.setFrame(frame);
            view.setMarkedGpus({ 100, 101, 102, 103 });
            if (k < 2) {
                view.setDomainGpus({ { 96, 32 }, { 400, 16 } });
            }
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            QVERIFY(paint(view));
            if (view.cellSize() >= 4) { // hi-DPI: more physical pixels than cells when fitted
                view.zoomAt(QPointF(view.width() / 2.0, view.height() / 2.0), 3.0 / view.cellSize());
                QVERIFY(paint(view));
            }
            const double cell = view.cellSize();
            QVERIFY2(cell >= 1 && cell < 4, qPrintable(QString::number(cell)));
            images[k] = view.grabMap().convertToFormat(QImage::Format_RGB32);
            if (k == 0) {
                // Another arrangement: the domain's GPUs move, and its cyan with them.
                view.setArrangement(HeatmapView::Arrangement::Compact);
                QTRY_VERIFY(!view.isLayoutPending());
                QVERIFY(paint(view));
                const QImage compact = view.grabMap().convertToFormat(QImage::Format_RGB32);
                const double dpr = view.devicePixelRatioF();
                const QRectF moved = view.cellRect(400) | view.cellRect(415);
                const QRect around
                    = QRectF(moved.topLeft() * dpr, moved.size() * dpr).toAlignedRect().adjusted(-8, -8, 8, 8);
                QVERIFY(domainPixels(compact, around).first > 0);
            }
        }
        int differing = 0;
        for (int y = 0; y < images[0].height(); ++y) {
            for (int x = 0; x < images[0].width(); ++x) {
                const QRgb a = images[0].pixel(x, y);
                const QRgb b = images[1].pixel(x, y);
                differing += std::abs(qRed(a) - qRed(b)) > 1 || std::abs(qGreen(a) - qGreen(b)) > 1
                        || std::abs(qBlue(a) - qBlue(b)) > 1
                    ? 1
                    : 0;
            }
        }
        QCOMPARE(differing, 0);
        // The tint shows: the domain's GPUs differ from the map without it.
        QVERIFY(differingPixels(images[0], images[2]) > 0);
    }

    // By fabric, each scalable unit a block of 8 leaves' lines: its name and each leaf's with its rail.
    void fabricLayoutNamesUnitsAndLeaves()
    {
        const auto topology = fabricFleet(8, 10); // 1,280 GPUs: 5 units of 32 nodes
        const auto layout = HeatmapLayout::byFabric(*topology, 16.0 / 10.0);
        QCOMPARE(layout.groupLabels.size(), size_t { 5 });
        QCOMPARE(layout.groupLabels[0].text, QStringLiteral("su01 · 8 leaves"));
        QCOMPARE(layout.groupLabels[0].shortText, QStringLiteral("su01"));
        QCOMPARE(layout.groupLabels[0].cells.size(), QSize(32, 8));
        QCOMPARE(layout.lineLabels.size(), size_t { 5 * 8 });
        QCOMPARE(layout.lineLabels[5].text, QStringLiteral("su01-l5"));
        QCOMPARE(layout.lineLabels[5].shortText, QStringLiteral("rail 5"));
        QCOMPARE(layout.lineLabels[5].cells, QRect(layout.gpuCells[5], QSize(32, 1)));
    }

    // At fleet zoom (10,240 GPUs in 640 x 400: about 4 pixels a GPU, an aisle of 8 above each block) the units are
    // named on a chip from the aisle over the block's corner, as rows are named on a chip over the row; zoomed in,
    // each leaf at the left of its line.
    void fabricUnitsAreNamedAtFleetZoom()
    {
        const auto topology = fabricFleet(16, 40);
        QCOMPARE(topology->gpuCount, 10240U);
        HeatmapView view;
        view.resize(640, 400);
        view.setTopology(topology);
        view.setMetric(temperature());
        view.setFrame(coolFrame(topology->gpuCount));
        view.setArrangement(HeatmapView::Arrangement::ByFabric);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY(!view.isLayoutPending());
        QVERIFY(paint(view));
        const double cell = view.cellSize() / view.devicePixelRatioF();
        QVERIFY2(cell * HeatmapLayout::labelAisle * 0.8 < 9, qPrintable(QString::number(cell))); // no room above
        const double dpr = view.devicePixelRatioF();
        const QImage image = view.grabMap();
        // Units 1 and 2 (GPUs 0 and 256 at their blocks' top-left corners): text on their chips.
        for (const int corner : { 0, 256 }) {
            const QRectF c = view.cellRect(corner);
            const QRect chip
                = QRectF(QPointF(c.left(), c.top() - 2 * cell) * dpr, QSizeF(40, 11) * dpr).toAlignedRect();
            QVERIFY2(lightPixels(image, chip) >= 10, qPrintable(QString::number(lightPixels(image, chip))));
        }
        // A block's cells away from its corner stay unlit: the chip covers a corner, not the block.
        const QRectF middle = view.cellRect(16 * 8 + 4) | view.cellRect(20 * 8 + 6);
        QCOMPARE(lightPixels(image, QRectF(middle.topLeft() * dpr, middle.size() * dpr).toAlignedRect()), 0);

        // Zoomed in to 16 pixels a GPU: the leaves are named at the left of their lines.
        view.zoomAt(view.cellRect(0).center(), 16.0 * dpr / view.cellSize());
        QVERIFY(paint(view));
        const QImage zoomed = view.grabMap();
        const QRectF line = view.cellRect(5) | view.cellRect(8 + 5);
        QVERIFY(lightPixels(zoomed, QRectF(line.topLeft() * dpr, line.size() * dpr).toAlignedRect()) >= 10);
        const QRectF far = view.cellRect(20 * 8 + 5) | view.cellRect(22 * 8 + 5);
        QCOMPARE(lightPixels(zoomed, QRectF(far.topLeft() * dpr, far.size() * dpr).toAlignedRect()), 0);
        // Its start scrolled off the left, a line keeps its name at the view's left edge.
        view.panBy(QPointF(-(view.cellRect(5).left() + 5 * view.cellRect(5).width()), 0));
        QVERIFY(paint(view));
        QVERIFY(view.cellRect(5).right() < 0);
        const QRectF pinned(0, view.cellRect(5).top(), 2 * view.cellRect(5).width(), view.cellRect(5).height());
        QVERIFY(lightPixels(view.grabMap(), QRectF(pinned.topLeft() * dpr, pinned.size() * dpr).toAlignedRect()) >= 10);
    }
};

QTEST_MAIN(TestHeatmapDomains)
#include "tst_heatmapdomains.moc"
