// SPDX-License-Identifier: Apache-2.0
// The push path with real senders: the simulator's dcgm-exporter page scraped by Debian's vmagent (and by a real
// Prometheus 2.42 with a remote_write section), pushed to the fleetscope-backend executable started as an operator
// would (--source remote-write), and served over gRPC to the real client library. What the client receives is what
// the simulator holds, for the same GPUs. With vmagent writing to VictoriaMetrics too, QueryRange is answered from
// VictoriaMetrics. The simulation is frozen on one frame so that every scrape sees the same page. Loopback only,
// ports picked free, storage in a temporary directory.
#include "analytics/fleetanalytics.h"
#include "client/telemetryclient.h"
#include "core/framesource.h"
#include "sim/exporterserver.h"
#include "sim/simulatedfleet.h"
#include "tests/backend/testing/chaincheck.h"
#include "tests/backend/testing/prometheusprocess.h"
#include "tests/backend/testing/switchedfleet.h"
#include "tests/backend/testing/testcertificates.h"
#include "tests/realparts.h"

#include "fleetscope/telemetry/v1/telemetry.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkProxy>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <set>

using namespace fleetscope;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using namespace fleetscope::testing;
using namespace std::chrono_literals;

namespace {

int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The simulator's floor plan and fabric as an operator's topology file: its halls, rows, racks and hosts in order, its
// network domains (scalable units, spine planes, leaves), and each host's scalable unit and rail links, so that a
// backend fed by pushes knows which leaf each GPU hangs off.
QByteArray fabricTopologyOf(const be::FleetShape &shape)
{
    auto name = [&](int64_t d) { return QString::fromStdString(shape.domains[static_cast<size_t>(d)].name); };
    auto network = [](be::DomainKind kind) {
        return kind == be::DomainKind::ScalableUnit || kind == be::DomainKind::SpinePlane
            || kind == be::DomainKind::LeafSwitch;
    };
    QJsonArray domains;
    for (const auto &d : shape.domains) {
        if (!network(d.kind)) {
            continue;
        }
        QJsonObject o { { QStringLiteral("kind"), QString::fromLatin1(be::domainKindKey(d.kind)) },
            { QStringLiteral("name"), QString::fromStdString(d.name) } };
        if (d.parent >= 0 && network(shape.domains[static_cast<size_t>(d.parent)].kind)) {
            o.insert(QStringLiteral("parent"), name(d.parent));
        }
        if (d.rail >= 0) {
            o.insert(QStringLiteral("rail"), d.rail);
        }
        domains.append(o);
    }
    QJsonArray halls;
    for (const auto &row : shape.rows) {
        if (halls.isEmpty()
            || halls.last().toObject().value(QStringLiteral("name")).toString() != QString::fromStdString(row.hall)) {
            halls.append(QJsonObject { { QStringLiteral("name"), QString::fromStdString(row.hall) },
                { QStringLiteral("rows"), QJsonArray() } });
        }
        QJsonArray racks;
        for (uint32_t r = row.firstRack; r < row.firstRack + row.rackCount; ++r) {
            const auto &rack = shape.racks[r];
            QJsonArray hosts;
            for (uint32_t n = rack.firstNode; n < rack.firstNode + rack.nodeCount; ++n) {
                const auto &node = shape.nodes[n];
                QJsonObject host { { QStringLiteral("hostname"), QString::fromStdString(node.hostname) },
                    { QStringLiteral("gpus"), static_cast<int>(node.gpuCount) } };
                for (const uint32_t d : node.domains) {
                    if (shape.domains[d].kind == be::DomainKind::ScalableUnit) {
                        host.insert(QStringLiteral("scalableUnit"), name(d));
                    }
                }
                QJsonArray links;
                for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount && g < shape.gpuLinks.size(); ++g) {
                    const auto &link = shape.gpuLinks[g];
                    if (link.leaf != be::GpuLink::none) {
                        links.append(QJsonObject { { QStringLiteral("leaf"), name(link.leaf) },
                            { QStringLiteral("port"), static_cast<int>(link.port) } });
                    }
                }
                if (links.size() == static_cast<qsizetype>(node.gpuCount)) {
                    host.insert(QStringLiteral("links"), links);
                }
                hosts.append(host);
            }
            racks.append(QJsonObject {
                { QStringLiteral("name"), QString::fromStdString(rack.name) }, { QStringLiteral("hosts"), hosts } });
        }
        QJsonObject hall = halls.last().toObject();
        QJsonArray rows = hall.value(QStringLiteral("rows")).toArray();
        rows.append(QJsonObject {
            { QStringLiteral("name"), QString::fromStdString(row.name) }, { QStringLiteral("racks"), racks } });
        hall.insert(QStringLiteral("rows"), rows);
        halls.replace(halls.size() - 1, hall);
    }
    return QJsonDocument(QJsonObject { { QStringLiteral("site"), QStringLiteral("e2e") },
                             { QStringLiteral("halls"), halls }, { QStringLiteral("domains"), domains } })
        .toJson();
}

} // namespace

class TestRemoteWriteE2e : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_vmagent = QStandardPaths::findExecutable(QStringLiteral("vmagent"));
        if (m_vmagent.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT(
                "the vmagent binary is not installed (Debian package 'victoria-metrics'; scripts/common.sh installs "
                "it for CI): the push path with real senders is not tested here");
        }
        const QString unserved = m_fleet.serve(); // a node down, every scrape the same page
        QVERIFY2(unserved.isEmpty(), qPrintable(unserved));
        QVERIFY(m_dir.isValid());
        m_scrapeConfig = m_dir.filePath(QStringLiteral("scrape.yml"));
        QVERIFY(testing::writeFile(m_scrapeConfig, testing::scrapeConfig(m_fleet.exporter->port())));
    }

    // vmagent scrapes the exporter every second and remote-writes to the backend; the backend learns the layout and
    // the interval from the pushes, and the client gets the simulator's values.
    void vmagentPushes()
    {
        const int port = freePort();
        ProcessGuard backend;
        startBackend(&backend, port);
        ProcessGuard agent;
        startVmagent(&agent, { QStringLiteral("http://127.0.0.1:%1/api/v1/write").arg(port) });
        const auto topology = subscribe(backend);
        QVERIFY(topology);
        QVERIFY2(m_backendLog.contains("windows of 1000 ms (the scrape interval the samples show)"),
            m_backendLog.constData());
        // The simulator's page is dcgm-exporter 3.x-4.8.2's: Hostname, DCGM_FI_DEV_CLOCKS_EVENT_REASONS.
        QVERIFY2(m_backendLog.contains("dcgm-exporter profile 3.x-4.8.2"), m_backendLog.constData());
        checkFrame(*topology);
    }

    // The fleet's 32 node targets (one dcgm-exporter page per node, as in a real fleet) shared by two vmagents
    // (-promscrape.cluster.membersCount=2, memberNum 0 and 1), both pushing to one backend: each scrapes about half,
    // and the frames hold every GPU, equal to the simulator's. The nodes' node_exporter pages (and the facility's)
    // are a job of their own, shared too: every GPU's rail link arrives, up, on its GPU.
    void twoVmagentsShareTheTargets()
    {
        const QString targets = m_dir.filePath(QStringLiteral("targets.json"));
        const QString nodeTargets = m_dir.filePath(QStringLiteral("node-targets.json"));
        std::string error;
        QVERIFY2(m_fleet.exporter->writeTargetsFile(targets.toStdString(), &error), error.c_str());
        QVERIFY2(m_fleet.exporter->writeNodeExporterTargetsFile(nodeTargets.toStdString(), &error), error.c_str());
        const QString config = m_dir.filePath(QStringLiteral("nodes.yml"));
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        // The exporter, built with the sanitizer, may take longer than a second to render a page.
        const QByteArray every = "2s";
#else
        const QByteArray every = "1s";
#endif
        QVERIFY(testing::writeFile(config,
            "global:\n  scrape_interval: " + every + "\n  scrape_timeout: " + every
                + "\nscrape_configs:\n  - job_name: dcgm\n"
                  "    file_sd_configs:\n      - files: ['"
                + targets.toUtf8() + "']\n" + testing::nodeExporterScrapeJob(nodeTargets)));
        const int port = freePort();
        ProcessGuard backend;
        startBackend(&backend, port);
        const QString url = QStringLiteral("http://127.0.0.1:%1/api/v1/write").arg(port);
        ProcessGuard members[2];
        int httpPorts[2] = {};
        for (int member = 0; member < 2; ++member) {
            startVmagent(&members[member], { url },
                { QStringLiteral("-promscrape.cluster.membersCount=2"),
                    QStringLiteral("-promscrape.cluster.memberNum=%1").arg(member) },
                config, &httpPorts[member]);
        }
        const auto topology = subscribe(backend, { QStringLiteral("rail_link_state") });
        QVERIFY(topology);
        // The layout was learnt from both members' pushes: a member alone would have given about half the nodes.
        checkFrame(*topology);
        const auto withLinks = waitForPlaneOfEveryGpu(*m_client, QStringLiteral("rail_link_state"), 10000);
        QVERIFY2(withLinks, "no frame came after the first");
        const MetricPlane *links = withLinks->plane(QStringLiteral("rail_link_state"));
        QVERIFY(links != nullptr);
        QCOMPARE(links->values.size(), size_t { topology->gpuCount });
        for (uint32_t i = 0; i < topology->gpuCount; ++i) {
            QVERIFY2(links->values[i] == 1.0F, qPrintable(QStringLiteral("GPU %1: %2").arg(i).arg(links->values[i])));
        }
        // Each member scrapes some of the targets, not all, and together all of them: the sharing is real. Each node
        // has a dcgm-exporter and a node_exporter target; the facility is one more.
        const int targetCount = 2 * static_cast<int>(m_fleet.simulator->shape().nodes.size()) + 1;
        int total = 0;
        for (int member = 0; member < 2; ++member) {
            const auto answer = QJsonDocument::fromJson(httpGet(httpPorts[member], "/api/v1/targets")).object();
            const int active = static_cast<int>(answer.value(QStringLiteral("data"))
                                                    .toObject()
                                                    .value(QStringLiteral("activeTargets"))
                                                    .toArray()
                                                    .size());
            QVERIFY2(active > 0 && active < targetCount,
                qPrintable(QStringLiteral("member %1 scrapes %2 targets").arg(member).arg(active)));
            total += active;
        }
        QCOMPARE(total, targetCount);
    }

    // The same with a real Prometheus 2.42 as the sender: its remote_write queue, with a batch deadline under the
    // receiver's delay.
    void prometheusPushes()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("the prometheus binary is not installed (Debian package 'prometheus')");
        }
        const int port = freePort();
        ProcessGuard backend;
        startBackend(&backend, port);
        const QString config = m_dir.filePath(QStringLiteral("prometheus.yml"));
        QVERIFY(testing::writeFile(config,
            testing::scrapeConfig(m_fleet.exporter->port())
                + "remote_write:\n"
                  "  - url: http://127.0.0.1:"
                + QByteArray::number(port)
                + "/api/v1/write\n"
                  "    queue_config:\n"
                  "      batch_send_deadline: 200ms\n"
                  "      min_backoff: 100ms\n"));
        ProcessGuard server;
        QVERIFY(testing::startPrometheus(
            &server, prometheus, config, m_dir.filePath(QStringLiteral("prometheus-data")), freePort()));
        const auto topology = subscribe(backend);
        QVERIFY2(topology, server.process.readAll().constData());
        checkFrame(*topology);
    }

    // A GPU's network attachment from labels alone: a real Prometheus scrapes the dcgm-exporter page and the nodes'
    // node_exporter pages, whose infiniband_hca_uplink_info series (infiniband_exporter's, as its textfile output
    // puts them there) name each rail NIC's leaf switch and port, and remote-writes both to a backend started without
    // a topology file. The console's topology cables every GPU as the simulated fabric does, each leaf a leaf switch
    // of its rail.
    void uplinksFromLabels()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("the prometheus binary is not installed (Debian package 'prometheus')");
        }
        const QString nodeTargets = m_dir.filePath(QStringLiteral("uplink-node-targets.json"));
        std::string error;
        QVERIFY2(m_fleet.exporter->writeNodeExporterTargetsFile(nodeTargets.toStdString(), &error), error.c_str());
        const int port = freePort();
        ProcessGuard backend;
        startBackend(&backend, port);
        const QString config = m_dir.filePath(QStringLiteral("prometheus-uplinks.yml"));
        QVERIFY(testing::writeFile(config,
            testing::scrapeConfig(m_fleet.exporter->port()) + testing::nodeExporterScrapeJob(nodeTargets)
                + "remote_write:\n"
                  "  - url: http://127.0.0.1:"
                + QByteArray::number(port)
                + "/api/v1/write\n"
                  "    queue_config:\n"
                  "      batch_send_deadline: 200ms\n"
                  "      min_backoff: 100ms\n"));
        ProcessGuard server;
        QVERIFY(testing::startPrometheus(
            &server, prometheus, config, m_dir.filePath(QStringLiteral("prometheus-uplinks-data")), freePort()));
        const auto topology = subscribe(backend);
        QVERIFY2(topology, server.process.readAll().constData());
        const QByteArray linked
            = QByteArray::number(m_fleet.online) + " GPUs' leaf switch and port from infiniband_hca_uplink_info";
        QVERIFY2(m_backendLog.contains(linked), m_backendLog.constData());

        const auto &shape = m_fleet.simulator->shape();
        const auto map = simulatorGpus(*topology);
        QCOMPARE(topology->gpuLinks.size(), size_t { topology->gpuCount });
        for (uint32_t i = 0; i < topology->gpuCount; ++i) {
            QVERIFY(map[i] >= 0);
            const auto &want = shape.gpuLinks.at(static_cast<size_t>(map[i]));
            const auto &got = topology->gpuLinks[i];
            QVERIFY2(got.leaf < topology->domains.size(), qPrintable(topology->uuidText(i)));
            const auto &leaf = topology->domains[got.leaf];
            QCOMPARE(leaf.name, QString::fromStdString(shape.domains.at(want.leaf).name));
            QCOMPARE(leaf.kind, DomainKind::LeafSwitch);
            QCOMPARE(leaf.rail, shape.domains.at(want.leaf).rail);
            QCOMPARE(got.port, want.port);
        }
    }

    // The door locked: the backend takes pushes only over TLS with a token (--remote-write-tls-cert, -tls-key,
    // -token-file), and real senders push through it as operators configure them: vmagent with
    // -remoteWrite.bearerTokenFile and -remoteWrite.tlsCAFile, Prometheus with authorization.credentials_file and
    // tls_config.ca_file. A vmagent with another token gets nothing in (401, logged without the token).
    void sendersPushOverTlsWithAToken()
    {
        testing::TestCertificates certs;
        QVERIFY2(certs.make(), qPrintable(certs.error()));
        const QString tokens = certs.write(QStringLiteral("tokens"), "vmagent-e2e-token\nprometheus-e2e-token\n");
        const QString vmagentToken = certs.write(QStringLiteral("vmagent.token"), "vmagent-e2e-token\n");
        const QString prometheusToken = certs.write(QStringLiteral("prometheus.token"), "prometheus-e2e-token\n");
        const QString wrongToken = certs.write(QStringLiteral("wrong.token"), "guessed\n");
        for (const QString &file : { tokens, vmagentToken, prometheusToken, wrongToken }) {
            QVERIFY(QFile::setPermissions(file, QFile::ReadOwner | QFile::WriteOwner));
        }
        const QStringList door = { QStringLiteral("--remote-write-tls-cert"), certs.crt(QStringLiteral("server")),
            QStringLiteral("--remote-write-tls-key"), certs.key(QStringLiteral("server")),
            QStringLiteral("--remote-write-token-file"), tokens };
        const QString ca = certs.crt(QStringLiteral("ca"));
        {
            const int port = freePort();
            ProcessGuard backend;
            startBackend(&backend, port, door);
            const QString url = QStringLiteral("https://127.0.0.1:%1/api/v1/write").arg(port);
            ProcessGuard stranger;
            startVmagent(&stranger, { url },
                { QStringLiteral("-remoteWrite.bearerTokenFile=") + wrongToken,
                    QStringLiteral("-remoteWrite.tlsCAFile=") + ca });
            ProcessGuard agent;
            startVmagent(&agent, { url },
                { QStringLiteral("-remoteWrite.bearerTokenFile=") + vmagentToken,
                    QStringLiteral("-remoteWrite.tlsCAFile=") + ca });
            const auto topology = subscribe(backend);
            QVERIFY(topology);
            checkFrame(*topology);
            QVERIFY2(m_backendLog.contains("refused 127.0.0.1: a token that is not in the token file"),
                m_backendLog.constData());
            QVERIFY(!m_backendLog.contains("guessed") && !m_backendLog.contains("vmagent-e2e-token"));
            QVERIFY2(m_backendLog.contains("listening on https://"), m_backendLog.constData());
        }
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("the prometheus binary is not installed (Debian package 'prometheus')");
        }
        const int port = freePort();
        ProcessGuard backend;
        startBackend(&backend, port, door);
        const QString config = m_dir.filePath(QStringLiteral("prometheus-tls.yml"));
        QVERIFY(testing::writeFile(config,
            testing::scrapeConfig(m_fleet.exporter->port()) + "remote_write:\n  - url: https://127.0.0.1:"
                + QByteArray::number(port) + "/api/v1/write\n    authorization:\n      credentials_file: "
                + prometheusToken.toUtf8() + "\n    tls_config:\n      ca_file: " + ca.toUtf8()
                + "\n    queue_config:\n      batch_send_deadline: 200ms\n      min_backoff: 100ms\n"));
        ProcessGuard server;
        QVERIFY(testing::startPrometheus(
            &server, prometheus, config, m_dir.filePath(QStringLiteral("prometheus-tls-data")), freePort()));
        const auto topology = subscribe(backend);
        QVERIFY2(topology, server.process.readAll().constData());
        checkFrame(*topology);
    }

    // vmagent writes to VictoriaMetrics (history) and to the backend (live) at once; QueryRange is answered from
    // VictoriaMetrics, also for the time before the backend had its first frame.
    void historyFromVictoriaMetrics()
    {
        const QString victoriaMetrics = QStandardPaths::findExecutable(QStringLiteral("victoria-metrics"));
        if (victoriaMetrics.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT("the victoria-metrics binary is not installed");
        }
        const int vmPort = freePort();
        ProcessGuard vm;
        vm.process.setProcessChannelMode(QProcess::MergedChannels);
        vm.process.start(victoriaMetrics,
            { QStringLiteral("-storageDataPath=") + m_dir.filePath(QStringLiteral("vm-data")),
                QStringLiteral("-httpListenAddr=127.0.0.1:%1").arg(vmPort), QStringLiteral("-search.latencyOffset=0s"),
                QStringLiteral("-loggerLevel=WARN") });
        QVERIFY(vm.process.waitForStarted(10000));
        QTRY_VERIFY_WITH_TIMEOUT(!httpGet(vmPort, "/health", 1000).isEmpty(), 20000);

        const int port = freePort();
        const int64_t pushedFrom = nowMs();
        ProcessGuard backend;
        startBackend(
            &backend, port, { QStringLiteral("--prometheus-url"), QStringLiteral("http://127.0.0.1:%1").arg(vmPort) });
        ProcessGuard agent;
        startVmagent(&agent,
            { QStringLiteral("http://127.0.0.1:%1/api/v1/write").arg(vmPort),
                QStringLiteral("http://127.0.0.1:%1/api/v1/write").arg(port) });
        const auto topology = subscribe(backend);
        QVERIFY(topology);
        QVERIFY2(m_backendLog.contains("remote write: history from http://127.0.0.1:"), m_backendLog.constData());
        checkFrame(*topology);
        const int64_t firstFrameMs = m_received->sampleTimeMs;

        // Every online GPU's temperature over the time vmagent has pushed, a row a second: rows from before the
        // backend's first frame exist only in VictoriaMetrics.
        const auto map = simulatorGpus(*topology);
        auto channel = grpc::CreateChannel(m_address.toStdString(), grpc::InsecureChannelCredentials());
        auto stub = pb::Telemetry::NewStub(channel);
        pb::QueryRangeRequest query;
        query.add_metric_ids("gpu_temp");
        query.set_from_ms(pushedFrom);
        query.set_to_ms(firstFrameMs);
        query.set_step_ms(1000);
        std::vector<pb::QueryRangePart> parts;
        QDeadlineTimer deadline(20000);
        int rowsBefore = 0;
        while (!deadline.hasExpired()) {
            httpGet(vmPort, "/internal/force_flush");
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 20s);
            auto reader = stub->QueryRange(&context, query);
            parts.clear();
            pb::QueryRangePart part;
            while (reader->Read(&part)) {
                parts.push_back(part);
            }
            const auto status = reader->Finish();
            QVERIFY2(status.ok(), status.error_message().c_str());
            rowsBefore = 0;
            for (const auto &p : parts) {
                for (int r = 0; r < p.sample_times_ms_size(); ++r) {
                    rowsBefore += p.sample_times_ms(r) < firstFrameMs ? 1 : 0;
                }
            }
            if (rowsBefore > 0) {
                break;
            }
            QTest::qWait(200);
        }
        QVERIFY2(rowsBefore > 0, "VictoriaMetrics answered no row from before the backend's first frame");
        const auto &temps = m_fleet.frame->plane(be::MetricId::GpuTemp);
        size_t compared = 0;
        for (const auto &p : parts) {
            QCOMPARE(p.metric_id(), std::string("gpu_temp"));
            for (int r = 0; r < p.sample_times_ms_size(); ++r) {
                for (int c = 0; c < p.gpus_size(); ++c) {
                    float v = 0;
                    std::memcpy(&v, p.values().data() + (static_cast<size_t>(r) * p.gpus_size() + c) * 4, 4);
                    if (std::isnan(v)) {
                        continue; // not yet scraped then
                    }
                    const auto g = static_cast<uint32_t>(map[p.gpus(c)]);
                    QCOMPARE(v, throughTheChain(be::MetricId::GpuTemp, temps[g]));
                    ++compared;
                }
            }
        }
        QVERIFY(compared >= m_fleet.online);
    }

    // A leaf switch down on the push path: the leaf-down scenario's fleet of two scalable units (in one alone a leaf's
    // GPUs are its spine plane's, and the incident names the plane), each node's dcgm-exporter and node_exporter pages
    // scraped by vmagent and pushed to the backend, which knows the fabric from its topology file (given the interval,
    // it is ready before the first push). The fleet's clock stands still until the backend's frames have every GPU's
    // rail link up; then it runs at 8x (the leaf goes down 120 simulated seconds later, 15 polls), and exactly the
    // GPUs the simulator has down (the leaf's rail of its scalable unit) read 0, and an incident naming that leaf
    // arrives over StreamEvents.
    void leafDownThroughVmagent()
    {
        be::SimulationOptions options;
        options.gpuCount = 512; // two scalable units: a leaf is less than its spine plane
        options.seed = 11;
        options.interval = 1000ms;
        options.speed = 8;
        options.scenario = be::Scenario::Kind::LeafDown;
        const QString topologyFile = m_dir.filePath(QStringLiteral("leaf-topology.json"));
        QVERIFY(testing::writeFile(topologyFile, fabricTopologyOf(be::SimulatedFleet::shapeOf(options))));
        const int port = freePort();
        ProcessGuard backend;
        startBackend(&backend, port,
            { QStringLiteral("--topology"), topologyFile, QStringLiteral("--remote-write-interval-ms"),
                QStringLiteral("1000") });
        // The receiver listens before the backend serves; with the layout and the interval given it serves at once.
        QTRY_VERIFY_WITH_TIMEOUT(backend.process.state() == QProcess::Running && canConnect(port), 20000);

        auto running = std::make_shared<std::atomic<bool>>(false);
        auto simulator = be::judgedSource(
            std::make_unique<SwitchedFleet>(options, running, SwitchedFleet::WhileOff::Held), options);
        const auto &shape = simulator->shape();
        QVERIFY(!shape.gpuLinks.empty());
        be::ExporterServer exporter(*simulator, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        const QString targets = m_dir.filePath(QStringLiteral("leaf-targets.json"));
        const QString nodeTargets = m_dir.filePath(QStringLiteral("leaf-node-targets.json"));
        QVERIFY2(exporter.writeTargetsFile(targets.toStdString(), &error), error.c_str());
        QVERIFY2(exporter.writeNodeExporterTargetsFile(nodeTargets.toStdString(), &error), error.c_str());
        const QString config = m_dir.filePath(QStringLiteral("leaf.yml"));
        QVERIFY(testing::writeFile(config,
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: dcgm\n"
            "    file_sd_configs:\n      - files: ['"
                + targets.toUtf8() + "']\n" + testing::nodeExporterScrapeJob(nodeTargets)));
        ProcessGuard agent;
        startVmagent(&agent, { QStringLiteral("http://127.0.0.1:%1/api/v1/write").arg(port) }, {}, config);

        const auto topology = subscribe(backend, { QStringLiteral("rail_link_state") });
        QVERIFY(topology);
        QCOMPARE(topology->gpuCount, shape.gpuCount); // the file's layout: GPU g is the simulator's
        const auto before = waitForPlaneOfEveryGpu(*m_client, QStringLiteral("rail_link_state"), 60000);
        QVERIFY2(before, "no frame with every GPU's rail link");
        const MetricPlane *links = before->plane(QStringLiteral("rail_link_state"));
        QVERIFY(links != nullptr && links->values.size() == shape.gpuCount);
        QVERIFY2(std::all_of(links->values.begin(), links->values.end(), [](float v) { return v == 1.0F; }),
            "a rail link read down while the fleet was still at its start");
        running->store(true);

        // The leaf's GPUs down, as the simulator has them: wait for the received frames to say what the simulator says.
        // A GPU counts as seen down once a frame had its link at 0: a scrape that failed leaves its node's ports
        // without a value in that frame (not up), and another frame has them.
        QSignalSpy frames(m_client.get(), &TelemetryClient::frameReady);
        std::vector<uint32_t> expected;
        std::set<uint32_t> seenDown;
        std::vector<uint32_t> received;
        QDeadlineTimer deadline(60000);
        while (!deadline.hasExpired() && (expected.empty() || received != expected)) {
            if (frames.isEmpty()) {
                frames.wait(1000);
            }
            FramePtr frame;
            while (!frames.isEmpty()) {
                frame = frames.takeFirst().at(0).value<FramePtr>();
            }
            const auto simulated = simulator->latest();
            expected.clear();
            for (uint32_t g = 0; g < shape.gpuCount; ++g) {
                if (simulated->plane(be::MetricId::RailLinkState)[g] == 0.0F) {
                    expected.push_back(g);
                }
            }
            const MetricPlane *plane = frame ? frame->plane(QStringLiteral("rail_link_state")) : nullptr;
            if (plane != nullptr && plane->values.size() == shape.gpuCount) {
                for (uint32_t g = 0; g < shape.gpuCount; ++g) {
                    if (plane->values[g] == 0.0F) {
                        seenDown.insert(g);
                    }
                }
                received.assign(seenDown.begin(), seenDown.end());
            }
        }
        QVERIFY2(!expected.empty() && received == expected,
            qPrintable(QStringLiteral("%1 links down in the simulator, %2 in the backend's frames")
                           .arg(expected.size())
                           .arg(received.size())));
        const uint32_t leaf = shape.gpuLinks[expected.front()].leaf;
        for (const uint32_t g : expected) {
            QCOMPARE(shape.gpuLinks[g].leaf, leaf);
        }
        const std::string leafName = shape.domains[leaf].name;

        // The incident naming the leaf, among the events the backend holds (it may have opened already).
        auto stub
            = pb::Telemetry::NewStub(grpc::CreateChannel(m_address.toStdString(), grpc::InsecureChannelCredentials()));
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 30s);
        pb::StreamEventsRequest since;
        since.set_since_ms(0);
        auto reader = stub->StreamEvents(&context, since);
        pb::Event e;
        std::string named;
        while (named.empty() && reader->Read(&e)) {
            if ((e.kind() == pb::EVENT_KIND_INCIDENT_OPEN || e.kind() == pb::EVENT_KIND_INCIDENT_UPDATE)
                && e.incident().has_domain() && e.incident().domain() < topology->domains.size()
                && topology->domains[e.incident().domain()].name.toStdString() == leafName) {
                named = e.text();
                QCOMPARE(e.incident().cause(), std::string("network"));
                QVERIFY2(e.incident().gpu_count() >= expected.size() / 2, e.text().c_str());
            }
        }
        context.TryCancel();
        while (reader->Read(&e)) { }
        reader->Finish();
        m_backendLog += backend.process.readAllStandardError();
        QVERIFY2(!named.empty(),
            qPrintable(QStringLiteral("no incident named leaf %1; the backend's log:\n%2")
                           .arg(QString::fromStdString(leafName), QString::fromUtf8(m_backendLog))));
        m_client.reset();
        exporter.stop();
        simulator->stop();
    }

private:
    // Whether something listens on 127.0.0.1:port.
    static bool canConnect(int port)
    {
        QTcpSocket socket;
        socket.setProxy(QNetworkProxy::NoProxy);
        socket.connectToHost(QStringLiteral("127.0.0.1"), static_cast<quint16>(port));
        return socket.waitForConnected(500);
    }

    void startBackend(ProcessGuard *guard, int port, const QStringList &extra = {})
    {
        guard->process.start(QStringLiteral(FLEETSCOPE_BIN_DIR "/fleetscope-backend"),
            QStringList { QStringLiteral("--source"), QStringLiteral("remote-write"),
                QStringLiteral("--remote-write-listen"), QStringLiteral("127.0.0.1:%1").arg(port),
                QStringLiteral("--remote-write-delay-ms"), QStringLiteral("1000"), QStringLiteral("--listen"),
                QStringLiteral("127.0.0.1:0") }
                + extra);
        QVERIFY(guard->process.waitForStarted(10000));
    }

    // Starts vmagent scraping config (the whole page's by default) and pushing to urls; its HTTP port in *httpPort.
    void startVmagent(ProcessGuard *guard, const QStringList &urls, const QStringList &extra = {},
        const QString &config = {}, int *httpPort = nullptr)
    {
        const int port = freePort();
        if (httpPort) {
            *httpPort = port;
        }
        QStringList arguments = { QStringLiteral("-promscrape.config=") + (config.isEmpty() ? m_scrapeConfig : config),
            QStringLiteral("-httpListenAddr=127.0.0.1:%1").arg(port),
            QStringLiteral("-remoteWrite.tmpDataPath=") + m_dir.filePath(QStringLiteral("vmagent-%1").arg(++m_agents)),
            QStringLiteral("-remoteWrite.flushInterval=200ms"), QStringLiteral("-loggerLevel=WARN") };
        for (const auto &url : urls) {
            arguments << QStringLiteral("-remoteWrite.url=") + url;
        }
        guard->process.setProcessChannelMode(QProcess::MergedChannels);
        guard->process.start(m_vmagent, arguments + extra);
        QVERIFY(guard->process.waitForStarted(10000));
    }

    // Waits for the backend to have learnt the fleet from the pushes ('listening on' comes after), subscribes the
    // real client, and returns the topology it received with m_received its first frame with data.
    TopologyPtr subscribe(ProcessGuard &backend, const QStringList &moreMetrics = {})
    {
        m_received.reset();
        m_client.reset();
        QByteArray output;
        const QByteArray address = testing::waitForLine(backend.process, "listening on ", 60000, &output);
        m_backendLog = backend.process.readAllStandardError();
        if (address.isEmpty()) {
            qWarning("fleetscope-backend did not start: %s\n%s", output.constData(), m_backendLog.constData());
            return nullptr;
        }
        m_address = QString::fromUtf8(address);
        m_client = std::make_unique<TelemetryClient>();
        QStringList ids;
        for (const auto &m : comparedMetrics()) {
            ids.append(m.second);
        }
        m_client->setMetrics(ids + moreMetrics);
        QSignalSpy frames(m_client.get(), &TelemetryClient::frameReady);
        m_client->start(m_address);
        m_received = waitForFrameWithData(frames, m_received, 20000);
        m_received = waitForFrameWithEveryGpu(frames, m_received, 10000);
        m_backendLog += backend.process.readAllStandardError();
        if (!m_received || m_received->sequence == 0) {
            qWarning("no frame with data reached the client (state: %s); the backend's log:\n%s",
                qPrintable(m_client->stateDetail()), m_backendLog.constData());
            return nullptr;
        }
        return m_client->topology();
    }

    // Received index -> simulator index, by UUID (the layout comes from the labels: online GPUs only).
    std::vector<int64_t> simulatorGpus(const Topology &topology)
    {
        const auto &shape = m_fleet.simulator->shape();
        std::map<QString, uint32_t> byUuid;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            byUuid[QString::fromStdString(shape.gpuUuid(g)).toLower()] = g;
        }
        std::vector<int64_t> out(topology.gpuCount, -1);
        for (uint32_t i = 0; i < topology.gpuCount; ++i) {
            const auto it = byUuid.find(topology.uuidText(i).toLower());
            if (it != byUuid.end()) {
                out[i] = it->second;
            }
        }
        return out;
    }

    void checkFrame(const Topology &topology)
    {
        QCOMPARE(topology.gpuCount, m_fleet.online);
        const auto map = simulatorGpus(topology);
        for (uint32_t i = 0; i < topology.gpuCount; ++i) {
            QVERIFY2(map[i] >= 0, qPrintable(topology.uuidText(i)));
        }
        size_t compared = 0;
        const QString difference = frameDifference(*m_received, *m_fleet.frame, map, &compared);
        QVERIFY2(difference.isEmpty(), qPrintable(difference));
        QCOMPARE(compared, static_cast<size_t>(m_fleet.online) * comparedMetrics().size());
        QVERIFY(m_received->sampleTimeMs > 0 && std::llabs(m_received->sampleTimeMs - nowMs()) < 30000);
    }

    // Destroyed in reverse: the client, then the exporter and the simulator it serves.
    FrozenFleetPage m_fleet;
    QTemporaryDir m_dir;
    QString m_scrapeConfig;
    QString m_vmagent;
    int m_agents = 0;
    QByteArray m_backendLog;
    QString m_address;
    std::unique_ptr<TelemetryClient> m_client;
    FramePtr m_received;
};

QTEST_GUILESS_MAIN(TestRemoteWriteE2e)
#include "tst_remotewrite_e2e.moc"
