// SPDX-License-Identifier: Apache-2.0
// Simulator properties over simulated hours and days: failure concentration, utilisation, and each scenario's
// incident, checked from the frames the simulator produces.
#include "sim/simulator.h"

#include <QSet>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace fleetscope::backend;

namespace {
double meanOf(const std::vector<float> &v, uint32_t first, uint32_t count)
{
    double sum = 0;
    uint32_t n = 0;
    for (uint32_t g = first; g < first + count; ++g) {
        if (!std::isnan(v[g])) {
            sum += v[g];
            ++n;
        }
    }
    return n == 0 ? std::nan("") : sum / n;
}

uint32_t rackFirstGpu(const FleetShape &s, const FleetShape::Rack &r)
{
    return s.nodes[r.firstNode].firstGpu;
}
uint32_t rackGpuCount(const FleetShape &s, const FleetShape::Rack &r)
{
    const auto &last = s.nodes[r.firstNode + r.nodeCount - 1];
    return last.firstGpu + last.gpuCount - rackFirstGpu(s, r);
}
} // namespace

class TestScenarios : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void catalogueIsInMetricIdOrder()
    {
        const auto &catalog = metricCatalog();
        QCOMPARE(catalog.size(), static_cast<size_t>(MetricId::Count));
        for (size_t i = 0; i < catalog.size(); ++i) {
            QCOMPARE(static_cast<size_t>(catalog[i].id), i);
        }
    }

    // Over a simulated day, about 1% of GPUs cause at least 40% of XID + ECC errors; fleet utilisation stays in
    // 60..95%.
    void aDayOfFailuresAndWork()
    {
        Simulator sim(10240, 11, 60.0);
        double utilSum = 0;
        for (int i = 0; i < 24 * 60; ++i) {
            sim.step();
            (void)sim.takeEvents();
            utilSum += meanOf(sim.snapshot()->plane(MetricId::GpuUtil), 0, 10240);
        }
        const double utilisation = utilSum / (24 * 60);
        QVERIFY2(utilisation > 60 && utilisation < 95, qPrintable(QString::number(utilisation)));

        std::vector<uint32_t> failures = sim.faults().lifetimeFailures();
        const double total = std::accumulate(failures.begin(), failures.end(), 0.0);
        QVERIFY2(total > 500, qPrintable(QString::number(total)));
        std::sort(failures.begin(), failures.end(), std::greater<>());
        const double top = std::accumulate(failures.begin(), failures.begin() + 102, 0.0);
        QVERIFY2(top / total >= 0.40, qPrintable(QStringLiteral("top 1% share %1 of %2").arg(top / total).arg(total)));
    }

    // The heat front of a failed cooling unit reaches rack k+1 of the row after rack k, and the row recovers.
    void coolingFailureTravelsAlongTheRow()
    {
        Simulator sim(10240, 1, 5.0, Scenario::Kind::CoolingFailure);
        const auto &shape = sim.shape();
        const auto &row = shape.rows[sim.scenario().affectedRow()];
        while (sim.nowSeconds() < Scenario::onsetSeconds) {
            sim.step();
        }
        const auto before = sim.snapshot();
        std::vector<double> baseline;
        for (uint32_t k = row.firstRack; k < row.firstRack + row.rackCount; ++k) {
            const auto &rack = shape.racks[k];
            baseline.push_back(
                meanOf(before->plane(MetricId::GpuTemp), rackFirstGpu(shape, rack), rackGpuCount(shape, rack)));
        }
        std::vector<double> reached(row.rackCount, -1);
        QSet<uint32_t> throttledGpus;
        double otherRowRise = 0;
        const auto &otherRow = shape.rows[(sim.scenario().affectedRow() + 1) % shape.rows.size()];
        const auto &otherRack = shape.racks[otherRow.firstRack];
        const double otherBefore
            = meanOf(before->plane(MetricId::GpuTemp), rackFirstGpu(shape, otherRack), rackGpuCount(shape, otherRack));
        while (sim.nowSeconds() < sim.scenario().coolingRecoveryAt()) {
            sim.step();
            const auto f = sim.snapshot();
            for (uint32_t p = 0; p < row.rackCount; ++p) {
                const auto &rack = shape.racks[row.firstRack + p];
                const double t
                    = meanOf(f->plane(MetricId::GpuTemp), rackFirstGpu(shape, rack), rackGpuCount(shape, rack));
                if (reached[p] < 0 && t > baseline[p] + 5.0) {
                    reached[p] = sim.nowSeconds();
                }
            }
            for (uint32_t k = row.firstRack; k < row.firstRack + row.rackCount; ++k) {
                const auto &rack = shape.racks[k];
                for (uint32_t g = rackFirstGpu(shape, rack); g < rackFirstGpu(shape, rack) + rackGpuCount(shape, rack);
                     ++g) {
                    if ((f->health[g] & fleetscope::health::throttledFlag) != 0) {
                        throttledGpus.insert(g);
                    }
                }
            }
            otherRowRise = std::max(otherRowRise,
                meanOf(f->plane(MetricId::GpuTemp), rackFirstGpu(shape, otherRack), rackGpuCount(shape, otherRack))
                    - otherBefore);
        }
        for (uint32_t p = 0; p < row.rackCount; ++p) {
            QVERIFY2(reached[p] > 0, qPrintable(QStringLiteral("rack %1 never heated").arg(p)));
            if (p > 0) {
                QVERIFY2(reached[p] > reached[p - 1],
                    qPrintable(QStringLiteral("rack %1 at %2 s, rack %3 at %4 s")
                                   .arg(p)
                                   .arg(reached[p])
                                   .arg(p - 1)
                                   .arg(reached[p - 1])));
            }
        }
        QVERIFY2(otherRowRise < 5.0, qPrintable(QString::number(otherRowRise))); // another row is not affected
        // GPUs in the hot row throttle (the count was taken during the outage, below).
        QVERIFY2(throttledGpus.size() > row.rackCount * 64 / 10, qPrintable(QString::number(throttledGpus.size())));
        // And it recovers.
        while (sim.nowSeconds() < sim.scenario().coolingRecoveryAt() + 900) {
            sim.step();
        }
        const auto after = sim.snapshot();
        const auto &first = shape.racks[row.firstRack];
        QVERIFY(meanOf(after->plane(MetricId::GpuTemp), rackFirstGpu(shape, first), rackGpuCount(shape, first))
            < baseline[0] + 5.0);
    }

    void powerCapLowersPowerAndClocksInOneHall()
    {
        Simulator sim(102400, 2, 10.0, Scenario::Kind::PowerCap);
        QVERIFY(sim.shape().rows.size() > 16); // two halls
        size_t capStarts = 0;
        while (sim.nowSeconds() < Scenario::onsetSeconds + 120) {
            sim.step();
            for (const auto &e : sim.takeEvents()) {
                capStarts += e.kind == FleetEvent::Kind::PowerThrottleStart ? 1 : 0;
            }
        }
        QVERIFY2(capStarts > 1000, qPrintable(QString::number(capStarts)));
        const auto f = sim.snapshot();
        const auto &power = f->plane(MetricId::Power);
        const auto &clock = f->plane(MetricId::SmClock);
        const auto &reasons = f->plane(MetricId::ThrottleReasons);
        const auto &shape = sim.shape();
        bool cappedSeen = false;
        bool uncappedAbove = false;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const auto &rack = shape.racks[shape.nodes[shape.nodeOfGpu[g]].rack];
            const bool inHall = shape.rows[rack.row].hall == shape.rows[0].hall;
            if (std::isnan(power[g])) {
                continue;
            }
            if (inHall) {
                QVERIFY(power[g] <= 400.0F + 1e-3F);
                if ((static_cast<uint32_t>(reasons[g]) & 0x4U) != 0) {
                    cappedSeen = true;
                    QVERIFY(clock[g] < 1980.0F);
                }
            } else if (power[g] > 450.0F) {
                uncappedAbove = true;
            }
        }
        QVERIFY(cappedSeen);
        QVERIFY(uncappedAbove);
    }

    void badGpuRunsHotThrottlesAndLogsXids()
    {
        Simulator sim(10240, 4, 5.0, Scenario::Kind::BadGpu);
        const auto bad = static_cast<uint32_t>(sim.scenario().badGpu());
        int xids = 0;
        while (sim.nowSeconds() < Scenario::onsetSeconds + 900) {
            sim.step();
            for (const auto &e : sim.takeEvents()) {
                xids += (e.kind == FleetEvent::Kind::Xid && e.gpu == bad) ? 1 : 0;
            }
        }
        const auto f = sim.snapshot();
        QVERIFY2(xids >= 2, qPrintable(QString::number(xids)));
        const auto &node = sim.shape().nodes[sim.shape().nodeOfGpu[bad]];
        std::vector<float> peers;
        for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
            if (g != bad) {
                peers.push_back(f->plane(MetricId::GpuTemp)[g]);
            }
        }
        std::sort(peers.begin(), peers.end());
        const float temp = f->plane(MetricId::GpuTemp)[bad];
        QVERIFY(!std::isnan(temp));
        QVERIFY2(temp > peers[peers.size() / 2] + 8.0F,
            qPrintable(QStringLiteral("%1 vs %2").arg(temp).arg(peers[peers.size() / 2])));
    }

    void nodeFlapGoesDownAndComesBack()
    {
        Simulator sim(1024, 3, 5.0, Scenario::Kind::NodeFlap);
        const auto node = static_cast<uint32_t>(sim.scenario().flappingNode());
        const uint32_t gpu = sim.shape().nodes[node].firstGpu;
        int downs = 0;
        int ups = 0;
        bool sawOffline = false;
        while (sim.nowSeconds() < Scenario::onsetSeconds + 600) {
            sim.step();
            for (const auto &e : sim.takeEvents()) {
                downs += (e.kind == FleetEvent::Kind::NodeDown && e.node == node) ? 1 : 0;
                ups += (e.kind == FleetEvent::Kind::NodeUp && e.node == node) ? 1 : 0;
            }
            const auto f = sim.snapshot();
            if ((f->health[gpu] & 0x07U) == fleetscope::health::Offline) {
                sawOffline = true;
                QVERIFY(std::isnan(f->plane(MetricId::GpuTemp)[gpu]));
            }
        }
        QVERIFY(sawOffline);
        QVERIFY2(downs >= 3 && ups >= 3, qPrintable(QStringLiteral("%1 down, %2 up").arg(downs).arg(ups)));
    }
};

QTEST_GUILESS_MAIN(TestScenarios)
#include "tst_scenarios.moc"
