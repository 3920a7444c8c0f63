// SPDX-License-Identifier: Apache-2.0
// The dcgm-exporter page: fetched over real HTTP from an exporter on loopback, parsed here, and held against the
// simulator's frame it was rendered from; node pages cut from it; rendered once per frame, and ahead; the targets
// file. How the pages are served (paths, methods, clients fast, slow and many, the door): tst_exporter_http.
#include "exportertesting.h"
#include "tests/backend/testing/chaincheck.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cmath>
#include <map>
#include <set>
#include <thread>

namespace be = fleetscope::backend;
using namespace fleetscope::testing;

class TestExporter : public FrozenExporterSuite
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        const std::string error = serveFrozenFleet();
        QVERIFY2(error.empty(), error.c_str());
    }

    void cleanupTestCase()
    {
        if (m_exporter) {
            m_exporter->stop();
        }
    }

    void pageMatchesFrame()
    {
        const auto response = get(m_exporter->port(), "/metrics");
        QVERIFY(response.complete);
        QCOMPARE(response.status, 200);
        QVERIFY(response.head.contains("Content-Type: text/plain; version=0.0.4"));
        const Page page = parsePage(response.body);
        QVERIFY2(page.error.isEmpty(), qPrintable(page.error));

        const auto frame = m_source->latest();
        const auto &shape = m_source->shape();
        const auto jobs = m_source->jobs();

        // Families: dcgm-exporter's names, types and help, in catalogue order.
        const auto &families = be::ExporterPage::families();
        const auto &nvlink = be::ExporterPage::nvlinkFamilies(); // after them: the other NVLink error counters
        QCOMPARE(page.familyOrder.size(), families.size() + nvlink.size());
        QCOMPARE(families.size(), size_t(15));
        for (size_t i = 0; i < nvlink.size(); ++i) {
            QCOMPARE(page.familyOrder[families.size() + i], QByteArray(nvlink[i].name));
            QCOMPARE(page.type.at(nvlink[i].name), QByteArray("counter"));
        }
        for (size_t i = 0; i < families.size(); ++i) {
            const QByteArray name = QByteArray::fromStdString(families[i].name);
            QCOMPARE(page.familyOrder[i], name);
            QVERIFY(name.startsWith("DCGM_FI_DEV_"));
            QCOMPARE(page.type.at(name), QByteArray::fromStdString(families[i].type));
            QCOMPARE(page.help.at(name), QByteArray::fromStdString(families[i].help));
        }
        QCOMPARE(page.type.at("DCGM_FI_DEV_GPU_TEMP"), QByteArray("gauge"));
        QCOMPARE(page.type.at("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"), QByteArray("counter"));
        QCOMPARE(page.type.at("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"), QByteArray("counter"));
        QCOMPARE(page.type.at("DCGM_FI_DEV_XID_ERRORS"), QByteArray("gauge"));
        QCOMPARE(page.type.at("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"), QByteArray("counter"));
        QCOMPARE(page.type.at("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"), QByteArray("counter"));

        // Which job each GPU runs, from ListJobs' view.
        std::vector<const be::JobInfo *> jobOf(shape.gpuCount, nullptr);
        for (const auto &job : jobs) {
            for (uint32_t g = job.firstGpu; job.endMs == 0 && g < job.firstGpu + job.gpuCount; ++g) {
                jobOf[g] = &job;
            }
        }
        std::map<std::pair<QByteArray, QByteArray>, uint32_t> gpuByHostAndIndex;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const auto &node = shape.nodes[shape.nodeOfGpu[g]];
            gpuByHostAndIndex[{ QByteArray::fromStdString(node.hostname), QByteArray::number(g - node.firstGpu) }] = g;
        }

        std::map<QByteArray, std::vector<int>> seen; // per family, per GPU: lines
        size_t jobLines = 0;
        for (const auto &s : page.samples) {
            const auto it = gpuByHostAndIndex.find({ s.labels.count("Hostname") ? s.labels.at("Hostname") : "",
                s.labels.count("gpu") ? s.labels.at("gpu") : "" });
            QVERIFY2(it != gpuByHostAndIndex.end(), "a sample for no GPU of the fleet");
            const uint32_t g = it->second;
            auto &count = seen[s.name];
            count.resize(shape.gpuCount);
            ++count[g];

            const QByteArray local = s.labels.at("gpu");
            QCOMPARE(s.labels.at("UUID"), QByteArray::fromStdString(shape.gpuUuid(g)));
            QCOMPARE(s.labels.at("device"), "nvidia" + local);
            QCOMPARE(s.labels.at("pci_bus_id"), QByteArray::fromStdString(be::ExporterPage::pciBusId(local.toUInt())));
            QVERIFY(QRegularExpression(QStringLiteral("^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\\.[0-7]$"))
                        .match(QString::fromLatin1(s.labels.at("pci_bus_id")))
                        .hasMatch());
            QCOMPARE(s.labels.at("modelName"), QByteArray("NVIDIA H100 80GB HBM3"));
            // Each node's own driver: the simulated fleet is mid-rollout.
            QCOMPARE(s.labels.at("DCGM_FI_DRIVER_VERSION"),
                QByteArray::fromStdString(std::string(shape.driverVersionOf(shape.nodeOfGpu[g]))));
            QVERIFY(s.labels.count("row") == 0 && s.labels.count("rack") == 0);
            if (const auto *job = jobOf[g]) {
                ++jobLines;
                QCOMPARE(s.labels.size(), size_t(10));
                const uint32_t ordinal = shape.nodeOfGpu[g] - shape.nodeOfGpu[job->firstGpu];
                QCOMPARE(s.labels.at("namespace"), QByteArray::fromStdString(job->owner));
                QCOMPARE(s.labels.at("pod"), QByteArray::fromStdString(job->name) + '-' + QByteArray::number(ordinal));
                QVERIFY(QByteArray::fromStdString(job->name).startsWith(QByteArray(s.labels.at("container") + '-')));
            } else {
                QCOMPARE(s.labels.size(), size_t(7));
            }

            // The other NVLink counters: the replays are the flow-control CRC errors again, the rest 0.
            if (const auto other
                = std::find_if(nvlink.begin(), nvlink.end(), [&](const auto &f) { return s.name == f.name; });
                other != nvlink.end()) {
                const auto *crc = be::ExporterPage::rawField(*frame, be::MetricId::NvlinkErrors);
                QVERIFY(crc != nullptr);
                QCOMPARE(s.value.toLongLong(), other->replays ? static_cast<long long>((*crc)[g]) : 0LL);
                continue;
            }
            // The value, as DCGM prints it: integers for integer fields, %f for power.
            const auto family = std::find_if(families.begin(), families.end(),
                [&](const be::ExporterPage::Family &f) { return QByteArray::fromStdString(f.name) == s.name; });
            // The error fields as dcgm-exporter has them (totals and the last XID), the rest as the frame has them.
            const auto *raw = be::ExporterPage::rawField(*frame, family->metric);
            QCOMPARE(raw != nullptr, be::ExporterPage::isRawErrorField(family->metric));
            const float expected = raw ? static_cast<float>((*raw)[g]) : frame->plane(family->metric)[g];
            if (family->isDouble) {
                QVERIFY2(QRegularExpression(QStringLiteral("^[0-9]+\\.[0-9]{6}$"))
                             .match(QString::fromLatin1(s.value))
                             .hasMatch(),
                    s.value.constData());
                QCOMPARE(static_cast<float>(s.value.toDouble()), expected);
            } else {
                QVERIFY2(
                    QRegularExpression(QStringLiteral("^-?[0-9]+$")).match(QString::fromLatin1(s.value)).hasMatch(),
                    s.value.constData());
                QCOMPARE(s.value.toLongLong(), std::llround(expected));
            }
        }
        QVERIFY2(jobLines > 0, "no GPU of the test fleet runs a job: the pod labels went untested");

        // Every GPU that is not offline has each metric exactly once; offline GPUs have none.
        size_t offline = 0;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const bool isOffline = (frame->health[g] & 0x07U) == fleetscope::health::Offline;
            offline += isOffline ? 1 : 0;
            for (const auto &f : families) {
                const auto &count = seen[QByteArray::fromStdString(f.name)];
                QCOMPARE(count.size(), size_t(shape.gpuCount));
                QCOMPARE(count[g], isOffline ? 0 : 1);
            }
        }
        QVERIFY2(offline > 0, "no offline GPU in the test frame: their absence went untested");
    }

    // The error counters are dcgm-exporter's counters: totals that never fall, while the frames' 5-minute counts
    // do; the double-bit total is the number of double-bit events so far and the XID gauge the last event's XID.
    void errorCountersOnlyGrow()
    {
        // Three simulated days a step over 2,048 GPUs: errors come every step and leave the window before the next,
        // so window counts fall all the time; 36 days hold a few double-bit errors at real fleets' rates
        // (docs/FAULTS.md: 1.7 a day on 20,480 GPUs).
        be::Simulator sim(2048, 3, 3 * 86400.0);
        std::map<std::pair<QByteArray, uint32_t>, double> last; // (family, GPU) -> value on the previous page
        std::vector<uint32_t> dbeEvents(sim.shape().gpuCount, 0);
        std::vector<uint32_t> lastXid(sim.shape().gpuCount, 0);
        std::map<QByteArray, uint32_t> gpuByHostAndIndex;
        for (uint32_t g = 0; g < sim.shape().gpuCount; ++g) {
            const auto &node = sim.shape().nodes[sim.shape().nodeOfGpu[g]];
            gpuByHostAndIndex[QByteArray::fromStdString(node.hostname) + '/' + QByteArray::number(g - node.firstGpu)]
                = g;
        }
        size_t windowFalls = 0;
        size_t counterRises = 0;
        size_t dbeChecked = 0;
        size_t xidChecked = 0;
        std::shared_ptr<const be::Frame> previous;
        for (int step = 0; step < 12; ++step) {
            sim.step();
            for (const auto &e : sim.takeEvents()) {
                if (e.kind == be::FleetEvent::Kind::EccDoubleBit) {
                    ++dbeEvents[static_cast<size_t>(e.gpu)];
                } else if (e.kind == be::FleetEvent::Kind::Xid) {
                    lastXid[static_cast<size_t>(e.gpu)] = e.xid;
                }
            }
            const auto frame = sim.snapshot();
            QVERIFY(frame->rawErrors);
            const Page page = parsePage(QByteArray::fromStdString(
                be::ExporterPage::render(sim.shape(), *frame, {}, be::ExporterPage::Options()).text));
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            for (const auto &s : page.samples) {
                const auto family
                    = std::find_if(be::ExporterPage::families().begin(), be::ExporterPage::families().end(),
                        [&](const auto &f) { return QByteArray::fromStdString(f.name) == s.name; });
                if (family == be::ExporterPage::families().end()
                    || !be::ExporterPage::isRawErrorField(family->metric)) {
                    continue;
                }
                const uint32_t g = gpuByHostAndIndex.at(s.labels.at("Hostname") + '/' + s.labels.at("gpu"));
                const double value = s.value.toDouble();
                if (family->metric == be::MetricId::XidErrors) {
                    QCOMPARE(value, static_cast<double>(lastXid[g]));
                    xidChecked += lastXid[g] != 0 ? 1 : 0;
                    continue;
                }
                QCOMPARE(page.type.at(s.name), QByteArray("counter"));
                if (family->metric == be::MetricId::EccDbe) {
                    QCOMPARE(value, static_cast<double>(dbeEvents[g]));
                    dbeChecked += dbeEvents[g] != 0 ? 1 : 0;
                }
                const auto key = std::make_pair(s.name, g);
                if (const auto it = last.find(key); it != last.end()) {
                    QVERIFY2(value >= it->second,
                        qPrintable(QStringLiteral("%1 of GPU %2 fell from %3 to %4")
                                       .arg(QString::fromLatin1(s.name))
                                       .arg(g)
                                       .arg(it->second)
                                       .arg(value)));
                    counterRises += value > it->second ? 1 : 0;
                }
                last[key] = value;
                if (previous) {
                    const auto &now = frame->plane(family->metric);
                    const auto &before = previous->plane(family->metric);
                    windowFalls += now[g] < before[g] ? 1 : 0;
                }
            }
            previous = frame;
        }
        // The test could fail: window counts did fall, counters did rise, and events were there to compare with.
        QVERIFY2(windowFalls > 0, "no window count fell: the old page would have passed too");
        QVERIFY(counterRises > 0);
        QVERIFY2(dbeChecked > 0, "no double-bit error in the run");
        QVERIFY2(xidChecked > 0, "no XID in the run");
    }

    void labelEscaping()
    {
        be::ExporterPage::Options options;
        options.modelName = "NVIDIA \"H100\" C:\\gpu\nnext";
        options.topologyLabels = true;
        const auto frame = m_source->latest();
        const auto text = be::ExporterPage::render(m_source->shape(), *frame, {}, options).text;
        QVERIFY(text.find("modelName=\"NVIDIA \\\"H100\\\" C:\\\\gpu\\nnext\"") != std::string::npos);
        const Page page = parsePage(QByteArray::fromStdString(text));
        QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
        QVERIFY(!page.samples.empty());
        for (const auto &s : page.samples) {
            QCOMPARE(s.labels.at("modelName"), QByteArray::fromStdString(options.modelName));
            QVERIFY(s.labels.count("pod") == 0);
            const auto &shape = m_source->shape();
            const auto &node = shape.nodes[shape.nodeOfGpu[0]];
            if (s.labels.at("Hostname") == QByteArray::fromStdString(node.hostname)) {
                QCOMPARE(s.labels.at("rack"), QByteArray::fromStdString(shape.racks[node.rack].name));
                QCOMPARE(s.labels.at("row"), QByteArray::fromStdString(shape.rows[0].name));
            }
        }
    }

    // Each node's own page, as its dcgm-exporter would serve it: every family's HELP and TYPE as on the whole page,
    // then exactly the lines of that node's GPUs, byte for byte and in the order the whole page has them. The node
    // the node-flap scenario holds down has the HELP and TYPE lines only, as its GPUs are absent from the whole page.
    void nodePages()
    {
        const auto wholeResponse = get(m_exporter->port(), "/metrics");
        QCOMPARE(wholeResponse.status, 200);
        const Page whole = parsePage(wholeResponse.body);
        QVERIFY2(whole.error.isEmpty(), qPrintable(whole.error));
        std::map<QByteArray, std::vector<QByteArray>> linesOfHost;
        for (const auto &s : whole.samples) {
            linesOfHost[s.labels.at("Hostname")].push_back(s.line);
        }

        const auto &shape = m_source->shape();
        const auto frame = m_source->latest();
        const auto nodes = static_cast<uint32_t>(shape.nodes.size());
        std::vector<uint32_t> onlineGpus(nodes, 0);
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            onlineGpus[shape.nodeOfGpu[g]] += fleetscope::testing::online(*frame, g) ? 1 : 0;
        }
        const auto down = std::find(onlineGpus.begin(), onlineGpus.end(), 0U);
        QVERIFY2(down != onlineGpus.end(), "no node is down in the test frame: its page went untested");
        const auto downNode = static_cast<uint32_t>(down - onlineGpus.begin());

        for (const uint32_t k : { 0U, 1U, nodes / 2, downNode, nodes - 1 }) {
            const QByteArray hostname = QByteArray::fromStdString(shape.nodes[k].hostname);
            const auto response = get(m_exporter->port(), "/metrics/" + hostname);
            QVERIFY(response.complete);
            QCOMPARE(response.status, 200);
            QVERIFY(response.head.contains("Content-Type: text/plain; version=0.0.4"));
            const Page page = parsePage(response.body);
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            QCOMPARE(page.familyOrder, whole.familyOrder);
            QCOMPARE(page.help, whole.help);
            QCOMPARE(page.type, whole.type);
            std::vector<QByteArray> lines;
            for (const auto &s : page.samples) {
                lines.push_back(s.line);
            }
            QCOMPARE(lines, linesOfHost[hostname]);
            QCOMPARE(lines.size(), size_t(onlineGpus[k]) * whole.familyOrder.size());
            if (k == downNode) {
                QCOMPARE(response.body, headers(whole, whole.familyOrder));
            }
        }
    }

    // Each node's node_exporter page: the InfiniBand collector's families with its help and types, one series per
    // online GPU's rail NIC (device mlx5_<k>, port 1, no other label), the port's state as node_exporter's ids and
    // the counters the simulator's totals; a down node's page has its headers only; the file_sd targets list them
    // and the facility page, which a liquid-cooled fleet fills per rack.
    void nodeExporterPages()
    {
        const auto &shape = m_source->shape();
        const auto frame = m_source->latest();
        const auto &families = be::ExporterPage::nodeFamilies();
        const auto &state = frame->plane(be::MetricId::RailLinkState);
        size_t lines = 0;
        size_t counterLines = 0;
        size_t uplinkLines = 0;
        for (uint32_t k = 0; k < shape.nodes.size(); ++k) {
            const auto &node = shape.nodes[k];
            const auto response = get(m_exporter->port(), "/node-exporter/" + QByteArray::fromStdString(node.hostname));
            QCOMPARE(response.status, 200);
            QVERIFY(response.head.contains("Content-Type: text/plain; version=0.0.4"));
            const Page page = parsePage(response.body);
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            QCOMPARE(page.familyOrder.size(), families.size() + 1); // and infiniband_exporter's uplinks
            for (const auto &f : families) {
                QCOMPARE(page.type.at(f.name), QByteArray(f.type));
                QCOMPARE(page.help.at(f.name), QByteArray(f.help));
            }
            for (const auto &s : page.samples) {
                if (s.name == be::ExporterPage::uplinkFamily) {
                    // The NIC's leaf and port as the simulated fabric cables it, named as infiniband_exporter does.
                    const QByteArray hca = s.labels.at("hca");
                    QVERIFY2(hca.startsWith(QByteArray(QByteArray::fromStdString(node.hostname) + " mlx5_")),
                        s.line.constData());
                    const uint32_t g = node.firstGpu + hca.mid(hca.indexOf(' ') + 6).toUInt();
                    QVERIFY(g < node.firstGpu + node.gpuCount && fleetscope::testing::online(*frame, g));
                    const auto &link = shape.gpuLinks.at(g);
                    QCOMPARE(s.labels.at("uplink"), QByteArray::fromStdString(shape.domains.at(link.leaf).name));
                    QCOMPARE(s.labels.at("uplink_port").toUInt(), link.port);
                    QCOMPARE(s.labels.at("uplink_type"), QByteArray("SW"));
                    QCOMPARE(s.value.toDouble(), 1.0);
                    ++uplinkLines;
                    continue;
                }
                QCOMPARE(s.labels.size(), size_t { 2 });
                QCOMPARE(s.labels.at("port"), QByteArray("1"));
                QVERIFY(s.labels.at("device").startsWith("mlx5_"));
                const uint32_t local = s.labels.at("device").mid(5).toUInt();
                QVERIFY(local < node.gpuCount);
                const uint32_t g = node.firstGpu + local;
                QVERIFY(fleetscope::testing::online(*frame, g));
                const double value = s.value.toDouble();
                const bool up = state[g] > 0.5F;
                if (s.name == "node_infiniband_state_id") {
                    QCOMPARE(value, up ? 4.0 : 1.0);
                } else if (s.name == "node_infiniband_physical_state_id") {
                    QCOMPARE(value, up ? 5.0 : 2.0);
                } else {
                    QVERIFY(frame->railTotals);
                    const auto &t = *frame->railTotals;
                    const double expected = s.name == "node_infiniband_link_downed_total" ? t.linkDowns[g]
                        : s.name == "node_infiniband_symbol_error_total"                  ? t.symbolErrors[g]
                        : s.name == "node_infiniband_port_errors_received_total"
                        ? t.receiveErrors[g]
                        : std::floor(static_cast<double>(t.transmitWaitMicroseconds[g]) * 6250.0);
                    QCOMPARE(value, expected);
                    ++counterLines;
                }
                ++lines;
            }
        }
        uint32_t online = 0;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            online += fleetscope::testing::online(*frame, g) ? 1 : 0;
        }
        QVERIFY(online < shape.gpuCount); // a node is down: its NICs are absent
        QCOMPARE(lines, size_t { online } * families.size());
        QCOMPARE(counterLines, size_t { online } * 4);
        QCOMPARE(uplinkLines, size_t { online });
        QCOMPARE(get(m_exporter->port(), "/node-exporter/no-such-host").status, 404);
        QCOMPARE(get(m_exporter->port(), "/node-exporter/").status, 404);
        QCOMPARE(get(m_exporter->port(), "/node-exporter/bad%zz").status, 400);
        QCOMPARE(get(m_exporter->port(), "/node-exporter").status, 404);

        // An air-cooled fleet: the facility page has the families' headers and no rack.
        const auto facility = get(m_exporter->port(), "/facility");
        QCOMPARE(facility.status, 200);
        const Page airPage = parsePage(facility.body);
        QVERIFY2(airPage.error.isEmpty(), qPrintable(airPage.error));
        QCOMPARE(airPage.familyOrder.size(), size_t { 4 });
        QVERIFY(airPage.samples.empty());

        // The targets: a group per node, then the facility's.
        QJsonParseError parseError {};
        const auto doc = QJsonDocument::fromJson(
            QByteArray::fromStdString(be::ExporterServer::nodeExporterSdTargets(shape, "127.0.0.1:9400")), &parseError);
        QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
        QCOMPARE(doc.array().size(), static_cast<qsizetype>(shape.nodes.size() + 1));
        const auto last = doc.array().last().toObject().value(QStringLiteral("labels")).toObject();
        QCOMPARE(last.value(QStringLiteral("__metrics_path__")).toString(), QStringLiteral("/facility"));
        const auto first = doc.array().first().toObject().value(QStringLiteral("labels")).toObject();
        QCOMPARE(first.value(QStringLiteral("__metrics_path__")).toString(),
            QStringLiteral("/node-exporter/") + QString::fromStdString(shape.nodes[0].hostname));
        QCOMPARE(first.value(QStringLiteral("instance")).toString(), QString::fromStdString(shape.nodes[0].hostname));
    }

    // A liquid-cooled NVL72 fleet's facility page: each rack's loop and leak sensor, as its GPUs' planes hold them;
    // counters on the node pages never fall from step to step.
    void facilityAndGrowingCounters()
    {
        be::Simulator sim(1152, 7, 60.0, be::Scenario::Kind::None, be::Hardware::Gb200Nvl72);
        std::map<std::pair<QByteArray, QByteArray>, double> last; // (family, device@node) -> value
        size_t rises = 0;
        for (int step = 0; step < 6; ++step) {
            sim.step();
            const auto frame = sim.snapshot();
            const Page page
                = parsePage(QByteArray::fromStdString(be::ExporterPage::renderFacility(sim.shape(), *frame)));
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            std::map<QByteArray, size_t> perFamily;
            for (const auto &s : page.samples) {
                QCOMPARE(s.labels.size(), size_t { 1 });
                const auto rack = std::find_if(sim.shape().racks.begin(), sim.shape().racks.end(),
                    [&](const auto &r) { return QByteArray::fromStdString(r.name) == s.labels.at("rack"); });
                QVERIFY(rack != sim.shape().racks.end());
                const uint32_t g = sim.shape().nodes[rack->firstNode].firstGpu;
                be::MetricId id = be::MetricId::LeakDetected;
                for (const auto m :
                    { be::MetricId::CoolantSupplyTemp, be::MetricId::CoolantReturnTemp, be::MetricId::CoolantFlow }) {
                    if (QByteArray::fromStdString(be::metricCatalog()[static_cast<size_t>(m)].dcgmField) == s.name) {
                        id = m;
                    }
                }
                // Printed to the hundredth.
                QVERIFY2(std::abs(s.value.toDouble() - static_cast<double>(frame->plane(id)[g])) <= 0.005 + 1e-6,
                    s.line.constData());
                ++perFamily[s.name];
            }
            QCOMPARE(perFamily.size(), size_t { 4 });
            for (const auto &[name, count] : perFamily) {
                QCOMPARE(count, sim.shape().racks.size());
            }
            const auto rendered = be::ExporterPage::renderNodeExporter(sim.shape(), *frame);
            for (uint32_t k = 0; k < sim.shape().nodes.size(); k += 7) {
                const Page node = parsePage(QByteArray::fromStdString(rendered.nodePage(k)));
                QVERIFY2(node.error.isEmpty(), qPrintable(node.error));
                for (const auto &s : node.samples) {
                    if (node.type.at(s.name) != "counter") {
                        continue;
                    }
                    const std::pair<QByteArray, QByteArray> key { s.name,
                        QByteArray(s.labels.at("device") + '@' + QByteArray::number(k)) };
                    const double value = s.value.toDouble();
                    if (const auto it = last.find(key); it != last.end()) {
                        QVERIFY2(value >= it->second,
                            qPrintable(QStringLiteral("%1 on node %2 fell from %3 at step %4")
                                           .arg(QString::fromLatin1(s.line))
                                           .arg(k)
                                           .arg(it->second, 0, 'f', 0)
                                           .arg(step)));
                        rises += value > it->second ? 1 : 0;
                    }
                    last[key] = value;
                }
            }
        }
        QVERIFY2(rises > 0, "no counter rose: growth went untested");
    }

    // The node pages, one after the other on one connection as a scraper's would come, together are the whole page:
    // per family, their lines in node order are the whole page's. And none of those scrapes rendered the fleet again.
    void nodePagesMakeTheWholePage()
    {
        const auto wholeResponse = get(m_exporter->port(), "/metrics");
        QCOMPARE(wholeResponse.status, 200);
        const Page whole = parsePage(wholeResponse.body);
        QVERIFY2(whole.error.isEmpty(), qPrintable(whole.error));
        const uint64_t renders = m_exporter->renderCount();
        QVERIFY(renders >= 1);

        std::map<QByteArray, QByteArray> linesOfFamily;
        QTcpSocket socket;
        QVERIFY(connectTo(socket, m_exporter->port()));
        for (const auto &node : m_source->shape().nodes) {
            socket.write("GET /metrics/" + QByteArray::fromStdString(node.hostname) + " HTTP/1.1\r\nHost: x\r\n\r\n");
            const auto response = readResponse(socket, QDeadlineTimer(20000));
            QVERIFY(response.complete);
            QCOMPARE(response.status, 200);
            const Page page = parsePage(response.body);
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            for (const auto &s : page.samples) {
                linesOfFamily[s.name] += s.line + '\n';
            }
        }
        QByteArray joined;
        for (const auto &name : whole.familyOrder) {
            joined += headers(whole, { name }) + linesOfFamily[name];
        }
        QCOMPARE(joined, wholeResponse.body);
        QCOMPARE(m_exporter->renderCount(), renders);
    }

    // Many scrapes at once, of nodes and of the whole page, share one render of the frame; a moving fleet is rendered
    // again for a new frame, not for each scrape.
    void renderedOncePerFrame()
    {
        {
            be::ExporterServer exporter(*m_source, be::ExporterPage::Options());
            std::string error;
            QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
            QCOMPARE(exporter.renderCount(), uint64_t(0));
            const auto &nodes = m_source->shape().nodes;
            std::vector<std::unique_ptr<QTcpSocket>> sockets;
            for (size_t i = 0; i < 48; ++i) {
                sockets.push_back(std::make_unique<QTcpSocket>());
                QVERIFY(connectTo(*sockets.back(), exporter.port()));
            }
            for (size_t i = 0; i < sockets.size(); ++i) {
                const QByteArray path = i % 8 == 0
                    ? QByteArray("/metrics")
                    : "/metrics/" + QByteArray::fromStdString(nodes[(i * 37) % nodes.size()].hostname);
                sockets[i]->write("GET " + path + " HTTP/1.1\r\nConnection: close\r\n\r\n");
                sockets[i]->flush();
            }
            for (auto &socket : sockets) {
                const auto response = readResponse(*socket, QDeadlineTimer(20000));
                QVERIFY(response.complete);
                QCOMPARE(response.status, 200);
            }
            QCOMPARE(exporter.renderCount(), uint64_t(1));
        }

        // Scrapes must come faster than frames for the count to tell anything: a small fleet (each node page cheap to
        // render) and frames a quarter of a second apart, so that it holds under ThreadSanitizer too.
        LiveExporter live(256, std::chrono::milliseconds(250));
        const be::FrameSource &moving = live.source;
        be::ExporterServer &exporter = live.exporter;
        uint64_t first = 0;
        QVERIFY(live.start(&first));
        const uint64_t rendersBefore = exporter.renderCount();
        QTcpSocket socket;
        QVERIFY(connectTo(socket, exporter.port()));
        const auto &nodes = moving.shape().nodes;
        size_t scrapes = 0;
        QDeadlineTimer deadline(30000);
        while (moving.latest()->sequence < first + 4 && !deadline.hasExpired()) {
            socket.write("GET /metrics/" + QByteArray::fromStdString(nodes[scrapes % nodes.size()].hostname)
                + " HTTP/1.1\r\n\r\n");
            const auto response = readResponse(socket, QDeadlineTimer(20000));
            QVERIFY(response.complete);
            QCOMPARE(response.status, 200);
            ++scrapes;
        }
        // The page in hand may be a frame behind while the render-ahead thread renders the newest (slow under the
        // sanitizers): ask until it has caught up.
        uint64_t last = 0;
        QTRY_VERIFY2_WITH_TIMEOUT((exporter.page(&last), last >= first + 4), "the fleet did not move", 20000);
        const uint64_t renders = exporter.renderCount() - rendersBefore;
        // Each render is of a frame published after the first: at most one per frame, while the scrapes were many.
        QVERIFY2(renders <= last - first,
            qPrintable(QStringLiteral("%1 renders for %2 new frames and %3 scrapes")
                           .arg(renders)
                           .arg(last - first)
                           .arg(scrapes)));
        QVERIFY2(scrapes > renders, "no more scrapes than frames: rendering per scrape would have passed too");
        QVERIFY2(renders >= 2, "the node scrapes did not follow the new frames");
    }

    // Once a page has been scraped, the next frame's is rendered ahead as soon as the frame is published, before any
    // scrape asks (a scrape that rendered would hold up the other connections of its HTTP thread); after a page no
    // one scraped, frames are not rendered.
    void pagesAreRenderedAhead()
    {
        LiveExporter live(4096, std::chrono::milliseconds(200));
        uint64_t first = 0;
        QVERIFY(live.start(&first)); // the first frame's page, asked for
        QTRY_COMPARE_WITH_TIMEOUT(live.exporter.renderCount(), uint64_t(2), 10000);
        const uint64_t sequence = live.source.latest()->sequence;
        QTRY_VERIFY_WITH_TIMEOUT(live.source.latest()->sequence >= sequence + 3, 10000);
        QCOMPARE(live.exporter.renderCount(), uint64_t(2));
        uint64_t scraped = 0;
        live.exporter.page(&scraped);
        QVERIFY(scraped > sequence);
        QTRY_COMPARE_WITH_TIMEOUT(live.exporter.renderCount(), uint64_t(4), 10000);
    }

    // The targets file: valid JSON, one target group per node, in node order, each at the exporter's address with
    // its node's page as __metrics_path__, and every path one the exporter answers.
    void targetsFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("targets.json"));
        std::string error;
        QVERIFY2(m_exporter->writeTargetsFile(path.toStdString(), &error), error.c_str());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonParseError parseError {};
        const auto doc = QJsonDocument::fromJson(file.readAll(), &parseError);
        QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
        QVERIFY(doc.isArray());
        const auto groups = doc.array();
        const auto &shape = m_source->shape();
        QCOMPARE(static_cast<size_t>(groups.size()), shape.nodes.size());
        const QString address = QStringLiteral("127.0.0.1:%1").arg(m_exporter->port());
        for (qsizetype k = 0; k < groups.size(); ++k) {
            const auto group = groups.at(k).toObject();
            QCOMPARE(group.size(), 2);
            QCOMPARE(group.value(QStringLiteral("targets")).toArray(), QJsonArray { address });
            const auto labels = group.value(QStringLiteral("labels")).toObject();
            const QString hostname = QString::fromStdString(shape.nodes[static_cast<size_t>(k)].hostname);
            QCOMPARE(labels.size(), 2);
            QCOMPARE(
                labels.value(QStringLiteral("__metrics_path__")).toString(), QStringLiteral("/metrics/") + hostname);
            QCOMPARE(labels.value(QStringLiteral("instance")).toString(), hostname);
            const auto page
                = get(m_exporter->port(), labels.value(QStringLiteral("__metrics_path__")).toString().toUtf8());
            QCOMPARE(page.status, 200);
        }
        // Written whole: nothing is left beside it.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList { QStringLiteral("targets.json") });
        // A place it cannot be written: false, saying why, and nothing written.
        error.clear();
        QVERIFY(
            !m_exporter->writeTargetsFile(dir.filePath(QStringLiteral("missing/targets.json")).toStdString(), &error));
        QVERIFY(!error.empty());

        // Hostnames that JSON must escape come back as they were.
        be::FleetShape odd;
        odd.nodes.resize(3);
        odd.nodes[0].hostname = "quote\"back\\slash";
        odd.nodes[1].hostname = "tab\tnew\nline\x01";
        odd.nodes[2].hostname = "r\xc3\xa9seau";
        const auto oddDoc = QJsonDocument::fromJson(
            QByteArray::fromStdString(be::ExporterServer::fileSdTargets(odd, "[::1]:9400")), &parseError);
        QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
        QCOMPARE(oddDoc.array().size(), 3);
        for (qsizetype k = 0; k < 3; ++k) {
            const auto group = oddDoc.array().at(k).toObject();
            QCOMPARE(group.value(QStringLiteral("targets")).toArray(), QJsonArray { QStringLiteral("[::1]:9400") });
            QCOMPARE(group.value(QStringLiteral("labels")).toObject().value(QStringLiteral("instance")).toString(),
                QString::fromStdString(odd.nodes[static_cast<size_t>(k)].hostname));
        }
    }
};

QTEST_GUILESS_MAIN(TestExporter)
#include "tst_exporter.moc"
