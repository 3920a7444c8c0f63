// SPDX-License-Identifier: Apache-2.0
// The operator's topology file in both of its syntaxes: the shipped examples say the same thing, and every bad
// file is refused with the place (and, in YAML, the line) named, whichever syntax it is written in.
#include "core/fleetshape.h"
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
