// SPDX-License-Identifier: Apache-2.0
// Wire -> model for the fleet's shared domains (the rest of the topology is tst_protodecode's): the domain table
// spread over the parts, each rack's and node's memberships and each GPU's leaf and port, as the backend encodes them
// and as a hand-made stream gives them; every index checked against the table, a bad one refused with its reason; a
// GPU's domains named for people as the backend names them.
#include "client/topologydecode.h"
#include "service/frameencoder.h"
#include "sim/simulator.h"

#include <QTest>

#include <functional>
#include <string>
#include <vector>

using namespace fleetscope;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;

namespace {

constexpr uint64_t generation = 9;

// One row, one rack, one node of four GPUs: feed <- busway <- PDU, a spine plane <- a leaf of rail 2, and a domain of
// a kind this console does not know. GPU 3's link is not known.
std::vector<pb::TopologyPart> handMade()
{
    pb::TopologyPart part;
    part.set_generation(generation);
    part.set_gpu_count(4);
    part.set_part_index(0);
    part.set_part_count(1);
    const auto domain = [&part](pb::DomainKind kind, const std::string &name, int parent, int rail) {
        auto *d = part.add_domains();
        d->set_kind(kind);
        d->set_name(name);
        if (parent >= 0) {
            d->set_parent(static_cast<uint32_t>(parent));
        }
        if (rail >= 0) {
            d->set_rail(static_cast<uint32_t>(rail));
        }
    };
    domain(pb::DOMAIN_KIND_POWER_FEED, "hall-a-feed-a", -1, -1); // 0
    domain(pb::DOMAIN_KIND_BUSWAY, "r01-bus-a", 0, -1); // 1
    domain(pb::DOMAIN_KIND_PDU, "r01-k01-a", 1, -1); // 2
    domain(pb::DOMAIN_KIND_SPINE_PLANE, "spine-2", -1, 2); // 3
    domain(pb::DOMAIN_KIND_LEAF_SWITCH, "su01-l2", 3, 2); // 4
    domain(static_cast<pb::DomainKind>(99), "future\nthing", -1, -1); // 5
    domain(pb::DOMAIN_KIND_SCALABLE_UNIT, "su01", -1, -1); // 6
    part.set_domain_count(static_cast<uint32_t>(part.domains_size()));
    auto *row = part.add_rows();
    row->set_name("r01");
    row->set_hall("hall-a");
    auto *rack = part.add_racks();
    rack->set_name("r01-k01");
    rack->set_node_count(1);
    rack->add_domains(2);
    rack->add_domains(5);
    auto *node = part.add_nodes();
    node->set_hostname("r01-k01-n01");
    node->set_gpu_count(4);
    node->add_domains(6);
    for (uint32_t g = 0; g < 4; ++g) {
        node->add_gpu_leaves(g == 3 ? 0xFFFFFFFFU : 4U);
        node->add_gpu_ports(g == 3 ? 0U : 17U);
    }
    return { part };
}

} // namespace

class TestTopologyDecode : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The simulator's fleets through the backend's encoder, in parts small enough that the table spreads over many:
    // every domain, membership and link arrives, and a GPU's domains read as the backend reads them.
    void domainsRoundTrip_data()
    {
        QTest::addColumn<uint32_t>("gpus");
        QTest::addColumn<int>("hardware");
        QTest::newRow("HGX 10,240") << 10240U << int(be::Hardware::HgxH100);
        QTest::newRow("NVL72 2,304") << 2304U << int(be::Hardware::Gb200Nvl72);
    }
    void domainsRoundTrip()
    {
        QFETCH(uint32_t, gpus);
        QFETCH(int, hardware);
        const auto shape = be::FleetShape::forGpuCount(gpus, 1, static_cast<be::Hardware>(hardware));
        QVERIFY(!shape.domains.empty());
        const auto parts = be::encodeTopology(shape, generation, 40);
        QVERIFY(parts.size() > 4);
        QVERIFY(parts.back().domains_size() > 0); // spread to the last part
        QString error;
        const auto topology = decodeTopology(parts, &error);
        QVERIFY2(topology, qPrintable(error));
        QCOMPARE(topology->domains.size(), shape.domains.size());
        for (size_t d = 0; d < shape.domains.size(); ++d) {
            const auto &want = shape.domains[d];
            const auto &got = topology->domains[d];
            QCOMPARE(got.kind, want.kind);
            QCOMPARE(got.name, QString::fromStdString(want.name));
            QCOMPARE(got.parent, want.parent);
            QCOMPARE(got.rail, want.rail);
        }
        for (size_t k = 0; k < shape.racks.size(); ++k) {
            QCOMPARE(topology->racks[k].domains, shape.racks[k].domains);
        }
        for (size_t n = 0; n < shape.nodes.size(); ++n) {
            QCOMPARE(topology->nodes[n].domains, shape.nodes[n].domains);
        }
        QCOMPARE(topology->gpuLinks.size(), size_t { gpus });
        for (uint32_t g = 0; g < gpus; ++g) {
            QCOMPARE(topology->gpuLinks[g].leaf, shape.gpuLinks[g].leaf);
            QCOMPARE(topology->gpuLinks[g].port, shape.gpuLinks[g].port);
        }
        for (const uint32_t g : { 0U, 7U, 1000U, gpus / 2 + 5, gpus - 1 }) {
            QCOMPARE(topology->domainLine(g), QString::fromStdString(shape.domainLine(g)));
            QCOMPARE(topology->domainsOfGpu(g), shape.domainsOfGpu(g));
        }
        // A line a cause; an NVL72 rack's NVLink domain a line of its own, between cooling and the leaf.
        const QStringList lines = Topology::linesByCause(topology->domainNames(gpus - 1));
        QCOMPARE(lines.join(QStringLiteral(" · ")), topology->domainLine(gpus - 1));
        QCOMPARE(lines.size(), hardware == int(be::Hardware::Gb200Nvl72) ? 4 : 3);
        QVERIFY2(lines.last().startsWith(QStringLiteral("leaf ")), qPrintable(lines.last()));
        QCOMPARE(lines[lines.size() - 2].startsWith(QStringLiteral("NVLink domain ")),
            hardware == int(be::Hardware::Gb200Nvl72));
        QCOMPARE(topology->domainLine(gpus), QString());
        QVERIFY(topology->domainsOfGpu(gpus).empty());
    }

    // The line names the rack's domains, then the link; the simulated layout's words as issue 32 gives them.
    void aGpusDomainsReadForPeople()
    {
        const auto shape = be::FleetShape::forGpuCount(10240, 1, be::Hardware::HgxH100);
        QString error;
        const auto topology = decodeTopology(be::encodeTopology(shape, generation), &error);
        QVERIFY2(topology, qPrintable(error));
        // r01-k01-n01 GPU 5: node 0 of scalable unit 1, on rail 5's leaf at port 1.
        QCOMPARE(topology->domainLine(5),
            QStringLiteral("PDU r01-k01-a · PDU r01-k01-b · cooling unit r01-crah1 · leaf su01-l5 port 1, rail 5"));
        // A line a cause, for views that lay them out; a node's are its rack's and its scalable unit.
        QCOMPARE(Topology::linesByCause(topology->domainNames(5)),
            (QStringList { QStringLiteral("PDU r01-k01-a · PDU r01-k01-b"), QStringLiteral("cooling unit r01-crah1"),
                QStringLiteral("leaf su01-l5 port 1, rail 5") }));
        QCOMPARE(Topology::linesByCause(topology->nodeDomainNames(0)),
            (QStringList { QStringLiteral("PDU r01-k01-a · PDU r01-k01-b"), QStringLiteral("cooling unit r01-crah1"),
                QStringLiteral("scalable unit su01") }));
        // The 4th and 8th nodes of a rack are corded to one PDU alone (side a, then b): it stands for the rack's two.
        QCOMPARE(Topology::linesByCause(topology->nodeDomainNames(3)),
            (QStringList { QStringLiteral("PDU r01-k01-a"), QStringLiteral("cooling unit r01-crah1"),
                QStringLiteral("scalable unit su01") }));
        QCOMPARE(Topology::linesByCause(topology->nodeDomainNames(7)),
            (QStringList { QStringLiteral("PDU r01-k01-b"), QStringLiteral("cooling unit r01-crah1"),
                QStringLiteral("scalable unit su01") }));
        QVERIFY(topology->nodeDomainNames(uint32_t(topology->nodes.size())).empty());
    }

    void handMadeTable()
    {
        QString error;
        const auto topology = decodeTopology(handMade(), &error);
        QVERIFY2(topology, qPrintable(error));
        QCOMPARE(topology->domains.size(), size_t { 7 });
        QCOMPARE(topology->domains[1].parent, 0);
        QCOMPARE(topology->domains[0].parent, -1);
        QCOMPARE(topology->domains[4].rail, 2);
        QCOMPARE(topology->domains[2].rail, -1);
        // A kind from a newer backend is kept, named "domain", and its name made one line.
        QCOMPARE(topology->domains[5].kind, DomainKind::Count);
        QCOMPARE(topology->domainName(5), QStringLiteral("domain future thing"));
        QCOMPARE(topology->domainName(7), QString());
        QCOMPARE(topology->domainLine(0),
            QStringLiteral("PDU r01-k01-a · domain future thing · leaf su01-l2 port 17, rail 2"));
        QCOMPARE(topology->domainLine(3), QStringLiteral("PDU r01-k01-a · domain future thing"));
        // A kind not known has no cause: a line of its own.
        QCOMPARE(Topology::linesByCause(topology->domainNames(0)),
            (QStringList { QStringLiteral("PDU r01-k01-a"), QStringLiteral("domain future thing"),
                QStringLiteral("leaf su01-l2 port 17, rail 2") }));
        QCOMPARE(topology->gpuLinks[3].leaf, Topology::GpuLink::none);
        // Memberships first, then their parents.
        QCOMPARE(topology->domainsOfGpu(0), (std::vector<uint32_t> { 4, 2, 5, 6, 3, 1, 0 }));
        QCOMPARE(topology->domainsOfGpu(3), (std::vector<uint32_t> { 2, 5, 6, 1, 0 }));
        // A domain's GPUs, its children's included.
        using Runs = std::vector<std::pair<uint32_t, uint32_t>>;
        QCOMPARE(topology->gpuRunsOfDomain(0), (Runs { { 0, 4 } }));
        QCOMPARE(topology->gpuRunsOfDomain(3), (Runs { { 0, 3 } }));
        QCOMPARE(topology->gpuRunsOfDomain(4), (Runs { { 0, 3 } }));
        QCOMPARE(topology->gpuRunsOfDomain(7), Runs {});
    }

    // A domain's GPU runs agree with every GPU's list of domains (which holds its domains' parents): GPU g is in
    // gpuRunsOfDomain(d) exactly when d is in domainsOfGpu(g). Ascending runs that do not touch.
    void domainRunsAgreeWithEveryGpusDomains()
    {
        const auto shape = be::FleetShape::forGpuCount(2304, 1, be::Hardware::Gb200Nvl72);
        QString error;
        const auto topology = decodeTopology(be::encodeTopology(shape, generation), &error);
        QVERIFY2(topology, qPrintable(error));
        const uint32_t count = static_cast<uint32_t>(topology->domains.size());
        std::vector<std::vector<uint8_t>> in(count, std::vector<uint8_t>(topology->gpuCount, 0));
        for (uint32_t g = 0; g < topology->gpuCount; ++g) {
            for (const uint32_t d : topology->domainsOfGpu(g)) {
                in[d][g] = 1;
            }
        }
        for (uint32_t d = 0; d < count; ++d) {
            std::vector<uint8_t> runs(topology->gpuCount, 0);
            uint64_t end = 0;
            bool first = true;
            for (const auto &[from, n] : topology->gpuRunsOfDomain(d)) {
                QVERIFY(n > 0);
                QVERIFY(first || from > end);
                first = false;
                end = uint64_t { from } + n;
                QVERIFY(end <= topology->gpuCount);
                std::fill_n(runs.begin() + from, n, 1);
            }
            QVERIFY2(runs == in[d], qPrintable(topology->domainName(d)));
        }
    }

    // Every way a table, a membership or a link can be wrong: refused, with the reason.
    void badDomainsAreRefused_data()
    {
        using Edit = std::function<void(std::vector<pb::TopologyPart> &)>;
        QTest::addColumn<Edit>("edit");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("parent after") << Edit([](auto &p) { p[0].mutable_domains(1)->set_parent(4); })
                                      << QStringLiteral("domain 1 ('r01-bus-a') names domain 4 as its parent");
        QTest::newRow("parent itself") << Edit([](auto &p) { p[0].mutable_domains(1)->set_parent(1); })
                                       << QStringLiteral("not one before it");
        QTest::newRow("parent past the table")
            << Edit([](auto &p) { p[0].mutable_domains(6)->set_parent(0xFFFFFFFFU); })
            << QStringLiteral("names domain 4294967295 as its parent");
        QTest::newRow("rail too high") << Edit([](auto &p) { p[0].mutable_domains(4)->set_rail(maxRail); })
                                       << QStringLiteral("is on rail 4096 (at most 4095)");
        // A name is quoted, never filled in: "%3" in it stays as it is.
        QTest::newRow("a name with a place to fill") << Edit([](auto &p) {
            p[0].mutable_domains(2)->set_name("pdu-%3");
            p[0].mutable_domains(2)->set_parent(2);
        }) << QStringLiteral("domain 2 ('pdu-%3') names domain 2 as its parent");
        QTest::newRow("rack's domain past the table") << Edit([](auto &p) { p[0].mutable_racks(0)->add_domains(7); })
                                                      << QStringLiteral("rack 0 ('r01-k01') lists domain 7 of a table "
                                                                        "of 7");
        QTest::newRow("rack's many domains") << Edit([](auto &p) {
            for (int i = 0; i < maxMemberships; ++i) {
                p[0].mutable_racks(0)->add_domains(0);
            }
        }) << QStringLiteral("lists 66 domains (at most 64)");
        QTest::newRow("node's domain past the table")
            << Edit([](auto &p) { p[0].mutable_nodes(0)->set_domains(0, 1000); })
            << QStringLiteral("node 0 ('r01-k01-n01') lists domain 1000 of a table of 7");
        QTest::newRow("leaf past the table") << Edit([](auto &p) { p[0].mutable_nodes(0)->set_gpu_leaves(1, 7); })
                                             << QStringLiteral("links GPU 1 to leaf 7 port 17");
        QTest::newRow("port too high") << Edit([](auto &p) { p[0].mutable_nodes(0)->set_gpu_ports(2, 4097); })
                                       << QStringLiteral("links GPU 2 to leaf 4 port 4097");
        QTest::newRow("fewer leaves than GPUs") << Edit([](auto &p) {
            p[0].mutable_nodes(0)->mutable_gpu_leaves()->RemoveLast();
            p[0].mutable_nodes(0)->mutable_gpu_ports()->RemoveLast();
        }) << QStringLiteral("has 3 leaf links and 3 ports for 4 GPUs");
        QTest::newRow("ports without leaves") << Edit([](auto &p) { p[0].mutable_nodes(0)->clear_gpu_leaves(); })
                                              << QStringLiteral("has 0 leaf links and 4 ports for 4 GPUs");
        QTest::newRow("more domains announced") << Edit([](auto &p) { p[0].set_domain_count(8); })
                                                << QStringLiteral("parts hold 7 domains, its header says 8");
        QTest::newRow("fewer domains announced") << Edit([](auto &p) { p[0].set_domain_count(6); })
                                                 << QStringLiteral("parts hold 7 domains, its header says 6");
        QTest::newRow("a huge table announced") << Edit([](auto &p) { p[0].set_domain_count(0xFFFFFFFFU); })
                                                << QStringLiteral("claims 4294967295 domains for 1 nodes (at most "
                                                                  "65540)");
        QTest::newRow("memberships with no table") << Edit([](auto &p) {
            p[0].clear_domains();
            p[0].set_domain_count(0);
        }) << QStringLiteral("lists domain 2 of a table of 0");
    }
    void badDomainsAreRefused()
    {
        QFETCH(std::function<void(std::vector<pb::TopologyPart> &)>, edit);
        QFETCH(QString, mentions);
        auto parts = handMade();
        edit(parts);
        QString error;
        QVERIFY(!decodeTopology(parts, &error));
        QVERIFY2(error.contains(mentions), qPrintable(error));
    }

    // A stream's domains are bounded as they come: the header's count by what its GPUs can need, the parts by the
    // header's count; and a topology that lists no domain at all is a fleet without them.
    void domainStreamsAreBoundedByTheirHeader()
    {
        const auto shape = be::FleetShape::forGpuCount(1024, 1, be::Hardware::HgxH100);
        const auto parts = be::encodeTopology(shape, generation, 16);
        QVERIFY(parts.size() >= 8);
        const auto refusedAt = [](const std::vector<pb::TopologyPart> &stream, QString *error) -> int {
            TopologyCollector collector;
            for (size_t i = 0; i < stream.size(); ++i) {
                auto part = stream[i];
                if (!collector.add(std::move(part), error)) {
                    return static_cast<int>(i);
                }
            }
            return collector.finish(error) ? -1 : static_cast<int>(stream.size());
        };
        QString error;
        QCOMPARE(refusedAt(parts, &error), -1);
        auto huge = parts;
        huge[0].set_domain_count(static_cast<uint32_t>(maxDomains(1024) + 1));
        QCOMPARE(refusedAt(huge, &error), 0);
        QVERIFY2(error.contains(QStringLiteral("domains for 1024 GPUs (at most 69632)")), qPrintable(error));
        // A later part with more domains than the header announced: cut there.
        auto more = parts;
        for (int i = 0; i < 100; ++i) {
            *more[5].add_domains() = parts[0].domains(0);
        }
        QCOMPARE(refusedAt(more, &error), 5);
        QVERIFY2(error.contains(
                     QStringLiteral("more than the %1 domains its header announced").arg(parts[0].domain_count())),
            qPrintable(error));
        // More leaves than a node has GPUs: cut at its part.
        auto leaves = parts;
        leaves[3].mutable_nodes(0)->add_gpu_leaves(0);
        QCOMPARE(refusedAt(leaves, &error), 3);
        QVERIFY2(error.contains(QStringLiteral("more GPU identities or links")), qPrintable(error));
        // Without domains (a real fleet whose file names none): no table, no links, nothing to say.
        auto none = parts;
        for (auto &part : none) {
            part.clear_domains();
            part.set_domain_count(0);
            for (auto &rack : *part.mutable_racks()) {
                rack.clear_domains();
            }
            for (auto &node : *part.mutable_nodes()) {
                node.clear_domains();
                node.clear_gpu_leaves();
                node.clear_gpu_ports();
            }
        }
        TopologyCollector collector;
        for (auto part : none) {
            QVERIFY2(collector.add(std::move(part), &error), qPrintable(error));
        }
        const auto topology = collector.finish(&error);
        QVERIFY2(topology, qPrintable(error));
        QVERIFY(topology->domains.empty());
        QVERIFY(topology->gpuLinks.empty());
        QCOMPARE(topology->domainLine(0), QString());
        QVERIFY(topology->domainsOfGpu(0).empty());
        QVERIFY(topology->gpuRunsOfDomain(0).empty());
    }
};

QTEST_GUILESS_MAIN(TestTopologyDecode)
#include "tst_topologydecode.moc"
