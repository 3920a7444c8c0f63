// SPDX-License-Identifier: Apache-2.0
// Alertmanager's alerts placed on the fleet by their labels: each label form on simulated HGX and GB200 NVL72 fleets
// and on a fleet from a topology file, hostile labels, and the cost at 1,048,576 GPUs.
#include "alerting/alertplacement.h"
#include "dcgm/prometheustopology.h"
#include "formats/topologyfile.h"

#include <QElapsedTimer>
#include <QTest>

#include <algorithm>
#include <map>

using namespace fleetscope::backend;
using Runs = std::vector<std::pair<uint32_t, uint32_t>>;

namespace {
AlertmanagerAlert alertWith(std::vector<AlertLabel> labels)
{
    AlertmanagerAlert alert;
    alert.labels = std::move(labels);
    return alert;
}

AlertmanagerAlert placed(const AlertPlacement &placement, std::vector<AlertLabel> labels)
{
    auto alert = alertWith(std::move(labels));
    placement.place(&alert);
    return alert;
}

uint32_t domainNamed(const FleetShape &shape, const std::string &name)
{
    for (uint32_t d = 0; d < shape.domains.size(); ++d) {
        if (shape.domains[d].name == name) {
            return d;
        }
    }
    return UINT32_MAX;
}

// The GPUs a domain serves as FleetShape::domainsOfGpu says, as runs.
std::map<uint32_t, Runs> runsByMembership(const FleetShape &shape)
{
    std::map<uint32_t, Runs> out;
    for (uint32_t g = 0; g < shape.gpuCount; ++g) {
        for (const uint32_t d : shape.domainsOfGpu(g)) {
            auto &runs = out[d];
            if (!runs.empty() && runs.back().first + runs.back().second == g) {
                ++runs.back().second;
            } else {
                runs.emplace_back(g, 1);
            }
        }
    }
    return out;
}

uint32_t countOf(const Runs &runs)
{
    uint32_t n = 0;
    for (const auto &r : runs) {
        n += r.second;
    }
    return n;
}

bool fleetWide(const AlertmanagerAlert &a)
{
    return a.gpuCount == 0 && a.gpuRuns.empty() && a.node == -1 && a.domain == -1 && a.placedBy.empty();
}

const char *fileWithFqdns = R"({
  "site": "dc-test",
  "gpusPerNode": 8,
  "halls": [ { "name": "hall-a", "rows": [
    { "name": "row-1", "racks": [
      { "name": "rack-1", "power": ["rack-1-a", "rack-1-b"], "cooling": "crah-1",
        "hosts": ["n01.a.example", "n01.b.example", "gpu-7.dc.example", { "hostname": "small", "gpus": 2 }] },
      { "name": "rack-2", "power": ["rack-2-a"], "cooling": "crah-1", "hosts": ["n02.a.example"] } ] } ] } ],
  "domains": [
    { "kind": "feed", "name": "feed-a" },
    { "kind": "busway", "name": "bus-a", "parent": "feed-a" },
    { "kind": "pdu", "name": "rack-1-a", "parent": "bus-a" },
    { "kind": "pdu", "name": "rack-1-b", "parent": "bus-a" },
    { "kind": "pdu", "name": "rack-2-a", "parent": "bus-a" },
    { "kind": "cooling-unit", "name": "crah-1" }
  ]
})";
} // namespace

class TestAlertPlacement : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void hostAndGpuOnHgx()
    {
        const auto shape = FleetShape::forGpuCount(4096);
        const AlertPlacement placement(shape);
        const auto &n5 = shape.nodes[5];

        auto a = placed(placement, { { "Hostname", n5.hostname }, { "gpu", "3" } });
        QCOMPARE(a.gpuCount, 1U);
        QCOMPARE(a.gpuRuns, (Runs { { n5.firstGpu + 3, 1 } }));
        QCOMPARE(a.node, int64_t(5));
        QCOMPARE(a.domain, int64_t(-1));
        QCOMPARE(QString::fromStdString(a.placedBy),
            QStringLiteral("Hostname=%1, gpu=3").arg(QString::fromStdString(n5.hostname)));

        // Each host label, any case, a fully qualified name, instance's host part.
        for (const char *name : { "Hostname", "hostname", "host", "node" }) {
            a = placed(placement, { { name, QString::fromStdString(n5.hostname).toUpper().toStdString() } });
            QCOMPARE(a.node, int64_t(5));
            QCOMPARE(a.gpuRuns, (Runs { { n5.firstGpu, 8 } }));
        }
        for (const std::string &instance : { n5.hostname + ":9400", n5.hostname + ".dc1.example.com:9400",
                 "http://" + n5.hostname + ":9400/metrics", n5.hostname }) {
            a = placed(placement, { { "instance", instance } });
            QVERIFY2(a.node == 5, instance.c_str());
            QCOMPARE(
                QString::fromStdString(a.placedBy), QStringLiteral("instance=") + QString::fromStdString(instance));
        }
        QCOMPARE(AlertPlacement::hostOfInstance("[fe80::1]:9400"), std::string_view("fe80::1"));
        QCOMPARE(AlertPlacement::hostOfInstance("fe80::1"), std::string_view("fe80::1"));
        QCOMPARE(AlertPlacement::hostOfInstance("10.0.0.5:9400"), std::string_view("10.0.0.5"));
        QVERIFY(fleetWide(placed(placement, { { "instance", "10.0.0.5:9400" } })));
        QVERIFY(fleetWide(placed(placement, { { "instance", "[fe80::1]:9400" } })));
        // A host label wins over instance, which is often the exporter's address.
        a = placed(placement, { { "instance", shape.nodes[9].hostname + ":9400" }, { "Hostname", n5.hostname } });
        QCOMPARE(a.node, int64_t(5));

        // On the node: UUID, then the PCI bus id; a UUID alone places its GPU.
        a = placed(placement, { { "Hostname", n5.hostname }, { "UUID", shape.gpuUuid(n5.firstGpu + 6) } });
        QCOMPARE(a.gpuRuns, (Runs { { n5.firstGpu + 6, 1 } }));
        QCOMPARE(a.placedBy, "Hostname=" + n5.hostname + ", UUID=" + shape.gpuUuid(n5.firstGpu + 6));
        a = placed(placement, { { "uuid", QString::fromStdString(shape.gpuUuid(4000)).toUpper().toStdString() } });
        QCOMPARE(a.gpuRuns, (Runs { { 4000, 1 } }));
        QCOMPARE(a.node, int64_t(shape.nodeOfGpu[4000]));
        for (uint32_t local = 0; local < 8; ++local) {
            a = placed(
                placement, { { "Hostname", n5.hostname }, { "pci_bus_id", FleetShape::simulatedPciBusId(local) } });
            QCOMPARE(a.gpuRuns, (Runs { { n5.firstGpu + local, 1 } }));
        }
        // The kernel's four-digit domain, lower case.
        a = placed(placement, { { "Hostname", n5.hostname }, { "pci_bus_id", "0000:5d:00.0" } });
        QCOMPARE(a.gpuRuns, (Runs { { n5.firstGpu + 3, 1 } }));
        // The gpu label before the others; a UUID of another node's GPU does not move it there.
        a = placed(placement, { { "Hostname", n5.hostname }, { "UUID", shape.gpuUuid(1) }, { "gpu", "2" } });
        QCOMPARE(a.gpuRuns, (Runs { { n5.firstGpu + 2, 1 } }));
        a = placed(placement, { { "Hostname", n5.hostname }, { "UUID", shape.gpuUuid(1) } });
        QCOMPARE(a.gpuRuns, (Runs { { n5.firstGpu, 8 } }));
        QCOMPARE(a.placedBy, "Hostname=" + n5.hostname);
        // gpu or a bus id without a host names nothing.
        QVERIFY(fleetWide(placed(placement, { { "gpu", "3" }, { "pci_bus_id", "00000000:18:00.0" } })));
    }

    void racksRowsAndDomainsOnHgx()
    {
        const auto shape = FleetShape::forGpuCount(4096);
        const AlertPlacement placement(shape);
        const auto &rack = shape.racks[3];
        const uint32_t rackFirst = shape.nodes[rack.firstNode].firstGpu;

        auto a = placed(placement, { { "rack", rack.name } });
        QCOMPARE(a.gpuRuns, (Runs { { rackFirst, 64 } }));
        QCOMPARE(a.gpuCount, 64U);
        QCOMPARE(a.node, int64_t(-1));
        QCOMPARE(a.placedBy, "rack=" + rack.name);
        const auto &row = shape.rows[1];
        a = placed(placement, { { "row", row.name } });
        QCOMPARE(a.gpuCount, row.rackCount * 64);
        QCOMPARE(
            a.gpuRuns, (Runs { { shape.nodes[shape.racks[row.firstRack].firstNode].firstGpu, row.rackCount * 64 } }));

        // Every domain by its name, its GPUs those it serves (FleetShape::domainsOfGpu), parents included.
        const auto expected = runsByMembership(shape);
        for (uint32_t d = 0; d < shape.domains.size(); ++d) {
            const auto &domain = shape.domains[d];
            a = placed(placement, { { "domain", domain.name } });
            const auto it = expected.find(d);
            if (it == expected.end()) {
                QVERIFY2(fleetWide(a), domain.name.c_str());
                continue;
            }
            QCOMPARE(a.domain, int64_t(d));
            QCOMPARE(a.gpuCount, countOf(it->second));
            if (it->second.size() <= AlertPlacement::maxRuns) {
                QCOMPARE(a.gpuRuns, it->second);
            } else {
                QCOMPARE(a.gpuRuns.size(), AlertPlacement::maxRuns);
                QVERIFY(std::equal(a.gpuRuns.begin(), a.gpuRuns.end(), it->second.begin()));
            }
        }
        // A leaf: GPU 3 of each of its scalable unit's 32 nodes.
        const uint32_t leaf = domainNamed(shape, "su01-l3");
        a = placed(placement, { { "leaf", "su01-l3" } });
        QCOMPARE(a.domain, int64_t(leaf));
        QCOMPARE(a.gpuCount, 32U);
        QCOMPARE(a.gpuRuns.size(), size_t(32));
        QCOMPARE(a.gpuRuns[1], (std::pair<uint32_t, uint32_t>(8 + 3, 1)));
        QCOMPARE(a.placedBy, std::string("leaf=su01-l3"));
        // Any of the words for a domain; the smallest of what several labels name.
        for (const char *word : { "pdu", "switch", "cooling_unit", "cdu", "domain" }) {
            a = placed(placement, { { word, rack.name + "-b" } });
            QVERIFY2(a.domain == int64_t(domainNamed(shape, rack.name + "-b")), word);
        }
        a = placed(placement, { { "row", row.name }, { "cooling_unit", "r01-crah1" }, { "rack", rack.name } });
        QCOMPARE(a.placedBy, "rack=" + rack.name);
        QCOMPARE(a.domain, int64_t(-1));
        a = placed(placement, { { "row", row.name }, { "cooling_unit", "r01-crah1" } });
        QCOMPARE(a.placedBy, std::string("cooling_unit=r01-crah1"));
        // A host wins over them all.
        a = placed(placement, { { "rack", rack.name }, { "hostname", shape.nodes[0].hostname } });
        QCOMPARE(a.node, int64_t(0));
    }

    void gb200Nvl72()
    {
        const auto shape = FleetShape::forGpuCount(72 * 20, 1, Hardware::Gb200Nvl72);
        const AlertPlacement placement(shape);
        const auto &tray = shape.nodes[20];
        QCOMPARE(QString::fromStdString(tray.hostname).contains(QLatin1String("-t")), true);
        auto a = placed(placement, { { "Hostname", tray.hostname }, { "gpu", "3" } });
        QCOMPARE(a.gpuRuns, (Runs { { tray.firstGpu + 3, 1 } }));
        // A tray has 4 GPUs: gpu 4 is none of them, and the tray is what the alert names.
        a = placed(placement, { { "Hostname", tray.hostname }, { "gpu", "4" } });
        QCOMPARE(a.gpuRuns, (Runs { { tray.firstGpu, 4 } }));
        QCOMPARE(a.placedBy, "Hostname=" + tray.hostname);
        a = placed(placement, { { "UUID", shape.gpuUuid(tray.firstGpu + 2) } });
        QCOMPARE(a.gpuRuns, (Runs { { tray.firstGpu + 2, 1 } }));
        // The rack's NVLink domain, a CDU and its loop.
        const auto &rack = shape.racks[tray.rack];
        a = placed(placement, { { "nvlink", rack.name + "-nvl" } });
        QCOMPARE(a.gpuCount, 72U);
        QCOMPARE(a.gpuRuns, (Runs { { shape.nodes[rack.firstNode].firstGpu, 72 } }));
        const auto expected = runsByMembership(shape);
        for (const char *name : { "r01-cdu1", "r01-cdu1-a", "r01-bus-a", "su01", "su01-l2", "spine-1" }) {
            const uint32_t d = domainNamed(shape, name);
            QVERIFY2(d != UINT32_MAX, name);
            a = placed(placement, { { "domain", name } });
            QCOMPARE(a.gpuRuns, expected.at(d));
        }
    }

    void fromATopologyFile()
    {
        TopologyFile file;
        std::string error;
        QVERIFY2(TopologyFile::parse(fileWithFqdns, &file, &error), error.c_str());
        FleetShape shape = PrometheusTopology::fromFile(file).shape();
        QVERIFY(!shape.simulated);
        QCOMPARE(shape.nodes.size(), size_t(5));
        shape.uuids.assign(shape.gpuCount, std::string());
        shape.uuids[20] = "GPU-0c6d7e6a-1f9c-4a5e-9d0b-6e0f5d1f0a11";
        const AlertPlacement placement(shape);

        // Full names, and short ones where the short name is one host's only.
        auto a = placed(placement, { { "Hostname", "gpu-7.dc.example" }, { "gpu", "5" } });
        QCOMPARE(a.gpuRuns, (Runs { { 16 + 5, 1 } }));
        a = placed(placement, { { "hostname", "GPU-7" } });
        QCOMPARE(a.node, int64_t(2));
        a = placed(placement, { { "instance", "gpu-7.other.example:9400" } });
        QCOMPARE(a.node, int64_t(2));
        a = placed(placement, { { "hostname", "n01.b.example" } });
        QCOMPARE(a.node, int64_t(1));
        // n01 is two hosts' short name: it names neither.
        QVERIFY(fleetWide(placed(placement, { { "hostname", "n01" } })));
        QVERIFY(fleetWide(placed(placement, { { "hostname", "n01.c.example" } })));
        // n02's short name is its own.
        QCOMPARE(placed(placement, { { "hostname", "n02" } }).node, int64_t(4));
        // A host with 2 GPUs.
        QCOMPARE(placed(placement, { { "hostname", "small" }, { "gpu", "1" } }).gpuRuns, (Runs { { 25, 1 } }));
        QCOMPARE(placed(placement, { { "hostname", "small" }, { "gpu", "2" } }).gpuRuns, (Runs { { 24, 2 } }));
        // A real fleet's UUIDs as its telemetry gave them; one not seen names nothing; its bus ids are not kept.
        a = placed(placement, { { "UUID", "GPU-0c6d7e6a-1f9c-4a5e-9d0b-6e0f5d1f0a11" } });
        QCOMPARE(a.gpuRuns, (Runs { { 20, 1 } }));
        QVERIFY(fleetWide(placed(placement, { { "UUID", "GPU-00000000-0000-0000-0000-000000000000" } })));
        a = placed(placement, { { "Hostname", "gpu-7.dc.example" }, { "pci_bus_id", "00000000:18:00.0" } });
        QCOMPARE(a.gpuRuns, (Runs { { 16, 8 } }));
        // The file's racks, rows and domains.
        QCOMPARE(placed(placement, { { "rack", "rack-1" } }).gpuRuns, (Runs { { 0, 26 } }));
        QCOMPARE(placed(placement, { { "rack", "rack-2" } }).gpuRuns, (Runs { { 26, 8 } }));
        QCOMPARE(placed(placement, { { "row", "row-1" } }).gpuRuns, (Runs { { 0, 34 } }));
        a = placed(placement, { { "pdu", "rack-2-a" } });
        QCOMPARE(a.gpuRuns, (Runs { { 26, 8 } }));
        QCOMPARE(a.domain, int64_t(domainNamed(shape, "rack-2-a")));
        QCOMPARE(placed(placement, { { "feed", "feed-a" } }).gpuRuns, (Runs { { 0, 34 } }));
        QCOMPARE(placed(placement, { { "cooling_unit", "crah-1" } }).gpuCount, 34U);
    }

    void hostileLabels()
    {
        const auto shape = FleetShape::forGpuCount(1024);
        const AlertPlacement placement(shape);
        const std::string host = shape.nodes[2].hostname;
        const std::string huge(1U << 20U, 'r');
        // Unknown, huge, empty, out of range, malformed: nothing placed by them, nothing read out of bounds.
        const std::vector<std::vector<AlertLabel>> nothing = {
            {},
            { { "Hostname", "no-such-host" } },
            { { "Hostname", huge } },
            { { "Hostname", "" }, { "gpu", "0" } },
            { { "Hostname", host + std::string(1, '\0') } },
            { { "instance", ":9400" } },
            { { "instance", "[" } },
            { { "instance", "[]:1" } },
            { { "instance", "http://" } },
            { { "UUID", "GPU-" } },
            { { "UUID", huge } },
            { { "rack", "r99-k99" } },
            { { "row", huge } },
            { { "domain", "" } },
            { { "leaf", "su99-l0" } },
            { { "gpu", "4294967295" } },
            { { "pci_bus_id", "zz" } },
        };
        for (const auto &labels : nothing) {
            QVERIFY(fleetWide(placed(placement, labels)));
        }
        // GPU labels out of range or malformed leave the node.
        for (const char *gpu : { "8", "-1", "99999999999999999999", "3abc", "", " 3", "0x3", "3.0" }) {
            const auto a = placed(placement, { { "Hostname", host }, { "gpu", gpu } });
            QVERIFY2(a.gpuCount == 8 && a.node == 2, gpu);
        }
        for (const char *bus : { "", ":", "::.", "00000000:18:00", "00000000:18:00.8", "00000000:18:20.0",
                 "000000000:18:00.0", "00000000:118:00.0", "00000000:zz:00.0", "00000000:18:00.0.0", "18.00:0" }) {
            const auto a = placed(placement, { { "Hostname", host }, { "pci_bus_id", bus } });
            QVERIFY2(a.gpuCount == 8, bus);
        }
        // Duplicate labels: the first of a name counts.
        auto a = placed(placement,
            { { "Hostname", host }, { "Hostname", shape.nodes[3].hostname }, { "gpu", "1" }, { "gpu", "2" } });
        QCOMPARE(a.gpuRuns, (Runs { { shape.nodes[2].firstGpu + 1, 1 } }));
        // An unknown host label and a known one after it: the known one places it.
        a = placed(placement, { { "Hostname", "nowhere" }, { "hostname", host } });
        QCOMPARE(a.node, int64_t(2));
        // A placed alert placed again keeps nothing of before; a huge value is cut in placedBy.
        a = placed(placement, { { "Hostname", host } });
        a.labels = { { "rack", shape.racks[1].name }, { "unrelated", huge } };
        placement.place(&a);
        QCOMPARE(a.node, int64_t(-1));
        QCOMPARE(a.gpuRuns, (Runs { { 64, 64 } }));
        // 100,000 labels: read once each.
        std::vector<AlertLabel> many(100000, AlertLabel { "x", "y" });
        many.push_back({ "Hostname", host });
        QElapsedTimer timer;
        timer.start();
        QCOMPARE(placed(placement, many).node, int64_t(2));
        qInfo("100,000 labels placed in %lld ms", static_cast<long long>(timer.elapsed()));
        // An empty fleet's shape: nothing anywhere.
        const FleetShape empty;
        const AlertPlacement none(empty);
        QVERIFY(fleetWide(placed(none, { { "Hostname", host }, { "UUID", shape.gpuUuid(0) }, { "domain", "x" } })));
    }

    // 10,000 alerts of every form on 1,048,576 GPUs: the indices built once, each placement a few lookups.
    void tenThousandAlertsOnAMillionGpus()
    {
        QElapsedTimer timer;
        timer.start();
        const auto shape = FleetShape::forGpuCount(FleetShape::maxGpus);
        const qint64 shapeMs = timer.restart();
        const AlertPlacement placement(shape);
        const qint64 namesMs = timer.restart();
        (void)placement.gpuOfUuid(shape.gpuUuid(0));
        const qint64 uuidsMs = timer.restart();
        (void)placement.domainGpuCount(0);
        const qint64 domainsMs = timer.restart();

        std::vector<AlertmanagerAlert> alerts;
        alerts.reserve(10000);
        for (uint32_t i = 0; i < 10000; ++i) {
            const uint32_t gpu = (i * 104729U) % shape.gpuCount;
            const auto &node = shape.nodes[shape.nodeOfGpu[gpu]];
            switch (i % 8) {
            case 0:
            case 1:
            case 2:
                alerts.push_back(alertWith({ { "alertname", "GpuHot" }, { "Hostname", node.hostname },
                    { "gpu", std::to_string(gpu - node.firstGpu) }, { "UUID", shape.gpuUuid(gpu) },
                    { "instance", node.hostname + ":9400" }, { "severity", "warning" } }));
                break;
            case 3:
                alerts.push_back(alertWith({ { "alertname", "XidErrors" }, { "UUID", shape.gpuUuid(gpu) } }));
                break;
            case 4:
                alerts.push_back(alertWith({ { "alertname", "RackHot" }, { "rack", shape.racks[node.rack].name } }));
                break;
            case 5:
                alerts.push_back(alertWith(
                    { { "alertname", "LeafDown" }, { "switch", shape.domains[shape.gpuLinks[gpu].leaf].name } }));
                break;
            case 6:
                alerts.push_back(alertWith({ { "alertname", "SpineDegraded" }, { "domain", "spine-3" } }));
                break;
            default:
                alerts.push_back(alertWith({ { "alertname", "Elsewhere" }, { "instance", "10.1.2.3:9100" } }));
                break;
            }
        }
        timer.restart();
        for (auto &a : alerts) {
            placement.place(&a);
        }
        const qint64 placeMs = timer.elapsed();
        qInfo("1,048,576 GPUs: shape %lld ms; indices: names %lld ms, UUIDs %lld ms, domains' GPUs %lld ms; 10,000 "
              "alerts placed in %lld ms",
            shapeMs, namesMs, uuidsMs, domainsMs, placeMs);
        for (uint32_t i = 0; i < alerts.size(); ++i) {
            const uint32_t gpu = (i * 104729U) % shape.gpuCount;
            const auto &a = alerts[i];
            switch (i % 8) {
            case 0:
            case 1:
            case 2:
            case 3:
                QCOMPARE(a.gpuRuns, (Runs { { gpu, 1 } }));
                break;
            case 4:
                QCOMPARE(a.gpuCount, 64U);
                break;
            case 5:
                QCOMPARE(a.gpuCount, 32U);
                break;
            case 6:
                // Every eighth GPU of the fleet, its runs cut at the contract's bound.
                QCOMPARE(a.gpuCount, FleetShape::maxGpus / 8);
                QCOMPARE(a.gpuRuns.size(), AlertPlacement::maxRuns);
                break;
            default:
                QVERIFY(fleetWide(a));
                break;
            }
        }
        // Cheap against a poll every few seconds: 34-79 ms here (dev), most of it the spine planes' 4,096 runs
        // copied; 279 ms under the address sanitizer (a figure, printed above; bench_alerts measures it).
    }
};

QTEST_GUILESS_MAIN(TestAlertPlacement)
#include "tst_alertplacement.moc"
