// SPDX-License-Identifier: Apache-2.0
// The rollups of a place's children (what the navigation dock's table shows): derived from the frame by the model,
// sampled past a limit, at a million GPUs, and the item model that computes them on a worker past 100k GPUs, each
// checked against what the test derives from the synthetic topology and frame on its own (navigationtesting.h).
#include "navigationtesting.h"
#include "widgets/navigation/rollupmodel.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

using namespace fleetscope;
using namespace fleetscope::testing;

class TestRollups : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void rollupsByDerivation();
    void rollupsIgnoreMismatchedArrays();
    void rollupP99IsSampledAboveTheLimit();
    void rollupsOfAMillionGpus();
    void rollupModelOfAMillionGpusComputesOnAWorker();
    void rollupModelTakesNewFramesAtMostEveryInterval();
    void rollupModel();
};

void TestRollups::rollupsByDerivation()
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

void TestRollups::rollupsIgnoreMismatchedArrays()
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

void TestRollups::rollupP99IsSampledAboveTheLimit()
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

void TestRollups::rollupsOfAMillionGpus()
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
void TestRollups::rollupModelOfAMillionGpusComputesOnAWorker()
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
void TestRollups::rollupModelTakesNewFramesAtMostEveryInterval()
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

void TestRollups::rollupModel()
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

QTEST_MAIN(TestRollups)
#include "tst_rollups.moc"
