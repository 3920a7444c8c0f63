// SPDX-License-Identifier: Apache-2.0
// A domain's GPUs as the map highlights them beside an incident: each kind of domain, a leaf by its GPUs' links, a feed
// by its busways' PDUs' racks, a domain serving none, an index outside the table; and the hit GPUs counted against it.
#include "model/domainhighlight.h"
#include "testtopology.h"

#include <QTest>

using namespace fleetscope;

namespace {

using Runs = std::vector<std::pair<uint32_t, uint32_t>>;

// makeTopology's row of three racks of two 8-GPU nodes (rack k: GPUs [16k, 16k + 16)), with domains as the simulator
// lays them out (backend/core/fleetdomains.cpp): feeds over busways over each rack side's PDU, an air cooling unit
// over the first two racks, a CDU's loop and an NVLink domain over the third; scalable units of nodes with a leaf per
// rail under the rail's spine plane. Only rails 0 and 5 are cabled.
enum : uint32_t {
    FeedA,
    FeedB,
    Spine0,
    Spine5,
    BusA,
    BusB,
    Pdu1A,
    Pdu1B,
    Pdu2A,
    Pdu2B,
    Pdu3B,
    Crah1,
    Cdu1,
    Loop1A,
    Nvl3,
    Su01,
    Su01L0,
    Su01L5,
    Su02,
    Su02L5,
    SparePdu,
    DomainCount
};

TopologyPtr fleetWithDomains()
{
    auto t = std::const_pointer_cast<Topology>(testing::makeTopology());
    const auto add = [&t](DomainKind kind, const char *name, int32_t parent, int32_t rail = -1) {
        t->domains.push_back({ kind, QLatin1String(name), parent, rail });
    };
    add(DomainKind::PowerFeed, "hall-a-a", -1);
    add(DomainKind::PowerFeed, "hall-a-b", -1);
    add(DomainKind::SpinePlane, "spine-0", -1, 0);
    add(DomainKind::SpinePlane, "spine-5", -1, 5);
    add(DomainKind::Busway, "r01-bus-a", FeedA);
    add(DomainKind::Busway, "r01-bus-b", FeedB);
    add(DomainKind::Pdu, "r01-k01-a", BusA);
    add(DomainKind::Pdu, "r01-k01-b", BusB);
    add(DomainKind::Pdu, "r01-k02-a", BusA);
    add(DomainKind::Pdu, "r01-k02-b", BusB);
    add(DomainKind::Pdu, "r01-k03-b", BusB);
    add(DomainKind::CoolingUnit, "r01-crah1", -1);
    add(DomainKind::Cdu, "r01-cdu1", -1);
    add(DomainKind::CoolantLoop, "r01-cdu1-a", Cdu1);
    add(DomainKind::NvlinkDomain, "r01-k03-nvl", -1);
    add(DomainKind::ScalableUnit, "su01", -1);
    add(DomainKind::LeafSwitch, "su01-l0", Spine0, 0);
    add(DomainKind::LeafSwitch, "su01-l5", Spine5, 5);
    add(DomainKind::ScalableUnit, "su02", -1);
    add(DomainKind::LeafSwitch, "su02-l5", Spine5, 5);
    add(DomainKind::Pdu, "r01-k04-a", BusA); // on the busway, serving no rack yet
    Q_ASSERT(t->domains.size() == DomainCount);
    t->racks[0].domains = { Pdu1A, Pdu1B, Crah1 };
    t->racks[1].domains = { Pdu2A, Pdu2B, Crah1 };
    t->racks[2].domains = { Pdu3B, Loop1A, Nvl3 };
    t->gpuLinks.resize(t->gpuCount);
    for (uint32_t n = 0; n < t->nodes.size(); ++n) {
        Topology::Node &node = t->nodes[n];
        const bool first = n < 4;
        node.domains = { first ? Su01 : Su02 };
        if (n == 3) {
            node.domains.push_back(Pdu2B); // corded to rack 2's PDU b alone
        }
        const uint32_t port = (first ? n : n - 4) + 1;
        t->gpuLinks[node.firstGpu + 5] = { first ? Su01L5 : Su02L5, port };
        if (first) {
            t->gpuLinks[node.firstGpu] = { Su01L0, port };
        }
    }
    return t;
}

} // namespace

class TestDomainHighlight : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Every kind's GPUs: a rack's memberships take the rack's nodes whole, a node's the node, a leaf its linked GPUs,
    // and a domain takes what its children take.
    void eachKindsGpus_data()
    {
        QTest::addColumn<uint32_t>("domain");
        QTest::addColumn<Runs>("runs");
        QTest::newRow("leaf by its links") << uint32_t { Su01L5 } << Runs { { 5, 1 }, { 13, 1 }, { 21, 1 }, { 29, 1 } };
        QTest::newRow("another rail's leaf")
            << uint32_t { Su01L0 } << Runs { { 0, 1 }, { 8, 1 }, { 16, 1 }, { 24, 1 } };
        QTest::newRow("spine plane: its leaves'")
            << uint32_t { Spine5 } << Runs { { 5, 1 }, { 13, 1 }, { 21, 1 }, { 29, 1 }, { 37, 1 }, { 45, 1 } };
        QTest::newRow("PDU: its rack, but a node corded to the other alone")
            << uint32_t { Pdu2A } << Runs { { 16, 8 } };
        QTest::newRow("PDU: its rack, with the node corded to it alone") << uint32_t { Pdu2B } << Runs { { 16, 16 } };
        QTest::newRow("busway: its PDUs' racks") << uint32_t { BusA } << Runs { { 0, 24 } };
        QTest::newRow("feed: its busways' PDUs' racks") << uint32_t { FeedB } << Runs { { 0, 48 } };
        QTest::newRow("the other feed") << uint32_t { FeedA } << Runs { { 0, 24 } };
        QTest::newRow("cooling unit: its racks") << uint32_t { Crah1 } << Runs { { 0, 32 } };
        QTest::newRow("CDU: its loops' racks") << uint32_t { Cdu1 } << Runs { { 32, 16 } };
        QTest::newRow("coolant loop") << uint32_t { Loop1A } << Runs { { 32, 16 } };
        QTest::newRow("NVLink domain") << uint32_t { Nvl3 } << Runs { { 32, 16 } };
        QTest::newRow("scalable unit: its nodes") << uint32_t { Su01 } << Runs { { 0, 32 } };
        QTest::newRow("the other scalable unit") << uint32_t { Su02 } << Runs { { 32, 16 } };
        QTest::newRow("a PDU serving nothing") << uint32_t { SparePdu } << Runs {};
        QTest::newRow("past the table") << uint32_t { DomainCount } << Runs {};
    }
    void eachKindsGpus()
    {
        QFETCH(uint32_t, domain);
        QFETCH(Runs, runs);
        const TopologyPtr topology = fleetWithDomains();
        QCOMPARE(topology->gpuRunsOfDomain(domain, Topology::PowerBy::Cords), runs);
        if (domain == Pdu2A) { // by membership the rack's PDUs each hold all its GPUs, as domainsOfGpu says
            QCOMPARE(topology->gpuRunsOfDomain(domain), (Runs { { 16, 16 } }));
        }
        const auto highlight = highlightDomain(*topology, domain, {});
        QCOMPARE(highlight.has_value(), !runs.empty());
        if (highlight) {
            QCOMPARE(highlight->runs, runs);
            QCOMPARE(highlight->domain, domain);
            QCOMPARE(highlight->hitCount, 0U);
        }
    }

    // The incident's GPUs counted against the domain's: those outside it (a GPU the backend joined late, another
    // rack's) are not; what the status line says.
    void hitGpusAreCounted()
    {
        const TopologyPtr topology = fleetWithDomains();
        const auto leaf = highlightDomain(*topology, Su01L5, { 5, 6, 13, 29, 37 });
        QVERIFY(leaf);
        QCOMPARE(leaf->gpuCount, 4U);
        QCOMPARE(leaf->hitCount, 3U);
        QCOMPARE(leaf->name, QStringLiteral("leaf su01-l5"));
        QCOMPARE(leaf->text(), QStringLiteral("leaf su01-l5: 4 GPUs; 3 hit"));
        const auto pdu = highlightDomain(*topology, Pdu2B, { 0, 15, 16, 20, 31, 32 });
        QVERIFY(pdu);
        QCOMPARE(pdu->gpuCount, 16U);
        QCOMPARE(pdu->hitCount, 3U);
        QCOMPARE(pdu->text(), QStringLiteral("PDU r01-k02-b: 16 GPUs; 3 hit"));
        const auto feed = highlightDomain(*topology, FeedB, { 0, 47 });
        QVERIFY(feed);
        QCOMPARE(feed->text(), QStringLiteral("power feed hall-a-b: 48 GPUs; 2 hit"));
    }

    // A GPU's or a node's own incident names no domain (-1); an index past the table, or a fleet without domains,
    // highlights nothing.
    void noDomainIsRefused()
    {
        const TopologyPtr topology = fleetWithDomains();
        QVERIFY(!highlightDomain(*topology, -1, { 5 }));
        QVERIFY(!highlightDomain(*topology, DomainCount, { 5 }));
        QVERIFY(!highlightDomain(*topology, int64_t { 1 } << 40, { 5 }));
        QVERIFY(!highlightDomain(*testing::makeTopology(), 0, { 5 }));
    }
};

QTEST_GUILESS_MAIN(TestDomainHighlight)
#include "tst_domainhighlight.moc"
