// SPDX-License-Identifier: Apache-2.0
// Drill-down: places in the topology, the navigation history, the breadcrumb model and bar, and NVLink domains, each
// checked against what the test derives from the synthetic topology on its own (navigationtesting.h; the rollups of
// a place's children are tst_rollups).
#include "navigationtesting.h"
#include "widgets/navigation/breadcrumbbar.h"
#include "widgets/navigation/breadcrumbmodel.h"
#include "widgets/navigation/rollupmodel.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

using namespace fleetscope;
using namespace fleetscope::testing;

class TestNavigation : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void placeParentsChildrenAndRanges();
    void placeNames();
    void placeOfGpuAndChildTowards();
    void textRoundTrip();
    void textRejectsGarbage_data();
    void textRejectsGarbage();
    void downUpBackForward();
    void historyTruncatesAndIsBounded();
    void newGenerationKeepsPlaceByName();
    void breadcrumbModelFollowsNavigation();
    void breadcrumbBarNavigatesOnClick();
    void breadcrumbBarFollowsFont();
    void nvlinkDomains();
};

void TestNavigation::placeParentsChildrenAndRanges()
{
    const auto t = fleet(3, 4);
    for (const Place &p : allPlaces(*t)) {
        QVERIFY(p.isValid(*t));
        // The range is exactly the GPUs the arrays put in the place, and they are contiguous.
        uint32_t first = t->gpuCount;
        uint32_t count = 0;
        for (uint32_t g = 0; g < t->gpuCount; ++g) {
            if (holds(*t, p, g)) {
                first = std::min(first, g);
                ++count;
            }
        }
        const GpuRange range = p.gpuRange(*t);
        QCOMPARE(range.first, first);
        QCOMPARE(range.count, count);
        for (uint32_t g = range.first; g < range.end(); ++g) {
            QVERIFY(holds(*t, p, g));
        }

        // The children partition the range in order, and each names this place as its parent.
        const std::vector<Place> children = p.children(*t);
        uint32_t next = range.first;
        for (const Place &c : children) {
            QCOMPARE(static_cast<int>(c.level), static_cast<int>(p.level) + 1);
            QCOMPARE(c.parent(*t), p);
            QCOMPARE(c.gpuRange(*t).first, next);
            next = c.gpuRange(*t).end();
        }
        if (p.level != Place::Level::Gpu) {
            QCOMPARE(next, range.end());
        } else {
            QVERIFY(children.empty());
        }
    }
    QCOMPARE(Place::fleet().children(*t).size(), t->rows.size());
    QCOMPARE(Place::row(1).children(*t).size(), std::size_t(4));
    QCOMPARE(Place::row(1).children(*t).front(), Place::rack(4));
    QCOMPARE(Place::rack(5).children(*t).size(), std::size_t(1 + 5 % 3));
    QCOMPARE(Place::fleet().parent(*t), Place::fleet());
    QVERIFY(!Place::rack(12).isValid(*t));
    QVERIFY(!Place::gpu(t->gpuCount).isValid(*t));
    QVERIFY(!(Place { Place::Level::Fleet, 1 }).isValid(*t));
}

void TestNavigation::placeNames()
{
    const auto t = fleet(3, 4);
    // Rack 6 is row 2's third rack; node 12 is its first node (racks 0..5 hold 1+2+3+1+2+3 nodes).
    QCOMPARE(t->racks[6].firstNode, 12U);
    const uint32_t gpu = t->nodes[12].firstGpu + 5;
    QCOMPARE(Place::fleet().name(*t), QStringLiteral("fleet"));
    QCOMPARE(Place::row(1).name(*t), QStringLiteral("r02"));
    QCOMPARE(Place::rack(6).name(*t), QStringLiteral("r02-k03"));
    QCOMPARE(Place::node(12).name(*t), QStringLiteral("r02-k03-n01"));
    QCOMPARE(Place::gpu(gpu).name(*t), QStringLiteral("r02-k03-n01 GPU 5"));
    QCOMPARE(Place::row(1).crumbText(*t), QStringLiteral("hall-a › r02"));
    QCOMPARE(Place::row(2).crumbText(*t), QStringLiteral("hall-b › r03"));
    QCOMPARE(Place::gpu(gpu).crumbText(*t), QStringLiteral("GPU 5"));
    QCOMPARE(Place::rack(6).crumbText(*t), QStringLiteral("r02-k03"));

    std::vector<Place> path = pathTo(*t, Place::gpu(gpu));
    QCOMPARE(path.size(), std::size_t(5));
    QCOMPARE(path[0], Place::fleet());
    QCOMPARE(path[1], Place::row(1));
    QCOMPARE(path[2], Place::rack(6));
    QCOMPARE(path[3], Place::node(12));
    QCOMPARE(path[4], Place::gpu(gpu));
    QCOMPARE(pathTo(*t, Place::fleet()).size(), std::size_t(1));
}

void TestNavigation::placeOfGpuAndChildTowards()
{
    const auto t = fleet(3, 4);
    for (uint32_t g = 0; g < t->gpuCount; ++g) {
        QCOMPARE(placeOfGpu(*t, g, Place::Level::Row), Place::row(rowOf(*t, g)));
        QCOMPARE(placeOfGpu(*t, g, Place::Level::Rack), Place::rack(rackOf(*t, g)));
        QCOMPARE(placeOfGpu(*t, g, Place::Level::Node), Place::node(nodeOf(*t, g)));
        QCOMPARE(placeOfGpu(*t, g, Place::Level::Gpu), Place::gpu(g));
        QCOMPARE(placeOfGpu(*t, g, Place::Level::Fleet), Place::fleet());
    }
    QCOMPARE(placeOfGpu(*t, t->gpuCount, Place::Level::Rack), Place::fleet());

    const uint32_t g = t->racks[6].firstNode;
    const uint32_t gpu = t->nodes[g].firstGpu + 1;
    QCOMPARE(Place::fleet().childTowards(*t, gpu), std::optional<Place>(Place::row(1)));
    QCOMPARE(Place::row(1).childTowards(*t, gpu), std::optional<Place>(Place::rack(6)));
    QCOMPARE(Place::rack(6).childTowards(*t, gpu), std::optional<Place>(Place::node(g)));
    QCOMPARE(Place::node(g).childTowards(*t, gpu), std::optional<Place>(Place::gpu(gpu)));
    QCOMPARE(Place::gpu(gpu).childTowards(*t, gpu), std::nullopt);
    // A GPU outside the place has no child towards it.
    QCOMPARE(Place::row(0).childTowards(*t, gpu), std::nullopt);
}

void TestNavigation::textRoundTrip()
{
    const auto t = fleet(3, 4);
    for (const Place &p : allPlaces(*t)) {
        QString error;
        const auto back = Place::fromText(p.toText(), *t, &error);
        QVERIFY2(back.has_value(), qPrintable(error));
        QCOMPARE(*back, p);
    }
    QCOMPARE(Place::rack(37).toText(), QStringLiteral("rack:37"));
    QCOMPARE(Place::fleet().toText(), QStringLiteral("fleet"));
    QCOMPARE(Place::gpu(3).toText(), QStringLiteral("gpu:3"));
    QCOMPARE(Place::fromText(QStringLiteral("  node:2 "), *t), std::optional<Place>(Place::node(2)));
}

void TestNavigation::textRejectsGarbage_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("inError");
    const auto t = fleet(3, 4);
    QTest::newRow("empty") << QString() << QStringLiteral("not a place");
    QTest::newRow("no index") << QStringLiteral("rack") << QStringLiteral("not a place");
    QTest::newRow("empty index") << QStringLiteral("rack:") << QStringLiteral("not an index");
    QTest::newRow("negative") << QStringLiteral("rack:-1") << QStringLiteral("not an index");
    QTest::newRow("plus") << QStringLiteral("rack:+1") << QStringLiteral("not an index");
    QTest::newRow("inner space") << QStringLiteral("rack: 1") << QStringLiteral("not an index");
    QTest::newRow("trailing junk") << QStringLiteral("rack:1x") << QStringLiteral("not an index");
    QTest::newRow("hex") << QStringLiteral("rack:0x1") << QStringLiteral("not an index");
    QTest::newRow("overflow") << QStringLiteral("gpu:99999999999") << QStringLiteral("not an index");
    QTest::newRow("above 32 bits") << QStringLiteral("gpu:4294967296") << QStringLiteral("not an index");
    QTest::newRow("unknown level") << QStringLiteral("shelf:3") << QStringLiteral("unknown level 'shelf'");
    QTest::newRow("upper case") << QStringLiteral("RACK:3") << QStringLiteral("unknown level");
    QTest::newRow("fleet with index") << QStringLiteral("fleet:0") << QStringLiteral("unknown level 'fleet'");
    QTest::newRow("row out of range") << QStringLiteral("row:3") << QStringLiteral("row 3 is out of range");
    QTest::newRow("rack out of range") << QStringLiteral("rack:12") << QStringLiteral("0 to 11");
    QTest::newRow("node out of range") << QStringLiteral("node:%1").arg(t->nodes.size())
                                       << QStringLiteral("is out of range");
    QTest::newRow("gpu out of range") << QStringLiteral("gpu:%1").arg(t->gpuCount)
                                      << QStringLiteral("0 to %1").arg(t->gpuCount - 1);
}

void TestNavigation::textRejectsGarbage()
{
    QFETCH(QString, text);
    QFETCH(QString, inError);
    const auto t = fleet(3, 4);
    QString error;
    const auto place = Place::fromText(text, *t, &error);
    QVERIFY(!place.has_value());
    QVERIFY2(error.contains(inError), qPrintable(error));
    // No error pointer: still rejected, no crash.
    QVERIFY(!Place::fromText(text, *t).has_value());
}

void TestNavigation::downUpBackForward()
{
    const auto t = fleet(3, 4);
    Navigation nav;
    QSignalSpy placeSpy(&nav, &Navigation::placeChanged);
    QCOMPARE(nav.current(), Place::fleet());
    QVERIFY(!nav.goTo(Place::row(0))); // no topology yet
    nav.setTopology(t);
    QCOMPARE(placeSpy.count(), 1);
    placeSpy.clear();
    QVERIFY(!nav.canGoBack());
    QVERIFY(!nav.canGoForward());
    QVERIFY(!nav.canGoUp());
    QVERIFY(!nav.up());

    QVERIFY(nav.down(Place::row(1)));
    QCOMPARE(placeSpy.count(), 1);
    QCOMPARE(placeSpy.takeFirst().at(0).value<Place>(), Place::row(1));
    // Not a child of the current place, or not valid at all: refused, nothing emitted.
    QVERIFY(!nav.down(Place::rack(0)));
    QVERIFY(!nav.down(Place::node(12)));
    QVERIFY(!nav.down(Place::rack(99)));
    QVERIFY(!nav.goTo(Place::gpu(t->gpuCount)));
    QCOMPARE(placeSpy.count(), 0);
    QCOMPARE(nav.current(), Place::row(1));

    QVERIFY(nav.down(Place::rack(6)));
    const uint32_t gpu = t->nodes[12].firstGpu + 3;
    QVERIFY(nav.downTowards(gpu));
    QCOMPARE(nav.current(), Place::node(12));
    QVERIFY(nav.downTowards(gpu));
    QCOMPARE(nav.current(), Place::gpu(gpu));
    QVERIFY(!nav.downTowards(gpu)); // a GPU is the bottom
    QVERIFY(nav.up());
    QCOMPARE(nav.current(), Place::node(12));
    // fleet, row 1, rack 6, node 12, gpu, node 12.
    QCOMPARE(nav.history().size(), std::size_t(6));
    QCOMPARE(placeSpy.count(), 4);

    QVERIFY(nav.back());
    QCOMPARE(nav.current(), Place::gpu(gpu));
    QVERIFY(nav.canGoForward());
    QVERIFY(nav.back());
    QVERIFY(nav.back());
    QCOMPARE(nav.current(), Place::rack(6));
    QVERIFY(nav.forward());
    QCOMPARE(nav.current(), Place::node(12));
    QVERIFY(nav.back());
    QVERIFY(nav.back());
    QVERIFY(nav.back());
    QCOMPARE(nav.current(), Place::fleet());
    QVERIFY(!nav.canGoBack());
    QVERIFY(!nav.back());
    QCOMPARE(nav.current(), Place::fleet());
    // Moving through the history does not change it.
    QCOMPARE(nav.history().size(), std::size_t(6));

    // Going to the place already current is not a move.
    placeSpy.clear();
    QVERIFY(nav.goTo(Place::fleet()));
    QCOMPARE(placeSpy.count(), 0);
    QVERIFY(nav.canGoForward());
}

void TestNavigation::historyTruncatesAndIsBounded()
{
    const auto t = fleet(3, 4);
    Navigation nav;
    nav.setTopology(t);
    QSignalSpy historySpy(&nav, &Navigation::historyChanged);
    QVERIFY(nav.goTo(Place::rack(1)));
    QVERIFY(nav.goTo(Place::rack(2)));
    QVERIFY(nav.goTo(Place::rack(3)));
    QVERIFY(nav.back());
    QVERIFY(nav.back());
    QCOMPARE(nav.current(), Place::rack(1));
    QVERIFY(nav.canGoForward());
    // A new place drops the forward part: rack 2 and rack 3 are gone.
    QVERIFY(nav.goTo(Place::node(0)));
    QVERIFY(!nav.canGoForward());
    QCOMPARE(nav.history(), (std::vector<Place> { Place::fleet(), Place::rack(1), Place::node(0) }));
    QVERIFY(historySpy.count() >= 6);
    QVERIFY(nav.back());
    QCOMPARE(nav.current(), Place::rack(1));
    QVERIFY(nav.forward());
    QCOMPARE(nav.current(), Place::node(0));

    // Bounded: the oldest go first.
    for (uint32_t i = 0; i < 2U * Navigation::maxHistory; ++i) {
        QVERIFY(nav.goTo(Place::gpu(i % t->gpuCount)));
    }
    QCOMPARE(nav.history().size(), std::size_t(Navigation::maxHistory));
    QCOMPARE(nav.historyPosition(), std::size_t(Navigation::maxHistory - 1));
    QCOMPARE(nav.current(), Place::gpu((2 * Navigation::maxHistory - 1) % t->gpuCount));
    QCOMPARE(nav.history().front(), Place::gpu(Navigation::maxHistory % t->gpuCount));
}

void TestNavigation::newGenerationKeepsPlaceByName()
{
    const auto t = fleet(3, 4);
    Navigation nav;
    nav.setTopology(t);
    const uint32_t gpu = t->nodes[13].firstGpu + 2;
    QCOMPARE(Place::gpu(gpu).name(*t), QStringLiteral("r02-k04-n01 GPU 2"));
    QVERIFY(nav.goTo(Place::rack(0))); // r01-k01, which the next generation renames
    QVERIFY(nav.goTo(Place::rack(7))); // r02-k04
    QVERIFY(nav.goTo(Place::gpu(gpu)));

    // Every index moves in the next generation; names stay, but for the rack r01-k01.
    const auto next = withRowInFront(*t);
    next->racks[1].name = QStringLiteral("r01-k99");
    QSignalSpy topologySpy(&nav, &Navigation::topologyChanged);
    QSignalSpy placeSpy(&nav, &Navigation::placeChanged);
    nav.setTopology(next);
    QCOMPARE(topologySpy.count(), 1);
    QCOMPARE(placeSpy.count(), 1);
    QCOMPARE(nav.current(), Place::gpu(gpu + 8));
    QCOMPARE(nav.current().name(*next), QStringLiteral("r02-k04-n01 GPU 2"));
    // The history by name too: fleet, (r01-k01 gone), r02-k04, the GPU.
    QCOMPARE(nav.history(), (std::vector<Place> { Place::fleet(), Place::rack(8), Place::gpu(gpu + 8) }));
    QCOMPARE(nav.historyPosition(), std::size_t(2));

    // A node that is gone sends the navigation to its rack, which the history already holds just before it.
    auto fewer = std::make_shared<Topology>(*next);
    fewer->generation = 3;
    fewer->nodes[14].hostname = QStringLiteral("replaced");
    QCOMPARE(next->nodes[14].hostname, QStringLiteral("r02-k04-n01"));
    nav.setTopology(fewer);
    QCOMPARE(nav.current(), Place::rack(8));
    QCOMPARE(nav.history(), (std::vector<Place> { Place::fleet(), Place::rack(8) }));
    QVERIFY(!nav.canGoForward());

    // The same generation again is not a change.
    placeSpy.clear();
    nav.setTopology(std::make_shared<Topology>(*fewer));
    QCOMPARE(placeSpy.count(), 0);
    QCOMPARE(nav.current(), Place::rack(8));
}

void TestNavigation::breadcrumbModelFollowsNavigation()
{
    const auto t = fleet(3, 4);
    Navigation nav;
    BreadcrumbModel model(&nav);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(crumbTexts(model), QStringList { QStringLiteral("fleet") });
    nav.setTopology(t);
    QCOMPARE(crumbTexts(model), QStringList { QStringLiteral("fleet") });

    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QVERIFY(nav.down(Place::row(1)));
    QVERIFY(nav.down(Place::rack(6)));
    QVERIFY(nav.down(Place::node(12)));
    const uint32_t gpu = t->nodes[12].firstGpu + 5;
    QVERIFY(nav.down(Place::gpu(gpu)));
    QCOMPARE(crumbTexts(model),
        (QStringList { QStringLiteral("fleet"), QStringLiteral("hall-a › r02"), QStringLiteral("r02-k03"),
            QStringLiteral("r02-k03-n01"), QStringLiteral("GPU 5") }));
    // Each step down is one crumb appended at the end, not a reset.
    QCOMPARE(inserted.count(), 4);
    QCOMPARE(inserted.last().at(1).toInt(), 4);
    QCOMPARE(inserted.last().at(2).toInt(), 4);
    QCOMPARE(removed.count(), 0);
    QCOMPARE(reset.count(), 0);
    QCOMPARE(model.index(2, 0).data(BreadcrumbModel::PlaceRole).value<Place>(), Place::rack(6));
    QCOMPARE(model.index(2, 0).data(BreadcrumbModel::PlaceTextRole).toString(), QStringLiteral("rack:6"));
    QVERIFY(model.index(2, 0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("r02-k03")));

    // Up twice: the last two crumbs go, one removal each.
    QVERIFY(nav.up());
    QVERIFY(nav.up());
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(removed.count(), 2);
    // A sibling rack: the crumbs from the rack on are replaced; fleet and row stay.
    inserted.clear();
    removed.clear();
    QVERIFY(nav.goTo(Place::rack(7)));
    QCOMPARE(removed.count(), 1);
    QCOMPARE(removed.last().at(1).toInt(), 2);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted.last().at(1).toInt(), 2);
    QCOMPARE(crumbTexts(model).at(2), QStringLiteral("r02-k04"));
    // Across the fleet to another hall.
    QVERIFY(nav.goTo(Place::node(static_cast<uint32_t>(t->nodes.size() - 1))));
    QCOMPARE(crumbTexts(model),
        (QStringList { QStringLiteral("fleet"), QStringLiteral("hall-b › r03"), QStringLiteral("r03-k04"),
            QStringLiteral("r03-k04-n03") }));
    QVERIFY(nav.back());
    QCOMPARE(crumbTexts(model).at(2), QStringLiteral("r02-k04"));
    QCOMPARE(reset.count(), 0);

    // A new generation resets (names may differ) and shows the place found by name: the rack r02-k04, whose row
    // moved to another hall.
    auto next = std::make_shared<Topology>(*t);
    next->generation = 2;
    next->rows[1].hall = QStringLiteral("hall-z");
    nav.setTopology(next);
    QCOMPARE(reset.count(), 1);
    QCOMPARE(crumbTexts(model),
        (QStringList { QStringLiteral("fleet"), QStringLiteral("hall-z › r02"), QStringLiteral("r02-k04") }));
}

void TestNavigation::breadcrumbBarNavigatesOnClick()
{
    const auto t = fleet(3, 4);
    Navigation nav;
    nav.setTopology(t);
    BreadcrumbBar bar(&nav);
    bar.show();
    QVERIFY(QTest::qWaitForWindowExposed(&bar));
    QCOMPARE(bar.crumbButtons().size(), std::size_t(1));
    QVERIFY(!bar.backAction()->isEnabled());
    QVERIFY(!bar.forwardAction()->isEnabled());

    const uint32_t gpu = t->nodes[12].firstGpu + 5;
    QVERIFY(nav.goTo(Place::gpu(gpu)));
    QCOMPARE(bar.crumbButtons().size(), std::size_t(5));
    QCOMPARE(bar.crumbButtons()[1]->text(), QStringLiteral("hall-a › r02"));
    QCOMPARE(bar.crumbButtons()[4]->text(), QStringLiteral("GPU 5"));
    QVERIFY(bar.crumbButtons()[4]->font().bold());
    QVERIFY(!bar.crumbButtons()[2]->font().bold());
    QVERIFY(bar.backAction()->isEnabled());

    // Click the rack's crumb: the navigation goes there and the bar shows its path.
    QTest::mouseClick(bar.crumbButtons()[2], Qt::LeftButton);
    QCOMPARE(nav.current(), Place::rack(6));
    QCOMPARE(bar.crumbButtons().size(), std::size_t(3));
    QVERIFY(bar.crumbButtons()[2]->font().bold());
    // The fleet's crumb.
    QTest::mouseClick(bar.crumbButtons()[0], Qt::LeftButton);
    QCOMPARE(nav.current(), Place::fleet());
    QCOMPARE(bar.crumbButtons().size(), std::size_t(1));

    // Back and forward through the actions the main window binds to Alt+Left / Alt+Right.
    bar.backAction()->trigger();
    QCOMPARE(nav.current(), Place::rack(6));
    QVERIFY(bar.forwardAction()->isEnabled());
    bar.forwardAction()->trigger();
    QCOMPARE(nav.current(), Place::fleet());
    QVERIFY(!bar.forwardAction()->isEnabled());
}

void TestNavigation::breadcrumbBarFollowsFont()
{
    const auto t = fleet(3, 4);
    Navigation nav;
    nav.setTopology(t);
    QVERIFY(nav.goTo(Place::rack(6)));
    BreadcrumbBar bar(&nav);
    const int before = bar.sizeHint().height();
    QFont big = bar.font();
    big.setPointSize(big.pointSize() * 4);
    bar.setFont(big);
    QCOMPARE(bar.crumbButtons().size(), std::size_t(3));
    for (QAbstractButton *b : bar.crumbButtons()) {
        QCOMPARE(b->font().pointSize(), big.pointSize());
    }
    QVERIFY(bar.crumbButtons().back()->font().bold());
    QVERIFY2(bar.sizeHint().height() > 2 * before,
        qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(bar.sizeHint().height())));
}

// An NVL72 rack is its NVLink domain: places, rollups and breadcrumbs say so; an HGX rack stays a plain rack.
void TestNavigation::nvlinkDomains()
{
    const auto t = nvl72Fleet();
    QCOMPARE(t->gpuCount, 160U);
    QCOMPARE(Place::rack(1).listText(*t), QStringLiteral("NVLink domain r01-k02 (72 GPUs)"));
    QCOMPARE(Place::rack(2).listText(*t), QStringLiteral("r01-k03"));
    QCOMPARE(Place::row(0).listText(*t), QStringLiteral("r01"));
    QCOMPARE(Place::node(20).listText(*t), QStringLiteral("r01-k02-t03"));
    QVERIFY(Place::rack(0).isNvlinkDomain(*t));
    QVERIFY(!Place::rack(2).isNvlinkDomain(*t));
    QVERIFY(!Place::row(0).isNvlinkDomain(*t));
    QCOMPARE(nvlinkDomainOf(*t, 0), std::optional(Place::rack(0)));
    QCOMPARE(nvlinkDomainOf(*t, 143), std::optional(Place::rack(1)));
    QVERIFY(!nvlinkDomainOf(*t, 144)); // the HGX rack's first GPU
    QVERIFY(!nvlinkDomainOf(*t, 160));

    // Drill-down from the fleet towards a GPU of the second domain: row, the domain, its tray, the GPU.
    Navigation nav;
    BreadcrumbModel crumbs(&nav);
    nav.setTopology(t);
    const uint32_t gpu = 72 + 5 * 4 + 2;
    QVERIFY(nav.downTowards(gpu));
    QVERIFY(nav.downTowards(gpu));
    QCOMPARE(nav.current(), Place::rack(1));
    QVERIFY(nav.downTowards(gpu));
    QCOMPARE(nav.current(), Place::node(18 + 5));
    QCOMPARE(Place::rack(1).gpuRange(*t).count, 72U);
    QCOMPARE(crumbTexts(crumbs).at(2), QStringLiteral("r01-k02"));
    QCOMPARE(crumbs.index(2, 0).data(Qt::ToolTipRole).toString(),
        QStringLiteral("rack r01-k02: 72 GPUs, one NVLink domain"));
    QCOMPARE(crumbs.index(1, 0).data(Qt::ToolTipRole).toString(), QStringLiteral("row r01: 160 GPUs"));

    // The row's rollups name its domains as such, 72 GPUs each, and the HGX rack as a rack.
    RollupModel rollups;
    QAbstractItemModelTester tester(&rollups, QAbstractItemModelTester::FailureReportingMode::QtTest);
    rollups.setTopology(t);
    rollups.setMetric(temperature());
    rollups.setPlace(Place::row(0));
    QCOMPARE(rollups.rowCount(), 3);
    QCOMPARE(
        rollups.index(0, RollupModel::NameColumn).data().toString(), QStringLiteral("NVLink domain r01-k01 (72 GPUs)"));
    QCOMPARE(rollups.index(1, RollupModel::GpusColumn).data(RollupModel::SortRole).toUInt(), 72U);
    QCOMPARE(rollups.index(2, RollupModel::NameColumn).data().toString(), QStringLiteral("r01-k03"));
    // Inside a domain, its trays.
    rollups.setPlace(Place::rack(1));
    QCOMPARE(rollups.rowCount(), 18);
    QCOMPARE(rollups.index(17, RollupModel::NameColumn).data().toString(), QStringLiteral("r01-k02-t18"));
    QCOMPARE(rollups.index(17, RollupModel::GpusColumn).data(RollupModel::SortRole).toUInt(), 4U);
}

QTEST_MAIN(TestNavigation)
#include "tst_navigation.moc"
