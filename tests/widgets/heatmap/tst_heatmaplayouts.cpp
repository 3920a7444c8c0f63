// SPDX-License-Identifier: Apache-2.0
// The map's arrangements and the names drawn on it: every GPU in one cell of each arrangement (floor plan, compact,
// by job), colours and picking through all three, a million GPUs fitting Full HD, rack and row names where a reader
// looks for them. Run as tst_heatmapview is: plain, at DPR 1.5 and 2, through the shaders and without OpenGL.
#include "model/heatmaplayout.h"
#include "tests/widgets/heatmap/heatmaptesting.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmaplayoutjob.h"
#include "widgets/heatmap/heatmapoverlay.h"
#include "widgets/heatmap/heatmapview.h"

#include <QApplication>
#include <QPainter>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace fleetscope;
using namespace fleetscope::heatmaptesting;

namespace {

// An NVL72 floor: rows x racksPerRow racks of 18 trays of 4 GPUs, each rack an NVLink domain, named as the
// simulator names them (r01-k01-t01).
TopologyPtr nvl72Fleet(uint32_t rowCount, uint32_t racksPerRow)
{
    auto t = std::make_shared<Topology>();
    t->generation = 1;
    for (uint32_t r = 0; r < rowCount; ++r) {
        t->rows.push_back({ QStringLiteral("r%1").arg(r + 1, 2, 10, QLatin1Char('0')), QStringLiteral("hall-a") });
        for (uint32_t p = 0; p < racksPerRow; ++p) {
            const auto k = static_cast<uint32_t>(t->racks.size());
            const QString rack = t->rows.back().name % QStringLiteral("-k%1").arg(p + 1, 2, 10, QLatin1Char('0'));
            t->racks.push_back({ rack, r, p, k * 18, 18, true });
            for (uint32_t n = 0; n < 18; ++n) {
                t->nodes.push_back({ rack % QStringLiteral("-t%1").arg(n + 1, 2, 10, QLatin1Char('0')),
                    QStringLiteral("NVIDIA GB200"), QString(), QString(), k, t->gpuCount, 4 });
                t->nodeOfGpu.insert(t->nodeOfGpu.end(), 4, static_cast<uint32_t>(t->nodes.size() - 1));
                t->gpuCount += 4;
            }
        }
    }
    return t;
}

// Every GPU in exactly one cell, and gpuCells agrees with cells.
bool placesEveryGpuOnce(const HeatmapLayout &layout, uint32_t gpuCount)
{
    std::vector<int> seen(gpuCount, 0);
    for (int32_t c : layout.cells) {
        if (c != HeatmapLayout::gap) {
            if (c < 0 || static_cast<uint32_t>(c) >= gpuCount) {
                return false;
            }
            ++seen[static_cast<size_t>(c)];
        }
    }
    for (uint32_t g = 0; g < gpuCount; ++g) {
        const QPoint at = layout.gpuCells[g];
        if (seen[g] != 1 || layout.gpuAt(at.x(), at.y()) != static_cast<int32_t>(g)) {
            return false;
        }
    }
    return true;
}

} // namespace

class TestHeatmapLayouts : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void layoutPlacesEveryGpuOnce()
    {
        const auto layout = HeatmapLayout::floorPlan(*smallFleet());
        // 3 racks of 8 GPUs with 1-cell aisles; 2 rows of 2 nodes with a 3-cell aisle.
        QCOMPARE(layout.width, 3 * 8 + 2);
        QCOMPARE(layout.height, 2 * 2 + 3);
        std::vector<int> seen(96, 0);
        int gaps = 0;
        for (int32_t c : layout.cells) {
            if (c == HeatmapLayout::gap) {
                ++gaps;
            } else {
                ++seen[static_cast<size_t>(c)];
            }
        }
        QCOMPARE(gaps, layout.width * layout.height - 96);
        for (int g = 0; g < 96; ++g) {
            QCOMPARE(seen[static_cast<size_t>(g)], 1);
            QCOMPARE(
                layout.gpuAt(layout.gpuCells[static_cast<size_t>(g)].x(), layout.gpuCells[static_cast<size_t>(g)].y()),
                g);
        }
        // Rack 4 is row 1, position 1: its first GPU (node 8) sits at x = 9, y = 2 + 3.
        QCOMPARE(layout.gpuCells[64], QPoint(9, 5));
    }

    // An NVL72 rack stands as it does on the floor: a column of its 18 trays, top to bottom, each a line of 4 GPUs;
    // every rack of a row side by side with a one-cell aisle, every GPU in exactly one cell, every tray labelled.
    void nvl72RacksAreColumnsOfTrays()
    {
        const auto t = nvl72Fleet(2, 3);
        const auto layout = HeatmapLayout::floorPlan(*t);
        QCOMPARE(layout.width, 3 * 4 + 2);
        QCOMPARE(layout.height, 2 * 18 + 3);
        std::vector<int> seen(t->gpuCount, 0);
        for (int32_t c : layout.cells) {
            if (c != HeatmapLayout::gap) {
                ++seen[static_cast<size_t>(c)];
            }
        }
        QVERIFY(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
        for (uint32_t k = 0; k < t->racks.size(); ++k) {
            const auto &rack = t->racks[k];
            const QPoint corner(static_cast<int>(rack.position) * 5, static_cast<int>(rack.row) * 21);
            QRect block;
            for (uint32_t n = 0; n < 18; ++n) {
                for (uint32_t g = 0; g < 4; ++g) {
                    const uint32_t gpu = t->nodes[rack.firstNode + n].firstGpu + g;
                    QCOMPARE(layout.gpuCells[gpu], corner + QPoint(static_cast<int>(g), static_cast<int>(n)));
                    block |= QRect(layout.gpuCells[gpu], QSize(1, 1));
                }
            }
            QCOMPARE(block, QRect(corner, QSize(4, 18))); // 72 cells, nothing else's
            QCOMPARE(layout.rackLabels[k].cells, block);
        }
        QCOMPARE(layout.nodeLabels.size(), t->nodes.size());
        QCOMPARE(layout.nodeLabels[19].text, QStringLiteral("r01-k02-t02"));
        QCOMPARE(layout.nodeLabels[19].cells, QRect(5, 1, 4, 1));
        // Compact: lines a whole number of trays wide, so a tray stays on one line.
        const auto compact = HeatmapLayout::compact(*t, 16.0 / 9.0);
        QCOMPARE(compact.width % 4, 0);
        QCOMPARE(compact.nodeLabels.size(), t->nodes.size());
    }

    void compactFillsTheWindowShapeInFleetOrder()
    {
        const auto topology = fleet(10, 20); // 3,200 GPUs
        for (double aspect : { 1.0, 16.0 / 9.0, 0.5 }) {
            const auto layout = HeatmapLayout::compact(*topology, aspect);
            QVERIFY(placesEveryGpuOnce(layout, topology->gpuCount));
            QCOMPARE(layout.width % 8, 0); // whole nodes per line
            QVERIFY(static_cast<size_t>(layout.width) * static_cast<size_t>(layout.height - 1) < 3200);
            const double shape = static_cast<double>(layout.width) / layout.height;
            QVERIFY2(shape > aspect / 1.6 && shape < aspect * 1.6, qPrintable(QString::number(shape)));
            // Fleet order: GPU g + 1 follows GPU g on its line, or starts the next line.
            for (uint32_t g = 0; g + 1 < topology->gpuCount; ++g) {
                const QPoint a = layout.gpuCells[g];
                const QPoint b = layout.gpuCells[g + 1];
                QVERIFY(b == QPoint(a.x() + 1, a.y()) || b == QPoint(0, a.y() + 1));
            }
            QCOMPARE(layout.nodeLabels.size(), topology->nodes.size());
        }
    }

    void byJobGroupsEachJobAndPutsIdleGpusLast()
    {
        const auto topology = smallFleet();
        const auto jobs = someJobs();
        const auto layout = HeatmapLayout::byJob(*topology, jobs.get(), 16.0 / 9.0);
        QVERIFY(placesEveryGpuOnce(layout, 96));
        // One block per running job (the ended job has none) and one for the idle GPUs.
        QCOMPARE(layout.groupLabels.size(), size_t(3));
        int idleTop = std::numeric_limits<int>::max();
        int jobBottom = -1;
        for (const auto &job : { jobs->jobs[0], jobs->jobs[1] }) {
            const auto label = std::find_if(layout.groupLabels.begin(), layout.groupLabels.end(),
                [&](const auto &l) { return l.text.contains(job.name); });
            QVERIFY(label != layout.groupLabels.end());
            // The block holds exactly the job's GPUs, in their order, line by line.
            QRect bounds;
            for (uint32_t g : job.gpus) {
                bounds |= QRect(layout.gpuCells[g], QSize(1, 1));
            }
            QCOMPARE(bounds, label->cells);
            for (int y = bounds.top(); y <= bounds.bottom(); ++y) {
                for (int x = bounds.left(); x <= bounds.right(); ++x) {
                    const int32_t g = layout.gpuAt(x, y);
                    QVERIFY(g == HeatmapLayout::gap || jobs->runningJobOn(static_cast<uint32_t>(g)) != nullptr);
                    QVERIFY(g == HeatmapLayout::gap || jobs->runningJobOn(static_cast<uint32_t>(g))->id == job.id);
                }
            }
            jobBottom = std::max(jobBottom, bounds.bottom());
        }
        for (uint32_t g = 0; g < 96; ++g) {
            if (jobs->runningJobOn(g) == nullptr) {
                idleTop = std::min(idleTop, layout.gpuCells[g].y());
            }
        }
        QVERIFY(idleTop > jobBottom);
        // Without jobs, every GPU is idle and still placed.
        QVERIFY(placesEveryGpuOnce(HeatmapLayout::byJob(*topology, nullptr, 1.0), 96));
    }

    // By fabric: each scalable unit a block whose lines are its leaves, by rail, and whose cells are their ports, so
    // that a leaf's GPUs are one line and a node one column; GPUs whose link is not known go to a band below.
    void byFabricDrawsEachLeafAsALine()
    {
        auto topology = std::make_shared<Topology>(*smallFleet());
        const auto nodes = static_cast<uint32_t>(topology->nodes.size());
        QCOMPARE(topology->gpuCount, nodes * 8);
        // Scalable units of 4 nodes, a leaf per rail; the last node not cabled (its links not known).
        topology->gpuLinks.assign(topology->gpuCount, Topology::GpuLink {});
        std::vector<uint32_t> leafOfUnitRail;
        uint32_t unit = 0;
        for (uint32_t n = 0; n + 1 < nodes; ++n) {
            if (n % 4 == 0) {
                unit = static_cast<uint32_t>(topology->domains.size());
                topology->domains.push_back(
                    { DomainKind::ScalableUnit, QStringLiteral("su%1").arg(n / 4 + 1), -1, -1 });
                leafOfUnitRail.clear();
                for (int32_t rail = 7; rail >= 0; --rail) { // listed backwards: lines go by rail all the same
                    topology->domains.push_back({ DomainKind::LeafSwitch,
                        QStringLiteral("su%1-l%2").arg(n / 4 + 1).arg(rail), static_cast<int32_t>(unit), rail });
                }
                for (uint32_t rail = 0; rail < 8; ++rail) {
                    leafOfUnitRail.push_back(unit + 8 - rail);
                }
            }
            topology->nodes[n].domains = { unit };
            for (uint32_t i = 0; i < 8; ++i) {
                topology->gpuLinks[topology->nodes[n].firstGpu + i] = { leafOfUnitRail[i], n % 4 + 1 };
            }
        }
        const auto layout = HeatmapLayout::byFabric(*topology, 16.0 / 9.0);
        QVERIFY(placesEveryGpuOnce(layout, topology->gpuCount));
        const uint32_t units = (nodes - 1 + 3) / 4;
        QCOMPARE(layout.groupLabels.size(), size_t { units + 1 });
        QCOMPARE(layout.groupLabels.front().text, QStringLiteral("su1 · 8 leaves"));
        QCOMPARE(layout.groupLabels.back().text, QStringLiteral("not on the fabric (8 GPUs)"));
        for (uint32_t n = 0; n + 1 < nodes; ++n) {
            const uint32_t first = topology->nodes[n].firstGpu;
            const uint32_t unitFirst = topology->nodes[n - n % 4].firstGpu;
            for (uint32_t i = 0; i < 8; ++i) {
                // Rail i is line i of its unit's block; port k is column k - 1.
                QCOMPARE(layout.gpuCells[first + i].y(), layout.gpuCells[unitFirst].y() + static_cast<int>(i));
                QCOMPARE(layout.gpuCells[first + i].x(), layout.gpuCells[unitFirst].x() + static_cast<int>(n % 4));
            }
        }
        const uint32_t lastGpu = topology->nodes.back().firstGpu;
        for (uint32_t n = 0; n + 1 < nodes; ++n) {
            QVERIFY(layout.gpuCells[lastGpu].y() > layout.gpuCells[topology->nodes[n].firstGpu + 7].y());
        }
        // Two GPUs claiming one port: the second is not drawn over the first but in the band.
        topology->gpuLinks[1] = topology->gpuLinks[0];
        QVERIFY(placesEveryGpuOnce(HeatmapLayout::byFabric(*topology, 1.0), topology->gpuCount));
        // Without domains every GPU is in the band, still placed.
        QVERIFY(placesEveryGpuOnce(HeatmapLayout::byFabric(*smallFleet(), 1.0), topology->gpuCount));
    }

    // The arrangements move cells, not colours: after a switch (without a new frame) every GPU's pixel still has
    // its value's colour and picking finds it.
    void everyArrangementKeepsColoursAndPicking()
    {
        HeatmapView view;
        const auto frame = setUpSmallFleet(view);
        view.setJobs(someJobs());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const ColorMap map = ColorMap::byName(QStringLiteral("viridis"));
        for (auto arrangement : { HeatmapView::Arrangement::Compact, HeatmapView::Arrangement::ByJob,
                 HeatmapView::Arrangement::FloorPlan }) {
            view.setArrangement(arrangement);
            QVERIFY(paint(view));
            const QImage image = view.grabMap();
            for (int gpu = 0; gpu < 96; ++gpu) {
                QCOMPARE(view.gpuAt(view.cellRect(gpu).center()), gpu);
                QVERIFY2(closeTo(pixelOf(view, image, gpu), map.map(frame->planes[0].values[size_t(gpu)], 20, 100)),
                    qPrintable(QStringLiteral("GPU %1 in arrangement %2").arg(gpu).arg(int(arrangement))));
            }
        }
        QCOMPARE(view.layout().rackLabels.size(), size_t(6));
    }

    // 1,048,576 GPUs in the simulator's shape (102 rows of 162 racks of 8 nodes x 8 GPUs) fit a 1920 x 1080 window
    // at one pixel per GPU or less, every GPU on screen.
    void aMillionGpusFitFullHd()
    {
        auto t = std::make_shared<Topology>();
        t->generation = 1;
        t->gpuCount = 1048576;
        const uint32_t racks = t->gpuCount / 64;
        for (uint32_t r = 0; r < 102; ++r) {
            t->rows.push_back({ QStringLiteral("r%1").arg(r + 1), QStringLiteral("hall") });
        }
        t->nodes.resize(t->gpuCount / 8);
        for (uint32_t k = 0; k < racks; ++k) {
            t->racks.push_back({ QString(), k / 162, k % 162, k * 8, 8 });
        }
        for (uint32_t n = 0; n < t->nodes.size(); ++n) {
            t->nodes[n].rack = n / 8;
            t->nodes[n].firstGpu = n * 8;
            t->nodes[n].gpuCount = 8;
        }
        t->nodeOfGpu.resize(t->gpuCount);
        for (uint32_t g = 0; g < t->gpuCount; ++g) {
            t->nodeOfGpu[g] = g / 8;
        }
        HeatmapView view;
        view.resize(1920, 1080);
        QSignalSpy ready(&view, &HeatmapView::layoutReady);
        view.setTopology(t);
        // A million GPUs are laid out on a worker thread.
        QVERIFY(view.isLayoutPending());
        QVERIFY(ready.wait(10000));
        QVERIFY(!view.isLayoutPending());
        const double dpr = view.devicePixelRatioF();
        QVERIFY(view.cellSize() <= 1.0 * std::max(1.0, dpr) + 1e-9);
        QVERIFY(view.cellSize() >= HeatmapView::minCellSize);
        const QRectF all = QRectF(view.rect());
        for (int gpu : { 0, 8 * 63, 1048576 / 2, 1048576 - 64, 1048576 - 1 }) {
            QVERIFY2(all.contains(view.cellRect(gpu)), qPrintable(QString::number(gpu)));
        }
    }

    // The layout asked for last is the one shown: a big fleet's, still being built when a small fleet's is asked for,
    // never arrives after it, and of two big ones asked for in a row only the second does.
    void theLayoutAskedForLastWins()
    {
        std::vector<std::pair<size_t, bool>> shown; // GPUs laid out, built off the GUI thread
        HeatmapLayoutJob job([&shown](std::shared_ptr<const HeatmapLayout> layout, bool offThread) {
            shown.emplace_back(layout->gpuCells.size(), offThread);
        });
        const auto big = fleet(64, 100); // 102,400 GPUs: past HeatmapLayoutJob::syncGpus
        const auto bigger = fleet(66, 100);
        QVERIFY(big->gpuCount > HeatmapLayoutJob::syncGpus);
        job.request({ big, nullptr, HeatmapArrangement::FloorPlan, 1.6 });
        QVERIFY(job.isPending());
        QVERIFY(shown.empty());
        job.request({ smallFleet(), nullptr, HeatmapArrangement::Compact, 1.6 });
        QVERIFY(!job.isPending());
        QCOMPARE(shown.size(), size_t(1));
        QCOMPARE(shown[0], std::make_pair(size_t(96), false));
        job.request({ big, nullptr, HeatmapArrangement::FloorPlan, 1.6 });
        job.request({ bigger, nullptr, HeatmapArrangement::FloorPlan, 1.6 });
        QTRY_COMPARE_WITH_TIMEOUT(shown.size(), size_t(2), 10000);
        QCOMPARE(shown[1], std::make_pair(size_t(bigger->gpuCount), true));
        QVERIFY(!job.isPending());
        // The jobs run in order and hand back in order: anything of the earlier ones arrived before, and was dropped.
        QCoreApplication::processEvents();
        QCOMPARE(shown.size(), size_t(2));
    }

    // Semantic zoom: rack names appear in the aisle above each rack once cells are a few pixels, and not where
    // they would not fit.
    void rackNamesAreDrawnInTheAisles()
    {
        HeatmapView view;
        QVERIFY(showSmallFleet(view));
        const QImage image = view.grabMap();
        // The aisle above rack 4 (row 1, the second rack): text pixels are much lighter than the aisle.
        const int light = lightPixels(image, aisleAbove(view, 64));
        QVERIFY2(light > 10, qPrintable(QString::number(light)));
    }

    // Racks named alike in every row (r01-k01, r02-k01, ...): their short names once per column, above the top row,
    // not above every row, also when a lower row has fewer racks; the row names stay.
    void rackNamesSharedByAllRowsAreDrawnOnce()
    {
        const auto topology = fleetWithRackColumns(3, 3);
        const auto layout = HeatmapLayout::floorPlan(*topology);
        QCOMPARE(layout.rackColumnLabels.size(), size_t(3));
        QCOMPARE(layout.rackColumnLabels[1].text, QStringLiteral("k02"));
        QCOMPARE(layout.rackColumnLabels[1].cells.top(), 0);
        // One row named differently: every row keeps its own names.
        auto odd = std::make_shared<Topology>(*fleet(3, 3));
        for (auto &rack : odd->racks) {
            rack.name
                = QStringLiteral("%1-k%2").arg(odd->rows[rack.row].name).arg(rack.position + (rack.row == 2 ? 5 : 1));
        }
        QVERIFY(HeatmapLayout::floorPlan(*odd).rackColumnLabels.empty());
        // The last row a rack short (its k03 missing): still once per column, above the top row.
        auto shortLast = std::make_shared<Topology>(*topology);
        shortLast->racks.pop_back();
        shortLast->nodes.resize(shortLast->nodes.size() - 2);
        shortLast->gpuCount -= 16;
        shortLast->nodeOfGpu.resize(shortLast->gpuCount);
        const auto shortLayout = HeatmapLayout::floorPlan(*shortLast);
        QCOMPARE(shortLayout.rackColumnLabels.size(), size_t(3));
        QCOMPARE(shortLayout.rackColumnLabels[2].text, QStringLiteral("k03"));
        QCOMPARE(shortLayout.rackColumnLabels[2].cells.top(), 0);
        // The short row on top: a name over it would sit over the row below; every row keeps its own names.
        auto shortTop = std::make_shared<Topology>(*shortLast);
        for (auto &rack : shortTop->racks) {
            rack.row = static_cast<uint32_t>(shortTop->rows.size()) - 1 - rack.row;
        }
        QVERIFY(HeatmapLayout::floorPlan(*shortTop).rackColumnLabels.empty());

        HeatmapView view;
        view.resize(640, 400);
        view.setTopology(topology);
        view.setMetric(temperature());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(paint(view));
        const QImage image = view.grabMap();
        const double dpr = view.devicePixelRatioF();
        const auto lightAbove = [&](int gpu) { return lightPixels(image, aisleAbove(view, gpu)); };
        QVERIFY2(lightAbove(0) > 10, qPrintable(QString::number(lightAbove(0)))); // k01 over the top row
        QVERIFY2(lightAbove(48) == 0, qPrintable(QString::number(lightAbove(48)))); // none over the second row
        QVERIFY2(lightAbove(96 + 16) == 0, qPrintable(QString::number(lightAbove(112))));
        // The second row's name, left of the map.
        const QRectF row2 = view.cellRect(48);
        const int light = lightPixels(image,
            QRect(QPoint(static_cast<int>((row2.left() - 56) * dpr), static_cast<int>(row2.top() * dpr)),
                QPoint(static_cast<int>((row2.left() - 4) * dpr) - 1,
                    static_cast<int>((row2.top() + 2 * row2.height()) * dpr) - 1)));
        QVERIFY2(light > 10, qPrintable(QString::number(light)));
    }

    // With rack names once per column ("k01"), which do not say the row, a row keeps its name when its left edge is
    // at or past the view's (zoomed in, a wall's row page): on a chip at the left of the view, over its cells.
    void rowNamesStayWhenTheMarginIsGone()
    {
        const auto topology = fleetWithRackColumns(3, 3);
        const auto layout = HeatmapLayout::floorPlan(*topology);
        QVERIFY(!layout.rackColumnLabels.empty());
        QVERIFY(layout.rowLabels.size() >= 2);
        const auto lightAtLeftOfRow = [&](double originX) {
            QImage image(640, 400, QImage::Format_ARGB32_Premultiplied);
            image.fill(Qt::black);
            HeatmapOverlay::Scene scene;
            scene.layout = &layout;
            scene.widget = QSizeF(image.size());
            scene.cell = 6;
            scene.originX = originX;
            scene.originY = 10;
            scene.font = HeatmapOverlay::overlayFont(QFont());
            {
                QPainter painter(&image);
                HeatmapOverlay::paint(painter, scene);
            }
            const auto &row = layout.rowLabels[1].cells;
            return lightPixels(
                image, QRect(0, static_cast<int>(10 + row.top() * 6), 60, static_cast<int>(row.height() * 6)));
        };
        QVERIFY2(lightAtLeftOfRow(70) > 10, "the name beside the map, in the margin");
        QVERIFY2(lightAtLeftOfRow(0) > 10, "the name on a chip, the map at the view's left edge");
        QVERIFY2(lightAtLeftOfRow(-40) > 10, "the name on a chip, the row's left scrolled off");
    }
};

int main(int argc, char *argv[])
{
    HeatmapView::requestSurfaceFormat();
    QApplication app(argc, argv);
    TestHeatmapLayouts test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_heatmaplayouts.moc"
