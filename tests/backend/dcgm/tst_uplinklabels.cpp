// SPDX-License-Identifier: Apache-2.0
// A GPU's leaf switch and port from infiniband_exporter's infiniband_hca_uplink_info labels: one series read (and
// every bad label refused with its reason), then a topology's links from many (the node from hca's first word, the GPU
// from its NIC, new leaves bounded and parented, the topology file winning, one link per NIC, the same links in any
// order, each refusal said once).
#include "dcgm/prometheustopology.h"
#include "dcgm/uplinklabels.h"
#include "formats/topologyfile.h"

#include <QTest>

#include <algorithm>
#include <random>

using namespace fleetscope::backend;

namespace {

UplinkLabels::Series uplink(
    std::string hca, std::string leaf, std::string leafPort, std::string port = "1", std::string type = "SW")
{
    return { std::move(hca), std::move(port), std::move(leaf), std::move(leafPort), std::move(type) };
}

// A layout from dcgm-exporter's labels alone: hosts node1.., each with gpus GPUs labelled 0..
PrometheusTopology labelledFleet(int hosts, int gpus)
{
    std::vector<PromSample> series;
    for (int h = 1; h <= hosts; ++h) {
        for (int g = 0; g < gpus; ++g) {
            PromSample s;
            s.hostname = "node" + std::to_string(h);
            s.gpu = std::to_string(g);
            series.push_back(s);
        }
    }
    PrometheusTopology topology;
    std::string error;
    if (!PrometheusTopology::fromLabels(series, &topology, &error)) {
        qFatal("%s", error.c_str());
    }
    return topology;
}

// The links the labels gave, as "leaf:port" per GPU ("-" for none).
std::vector<std::string> linksOf(const PrometheusTopology &topology)
{
    const auto &shape = topology.shape();
    std::vector<std::string> out;
    for (uint32_t g = 0; g < shape.gpuCount; ++g) {
        if (g >= shape.gpuLinks.size() || shape.gpuLinks[g].leaf == GpuLink::none) {
            out.emplace_back("-");
        } else {
            out.push_back(shape.domains.at(shape.gpuLinks[g].leaf).name + ':' + std::to_string(shape.gpuLinks[g].port));
        }
    }
    return out;
}

bool logSays(const std::vector<std::string> &lines, const std::string &words)
{
    return std::any_of(
        lines.begin(), lines.end(), [&](const std::string &l) { return l.find(words) != std::string::npos; });
}

QString joined(const std::vector<std::string> &lines)
{
    QString out;
    for (const auto &l : lines) {
        out += QString::fromStdString(l) + QLatin1Char('\n');
    }
    return out;
}

} // namespace

class TestUplinkLabels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The exporter's own series (collectors/hca_test.go's shape, with rdma-ndd's "<host> <device>" description).
    void readsOneUplink()
    {
        UplinkLabels::Uplink u;
        const auto plain = uplink("node01 mlx5_3", "ib-i1l1s01", "11");
        QCOMPARE(UplinkLabels::read(plain, &u), UplinkLabels::Refusal::None);
        QCOMPARE(u.host, std::string_view("node01"));
        QCOMPARE(u.nic, std::string_view("mlx5_3"));
        QCOMPARE(u.leaf, std::string_view("ib-i1l1s01"));
        QCOMPARE(u.port, 11U);
        QCOMPARE(u.hcaPort, 1U);
        // A switch described with spaces, no uplink_type, the HCA's second port, the highest port.
        const auto spaced = uplink("n2 mlx5_0", "MF0;leaf 7:MQM9700/U1", "65535", "2", "");
        QCOMPARE(UplinkLabels::read(spaced, &u), UplinkLabels::Refusal::None);
        QCOMPARE(u.leaf, std::string_view("MF0;leaf 7:MQM9700/U1"));
        QCOMPARE(u.port, 65535U);
        QCOMPARE(u.hcaPort, 2U);
        // Labels as a Prometheus answer's PromSample holds them.
        PromSample s;
        s.hca = "n3 mlx5_1";
        s.hcaPort = "1";
        s.uplink = "su01-l1";
        s.uplinkPort = "4";
        s.uplinkType = "SW";
        const auto fromSample = UplinkLabels::Series::of(s);
        QCOMPARE(UplinkLabels::read(fromSample, &u), UplinkLabels::Refusal::None);
        QCOMPARE(u.host, std::string_view("n3"));
        QCOMPARE(u.port, 4U);
        QVERIFY(UplinkLabels::query().find("infiniband_hca_uplink_info") != std::string::npos);
    }

    void refusesBadLabels_data()
    {
        QTest::addColumn<QByteArray>("hca");
        QTest::addColumn<QByteArray>("leaf");
        QTest::addColumn<QByteArray>("leafPort");
        QTest::addColumn<QByteArray>("hcaPort");
        QTest::addColumn<QByteArray>("type");
        QTest::addColumn<int>("refusal");
        using R = UplinkLabels::Refusal;
        const QByteArray long65(65, 'x');
        const QByteArray host64 = QByteArray(59, 'h') + " mlx5";
        QTest::newRow("no hca") << QByteArray() << QByteArray("l1") << QByteArray("1") << QByteArray("1")
                                << QByteArray("SW") << int(R::NoHca);
        QTest::newRow("hca without a NIC") << QByteArray("p0001") << QByteArray("l1") << QByteArray("1")
                                           << QByteArray("1") << QByteArray("SW") << int(R::NoNic);
        QTest::newRow("hca overlong") << QByteArray(host64 + "_0") << QByteArray("l1") << QByteArray("1")
                                      << QByteArray("1") << QByteArray("SW") << int(R::BadHca);
        QTest::newRow("hca of three words") << QByteArray("node01 mlx5_0 HCA-1") << QByteArray("l1") << QByteArray("1")
                                            << QByteArray("1") << QByteArray("SW") << int(R::BadHca);
        QTest::newRow("hca with two spaces") << QByteArray("node01  mlx5_0") << QByteArray("l1") << QByteArray("1")
                                             << QByteArray("1") << QByteArray("SW") << int(R::BadHca);
        QTest::newRow("hca with a newline") << QByteArray("node01\n mlx5_0") << QByteArray("l1") << QByteArray("1")
                                            << QByteArray("1") << QByteArray("SW") << int(R::BadHca);
        QTest::newRow("no uplink") << QByteArray("n1 mlx5_0") << QByteArray() << QByteArray("1") << QByteArray("1")
                                   << QByteArray("SW") << int(R::NoUplink);
        QTest::newRow("uplink overlong") << QByteArray("n1 mlx5_0") << long65 << QByteArray("1") << QByteArray("1")
                                         << QByteArray("SW") << int(R::BadUplink);
        QTest::newRow("uplink with a control character")
            << QByteArray("n1 mlx5_0") << QByteArray("leaf\x1b[2J") << QByteArray("1") << QByteArray("1")
            << QByteArray("SW") << int(R::BadUplink);
        QTest::newRow("uplink of spaces") << QByteArray("n1 mlx5_0") << QByteArray("   ") << QByteArray("1")
                                          << QByteArray("1") << QByteArray("SW") << int(R::BadUplink);
        QTest::newRow("cabled to an HCA") << QByteArray("n1 mlx5_0") << QByteArray("n2 mlx5_0") << QByteArray("1")
                                          << QByteArray("1") << QByteArray("CA") << int(R::NotASwitch);
        for (const char *bad : { "", "0", "65536", "4294967297", "99999999999999999999", "-1", "+1", "1x", " 1", "0x1",
                 "1.0", "00001x" }) {
            QTest::addRow("uplink_port '%s'", bad) << QByteArray("n1 mlx5_0") << QByteArray("l1") << QByteArray(bad)
                                                   << QByteArray("1") << QByteArray("SW") << int(R::BadPort);
        }
        QTest::newRow("HCA port 0") << QByteArray("n1 mlx5_0") << QByteArray("l1") << QByteArray("1") << QByteArray("0")
                                    << QByteArray("SW") << int(R::BadPort);
        QTest::newRow("HCA port not a number") << QByteArray("n1 mlx5_0") << QByteArray("l1") << QByteArray("1")
                                               << QByteArray("one") << QByteArray("SW") << int(R::BadPort);
        // At the bounds, accepted: a 64-byte hca and uplink, port 1 and 65535 (the refusals above are not every
        // refusal).
        QTest::newRow("64 bytes each") << QByteArray(host64) << QByteArray(64, 'l') << QByteArray("65535")
                                       << QByteArray("1") << QByteArray("SW") << int(R::None);
    }

    void refusesBadLabels()
    {
        QFETCH(QByteArray, hca);
        QFETCH(QByteArray, leaf);
        QFETCH(QByteArray, leafPort);
        QFETCH(QByteArray, hcaPort);
        QFETCH(QByteArray, type);
        QFETCH(int, refusal);
        UplinkLabels::Uplink u;
        const auto got = UplinkLabels::read(uplink(hca.toStdString(), leaf.toStdString(), leafPort.toStdString(),
                                                hcaPort.toStdString(), type.toStdString()),
            &u);
        QVERIFY2(static_cast<int>(got) == refusal, UplinkLabels::why(got));
    }

    // No topology file: every GPU's leaf and port from the labels, the leaves added as LeafSwitch domains of the
    // NIC's rail and no parent; the generation changes with them, and is the same for the same series in any order.
    void linksFromLabelsAlone()
    {
        auto topology = labelledFleet(2, 4);
        const uint64_t bare = topology.generation();
        std::vector<UplinkLabels::Series> series;
        for (int h = 1; h <= 2; ++h) {
            for (int k = 0; k < 4; ++k) {
                series.push_back(uplink("node" + std::to_string(h) + " mlx5_" + std::to_string(k),
                    "su1-l" + std::to_string(k), std::to_string(h)));
            }
        }
        const auto lines = topology.applyUplinks(series);
        QVERIFY2(logSays(lines, "8 GPUs' leaf switch and port") && logSays(lines, "4 leaf switches"),
            qPrintable(joined(lines)));
        QCOMPARE(lines.size(), size_t { 1 }); // nothing refused
        const std::vector<std::string> expected { "su1-l0:1", "su1-l1:1", "su1-l2:1", "su1-l3:1", "su1-l0:2",
            "su1-l1:2", "su1-l2:2", "su1-l3:2" };
        QCOMPARE(linksOf(topology), expected);
        const auto &domains = topology.shape().domains;
        QCOMPARE(domains.size(), size_t { 4 });
        for (int32_t k = 0; k < 4; ++k) {
            QCOMPARE(domains[static_cast<size_t>(k)].kind, DomainKind::LeafSwitch);
            QCOMPARE(domains[static_cast<size_t>(k)].rail, k);
            QCOMPARE(domains[static_cast<size_t>(k)].parent, -1);
        }
        QVERIFY(topology.generation() != bare);

        std::mt19937 random(7);
        for (int round = 0; round < 5; ++round) {
            auto shuffled = series;
            std::shuffle(shuffled.begin(), shuffled.end(), random);
            auto again = labelledFleet(2, 4);
            again.applyUplinks(shuffled);
            QCOMPARE(linksOf(again), expected);
            QCOMPARE(again.generation(), topology.generation());
        }
    }

    // Series that name no GPU of the topology are ignored and said once per reason, with the first as an example;
    // a NIC's second uplink is refused, the same uplink twice is one.
    void ignoresWhatNamesNoGpu()
    {
        auto topology = labelledFleet(2, 4);
        std::vector<UplinkLabels::Series> series {
            uplink("node1 mlx5_0", "l0", "1"), uplink("node1 mlx5_0", "l0", "1"), // the same, from a second exporter
            uplink("node1 mlx5_1", "l1", "1"),
            uplink("node1 mlx5_1", "l9", "7", "2"), // the NIC's second port: one leaf per NIC
            uplink("storage1 mlx5_0", "l0", "30"), // not a node of the topology
            uplink("storage2 mlx5_0", "l0", "31"), uplink("node2 mlx5_4", "l4", "2"), // past the node's 4 GPUs
            uplink("node2 mlx5_bond_0", "l0", "2"), // not a rail NIC
            uplink("node2 mlx5_99999999999", "l0", "2"), uplink("node2 mlx5_2", "l2", "0"), // port 0
            uplink("node2", "l2", "2"), // no NIC
        };
        const auto lines = topology.applyUplinks(series);
        const QString log = joined(lines);
        QCOMPARE(linksOf(topology), (std::vector<std::string> { "l0:1", "l1:1", "-", "-", "-", "-", "-", "-" }));
        QVERIFY2(logSays(lines, "2 GPUs' leaf switch and port"), qPrintable(log));
        QVERIFY2(logSays(lines, "2 infiniband_hca_uplink_info series ignored: hca's host is not a node")
                && logSays(lines, "the first: hca 'storage1 mlx5_0'"),
            qPrintable(log));
        QVERIFY2(logSays(lines, "3 infiniband_hca_uplink_info series ignored: hca's device is no GPU's rail NIC"),
            qPrintable(log));
        QVERIFY2(logSays(lines,
                     "1 infiniband_hca_uplink_info series ignored: its NIC has an uplink on a lower HCA "
                     "port"),
            qPrintable(log));
        QVERIFY2(logSays(lines, "1 infiniband_hca_uplink_info series ignored: uplink_port or port"), qPrintable(log));
        QVERIFY2(logSays(lines, "1 infiniband_hca_uplink_info series ignored: hca names no NIC"), qPrintable(log));
        QCOMPARE(lines.size(), size_t { 6 }); // one line for the links, one per reason

        // Nothing usable: no links, no domains, the generation as it was, and the refusal said.
        auto untouched = labelledFleet(1, 2);
        const uint64_t generation = untouched.generation();
        const auto refused = untouched.applyUplinks(std::vector<UplinkLabels::Series> { uplink("x y", "l", "1") });
        QVERIFY(untouched.shape().gpuLinks.empty() && untouched.shape().domains.empty());
        QCOMPARE(untouched.generation(), generation);
        QCOMPARE(refused.size(), size_t { 1 });
    }

    // Labels may add at most one leaf per node (or per rail, in a fleet of fewer nodes than rails); past that each
    // is refused, said once.
    void newLeavesAreBounded()
    {
        auto topology = labelledFleet(3, 2);
        std::vector<UplinkLabels::Series> series;
        for (int h = 1; h <= 3; ++h) {
            for (int k = 0; k < 2; ++k) {
                series.push_back(uplink("node" + std::to_string(h) + " mlx5_" + std::to_string(k),
                    "leaf-" + std::to_string(h) + std::to_string(k), "1"));
            }
        }
        const auto lines = topology.applyUplinks(series);
        QCOMPARE(topology.shape().domains.size(), size_t { 3 });
        QCOMPARE(
            linksOf(topology), (std::vector<std::string> { "leaf-10:1", "leaf-11:1", "leaf-20:1", "-", "-", "-" }));
        QVERIFY2(logSays(lines, "3 infiniband_hca_uplink_info series ignored: uplink names a new leaf past the bound"),
            qPrintable(joined(lines)));
    }

    // With a topology file: its links win (a disagreeing label is said), a GPU it leaves out gets the labels' link,
    // a leaf it lists is used rather than added, a new leaf's parent is the file's spine plane of its rail, a label
    // naming another kind of domain is refused, and the file's fabric.nics names the NICs.
    void theFileWins()
    {
        const std::string json = R"({
  "site": "t",
  "halls": [{ "name": "h", "rows": [{ "name": "r1", "racks": [{ "name": "r1-k1", "power": ["r1-k1-a"],
    "hosts": [{ "hostname": "a", "gpus": 2, "links": [{ "leaf": "su1-l0", "port": 1 }] },
              { "hostname": "b", "gpus": 2 }] }] }] }],
  "domains": [
    { "kind": "pdu", "name": "r1-k1-a" },
    { "kind": "spine", "name": "spine-0", "rail": 0 },
    { "kind": "spine", "name": "spine-1", "rail": 1 },
    { "kind": "leaf", "name": "su1-l0", "parent": "spine-0", "rail": 0 }
  ],
  "fabric": { "nics": ["mlx5_4", "mlx5_7"] }
})";
        TopologyFile file;
        std::string error;
        QVERIFY2(TopologyFile::parse(json, &file, &error), error.c_str());
        auto topology = PrometheusTopology::fromFile(file);
        const uint64_t fromFile = topology.generation();
        const size_t fileDomains = topology.shape().domains.size();
        QCOMPARE(linksOf(topology), (std::vector<std::string> { "su1-l0:1", "-", "-", "-" }));

        const auto lines = topology.applyUplinks(std::vector<UplinkLabels::Series> {
            uplink("a mlx5_4", "other-leaf", "9"), // the file cables it to su1-l0 port 1
            uplink("a mlx5_7", "su1-l1", "1"), // new, rail 1: under spine-1
            uplink("b mlx5_4", "su1-l0", "2"), // the file's leaf
            uplink("b mlx5_7", "r1-k1-a", "2"), // a PDU
            uplink("b mlx5_0", "su1-l0", "3"), // not one of fabric.nics
        });
        const QString log = joined(lines);
        QCOMPARE(linksOf(topology), (std::vector<std::string> { "su1-l0:1", "su1-l1:1", "su1-l0:2", "-" }));
        const auto &domains = topology.shape().domains;
        QCOMPARE(domains.size(), fileDomains + 1);
        QCOMPARE(domains.back().name, std::string("su1-l1"));
        QCOMPARE(domains.back().kind, DomainKind::LeafSwitch);
        QCOMPARE(domains.back().rail, 1);
        QVERIFY(domains.back().parent >= 0);
        QCOMPARE(domains.at(static_cast<size_t>(domains.back().parent)).name, std::string("spine-1"));
        QVERIFY2(logSays(lines, "the topology file cables its GPU otherwise") && logSays(lines, "'a mlx5_4'"),
            qPrintable(log));
        QVERIFY2(logSays(lines, "names a domain of the topology that is not a leaf switch"), qPrintable(log));
        QVERIFY2(logSays(lines, "hca's device is no GPU's rail NIC"), qPrintable(log));
        QVERIFY(topology.generation() != fromFile);
        // The NIC-to-GPU rule is the rail series' (indexOfNic), so a NIC's counters and its link name one GPU.
        QCOMPARE(topology.indexOfNic(0, "mlx5_7"), int64_t { 1 });
    }

    // A real fleet's topology file says which PDUs a host is corded to: the shape's cords follow it (the incident
    // folder tells a tripped PDU from its twin by them), the others corded to every PDU of their rack.
    void theFilesCordsReachTheShape()
    {
        const std::string json = R"({
  "site": "t",
  "halls": [{ "name": "h", "rows": [{ "name": "r1", "racks": [{ "name": "r1-k1", "power": ["r1-k1-a", "r1-k1-b"],
    "hosts": [{ "hostname": "a", "gpus": 2 }, { "hostname": "b", "gpus": 2, "power": ["r1-k1-b"] }] }] }] }],
  "domains": [ { "kind": "pdu", "name": "r1-k1-a" }, { "kind": "pdu", "name": "r1-k1-b" } ]
})";
        TopologyFile file;
        std::string error;
        QVERIFY2(TopologyFile::parse(json, &file, &error), error.c_str());
        const auto topology = PrometheusTopology::fromFile(file);
        const auto &shape = topology.shape();
        const auto names = [&shape](const std::vector<uint32_t> &cords) {
            std::vector<std::string> out;
            for (const uint32_t d : cords) {
                out.push_back(shape.domains.at(d).name);
            }
            return out;
        };
        QCOMPARE(names(shape.cordsOf(0)), (std::vector<std::string> { "r1-k1-a", "r1-k1-b" }));
        QCOMPARE(names(shape.cordsOf(1)), (std::vector<std::string> { "r1-k1-b" }));
    }
};

QTEST_GUILESS_MAIN(TestUplinkLabels)
#include "tst_uplinklabels.moc"
