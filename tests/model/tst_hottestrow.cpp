// SPDX-License-Identifier: Apache-2.0
// The hottest row: the highest 99th percentile wins, not the highest mean; rows without the metric, frames of another
// fleet and no frame give none.
#include "model/hottestrow.h"
#include "testtopology.h"

#include <QTest>

#include <cmath>
#include <memory>

using namespace fleetscope;

namespace {
// The test topology (3 racks of 2 nodes of 8 GPUs) over three rows, a rack each: 16 GPUs a row.
TopologyPtr threeRows()
{
    auto t = std::const_pointer_cast<Topology>(testing::makeTopology());
    t->rows = { { QStringLiteral("r01"), {} }, { QStringLiteral("r02"), {} }, { QStringLiteral("r03"), {} } };
    for (uint32_t r = 0; r < t->racks.size(); ++r) {
        t->racks[r].row = r;
        t->racks[r].position = 0;
    }
    return t;
}

// Temperatures per GPU: row 0 evenly warm (60), row 1 cool (40) with one GPU at 95, row 2 cool (45).
std::shared_ptr<Frame> frameOf(const Topology &t)
{
    auto frame = std::make_shared<Frame>();
    frame->topologyGeneration = t.generation;
    frame->health.assign(t.gpuCount, health::Ok);
    std::vector<float> values(t.gpuCount);
    for (uint32_t g = 0; g < t.gpuCount; ++g) {
        const uint32_t row = t.racks[t.nodeOf(g).rack].row;
        values[g] = row == 0 ? 60.0F : row == 1 ? 40.0F : 45.0F;
    }
    values[16 + 5] = 95.0F;
    frame->planes.push_back({ QStringLiteral("gpu_temp"), std::move(values) });
    return frame;
}
} // namespace

class TestHottestRow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aFewHotGpusOutrankAnEvenlyWarmRow()
    {
        const TopologyPtr t = threeRows();
        const auto frame = frameOf(*t);
        const HottestRow hottest = hottestRow(*t, frame.get(), QStringLiteral("gpu_temp"));
        QCOMPARE(hottest.row, 1); // its mean (about 43.4) is the lowest but one, its 99th percentile 95
        QCOMPARE(hottest.p99, 95.0F);
    }

    void theFirstRowWinsATie()
    {
        const TopologyPtr t = threeRows();
        auto frame = frameOf(*t);
        std::fill(frame->planes[0].values.begin(), frame->planes[0].values.end(), 50.0F);
        const HottestRow hottest = hottestRow(*t, frame.get(), QStringLiteral("gpu_temp"));
        QCOMPARE(hottest.row, 0);
        QCOMPARE(hottest.p99, 50.0F);
    }

    void noneWithoutValues()
    {
        const TopologyPtr t = threeRows();
        const auto frame = frameOf(*t);
        QCOMPARE(hottestRow(*t, nullptr, QStringLiteral("gpu_temp")).row, -1);
        const HottestRow other = hottestRow(*t, frame.get(), QStringLiteral("power")); // not in the frame
        QCOMPARE(other.row, -1);
        QVERIFY(std::isnan(other.p99));
        auto elsewhere = std::make_shared<Frame>(*frame);
        elsewhere->topologyGeneration = t->generation + 1; // a frame of another fleet layout
        QCOMPARE(hottestRow(*t, elsewhere.get(), QStringLiteral("gpu_temp")).row, -1);
    }
};

QTEST_GUILESS_MAIN(TestHottestRow)
#include "tst_hottestrow.moc"
