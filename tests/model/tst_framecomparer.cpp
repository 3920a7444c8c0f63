// SPDX-License-Identifier: Apache-2.0
// FrameComparer: compare mode's decode and subtraction on a worker. The difference and its range are those of the
// recorded frames at or before the two times; only the newest request's result comes back (a request superseded by a
// newer one or cancelled is dropped); a time before the recording and a metric not recorded say why.
#include "model/flightrecorder.h"
#include "model/framecomparer.h"
#include "model/framediff.h"

#include <QSignalSpy>
#include <QTest>

#include <cmath>

using namespace fleetscope;

namespace {
constexpr int64_t t0 = 1'700'000'000'000LL;
constexpr uint32_t gpus = 4096;

// Frame k: GPU g at 40 + k * (g % 7) degrees, GPU 5 without a value.
FramePtr frame(int k)
{
    auto f = std::make_shared<Frame>();
    f->sequence = static_cast<uint64_t>(k + 1);
    f->sampleTimeMs = t0 + k * 1000;
    f->topologyGeneration = 3;
    f->health.assign(gpus, 0);
    MetricPlane plane { QStringLiteral("gpu_temp"), std::vector<float>(gpus) };
    for (uint32_t g = 0; g < gpus; ++g) {
        plane.values[g] = 40.0F + static_cast<float>(k) * static_cast<float>(g % 7);
    }
    plane.values[5] = std::numeric_limits<float>::quiet_NaN();
    f->planes.push_back(std::move(plane));
    return f;
}
} // namespace

class TestFrameComparer : public QObject
{
    Q_OBJECT

    FlightRecorder m_recorder;

private Q_SLOTS:
    void initTestCase()
    {
        for (int k = 0; k < 6; ++k) {
            QVERIFY(m_recorder.record(frame(k)));
        }
    }

    void theDifferenceOfTheFramesAtOrBefore()
    {
        FrameComparer comparer(&m_recorder);
        QSignalSpy compared(&comparer, &FrameComparer::compared);
        // Given in either order, between two samples: the frames at or before, 1 and 4.
        const quint64 request = comparer.compare(t0 + 4500, t0 + 1200, QStringLiteral("gpu_temp"));
        QVERIFY(comparer.isBusy());
        QCOMPARE(compared.count(), 0); // never on the caller's thread
        QVERIFY(compared.wait(10000));
        QVERIFY(!comparer.isBusy());
        const auto result = compared.first().first().value<FrameComparer::ResultPtr>();
        QCOMPARE(result->request, request);
        QVERIFY(result->error.isEmpty());
        QCOMPARE(result->olderMs, t0 + 1000);
        QCOMPARE(result->newerMs, t0 + 4000);
        QVERIFY(result->diff);
        QCOMPARE(result->diff->planes.size(), std::size_t(1));
        QCOMPARE(result->diff->planes[0].metricId, differenceId(QStringLiteral("gpu_temp")));
        for (uint32_t g : { 0U, 1U, 6U, 13U, 4095U }) {
            QCOMPARE(result->diff->planes[0].values[g], 3.0F * static_cast<float>(g % 7));
        }
        QVERIFY(std::isnan(result->diff->planes[0].values[5]));
        // Changes of 0 to 18 degrees: the range is symmetric about zero and reaches the top percentile.
        QVERIFY(result->range.valid);
        QCOMPARE(result->range.min, -result->range.max);
        QCOMPARE(result->range.max, 18.0F);
    }

    void onlyTheNewestRequestIsAnswered()
    {
        FrameComparer comparer(&m_recorder);
        QSignalSpy compared(&comparer, &FrameComparer::compared);
        comparer.compare(t0, t0 + 5000, QStringLiteral("gpu_temp"));
        const quint64 newest = comparer.compare(t0, t0 + 2000, QStringLiteral("gpu_temp"));
        // One worker, in order: the first result reaches this thread before the second, and is dropped.
        QVERIFY(compared.wait(10000));
        QTRY_VERIFY(!comparer.isBusy());
        QCOMPARE(compared.count(), 1);
        const auto result = compared.first().first().value<FrameComparer::ResultPtr>();
        QCOMPARE(result->request, newest);
        QCOMPARE(result->newerMs, t0 + 2000);
    }

    void aCancelledRequestIsDropped()
    {
        FrameComparer comparer(&m_recorder);
        QSignalSpy compared(&comparer, &FrameComparer::compared);
        comparer.compare(t0, t0 + 5000, QStringLiteral("gpu_temp"));
        comparer.cancel();
        QVERIFY(!comparer.isBusy());
        // A request after it is answered, and it alone: the cancelled one's result came first and was dropped.
        const quint64 after = comparer.compare(t0, t0 + 3000, QStringLiteral("gpu_temp"));
        QVERIFY(compared.wait(10000));
        QCOMPARE(compared.count(), 1);
        QCOMPARE(compared.first().first().value<FrameComparer::ResultPtr>()->request, after);
    }

    void whatCannotBeComparedSaysWhy()
    {
        FrameComparer comparer(&m_recorder);
        QSignalSpy compared(&comparer, &FrameComparer::compared);
        comparer.compare(t0 - 5000, t0 + 3000, QStringLiteral("gpu_temp"));
        QVERIFY(compared.wait(10000));
        auto result = compared.takeFirst().first().value<FrameComparer::ResultPtr>();
        QVERIFY(!result->diff);
        QVERIFY(result->error.contains(QStringLiteral("Nothing recorded")));

        comparer.compare(t0, t0 + 3000, QStringLiteral("power"));
        QVERIFY(compared.wait(10000));
        result = compared.takeFirst().first().value<FrameComparer::ResultPtr>();
        QVERIFY(!result->diff);
        QVERIFY(result->error.startsWith(QStringLiteral("Cannot compare: ")));
    }

    // A comparer going away with its worker busy waits for it; nothing is delivered after.
    void destroyedWhileBusy()
    {
        auto comparer = std::make_unique<FrameComparer>(&m_recorder);
        int delivered = 0;
        connect(comparer.get(), &FrameComparer::compared, this, [&delivered] { ++delivered; });
        comparer->compare(t0, t0 + 5000, QStringLiteral("gpu_temp"));
        comparer.reset();
        QCoreApplication::processEvents();
        QCOMPARE(delivered, 0);
    }
};

QTEST_GUILESS_MAIN(TestFrameComparer)
#include "tst_framecomparer.moc"
