// SPDX-License-Identifier: Apache-2.0
// The operator's topology file in both of its syntaxes: the shipped examples say the same thing, and every bad
// file is refused with the place (and, in YAML, the line) named, whichever syntax it is written in.
#include "core/fleetshape.h"
#include "dcgm/metricmap.h"
#include "dcgm/prometheustopology.h"
#include "formats/topologyfile.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace fleetscope::backend;

namespace {

bool contains(const std::string &text, const QByteArray &part)
{
    return text.find(part.toStdString()) != std::string::npos;
}

// The file as text, one line per host: "hall/row/rack hostname gpus".
std::string describe(const TopologyFile &file)
{
    std::string text = file.site + '\n';
    for (const auto &row : file.rows) {
        for (const auto &rack : row.racks) {
            for (const auto &host : rack.hosts) {
                text += row.hall + '/' + row.name + '/' + rack.name + (rack.nvlinkDomain ? "(nvlink)" : "") + ' '
                    + host.hostname + ' ' + std::to_string(host.gpus) + '\n';
            }
        }
    }
    return text;
}

// A one-hall, one-row, one-rack file whose rack holds `hosts` (JSON text of the array / YAML flow sequence) and, in
// the *With forms, other members before them (JSON `"key": value` text / YAML `key: value` lines, the first on
// line 7).
QByteArray jsonRackWith(const QByteArray &members, const QByteArray &hosts)
{
    return R"({"halls": [{"name": "h", "rows": [{"name": "r", "racks": [{"name": "k", )"
        + (members.isEmpty() ? QByteArray() : members + ", ") + R"("hosts": )" + hosts + "}]}]}]}";
}
QByteArray yamlRackWith(const QByteArrayList &members, const QByteArray &hosts)
{
    QByteArray yaml = "halls:\n"
                      "  - name: h\n"
                      "    rows:\n"
                      "      - name: r\n"
                      "        racks:\n"
                      "          - name: k\n";
    for (const QByteArray &member : members) {
        yaml += "            " + member + "\n";
    }
    return yaml + "            hosts: " + hosts + "\n";
}
QByteArray jsonRack(const QByteArray &hosts)
{
    return jsonRackWith({}, hosts);
}
QByteArray yamlRack(const QByteArray &hosts)
{
    return yamlRackWith({}, hosts);
}

// The same with top-level members after the halls (JSON `"key": value` text / YAML lines at the top level).
QByteArray jsonSite(const QByteArray &top, const QByteArray &rackMembers, const QByteArray &hosts)
{
    QByteArray json = jsonRackWith(rackMembers, hosts);
    json.chop(1);
    return json + ", " + top + "}";
}
QByteArray yamlSite(const QByteArrayList &top, const QByteArrayList &rackMembers, const QByteArray &hosts)
{
    QByteArray yaml = yamlRackWith(rackMembers, hosts);
    for (const QByteArray &line : top) {
        yaml += line + "\n";
    }
    return yaml;
}

// The domains as text, one per line: "kind name <parent rail", then each rack's and host's and each link.
std::string describeDomains(const TopologyFile &file)
{
    std::string text;
    for (const auto &d : file.domains) {
        text += d.kind + ' ' + d.name + " <" + d.parent + ' ' + std::to_string(d.rail) + '\n';
    }
    for (const auto &row : file.rows) {
        for (const auto &rack : row.racks) {
            text += rack.name + " cooling " + rack.cooling + " power";
            for (const auto &p : rack.power) {
                text += ' ' + p;
            }
            text += '\n';
            for (const auto &host : rack.hosts) {
                text += host.hostname + " su " + host.scalableUnit;
                for (const auto &l : host.links) {
                    text += ' ' + l.leaf + ':' + std::to_string(l.port);
                }
                text += '\n';
            }
        }
    }
    return text;
}

} // namespace

class TestTopologyFile : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void examplesAgree()
    {
        TopologyFile json;
        TopologyFile yaml;
        std::string error;
        QVERIFY2(TopologyFile::load(FLEETSCOPE_DOCS_DIR "/topology-example.json", &json, &error), error.c_str());
        QVERIFY2(TopologyFile::load(FLEETSCOPE_DOCS_DIR "/topology-example.yaml", &yaml, &error), error.c_str());
        QCOMPARE(describe(yaml), describe(json));

        QCOMPARE(yaml.site, std::string("dc-west-1"));
        QCOMPARE(yaml.rows.size(), size_t { 4 });
        QCOMPARE(yaml.rows[2].hall, std::string("hall-b"));
        QCOMPARE(yaml.rows[2].name, std::string("r11"));
        QCOMPARE(yaml.rows[0].racks.size(), size_t { 2 });
        const auto &rack = yaml.rows[0].racks[1];
        QCOMPARE(rack.name, std::string("r01-k02"));
        QCOMPARE(rack.hosts.size(), size_t { 3 });
        QCOMPARE(rack.hosts[0].hostname, std::string("gpu-a005"));
        QCOMPARE(rack.hosts[0].gpus, 8U);
        QCOMPARE(rack.hosts[2].hostname, std::string("gpu-a007"));
        QCOMPARE(rack.hosts[2].gpus, 4U);
        uint32_t gpus = 0;
        for (const auto &row : yaml.rows) {
            for (const auto &r : row.racks) {
                for (const auto &host : r.hosts) {
                    gpus += host.gpus;
                }
            }
        }
        QCOMPARE(gpus, 10U * 8U + 4U + 18U * 4U);
        QVERIFY(!rack.nvlinkDomain);
        const auto &nvl = yaml.rows[3].racks[0];
        QVERIFY(nvl.nvlinkDomain);
        QCOMPARE(nvl.hosts.size(), size_t { 18 });
        QCOMPARE(nvl.hosts[17].gpus, 4U);
    }

    // The example site's domains, read the same from both syntaxes and carried into the fleet's shape: the power
    // chain of a rack, its cooling, the rail-optimised fabric's leaves and ports, a host's own links, the NVL72 rack's
    // NVLink domain, parents before children.
    void exampleDomains()
    {
        TopologyFile json;
        TopologyFile yaml;
        std::string error;
        QVERIFY2(TopologyFile::load(FLEETSCOPE_DOCS_DIR "/topology-example.json", &json, &error), error.c_str());
        QVERIFY2(TopologyFile::load(FLEETSCOPE_DOCS_DIR "/topology-example.yaml", &yaml, &error), error.c_str());
        QCOMPARE(describeDomains(yaml), describeDomains(json));
        // 34 listed; su01 and su02 with 8 and 4 leaves, and r12-k01-nvl, implied.
        QCOMPARE(json.domains.size(), size_t { 34 + 2 + 8 + 4 + 1 });

        const auto shape = PrometheusTopology::fromFile(json).shape();
        QCOMPARE(shape.domains.size(), json.domains.size());
        for (size_t i = 0; i < shape.domains.size(); ++i) {
            QVERIFY2(shape.domains[i].parent < static_cast<int32_t>(i), shape.domains[i].name.c_str());
        }
        auto find = [&](const std::string &name) -> const Domain * {
            for (const auto &d : shape.domains) {
                if (d.name == name) {
                    return &d;
                }
            }
            return nullptr;
        };
        const Domain *leaf = find("su01-l5");
        QVERIFY(leaf != nullptr);
        QCOMPARE(leaf->kind, DomainKind::LeafSwitch);
        QCOMPARE(leaf->rail, 5);
        QCOMPARE(shape.domains[static_cast<size_t>(leaf->parent)].name, std::string("spine-5"));
        QVERIFY(find("su02-l3") != nullptr);
        QVERIFY(find("su02-l4") == nullptr); // the NVL72 trays have 4 rails
        QCOMPARE(find("r12-k01-nvl")->kind, DomainKind::NvlinkDomain);

        // gpu-a005 is su01's fifth host: GPU 5 on leaf su01-l5, port 5. Its rack has its PDUs and air handler.
        const auto &node = shape.nodes[4];
        QCOMPARE(node.hostname, std::string("gpu-a005"));
        QCOMPARE(shape.gpuLinks.size(), size_t { shape.gpuCount });
        const auto &link = shape.gpuLinks[node.firstGpu + 5];
        QCOMPARE(shape.domains[link.leaf].name, std::string("su01-l5"));
        QCOMPARE(link.port, 5U);
        QCOMPARE(node.domains.size(), size_t { 1 });
        QCOMPARE(shape.domains[node.domains[0]].name, std::string("su01"));
        const auto &rack = shape.racks[node.rack];
        QCOMPARE(rack.domains.size(), size_t { 3 });
        QCOMPARE(shape.domains[rack.domains[0]].name, std::string("r01-k02-a"));
        QCOMPARE(shape.domains[rack.domains[2]].name, std::string("hall-a-crah1"));
        // gpu-b001 says its own links (port 11 on su01's leaves); gpu-b002 is su01's tenth host.
        const auto &b001 = shape.nodes[9];
        QCOMPARE(b001.hostname, std::string("gpu-b001"));
        QCOMPARE(shape.gpuLinks[b001.firstGpu + 3].port, 11U);
        QCOMPARE(shape.domains[shape.gpuLinks[b001.firstGpu + 3].leaf].name, std::string("su01-l3"));
        QCOMPARE(shape.gpuLinks[shape.nodes[10].firstGpu + 7].port, 10U);
        // The NVL72 rack: PDUs, its loop and its NVLink domain; each tray's GPU k on su02's leaf k.
        const auto &nvlRack = shape.racks.back();
        QCOMPARE(nvlRack.domains.size(), size_t { 4 });
        QCOMPARE(shape.domains[nvlRack.domains[2]].name, std::string("r12-cdu1-a"));
        QCOMPARE(shape.domains[nvlRack.domains[3]].name, std::string("r12-k01-nvl"));
        const auto &tray = shape.nodes.back();
        QCOMPARE(shape.domains[shape.gpuLinks[tray.firstGpu + 2].leaf].name, std::string("su02-l2"));
        QCOMPARE(shape.gpuLinks[tray.firstGpu + 2].port, 18U);
        QVERIFY2(shape.domainLine(tray.firstGpu + 2).find("su02-l2") != std::string::npos,
            shape.domainLine(tray.firstGpu + 2).c_str());
        // Another file of the same floor plan without domains is another generation.
        TopologyFile plain = json;
        plain.domains.clear();
        for (auto &row : plain.rows) {
            for (auto &r : row.racks) {
                r.power.clear();
                r.cooling.clear();
                for (auto &h : r.hosts) {
                    h.links.clear();
                    h.scalableUnit.clear();
                }
            }
        }
        QVERIFY(PrometheusTopology::fromFile(plain).generation() != PrometheusTopology::fromFile(json).generation());
        QVERIFY(PrometheusTopology::fromFile(plain).shape().domains.empty());
    }

    // A rail NIC's GPU: mlx5_<k> is GPU k, unless fabric.nics names them; a NIC past the node's GPUs or of another
    // name is none of them. A rack's series stands for its GPUs.
    void nicsAndRacks()
    {
        const QByteArray yaml = yamlSite({ "fabric: {nics: [mlx5_0, mlx5_3, mlx5_4, mlx5_5]}" }, {},
            "[a, {hostname: "
            "b, gpus: 2}]");
        TopologyFile file;
        std::string error;
        QVERIFY2(TopologyFile::parseYaml(yaml.toStdString(), &file, &error), error.c_str());
        auto named = PrometheusTopology::fromFile(file);
        QCOMPARE(named.indexOfNic(0, "mlx5_3"), int64_t { 1 });
        QCOMPARE(named.indexOfNic(0, "mlx5_1"), int64_t { -1 }); // a storage NIC
        QCOMPARE(named.indexOfNic(1, "mlx5_3"), int64_t { 9 });
        QCOMPARE(named.indexOfNic(1, "mlx5_4"), int64_t { -1 }); // b has two GPUs
        file.nics.clear();
        auto plain = PrometheusTopology::fromFile(file);
        QCOMPARE(plain.indexOfNic(0, "mlx5_7"), int64_t { 7 });
        QCOMPARE(plain.indexOfNic(0, "mlx5_8"), int64_t { -1 });
        QCOMPARE(plain.indexOfNic(0, "mlx5_"), int64_t { -1 });
        QCOMPARE(plain.indexOfNic(0, "mlx5_1x"), int64_t { -1 });
        QCOMPARE(plain.indexOfNic(5, "mlx5_0"), int64_t { -1 });
        // Node by its node label, else by its scrape target without the port.
        auto span = plain.gpusOf(MetricMap::Scope::Nic, "", "b:9100", "", "mlx5_1", "");
        QCOMPARE(span.first, 9U);
        QCOMPARE(span.count, 1U);
        QCOMPARE(plain.gpusOf(MetricMap::Scope::Nic, "", "[b]:9100", "", "mlx5_1", "").first, 9U);
        QCOMPARE(plain.gpusOf(MetricMap::Scope::Nic, "c", "b:9100", "", "mlx5_1", "").count, 0U);
        span = plain.gpusOf(MetricMap::Scope::Rack, "", "", "", "", "k");
        QCOMPARE(span.first, 0U);
        QCOMPARE(span.count, 10U);
        QCOMPARE(plain.gpusOf(MetricMap::Scope::Rack, "", "", "", "", "k2").count, 0U);
        QCOMPARE(plain.gpusOf(MetricMap::Scope::Gpu, "b", "", "1", "", "").first, 9U);
    }

    // A host corded to one PDU of its rack lists it; a host that lists none draws from all of them.
    void hostPower()
    {
        const QByteArray pdus = R"("domains": [{"kind": "pdu", "name": "k-a"}, {"kind": "pdu", "name": "k-b"}])";
        const QByteArray json = jsonSite(pdus, R"("power": ["k-a", "k-b"])",
            R"(["a", {"hostname": "b", "power": ["k-b"]}, {"hostname": "c", "power": ["k-a", "k-b"]}])");
        const QByteArray yaml = yamlSite({ "domains: [{kind: pdu, name: k-a}, {kind: pdu, name: k-b}]" },
            { "power: [k-a, k-b]" }, "[a, {hostname: b, power: [k-b]}, {hostname: c, power: [k-a, k-b]}]");
        for (const bool isYaml : { false, true }) {
            TopologyFile file;
            std::string error;
            QVERIFY2(isYaml ? TopologyFile::parseYaml(yaml.toStdString(), &file, &error)
                            : TopologyFile::parse(json.toStdString(), &file, &error),
                error.c_str());
            const auto &hosts = file.rows.at(0).racks.at(0).hosts;
            QCOMPARE(hosts.size(), size_t(3));
            QVERIFY(hosts[0].power.empty());
            QCOMPARE(hosts[1].power, std::vector<std::string> { "k-b" });
            QCOMPARE(hosts[2].power, (std::vector<std::string> { "k-a", "k-b" }));
        }
    }

    // A rack's own gpusPerNode stands for the file's within it only; nvlinkDomain is plain true or false.
    void nvlinkDomainRacks()
    {
        const QByteArray json = R"({"gpusPerNode": 8, "halls": [{"name": "h", "rows": [{"name": "r", "racks": [
            {"name": "k1", "nvlinkDomain": true, "gpusPerNode": 4, "hosts": ["t1", {"hostname": "t2", "gpus": 2}]},
            {"name": "k2", "nvlinkDomain": false, "hosts": ["n1"]}, {"name": "k3", "hosts": ["n2"]}]}]}]})";
        const QByteArray yaml = "gpusPerNode: 8\n"
                                "halls:\n"
                                "  - name: h\n"
                                "    rows:\n"
                                "      - name: r\n"
                                "        racks:\n"
                                "          - {name: k1, nvlinkDomain: True, gpusPerNode: 4, hosts: [t1, {hostname: t2, "
                                "gpus: 2}]}\n"
                                "          - {name: k2, nvlinkDomain: false, hosts: [n1]}\n"
                                "          - {name: k3, hosts: [n2]}\n";
        const std::string expected = "\nh/r/k1(nvlink) t1 4\nh/r/k1(nvlink) t2 2\nh/r/k2 n1 8\nh/r/k3 n2 8\n";
        TopologyFile out;
        std::string error;
        QVERIFY2(TopologyFile::parse(json.toStdString(), &out, &error), error.c_str());
        QCOMPARE(describe(out), expected);
        QVERIFY2(TopologyFile::parseYaml(yaml.toStdString(), &out, &error), error.c_str());
        QCOMPARE(describe(out), expected);
        // A real fleet's source passes the domain on to the console with the layout (the poll and push paths both
        // read the file through PrometheusTopology).
        const auto shape = PrometheusTopology::fromFile(out).shape();
        QCOMPARE(shape.racks.size(), size_t { 3 });
        QVERIFY(shape.racks[0].nvlinkDomain);
        QVERIFY(!shape.racks[1].nvlinkDomain);
        QVERIFY(!shape.racks[2].nvlinkDomain);
    }

    // The syntax follows the file's name; the error names the file.
    void loadByExtension()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QByteArray yaml = yamlRack("[a, {hostname: b, gpus: 2}]");
        for (const char *name : { "fleet.yml", "fleet.yaml", "fleet.json" }) {
            const QString path = dir.filePath(QString::fromUtf8(name));
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(yaml);
            file.close();
            TopologyFile out;
            std::string error;
            const bool loaded = TopologyFile::load(path.toStdString(), &out, &error);
            if (QByteArray(name).endsWith(".json")) {
                QVERIFY(!loaded);
                QVERIFY2(contains(error, path.toUtf8() + ": not a JSON object"), error.c_str());
            } else {
                QVERIFY2(loaded, error.c_str());
                QCOMPARE(describe(out), std::string("\nh/r/k a 8\nh/r/k b 2\n"));
            }
        }
        TopologyFile out;
        std::string error;
        const std::string missing = dir.filePath(QStringLiteral("missing.yaml")).toStdString();
        QVERIFY(!TopologyFile::load(missing, &out, &error));
        QCOMPARE(error, missing + ": cannot open the topology file");
    }

    // YAML scalars are text where the schema wants text: names that look like numbers keep their digits.
    void yamlScalarsAreText()
    {
        TopologyFile out;
        std::string error;
        QVERIFY2(TopologyFile::parseYaml("site: 42\n"
                                         "halls:\n"
                                         "  - name: 1\n"
                                         "    rows:\n"
                                         "      - name: 07\n"
                                         "        racks:\n"
                                         "          - name: 'k 1'\n"
                                         "            hosts: [0101, \"n-2\", {hostname: true, gpus: 64}]\n",
                     &out, &error),
            error.c_str());
        QCOMPARE(describe(out), std::string("42\n1/07/k 1 0101 8\n1/07/k 1 n-2 8\n1/07/k 1 true 64\n"));
    }

    void bad_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QByteArray>("mentions"); // in both errors
        QTest::addColumn<int>("yamlLine"); // the line the YAML error names; 0: none

        QTest::newRow("top level not an object")
            << QByteArray("[1, 2]") << QByteArray("- 1\n- 2\n") << QByteArray("object") << 0;
        QTest::newRow("no halls") << QByteArray(R"({"site": "x"})") << QByteArray("site: x\n")
                                  << QByteArray("\"halls\" must be a non-empty array") << 0;
        QTest::newRow("empty halls") << QByteArray(R"({"halls": []})") << QByteArray("site: x\nhalls: []\n")
                                     << QByteArray("\"halls\" must be a non-empty array") << 2;
        QTest::newRow("halls not a list")
            << QByteArray(R"({"halls": {"name": "h"}})") << QByteArray("halls:\n  name: h\n")
            << QByteArray("\"halls\" must be a non-empty array") << 2;
        QTest::newRow("hall not an object")
            << QByteArray(R"({"halls": ["h"]})") << QByteArray("halls:\n  - h\n") << QByteArray("halls[0]") << 2;
        QTest::newRow("hall name not text") << QByteArray(R"({"halls": [{"name": ["a"], "rows": []}]})")
                                            << QByteArray("halls:\n  - name: [a]\n    rows: []\n")
                                            << QByteArray("\"name\" must be a non-empty string") << 2;
        QTest::newRow("hall name empty") << QByteArray(R"({"halls": [{"name": "", "rows": []}]})")
                                         << QByteArray("halls:\n  - name: ''\n    rows: []\n")
                                         << QByteArray("\"name\" must be a non-empty string") << 2;
        QTest::newRow("rows not a list") << QByteArray(R"({"halls": [{"name": "h", "rows": "r01"}]})")
                                         << QByteArray("halls:\n  - name: h\n    rows: r01\n")
                                         << QByteArray("halls[0] (") << 2;
        QTest::newRow("row without racks")
            << QByteArray(R"({"halls": [{"name": "h", "rows": [{"name": "r"}]}]})")
            << QByteArray("halls:\n  - name: h\n    rows:\n      - name: r\n") << QByteArray("halls[0].rows[0]") << 4;
        QTest::newRow("row not an object") << QByteArray(R"({"halls": [{"name": "h", "rows": ["r"]}]})")
                                           << QByteArray("halls:\n  - name: h\n    rows:\n      - r\n")
                                           << QByteArray("needs \"name\" and a \"racks\" array") << 4;
        QTest::newRow("rack not an object")
            << QByteArray(R"({"halls": [{"name": "h", "rows": [{"name": "r", "racks": [7]}]}]})")
            << QByteArray("halls:\n  - name: h\n    rows:\n      - name: r\n        racks: [7]\n")
            << QByteArray("halls[0].rows[0].racks[0]") << 5;
        QTest::newRow("row with no rack")
            << QByteArray(R"({"halls": [{"name": "h", "rows": [{"name": "r", "racks": []}]}]})")
            << QByteArray("halls:\n  - name: h\n    rows:\n      - name: r\n        racks: []\n")
            << QByteArray("a row needs at least one rack") << 4;
        QTest::newRow("rack with no host")
            << jsonRack("[]") << yamlRack("[]") << QByteArray("halls[0].rows[0].racks[0]") << 6;
        QTest::newRow("hosts not a list")
            << jsonRack(R"("a")") << yamlRack("a") << QByteArray("needs \"name\" and a \"hosts\" array") << 6;
        QTest::newRow("host a list") << jsonRack(R"([["a"]])") << yamlRack("[[a]]") << QByteArray("hosts[0]") << 7;
        QTest::newRow("host without hostname")
            << jsonRack(R"([{"gpus": 4}])") << yamlRack("[{gpus: 4}]") << QByteArray("hosts[0]") << 7;
        QTest::newRow("gpus not a number")
            << jsonRack(R"([{"hostname": "a", "gpus": "eight"}])") << yamlRack("[{hostname: a, gpus: eight}]")
            << QByteArray("a GPU count must be a whole number from 1 to 64") << 7;
        QTest::newRow("gpus quoted") << jsonRack(R"([{"hostname": "a", "gpus": "8"}])")
                                     << yamlRack("[{hostname: a, gpus: '8'}]")
                                     << QByteArray("a GPU count must be a whole number") << 7;
        QTest::newRow("gpus zero") << jsonRack(R"([{"hostname": "a", "gpus": 0}])")
                                   << yamlRack("[{hostname: a, gpus: 0}]") << QByteArray("a GPU count") << 7;
        QTest::newRow("gpus too many") << jsonRack(R"([{"hostname": "a", "gpus": 65}])")
                                       << yamlRack("[{hostname: a, gpus: 65}]") << QByteArray("a GPU count") << 7;
        QTest::newRow("gpus negative") << jsonRack(R"([{"hostname": "a", "gpus": -1}])")
                                       << yamlRack("[{hostname: a, gpus: -1}]") << QByteArray("a GPU count") << 7;
        QTest::newRow("gpusPerNode") << QByteArray(R"({"gpusPerNode": 100, "halls": []})")
                                     << QByteArray("gpusPerNode: 100\nhalls: []\n") << QByteArray("gpusPerNode") << 0;
        QTest::newRow("nvlinkDomain not a boolean")
            << jsonRackWith(R"("nvlinkDomain": "yes")", R"(["a"])") << yamlRackWith({ "nvlinkDomain: yes" }, "[a]")
            << QByteArray("halls[0].rows[0].racks[0]") << 7;
        QTest::newRow("nvlinkDomain quoted")
            << jsonRackWith(R"("nvlinkDomain": 1)", R"(["a"])") << yamlRackWith({ "nvlinkDomain: 'true'" }, "[a]")
            << QByteArray("\"nvlinkDomain\" must be true or false") << 7;
        QTest::newRow("rack gpusPerNode")
            << jsonRackWith(R"("gpusPerNode": 0)", R"(["a"])") << yamlRackWith({ "gpusPerNode: 0" }, "[a]")
            << QByteArray("halls[0].rows[0].racks[0].gpusPerNode") << 7;
        QTest::newRow("NVLink domain too big")
            << jsonRackWith(R"("nvlinkDomain": true, "gpusPerNode": 64)", R"(["a", "b", "c", "d", "e", "f", "g", "h",
                   "i", "j"])")
            << yamlRackWith({ "nvlinkDomain: true", "gpusPerNode: 64" }, "[a, b, c, d, e, f, g, h, i, j]")
            << QByteArray("(k): an NVLink domain spans at most 576 GPUs; this rack has 640") << 6;
        QTest::newRow("duplicate hostname")
            << jsonRack(R"(["a", "b", "a"])") << yamlRack("[a, b, a]") << QByteArray("hosts[2]") << 7;
        QTest::newRow("duplicate hostname across racks")
            << QByteArray(R"({"halls": [{"name": "h", "rows": [{"name": "r", "racks": [
                   {"name": "k1", "hosts": ["a"]}, {"name": "k2", "hosts": [{"hostname": "a"}]}]}]}]})")
            << QByteArray("halls:\n"
                          "  - name: h\n"
                          "    rows:\n"
                          "      - name: r\n"
                          "        racks:\n"
                          "          - {name: k1, hosts: [a]}\n"
                          "          - name: k2\n"
                          "            hosts:\n"
                          "              - hostname: a\n")
            << QByteArray("halls[0].rows[0].racks[1].hosts[0]") << 9;
        // Domains.
        QTest::newRow("domains not a list")
            << jsonSite(R"("domains": {"kind": "pdu"})", {}, R"(["a"])")
            << yamlSite({ "domains: {kind: pdu}" }, {}, "[a]") << QByteArray("domains") << 8;
        QTest::newRow("domain kind unknown") << jsonSite(R"("domains": [{"kind": "ups", "name": "u"}])", {}, R"(["a"])")
                                             << yamlSite({ "domains: [{kind: ups, name: u}]" }, {}, "[a]")
                                             << QByteArray("no domain kind 'ups'; one of feed, busway, pdu") << 8;
        QTest::newRow("domain without a name")
            << jsonSite(R"("domains": [{"kind": "pdu"}])", {}, R"(["a"])")
            << yamlSite({ "domains: [{kind: pdu}]" }, {}, "[a]") << QByteArray("domains[0]") << 8;
        QTest::newRow("domain rail") << jsonSite(R"("domains": [{"kind": "leaf", "name": "l", "rail": 64}])", {},
            R"(["a"])") << yamlSite({ "domains: [{kind: leaf, name: l, rail: -1}]" }, {}, "[a]")
                                     << QByteArray("\"rail\" must be a whole number from 0 to 63") << 8;
        QTest::newRow("domain name twice")
            << jsonSite(R"("domains": [{"kind": "pdu", "name": "p"}, {"kind": "cdu", "name": "p"}])", {}, R"(["a"])")
            << yamlSite({ "domains: [{kind: pdu, name: p}, {kind: cdu, name: p}]" }, {}, "[a]")
            << QByteArray("domains[1]: the name 'p' appears twice") << 0;
        QTest::newRow("parent missing") << jsonSite(R"("domains": [{"kind": "pdu", "name": "p", "parent": "bus"}])", {},
            R"(["a"])") << yamlSite({ "domains: [{kind: pdu, name: p, parent: bus}]" }, {}, "[a]")
                                        << QByteArray("domain 'p': no parent named 'bus'") << 0;
        QTest::newRow("parents in a cycle")
            << jsonSite(R"("domains": [{"kind": "feed", "name": "f"}, {"kind": "pdu", "name": "p", "parent": "b"},
                   {"kind": "busway", "name": "b", "parent": "p"}])",
                   {}, R"(["a"])")
            << yamlSite({ "domains:", "  - {kind: feed, name: f}", "  - {kind: pdu, name: p, parent: b}",
                            "  - {kind: busway, name: b, parent: p}" },
                   {}, "[a]")
            << QByteArray("go round in a cycle") << 0;
        QTest::newRow("own parent") << jsonSite(R"("domains": [{"kind": "pdu", "name": "p", "parent": "p"}])", {},
            R"(["a"])") << yamlSite({ "domains: [{kind: pdu, name: p, parent: p}]" }, {}, "[a]")
                                    << QByteArray("go round in a cycle") << 0;
        QTest::newRow("power not a PDU") << jsonSite(
            R"("domains": [{"kind": "cdu", "name": "c"}])", R"("power": ["c"])", R"(["a"])")
                                         << yamlSite({ "domains: [{kind: cdu, name: c}]" }, { "power: [c]" }, "[a]")
                                         << QByteArray("rack k power: 'c' is a cdu, not a pdu") << 0;
        QTest::newRow("power unknown") << jsonSite(R"("domains": [])", R"("power": ["p"])", R"(["a"])")
                                       << yamlSite({ "domains: []" }, { "power: [p]" }, "[a]")
                                       << QByteArray("rack k power: no domain named 'p'") << 0;
        QTest::newRow("host power not a PDU")
            << jsonSite(R"("domains": [{"kind": "cdu", "name": "c"}])", {}, R"([{"hostname": "a", "power": ["c"]}])")
            << yamlSite({ "domains: [{kind: cdu, name: c}]" }, {}, "[{hostname: a, power: [c]}]")
            << QByteArray("host a power: 'c' is a cdu, not a pdu") << 0;
        QTest::newRow("host power not its rack's")
            << jsonSite(R"("domains": [{"kind": "pdu", "name": "p"}, {"kind": "pdu", "name": "q"}])",
                   R"("power": ["p"])", R"([{"hostname": "a", "power": ["q"]}])")
            << yamlSite({ "domains: [{kind: pdu, name: p}, {kind: pdu, name: q}]" }, { "power: [p]" },
                   "[{hostname: a, power: [q]}]")
            << QByteArray("host a power: 'q' is not one of rack k's PDUs") << 0;
        QTest::newRow("host power not a list")
            << jsonRack(R"([{"hostname": "a", "power": "p"}])") << yamlRack("[{hostname: a, power: p}]")
            << QByteArray("\"power\" must be an array of non-empty strings") << 7;
        QTest::newRow("power not a list")
            << jsonRackWith(R"("power": "p")", R"(["a"])") << yamlRackWith({ "power: p" }, "[a]")
            << QByteArray("\"power\" must be an array of non-empty strings") << 7;
        QTest::newRow("cooling a leaf") << jsonSite(
            R"("domains": [{"kind": "leaf", "name": "l"}])", R"("cooling": "l")", R"(["a"])")
                                        << yamlSite({ "domains: [{kind: leaf, name: l}]" }, { "cooling: l" }, "[a]")
                                        << QByteArray("'l' is a leaf, not a cooling-unit or cdu or loop") << 0;
        QTest::newRow("scalable unit unknown") << jsonRack(R"([{"hostname": "a", "scalableUnit": "su9"}])")
                                               << yamlRack("[{hostname: a, scalableUnit: su9}]")
                                               << QByteArray("host a scalableUnit: no domain named 'su9'") << 0;
        QTest::newRow("link to an unknown leaf")
            << jsonRack(R"([{"hostname": "a", "links": [{"leaf": "l", "port": 1}]}])")
            << yamlRack("[{hostname: a, links: [{leaf: l, port: 1}]}]")
            << QByteArray("host a links: no domain named 'l'") << 0;
        QTest::newRow("more links than GPUs")
            << jsonRack(
                   R"([{"hostname": "a", "gpus": 1, "links": [{"leaf": "l", "port": 1}, {"leaf": "l", "port": 2}]}])")
            << yamlRack("[{hostname: a, gpus: 1, links: [{leaf: l, port: 1}, {leaf: l, port: 2}]}]")
            << QByteArray("at most one {\"leaf\", \"port\"} per GPU (1)") << 7;
        QTest::newRow("port zero") << jsonRack(R"([{"hostname": "a", "links": [{"leaf": "l", "port": 0}]}])")
                                   << yamlRack("[{hostname: a, links: [{leaf: l, port: 0}]}]")
                                   << QByteArray("\"port\" must be a whole number from 1 to 65535") << 7;
        QTest::newRow("link not an object") << jsonRack(R"([{"hostname": "a", "links": ["l"]}])")
                                            << yamlRack("[{hostname: a, links: [l]}]") << QByteArray("a link is") << 7;
        QTest::newRow("scalable unit of an unknown host")
            << jsonSite(R"("fabric": {"scalableUnits": [{"name": "su1", "leafPrefix": "l", "hosts": ["a", "z"]}]})", {},
                   R"(["a"])")
            << yamlSite({ "fabric: {scalableUnits: [{name: su1, leafPrefix: l, hosts: [a, z]}]}" }, {}, "[a]")
            << QByteArray("no host named 'z'") << 0;
        QTest::newRow("host in two scalable units")
            << jsonSite(R"("fabric": {"scalableUnits": [{"name": "su1", "leafPrefix": "l", "hosts": ["a"]},
                   {"name": "su2", "leafPrefix": "m", "hosts": ["a"]}]})",
                   {}, R"(["a"])")
            << yamlSite({ "fabric:", "  scalableUnits:", "    - {name: su1, leafPrefix: l, hosts: [a]}",
                            "    - {name: su2, leafPrefix: m, hosts: [a]}" },
                   {}, "[a]")
            << QByteArray("host 'a' is in a scalable unit already") << 0;
        QTest::newRow("scalable unit without hosts")
            << jsonSite(
                   R"("fabric": {"scalableUnits": [{"name": "su1", "leafPrefix": "l", "hosts": []}]})", {}, R"(["a"])")
            << yamlSite({ "fabric: {scalableUnits: [{name: su1, leafPrefix: l, hosts: []}]}" }, {}, "[a]")
            << QByteArray("\"hosts\" lists 1 to 65535 hostnames") << 8;
        QTest::newRow("scalable unit name taken by a PDU")
            << jsonSite(R"("domains": [{"kind": "pdu", "name": "su1"}], "fabric": {"scalableUnits": [{"name": "su1",
                   "leafPrefix": "l", "hosts": ["a"]}]})",
                   {}, R"(["a"])")
            << yamlSite({ "domains: [{kind: pdu, name: su1}]",
                            "fabric: {scalableUnits: [{name: su1, leafPrefix: l, hosts: [a]}]}" },
                   {}, "[a]")
            << QByteArray("'su1' is a pdu, not a scalable-unit") << 0;
        QTest::newRow("nics too many") << jsonSite(
            R"("fabric": {"nics": [)" + QByteArray(R"("m",)").repeated(65) + R"("m"]})", {},
            R"(["a"])") << yamlSite({ "fabric: {nics: [" + QByteArray("m, ").repeated(65) + "m]}" }, {}, "[a]")
                                       << QByteArray("fabric.nics: at most 64") << 0;
        QTest::newRow("duplicate key") << QByteArray(R"({"halls": [{"name": "a", "name": "b", "rows": []}]})")
                                       << QByteArray("halls:\n  - name: a\n    name: b\n    rows: []\n")
                                       << QByteArray("halls[0]") << 2;
    }
    void bad()
    {
        QFETCH(QByteArray, json);
        QFETCH(QByteArray, yaml);
        QFETCH(QByteArray, mentions);
        QFETCH(int, yamlLine);
        TopologyFile out;
        std::string error;
        QVERIFY(!TopologyFile::parse(json.toStdString(), &out, &error));
        QVERIFY2(contains(error, mentions), error.c_str());
        QVERIFY(out.rows.empty());
        error.clear();
        QVERIFY(!TopologyFile::parseYaml(yaml.toStdString(), &out, &error));
        QVERIFY2(contains(error, mentions), error.c_str());
        if (yamlLine > 0) {
            QVERIFY2(contains(error, "(line " + QByteArray::number(yamlLine) + ")"), error.c_str());
        }
        QVERIFY(out.rows.empty());
    }

    // Malformed YAML: the parser's message with the line and column.
    void yamlSyntax_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QByteArray>("mentions");
        QTest::newRow("unterminated flow sequence")
            << QByteArray("site: x\nhalls:\n  - name: h\n    rows: [a, b\n  - name: i\n") << QByteArray("line 5");
        QTest::newRow("bad indentation") << QByteArray("site: x\nhalls:\n  - name: h\n   rows: []\n")
                                         << QByteArray("line 4, column 4: end of sequence not found");
        QTest::newRow("tab") << QByteArray("halls:\n\t- name: h\n") << QByteArray("line 2");
        QTest::newRow("map value in a plain scalar")
            << QByteArray("site: x\nhalls:\n  - name: h: i\n") << QByteArray("line 3");
        QTest::newRow("two documents") << QByteArray(yamlRack("[a]") + "---\n" + yamlRack("[b]"))
                                       << QByteArray("holds more than one YAML document");
        // Found by fuzz_topologyfile (fuzz/regressions/topologyfile): yaml-cpp 0.7's LoadAll never returned on a
        // token after the document, here a flow mapping written as JSON with a trailing comma.
        QTest::newRow("text after the document")
            << QByteArray(
                   R"({"halls": [{"name": "h", "rows": [{"name": "r", "racks": [{"name": "k", "hosts": ["a"]}]}]}]},)")
            << QByteArray("holds more than one YAML document (or text after its end");
        QTest::newRow("a stray comma") << QByteArray(",") << QByteArray("holds more than one YAML document");
        QTest::newRow("empty") << QByteArray("") << QByteArray("holds 0 YAML documents");
        QTest::newRow("deep nesting") << QByteArray(100000, '[') << QByteArray("not valid YAML");
    }
    void yamlSyntax()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QByteArray, mentions);
        TopologyFile out;
        std::string error;
        QVERIFY(!TopologyFile::parseYaml(yaml.toStdString(), &out, &error));
        QVERIFY2(contains(error, mentions), error.c_str());
        QVERIFY(out.rows.empty());
    }

    // YAML aliases repeat a node without repeating its text: a repeated host is still a repeated host, and a file
    // cannot describe more GPUs than Fleetscope serves however it is written.
    void yamlAliases()
    {
        TopologyFile out;
        std::string error;
        QVERIFY(!TopologyFile::parseYaml("halls:\n"
                                         "  - name: h\n"
                                         "    rows:\n"
                                         "      - name: r\n"
                                         "        racks:\n"
                                         "          - {name: k1, hosts: &hosts [a, b]}\n"
                                         "          - {name: k2, hosts: *hosts}\n",
            &out, &error));
        QVERIFY2(contains(error, "hostname 'a' appears twice"), error.c_str());

        // 2^14 distinct hosts of 64 GPUs is exactly the limit; one more GPU is over it.
        QByteArray hosts;
        for (int i = 0; i < (1 << 14); ++i) {
            hosts += "n" + QByteArray::number(i) + ",";
        }
        QByteArray yaml = "gpusPerNode: 64\n" + yamlRack("[" + hosts + "]");
        QVERIFY2(TopologyFile::parseYaml(yaml.toStdString(), &out, &error), error.c_str());
        yaml = "gpusPerNode: 64\n" + yamlRack("[" + hosts + "{hostname: extra, gpus: 1}]");
        QVERIFY(!TopologyFile::parseYaml(yaml.toStdString(), &out, &error));
        QVERIFY2(contains(error, "more than 1048576 GPUs"), error.c_str());
        QVERIFY(out.rows.empty());
    }
};

QTEST_GUILESS_MAIN(TestTopologyFile)
#include "tst_topologyfile.moc"
