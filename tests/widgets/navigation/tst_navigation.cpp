// SPDX-License-Identifier: Apache-2.0
// Drill-down: places in the topology, the navigation history, the breadcrumb model and bar, and the rollups of a
// place's children, each checked against what the test derives from the synthetic topology and frame on its own.
#include "model/navigation.h"
#include "model/place.h"
#include "model/rollup.h"
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

namespace fleetscope {
// QCOMPARE prints places as their text.
char *toString(const Place &place)
{
    return qstrdup(qPrintable(place.toText()));
}
} // namespace fleetscope

namespace {

constexpr float nan = std::numeric_limits<float>::quiet_NaN();

// rows x racksPerRow racks, named as the simulator names them (r02, r02-k03, r02-k03-n01). Not regular, so that
// ranges computed from the wrong rack or node show up: rack k has 1 + k % 3 nodes, and every third node has 4 GPUs
// instead of 8. Rows 0 and 1 are in hall-a, the rest in hall-b.
std::shared_ptr<Topology> fleet(uint32_t rowCount, uint32_t racksPerRow, uint32_t gpusPerNode = 8)
{
    auto t = std::make_shared<Topology>();
    t->generation = 1;
    uint32_t gpu = 0;
    for (uint32_t r = 0; r < rowCount; ++r) {
        const QString row = QStringLiteral("r%1").arg(r + 1, 2, 10, QLatin1Char('0'));
        t->rows.push_back({ row, r < 2 ? QStringLiteral("hall-a") : QStringLiteral("hall-b") });
        for (uint32_t p = 0; p < racksPerRow; ++p) {
            const auto k = static_cast<uint32_t>(t->racks.size());
            const QString rack = row % QStringLiteral("-k") % QStringLiteral("%1").arg(p + 1, 2, 10, QLatin1Char('0'));
            const uint32_t nodeCount = 1 + k % 3;
            t->racks.push_back({ rack, r, p, static_cast<uint32_t>(t->nodes.size()), nodeCount });
            for (uint32_t n = 0; n < nodeCount; ++n) {
                const auto nodeIndex = static_cast<uint32_t>(t->nodes.size());
                const uint32_t gpus = nodeIndex % 3 == 2 ? gpusPerNode / 2 : gpusPerNode;
                t->nodes.push_back(
                    { rack % QStringLiteral("-n") % QStringLiteral("%1").arg(n + 1, 2, 10, QLatin1Char('0')),
                        QStringLiteral("H100"), QStringLiteral("550"), QStringLiteral("96.00"), k, gpu, gpus });
                for (uint32_t g = 0; g < gpus; ++g) {
                    t->nodeOfGpu.push_back(nodeIndex);
                }
                gpu += gpus;
            }
        }
    }
    t->gpuCount = gpu;
    return t;
}

// The next generation of t: a row r00 with one rack of one 8-GPU node in front, so every index moves by one (GPUs
// by 8) while every name stays.
std::shared_ptr<Topology> withRowInFront(const Topology &t)
{
    auto n = std::make_shared<Topology>();
    n->generation = t.generation + 1;
    n->gpuCount = t.gpuCount + 8;
    n->rows.push_back({ QStringLiteral("r00"), QStringLiteral("hall-a") });
    n->racks.push_back({ QStringLiteral("r00-k01"), 0, 0, 0, 1 });
    n->nodes.push_back({ QStringLiteral("r00-k01-n01"), QStringLiteral("H100"), QString(), QString(), 0, 0, 8 });
    n->nodeOfGpu.assign(8, 0);
    n->rows.insert(n->rows.end(), t.rows.begin(), t.rows.end());
    for (Topology::Rack rack : t.racks) {
        ++rack.row;
        ++rack.firstNode;
        n->racks.push_back(rack);
    }
    for (Topology::Node node : t.nodes) {
        ++node.rack;
        node.firstGpu += 8;
        n->nodes.push_back(node);
    }
    for (uint32_t node : t.nodeOfGpu) {
        n->nodeOfGpu.push_back(node + 1);
    }
    return n;
}

// Straight from the arrays, not through Place: which row, rack and node a GPU is in.
uint32_t nodeOf(const Topology &t, uint32_t gpu)
{
    return t.nodeOfGpu[gpu];
}
uint32_t rackOf(const Topology &t, uint32_t gpu)
{
    return t.nodes[nodeOf(t, gpu)].rack;
}
uint32_t rowOf(const Topology &t, uint32_t gpu)
{
    return t.racks[rackOf(t, gpu)].row;
}

// Every place in the topology, each level in index order.
std::vector<Place> allPlaces(const Topology &t)
{
    std::vector<Place> all { Place::fleet() };
    for (uint32_t i = 0; i < t.rows.size(); ++i) {
        all.push_back(Place::row(i));
    }
    for (uint32_t i = 0; i < t.racks.size(); ++i) {
        all.push_back(Place::rack(i));
    }
    for (uint32_t i = 0; i < t.nodes.size(); ++i) {
        all.push_back(Place::node(i));
    }
    for (uint32_t i = 0; i < t.gpuCount; ++i) {
        all.push_back(Place::gpu(i));
    }
    return all;
}

// Whether the GPU belongs to the place, by the raw arrays.
bool holds(const Topology &t, Place p, uint32_t gpu)
{
    switch (p.level) {
    case Place::Level::Fleet:
        return true;
    case Place::Level::Row:
        return rowOf(t, gpu) == p.index;
    case Place::Level::Rack:
        return rackOf(t, gpu) == p.index;
    case Place::Level::Node:
        return nodeOf(t, gpu) == p.index;
    case Place::Level::Gpu:
        return gpu == p.index;
    }
    return false;
}

// A frame with a value per GPU that has nothing to do with the layout, a NaN every 7th GPU and a health state that
// cycles through all five.
std::shared_ptr<Frame> frameFor(const Topology &t)
{
    auto f = std::make_shared<Frame>();
    f->topologyGeneration = t.generation;
    MetricPlane plane;
    plane.metricId = QStringLiteral("gpu_temp");
    plane.values.resize(t.gpuCount);
    f->health.resize(t.gpuCount);
    for (uint32_t g = 0; g < t.gpuCount; ++g) {
        plane.values[g] = g % 7 == 3 ? nan : static_cast<float>((g * 37U) % 101) + 0.25F;
        f->health[g] = static_cast<uint8_t>((g % 5) | (g % 11 == 0 ? health::throttledFlag : 0));
    }
    f->planes.push_back(std::move(plane));
    return f;
}

struct Expected
{
    uint32_t gpus = 0;
    uint32_t values = 0;
    uint32_t unhealthy = 0;
    double mean = 0;
    float max = nan;
    float p99 = nan;
};

// The rollup of one place, derived by walking every GPU of the fleet and sorting.
Expected expectedRollup(const Topology &t, const Frame &f, Place p)
{
    Expected e;
    std::vector<float> values;
    double sum = 0;
    for (uint32_t g = 0; g < t.gpuCount; ++g) {
        if (!holds(t, p, g)) {
            continue;
        }
        ++e.gpus;
        const uint8_t state = f.health[g] & 7;
        e.unhealthy += state >= 1 && state <= 3 ? 1 : 0;
        const float v = f.planes[0].values[g];
        if (!std::isnan(v)) {
            values.push_back(v);
            sum += v;
        }
    }
    e.values = static_cast<uint32_t>(values.size());
    if (!values.empty()) {
        std::sort(values.begin(), values.end());
        e.mean = sum / static_cast<double>(values.size());
        e.max = values.back();
        e.p99 = values[static_cast<std::size_t>(std::lround(0.99 * static_cast<double>(values.size() - 1)))];
    }
    return e;
}

MetricInfo temperature()
{
    MetricInfo m;
    m.id = QStringLiteral("gpu_temp");
    m.name = QStringLiteral("GPU temperature");
    m.unit = QStringLiteral("°C");
    return m;
}

QStringList crumbTexts(const QAbstractItemModel &model)
{
    QStringList texts;
    for (int row = 0; row < model.rowCount(); ++row) {
        texts << model.index(row, 0).data().toString();
    }
    return texts;
}

// One row: two NVL72 racks (18 trays of 4 GPUs, each rack an NVLink domain) and an HGX rack of two 8-GPU nodes,
// named as the simulator names them.
std::shared_ptr<Topology> nvl72Fleet()
{
    auto t = std::make_shared<Topology>();
    t->generation = 1;
    t->rows.push_back({ QStringLiteral("r01"), QStringLiteral("hall-a") });
    const auto addRack = [&t](const QString &name, uint32_t nodes, uint32_t gpusPerNode, bool nvlinkDomain) {
        const auto k = static_cast<uint32_t>(t->racks.size());
        t->racks.push_back({ name, 0, k, static_cast<uint32_t>(t->nodes.size()), nodes, nvlinkDomain });
        for (uint32_t n = 0; n < nodes; ++n) {
            const auto nodeIndex = static_cast<uint32_t>(t->nodes.size());
            t->nodes.push_back({ name % (nvlinkDomain ? QStringLiteral("-t") : QStringLiteral("-n"))
                    % QStringLiteral("%1").arg(n + 1, 2, 10, QLatin1Char('0')),
                QStringLiteral("NVIDIA GB200"), QString(), QString(), k, t->gpuCount, gpusPerNode });
            t->nodeOfGpu.insert(t->nodeOfGpu.end(), gpusPerNode, nodeIndex);
            t->gpuCount += gpusPerNode;
        }
    };
    addRack(QStringLiteral("r01-k01"), 18, 4, true);
    addRack(QStringLiteral("r01-k02"), 18, 4, true);
    addRack(QStringLiteral("r01-k03"), 2, 8, false);
    return t;
}

} // namespace

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
    void rollupsByDerivation();
    void rollupsIgnoreMismatchedArrays();
    void rollupP99IsSampledAboveTheLimit();
    void rollupsOfAMillionGpus();
    void rollupModelOfAMillionGpusComputesOnAWorker();
    void rollupModelTakesNewFramesAtMostEveryInterval();
    void rollupModel();
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

void TestNavigation::rollupsByDerivation()
{
    const auto t = fleet(3, 4);
    const auto f = frameFor(*t);
    const uint32_t lastNode = static_cast<uint32_t>(t->nodes.size() - 1);
    for (const Place &parent : { Place::fleet(), Place::row(1), Place::rack(5), Place::node(lastNode) }) {
        const std::vector<Rollup> rollups = computeRollups(*t, parent, f.get(), QStringLiteral("gpu_temp"));
        const std::vector<Place> children = parent.children(*t);
        QCOMPARE(rollups.size(), children.size());
        for (std::size_t i = 0; i < rollups.size(); ++i) {
            const Rollup &r = rollups[i];
            const Expected e = expectedRollup(*t, *f, children[i]);
            QCOMPARE(r.place, children[i]);
            QCOMPARE(r.gpuCount, e.gpus);
            QCOMPARE(r.valueCount, e.values);
            QCOMPARE(r.unhealthy, e.unhealthy);
            QVERIFY(!r.p99Sampled);
            if (e.values == 0) {
                QVERIFY(std::isnan(r.mean));
                QVERIFY(std::isnan(r.max));
                QVERIFY(std::isnan(r.p99));
            } else {
                QVERIFY2(std::abs(r.mean - e.mean) < 1e-4 * std::max(1.0, std::abs(e.mean)),
                    qPrintable(QStringLiteral("%1 against %2").arg(r.mean).arg(e.mean)));
                QCOMPARE(r.max, e.max);
                QCOMPARE(r.p99, e.p99);
            }
        }
    }
    // The node's children are single GPUs; the frame makes GPU 3 (mod 7) NaN, so some have no value.
    const auto gpus = computeRollups(*t, Place::node(1), f.get(), QStringLiteral("gpu_temp"));
    QVERIFY(std::any_of(gpus.begin(), gpus.end(), [](const Rollup &r) { return r.valueCount == 0; }));
    // And the fleet's unhealthy total is what the health cycle gives: states 1, 2, 3 of every 5.
    const auto rows = computeRollups(*t, Place::fleet(), f.get(), QStringLiteral("gpu_temp"));
    uint32_t unhealthy = 0;
    for (const Rollup &r : rows) {
        unhealthy += r.unhealthy;
    }
    uint32_t expected = 0;
    for (uint32_t g = 0; g < t->gpuCount; ++g) {
        expected += (g % 5 >= 1 && g % 5 <= 3) ? 1 : 0;
    }
    QCOMPARE(unhealthy, expected);
    QVERIFY(computeRollups(*t, Place::gpu(0), f.get(), QStringLiteral("gpu_temp")).empty());
}

void TestNavigation::rollupsIgnoreMismatchedArrays()
{
    const auto t = fleet(3, 4);
    auto f = frameFor(*t);
    // A metric the frame lacks: counts and health, no values.
    auto rollups = computeRollups(*t, Place::fleet(), f.get(), QStringLiteral("power"));
    QCOMPARE(rollups.size(), std::size_t(3));
    QCOMPARE(rollups[0].valueCount, 0U);
    QVERIFY(std::isnan(rollups[0].mean));
    QCOMPARE(rollups[0].unhealthy, expectedRollup(*t, *f, Place::row(0)).unhealthy);
    // A short plane is not read.
    f->planes[0].values.resize(t->gpuCount / 2);
    rollups = computeRollups(*t, Place::fleet(), f.get(), QStringLiteral("gpu_temp"));
    QCOMPARE(rollups[2].valueCount, 0U);
    QCOMPARE(rollups[2].gpuCount, Place::row(2).gpuRange(*t).count);
    // A frame of another generation gives counts only.
    f = frameFor(*t);
    f->topologyGeneration = 9;
    rollups = computeRollups(*t, Place::fleet(), f.get(), QStringLiteral("gpu_temp"));
    QCOMPARE(rollups[1].valueCount, 0U);
    QCOMPARE(rollups[1].unhealthy, 0U);
    rollups = computeRollups(*t, Place::fleet(), nullptr, QStringLiteral("gpu_temp"));
    QCOMPARE(rollups[1].gpuCount, Place::row(1).gpuRange(*t).count);
}

void TestNavigation::rollupP99IsSampledAboveTheLimit()
{
    // One row of 4 racks with 1+2+3+1 nodes of 16384 GPUs (every third node half): well above 65,536 GPUs.
    const auto t = fleet(1, 4, 16384);
    QVERIFY(t->gpuCount > rollupExactQuantileLimit);
    auto f = std::make_shared<Frame>();
    f->topologyGeneration = t->generation;
    MetricPlane plane;
    plane.metricId = QStringLiteral("gpu_temp");
    plane.values.resize(t->gpuCount);
    // A value uniform over 0..999 in a scrambled order, so any even sample has about the same p99.
    for (uint32_t g = 0; g < t->gpuCount; ++g) {
        plane.values[g] = static_cast<float>((g * 7919U) % 1000);
    }
    f->planes.push_back(std::move(plane));
    f->health.assign(t->gpuCount, health::Ok);
    const auto rollups = computeRollups(*t, Place::fleet(), f.get(), QStringLiteral("gpu_temp"));
    QCOMPARE(rollups.size(), std::size_t(1));
    const Expected e = expectedRollup(*t, *f, Place::row(0));
    QVERIFY(rollups[0].p99Sampled);
    QCOMPARE(rollups[0].max, e.max);
    QCOMPARE(rollups[0].valueCount, e.values);
    QVERIFY2(std::abs(rollups[0].p99 - e.p99) <= 3,
        qPrintable(QStringLiteral("sampled %1, exact %2").arg(rollups[0].p99).arg(e.p99)));
    // The racks are below the limit: exact.
    const auto racks = computeRollups(*t, Place::row(0), f.get(), QStringLiteral("gpu_temp"));
    QCOMPARE(racks[0].p99Sampled, false);
    QCOMPARE(racks[0].p99, expectedRollup(*t, *f, Place::rack(0)).p99);
}

void TestNavigation::rollupsOfAMillionGpus()
{
    // 100 rows of 48 racks of 1-3 nodes of 128 (or 64) GPUs: 1,024,000 GPUs.
    const auto t = fleet(100, 48, 128);
    QVERIFY(t->gpuCount > 1000000);
    const auto f = frameFor(*t);
    QElapsedTimer timer;
    timer.start();
    const auto rows = computeRollups(*t, Place::fleet(), f.get(), QStringLiteral("gpu_temp"));
    const qint64 ms = timer.elapsed();
    qInfo("fleet rollups of %u GPUs in %lld ms", t->gpuCount, static_cast<long long>(ms));
    QCOMPARE(rows.size(), std::size_t(100));
    uint64_t gpus = 0;
    uint64_t values = 0;
    for (const Rollup &r : rows) {
        gpus += r.gpuCount;
        values += r.valueCount;
    }
    QCOMPARE(gpus, uint64_t(t->gpuCount));
    QCOMPARE(values, uint64_t(t->gpuCount - (t->gpuCount + 3) / 7));
    const Expected e = expectedRollup(*t, *f, Place::row(57));
    QCOMPARE(rows[57].p99, e.p99);
    QCOMPARE(rows[57].unhealthy, e.unhealthy);
}

// Past 100k GPUs a frame's rollups are computed on a worker: setFrame returns at once, the values arrive as a
// dataChanged, a burst of frames ends with the newest frame's values, and a result for a place left meanwhile is
// dropped. A new place or metric sets its rows at once, without statistics ("–", not a count of 0) until the
// worker's result for them lands.
void TestNavigation::rollupModelOfAMillionGpusComputesOnAWorker()
{
    const auto t = fleet(100, 48, 128);
    RollupModel model;
    model.setTopology(t);
    model.setMetric(temperature());
    QCOMPARE(model.rowCount(), 100);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    const auto first = frameFor(*t);
    auto hotter = std::make_shared<Frame>(*first);
    for (float &v : hotter->planes[0].values) {
        v += 5;
    }
    model.setFrame(first);
    QVERIFY(model.isComputing());
    QCOMPARE(changed.count(), 0); // nothing computed on the caller's thread
    model.setFrame(hotter); // while the first is under way: the newest wins
    QTRY_VERIFY_WITH_TIMEOUT(!model.isComputing(), 20000);
    const Expected e = expectedRollup(*t, *hotter, Place::row(57));
    QCOMPARE(model.rollups()[57].p99, e.p99);
    QVERIFY(changed.count() >= 1 && changed.count() <= 2);

    // A frame's result for the fleet's rows is dropped when the place changes before it lands.
    model.setFrame(first);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setPlace(Place::row(3));
    QCOMPARE(reset.count(), 1);
    const int racks = model.rowCount();
    QCOMPARE(racks, 48);
    QVERIFY(model.isPending()); // the rows at once, their statistics from the worker
    QCOMPARE(model.index(0, RollupModel::GpusColumn).data(RollupModel::SortRole).toUInt(),
        Place::rack(3 * 48).gpuRange(*t).count);
    QCOMPARE(model.index(0, RollupModel::MeanColumn).data().toString(), QStringLiteral("–"));
    QCOMPARE(model.index(0, RollupModel::UnhealthyColumn).data().toString(), QStringLiteral("–"));
    QVERIFY(!model.index(0, RollupModel::UnhealthyColumn).data(RollupModel::SortRole).isValid());
    QTRY_VERIFY_WITH_TIMEOUT(!model.isComputing(), 20000);
    QVERIFY(!model.isPending());
    QCOMPARE(model.rowCount(), racks);
    QCOMPARE(model.rollups().front().place.level, Place::Level::Rack);
    QCOMPARE(reset.count(), 1); // the values came as a change of data, not another reset
    const Expected rack = expectedRollup(*t, *first, Place::rack(3 * 48 + 5));
    QCOMPARE(model.rollups()[5].place, Place::rack(3 * 48 + 5));
    QCOMPARE(model.rollups()[5].p99, rack.p99);
    QCOMPARE(model.rollups()[5].unhealthy, rack.unhealthy);
    QCOMPARE(model.index(5, RollupModel::UnhealthyColumn).data().toString(), QLocale().toString(rack.unhealthy));

    // Several changes before the worker is done: the rows and values of the last one, the others' results dropped.
    model.setPlace(Place::row(7));
    model.setFrame(hotter);
    model.setPlace(Place::row(9));
    QTRY_VERIFY_WITH_TIMEOUT(!model.isComputing() && !model.isPending(), 20000);
    const Expected last = expectedRollup(*t, *hotter, Place::rack(9 * 48 + 2));
    QCOMPARE(model.rollups()[2].place, Place::rack(9 * 48 + 2));
    QCOMPARE(model.rollups()[2].p99, last.p99);
    QVERIFY(std::abs(model.rollups()[2].mean - last.mean) < 1e-3);
}

// Past 100k GPUs a new frame's rollups wait until the interval since the last computation has passed (a replay at
// 60x shows 20 frames a second), the newest frame winning; a new place is computed at once.
void TestNavigation::rollupModelTakesNewFramesAtMostEveryInterval()
{
    const auto t = fleet(100, 48, 128);
    RollupModel model;
    model.setMinimumFrameInterval(3000);
    model.setTopology(t);
    model.setMetric(temperature());
    const auto first = frameFor(*t);
    auto hotter = std::make_shared<Frame>(*first);
    for (float &v : hotter->planes[0].values) {
        v += 5;
    }
    auto hottest = std::make_shared<Frame>(*first);
    for (float &v : hottest->planes[0].values) {
        v += 9;
    }
    model.setFrame(first); // the first at once
    QTRY_VERIFY_WITH_TIMEOUT(!model.isComputing(), 20000);
    QElapsedTimer clock;
    clock.start();
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setFrame(hotter);
    model.setFrame(hottest);
    QVERIFY(model.isComputing()); // waiting for its turn
    QTRY_VERIFY_WITH_TIMEOUT(!model.isComputing(), 20000);
    // Not before the interval since the first began (which took far less than a second here), and once, the newest.
    QVERIFY2(clock.elapsed() >= 2000, qPrintable(QString::number(clock.elapsed())));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.rollups()[57].p99, expectedRollup(*t, *hottest, Place::row(57)).p99);

    // A new place does not wait: its rows' values come as soon as the worker has them, for the newest frame.
    model.setFrame(first);
    clock.restart();
    model.setPlace(Place::row(4));
    QTRY_VERIFY_WITH_TIMEOUT(!model.isPending(), 20000);
    QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));
    QCOMPARE(model.rollups()[1].p99, expectedRollup(*t, *first, Place::rack(4 * 48 + 1)).p99);
}

void TestNavigation::rollupModel()
{
    const auto t = fleet(3, 4);
    RollupModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(RollupModel::SortRole);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);

    model.setTopology(t);
    model.setMetric(temperature());
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), int(RollupModel::ColumnCount));
    QCOMPARE(model.headerData(RollupModel::NameColumn, Qt::Horizontal).toString(), QStringLiteral("row"));
    QCOMPARE(model.headerData(RollupModel::MeanColumn, Qt::Horizontal).toString(), QStringLiteral("mean (°C)"));
    // No frame yet: names and sizes, no values.
    QCOMPARE(model.index(0, RollupModel::NameColumn).data().toString(), QStringLiteral("r01"));
    QCOMPARE(
        model.index(2, RollupModel::GpusColumn).data(RollupModel::SortRole).toUInt(), Place::row(2).gpuRange(*t).count);
    QVERIFY(!model.index(0, RollupModel::MeanColumn).data(RollupModel::SortRole).isValid());

    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setPlace(Place::row(1));
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.headerData(RollupModel::NameColumn, Qt::Horizontal).toString(), QStringLiteral("rack"));

    // A frame over the same children: data changes in place, no reset.
    const auto f = frameFor(*t);
    model.setFrame(f);
    QCOMPARE(reset.count(), 1);
    QCOMPARE(changed.count(), 1);
    for (int row = 0; row < model.rowCount(); ++row) {
        const Place rack = Place::rack(4 + static_cast<uint32_t>(row));
        const Expected e = expectedRollup(*t, *f, rack);
        QCOMPARE(model.index(row, 0).data(RollupModel::PlaceRole).value<Place>(), rack);
        QCOMPARE(model.index(row, RollupModel::NameColumn).data().toString(), rack.name(*t));
        QCOMPARE(model.index(row, RollupModel::GpusColumn).data(RollupModel::SortRole).toUInt(), e.gpus);
        QVERIFY(
            std::abs(model.index(row, RollupModel::MeanColumn).data(RollupModel::SortRole).toDouble() - e.mean) < 1e-3);
        QCOMPARE(model.index(row, RollupModel::MaxColumn).data(RollupModel::SortRole).toDouble(), double(e.max));
        QCOMPARE(model.index(row, RollupModel::P99Column).data(RollupModel::SortRole).toDouble(), double(e.p99));
        QCOMPARE(model.index(row, RollupModel::UnhealthyColumn).data(RollupModel::SortRole).toUInt(), e.unhealthy);
        QCOMPARE(model.index(row, RollupModel::MaxColumn).data().toString(), QLocale().toString(e.max, 'f', 1));
    }

    // Sorted by mean, hottest first, through the proxy.
    proxy.sort(RollupModel::MeanColumn, Qt::DescendingOrder);
    std::vector<double> means;
    for (int row = 0; row < proxy.rowCount(); ++row) {
        means.push_back(proxy.index(row, RollupModel::MeanColumn).data(RollupModel::SortRole).toDouble());
    }
    QVERIFY(std::is_sorted(means.rbegin(), means.rend()));
    QVERIFY(means.front() > means.back());

    // Another frame: still no reset; a view's selection survives.
    auto hotter = std::make_shared<Frame>(*f);
    for (float &v : hotter->planes[0].values) {
        v += 10;
    }
    model.setFrame(hotter);
    QCOMPARE(reset.count(), 1);
    QCOMPARE(changed.count(), 2);
    QVERIFY(std::abs(model.index(0, RollupModel::MeanColumn).data(RollupModel::SortRole).toDouble()
                - (expectedRollup(*t, *f, Place::rack(4)).mean + 10))
        < 1e-3);

    // Down to a node: its GPUs, some without a value, which sort last in ascending order and show a dash.
    model.setPlace(Place::node(2));
    QCOMPARE(reset.count(), 2);
    QCOMPARE(model.rowCount(), int(t->nodes[2].gpuCount));
    proxy.sort(RollupModel::MeanColumn, Qt::AscendingOrder);
    const int last = proxy.rowCount() - 1;
    QVERIFY(!proxy.index(last, RollupModel::MeanColumn).data(RollupModel::SortRole).isValid());
    QCOMPARE(proxy.index(last, RollupModel::MeanColumn).data().toString(), QStringLiteral("–"));
    QVERIFY(proxy.index(0, RollupModel::MeanColumn).data(RollupModel::SortRole).isValid());

    // Invalid places are ignored; a GPU has no children.
    model.setPlace(Place::rack(99));
    QCOMPARE(model.place(), Place::node(2));
    model.setPlace(Place::gpu(0));
    QCOMPARE(model.rowCount(), 0);
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
