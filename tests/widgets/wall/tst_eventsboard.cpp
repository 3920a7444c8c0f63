// SPDX-License-Identifier: Apache-2.0
// The wall's events page: "now" from the live frame's health bytes (throttling while hot, held at the power cap,
// nodes with every GPU offline), the list from the last hour's warnings and failures with the severities the backend
// really gives (ends of throttling and nodes coming back are Info, and not listed), newest first, hostnames named.
#include "widgets/wall/eventsboard.h"
#include "tests/model/testtopology.h"

#include <QTest>

using namespace fleetscope;
using fleetscope::testing::makeTopology;

namespace {
FleetEvent makeEvent(FleetEvent::Kind kind, FleetEvent::Severity severity, int64_t timeMs, int64_t gpu, int64_t node)
{
    FleetEvent e;
    e.kind = kind;
    e.severity = severity;
    e.timeMs = timeMs;
    e.gpu = gpu;
    e.node = node;
    e.xid = kind == FleetEvent::Kind::Xid ? 79 : 0;
    return e;
}
} // namespace

class TestEventsBoard : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void nowComesFromTheLiveFrame()
    {
        const TopologyPtr topology = makeTopology();
        auto frame = std::make_shared<Frame>();
        frame->topologyGeneration = topology->generation;
        frame->health.assign(topology->gpuCount, health::Ok);
        frame->health[1] = health::Warning | health::throttledFlag; // hot and throttling
        frame->health[2] = health::Critical | health::throttledFlag;
        frame->health[3] = health::Warning; // hot, not throttling: not counted
        frame->health[4] = health::Ok | health::throttledFlag; // the power cap
        for (uint32_t g = 16; g < 24; ++g) { // node 2: every GPU offline
            frame->health[g] = health::Offline;
        }
        frame->health[24] = health::Offline; // node 3: one GPU offline, the node is up
        EventsBoard board;
        board.setTopology(topology);
        board.setLiveFrame(frame);
        QCOMPARE(board.active().thermal, 2);
        QCOMPARE(board.active().power, 1);
        QCOMPARE(board.active().nodesDown, 1);

        // A frame of another generation counts nothing rather than misreading.
        auto other = std::make_shared<Frame>(*frame);
        other->topologyGeneration = topology->generation + 1;
        board.setLiveFrame(other);
        QCOMPARE(board.active().thermal, 0);
        QCOMPARE(board.active().nodesDown, 0);
    }

    void theLastHourNewestFirstWithoutGoodNews()
    {
        using K = FleetEvent::Kind;
        using S = FleetEvent::Severity;
        const qint64 now = 10 * 3600 * 1000;
        const std::vector<FleetEvent> events { makeEvent(K::Xid, S::Warning, now - 2 * 3600 * 1000, 9, 1), // too old
            makeEvent(K::ThermalThrottleStart, S::Warning, now - 50 * 60 * 1000, 3, 0),
            makeEvent(K::ThermalThrottleEnd, S::Info, now - 40 * 60 * 1000, 3, 0),
            makeEvent(K::NodeDown, S::Critical, now - 30 * 60 * 1000, -1, 2),
            makeEvent(K::NodeUp, S::Info, now - 20 * 60 * 1000, -1, 2),
            makeEvent(K::Xid, S::Warning, now - 60 * 1000, 9, 1) };
        EventsBoard board;
        board.setTopology(makeTopology());
        board.setEvents(events, now);
        QCOMPARE(board.criticalCount(), 1);
        QCOMPARE(board.warningCount(), 2);
        const QStringList rows = board.rowTexts();
        QCOMPARE(rows.size(), 3);
        QVERIFY2(rows[0].contains(QStringLiteral("r01-k01-n02 GPU 1")) && rows[0].contains(QStringLiteral("XID 79")),
            qPrintable(rows[0]));
        QVERIFY2(rows[1].contains(QStringLiteral("r01-k02-n01")), qPrintable(rows[1]));
        QVERIFY2(rows[2].contains(QStringLiteral("r01-k01-n01 GPU 3")), qPrintable(rows[2]));
    }

    void atMostTwoHundredRowsButEveryOneCounted()
    {
        std::vector<FleetEvent> events;
        for (int i = 0; i < 500; ++i) {
            events.push_back(makeEvent(FleetEvent::Kind::Xid, FleetEvent::Severity::Warning, 1000 + i, i % 48, -1));
        }
        EventsBoard board;
        board.setEvents(events, 2000);
        QCOMPARE(board.warningCount(), 500);
        QCOMPARE(board.rowTexts().size(), 200);
    }
};

QTEST_MAIN(TestEventsBoard)
#include "tst_eventsboard.moc"
