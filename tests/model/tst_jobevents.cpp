// SPDX-License-Identifier: Apache-2.0
#include "model/jobevents.h"

#include <QTest>

#include <memory>

using namespace fleetscope;

namespace {

constexpr int64_t t0 = 1'780'000'000'000;
constexpr int64_t hourMs = 3'600'000;

// Four nodes of eight GPUs; the job holds nodes 1 and 2's GPUs (8..23), listed out of order as a wire might.
Topology topology()
{
    Topology t;
    t.gpuCount = 32;
    for (uint32_t n = 0; n < 4; ++n) {
        Topology::Node node;
        node.hostname = QStringLiteral("n%1").arg(n);
        node.firstGpu = n * 8;
        node.gpuCount = 8;
        t.nodes.push_back(node);
        for (uint32_t g = 0; g < 8; ++g) {
            t.nodeOfGpu.push_back(n);
        }
    }
    return t;
}

Job job(bool ended = false)
{
    Job j;
    j.id = 42;
    for (uint32_t g = 23; g >= 8; --g) {
        j.gpus.push_back(g);
    }
    j.startTimeMs = t0;
    j.endTimeMs = ended ? t0 + 2 * hourMs : 0;
    return j;
}

FleetEvent fleetEvent(int64_t time, EventKind kind, int64_t gpu, int64_t node = -1, uint64_t sequence = 0)
{
    FleetEvent e;
    e.timeMs = time;
    e.kind = kind;
    e.gpu = gpu;
    e.node = node;
    e.sequence = sequence;
    return e;
}

FleetEvent incident(int64_t time, uint64_t id, std::vector<std::pair<uint32_t, uint32_t>> runs)
{
    FleetEvent e = fleetEvent(time, EventKind::IncidentOpen, -1);
    auto inc = std::make_shared<Incident>();
    inc->id = id;
    inc->gpuRuns = std::move(runs);
    e.incident = inc;
    return e;
}

} // namespace

class TestJobEvents : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void keepsWhatHitsTheJob()
    {
        const Topology t = topology();
        std::vector<FleetEvent> events {
            fleetEvent(t0 + 10, EventKind::Xid, 9), // its GPU
            fleetEvent(t0 + 20, EventKind::Xid, 3), // another job's GPU
            fleetEvent(t0 + 30, EventKind::NodeDown, -1, 2), // its node, no GPU
            fleetEvent(t0 + 40, EventKind::NodeDown, -1, 3), // another node
            incident(t0 + 50, 7, { { 0, 4 }, { 22, 4 } }), // meets 22, 23
            incident(t0 + 60, 8, { { 24, 8 } }), // misses
            fleetEvent(t0 + 70, EventKind::JobStart, -1), // names no job
        };
        FleetEvent named = fleetEvent(t0 + 80, EventKind::JobEnd, -1);
        named.jobId = 42;
        events.push_back(named);
        const std::vector<FleetEvent> kept = jobEvents(job(), events, &t);
        QCOMPARE(kept.size(), size_t(4));
        QCOMPARE(kept[0].gpu, 9);
        QCOMPARE(kept[1].node, 2);
        QCOMPARE(kept[2].incident->id, uint64_t(7));
        QCOMPARE(kept[3].jobId, uint64_t(42));
        // Without a topology, a node's own events cannot be placed.
        QCOMPARE(jobEvents(job(), events).size(), size_t(3));
    }

    void withinItsLife()
    {
        const std::vector<FleetEvent> events { fleetEvent(t0 - 1, EventKind::Xid, 9), fleetEvent(t0, EventKind::Xid, 9),
            fleetEvent(t0 + 2 * hourMs, EventKind::Xid, 9), fleetEvent(t0 + 2 * hourMs + 1, EventKind::Xid, 9) };
        QCOMPARE(jobEvents(job(true), events).size(), size_t(2));
        QCOMPARE(jobEvents(job(false), events).size(), size_t(3)); // running: no end
    }

    void sortedAndBoundedToTheNewest()
    {
        std::vector<FleetEvent> events;
        for (int i = 0; i < 5000; ++i) {
            // Out of order, ties broken by sequence.
            events.push_back(
                fleetEvent(t0 + (i * 7919) % 5000 / 2, EventKind::Xid, 8 + i % 16, -1, static_cast<uint64_t>(i)));
        }
        const std::vector<FleetEvent> kept = jobEvents(job(), events, nullptr, 2000);
        QCOMPARE(kept.size(), size_t(2000));
        for (size_t i = 1; i < kept.size(); ++i) {
            const bool ordered = kept[i - 1].timeMs < kept[i].timeMs
                || (kept[i - 1].timeMs == kept[i].timeMs && kept[i - 1].sequence < kept[i].sequence);
            QVERIFY(ordered);
        }
        QCOMPARE(kept.back().timeMs, t0 + 4999 / 2);
        QCOMPARE(kept.front().timeMs, t0 + 3000 / 2);
    }

    void alertsOnItsGpus()
    {
        AlertBoard board;
        board.alerts.resize(3);
        board.alerts[0].gpuRuns = { { 0, 8 } };
        board.alerts[1].gpuRuns = { { 4, 2 }, { 20, 10 } };
        board.alerts[2].gpuRuns = {}; // fleet-wide: not the job's
        const std::vector<JobAlert> kept = jobAlerts(job(), board);
        QCOMPARE(kept.size(), size_t(1));
        QCOMPARE(kept[0].index, size_t(1));
        QCOMPARE(kept[0].gpu, 20U);
    }
};

QTEST_GUILESS_MAIN(TestJobEvents)
#include "tst_jobevents.moc"
