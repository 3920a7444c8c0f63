// SPDX-License-Identifier: Apache-2.0
// The whole real chain: the simulator's dcgm-exporter page, scraped by a real Prometheus (Debian's `prometheus`),
// read back by the backend's Prometheus source and served over gRPC to the real client library. What the client
// receives is what the simulator holds, for the same GPUs, stamped with the scrape time Prometheus reports. The
// simulation is frozen on one frame so that every scrape sees the same page.
#include "analytics/fleetanalytics.h"
#include "client/telemetryclient.h"
#include "core/framesource.h"
#include "dcgm/uplinklabels.h"
#include "formats/topologyfile.h"
#include "prometheus/prometheussource.h"
#include "service/backendserver.h"
#include "sim/exporterserver.h"
#include "sim/simulatedfleet.h"
#include "tests/backend/testing/chaincheck.h"
#include "tests/backend/testing/jobgpus.h"
#include "tests/backend/testing/prometheusprocess.h"
#include "tests/realparts.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <map>
#include <mutex>
#include <set>

using namespace fleetscope;
namespace be = fleetscope::backend;
using namespace fleetscope::testing;
namespace pb = fleetscope::telemetry::v1;
using namespace std::chrono_literals;

namespace {

// The simulator's floor plan as an operator's topology file: halls of rows of racks of hosts, with GPU counts.
QByteArray topologyFileOf(const be::FleetShape &shape)
{
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
                hosts.append(
                    QJsonObject { { QStringLiteral("hostname"), QString::fromStdString(shape.nodes[n].hostname) },
                        { QStringLiteral("gpus"), static_cast<int>(shape.nodes[n].gpuCount) } });
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
    return QJsonDocument(
        QJsonObject { { QStringLiteral("site"), QStringLiteral("e2e") }, { QStringLiteral("halls"), halls } })
        .toJson();
}

} // namespace

class TestPrometheusE2e : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty()) {
            FLEETSCOPE_SKIP_WITHOUT(
                "the prometheus binary is not installed (Debian package 'prometheus'; scripts/common.sh installs "
                "it for CI): the simulator-to-Prometheus-to-client chain is not tested here");
        }

        const QString unserved = m_fleet.serve(); // a node down, every scrape the same page
        QVERIFY2(unserved.isEmpty(), qPrintable(unserved));

        QVERIFY(m_dir.isValid());
        // The node_exporter pages and the facility page too, as a site scrapes them: a job of their own over the
        // targets the exporter lists.
        const QString nodeTargets = m_dir.filePath(QStringLiteral("node-targets.json"));
        std::string error;
        QVERIFY2(m_fleet.exporter->writeNodeExporterTargetsFile(nodeTargets.toStdString(), &error), error.c_str());
        const QString config = m_dir.filePath(QStringLiteral("prometheus.yml"));
        QVERIFY(fleetscope::testing::writeFile(config,
            fleetscope::testing::scrapeConfig(m_fleet.exporter->port())
                + fleetscope::testing::nodeExporterScrapeJob(nodeTargets)));
        m_port = freePort();
        QVERIFY(m_port > 0);
        QVERIFY2(fleetscope::testing::startPrometheus(
                     &m_prometheus, prometheus, config, m_dir.filePath(QStringLiteral("data")), m_port),
            qPrintable(m_prometheus.process.errorString()));

        // The first scrape lands a few seconds after the start: poll until every online GPU's temperature is there.
        const QString late = waitForServer(m_prometheus, QStringLiteral("Prometheus"), 30000, [&](QString *detail) {
            const auto temps = instantQuery(m_port, QStringLiteral("DCGM_FI_DEV_GPU_TEMP"));
            const auto links = instantQuery(m_port, QStringLiteral("node_infiniband_state_id"));
            *detail
                = QStringLiteral("%1 and %2 NICs of %3 GPUs").arg(temps.size()).arg(links.size()).arg(m_fleet.online);
            return static_cast<uint32_t>(temps.size()) == m_fleet.online
                && static_cast<uint32_t>(links.size()) == m_fleet.online;
        });
        QVERIFY2(late.isEmpty(), qPrintable(late));
    }

    // No topology file: the layout comes from the series' labels, one node per Hostname with its online GPUs.
    void layoutFromLabels()
    {
        const auto &shape = m_fleet.simulator->shape();
        const auto topology = subscribe({});
        QVERIFY(topology);

        const auto expectedNodes = nodesWithSeries(shape, *m_fleet.frame);
        QCOMPARE(topology->nodes.size(), expectedNodes.size());
        for (size_t n = 0; n < expectedNodes.size(); ++n) {
            QCOMPARE(topology->nodes[n].hostname, expectedNodes[n].first);
            QCOMPARE(topology->nodes[n].gpuCount, expectedNodes[n].second);
            QCOMPARE(topology->nodes[n].model, QStringLiteral("NVIDIA H100 80GB HBM3"));
        }
        QCOMPARE(topology->gpuCount, m_fleet.online);

        std::vector<int64_t> simulatorGpu;
        const QString mismatch = matchGpusByUuid(*topology, shape, &simulatorGpu);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        checkFrame(simulatorGpu);
    }

    // With a topology file written from the simulator's floor plan: the same rows, racks and hosts, in that order,
    // and offline GPUs kept in place as "no data".
    void layoutFromFile()
    {
        const auto &shape = m_fleet.simulator->shape();
        const QString path = m_dir.filePath(QStringLiteral("topology.json"));
        QVERIFY(fleetscope::testing::writeFile(path, topologyFileOf(shape)));
        const auto topology = subscribe(path.toStdString());
        QVERIFY(topology);

        const QString difference = layoutDifference(*topology, shape);
        QVERIFY2(difference.isEmpty(), qPrintable(difference));
        // Same layout, same dense order: GPU i is the simulator's GPU i, and its UUID says so where it reports.
        std::vector<int64_t> simulatorGpu(shape.gpuCount);
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            simulatorGpu[g] = g;
            if (online(*m_fleet.frame, g)) {
                QCOMPARE(topology->uuidText(g).toLower(), QString::fromStdString(shape.gpuUuid(g)).toLower());
            } else {
                QVERIFY(topology->uuidText(g).isEmpty());
            }
        }
        checkFrame(simulatorGpu);
    }

    // ListJobs from the pod labels the exporter page carries: the simulator's running jobs, each with the GPUs of
    // its nodes that report (the flapping node's do not).
    void jobsFromPodLabels()
    {
        const auto &shape = m_fleet.simulator->shape();
        const QString path = m_dir.filePath(QStringLiteral("topology-jobs.json"));
        QVERIFY(fleetscope::testing::writeFile(path, topologyFileOf(shape)));
        QVERIFY(subscribe(path.toStdString()));

        std::map<std::string, std::pair<std::string, std::vector<uint32_t>>> expected; // name -> owner, GPUs
        for (const auto &job : m_fleet.simulator->jobs()) {
            if (job.endMs != 0) {
                continue;
            }
            std::vector<uint32_t> gpus;
            for (const uint32_t g : job.gpuList()) {
                if (online(*m_fleet.frame, g)) {
                    gpus.push_back(g);
                }
            }
            if (!gpus.empty()) {
                expected[job.name] = { job.owner, gpus };
            }
        }
        QVERIFY2(expected.size() >= 2, "the frozen fleet runs fewer than two jobs: too little to compare");

        auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(m_backend->listeningAddress(), grpc::InsecureChannelCredentials()));
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 10s);
        pb::ListJobsResponse response;
        const auto status = stub->ListJobs(&context, pb::ListJobsRequest(), &response);
        QVERIFY2(status.ok(), status.error_message().c_str());
        std::map<std::string, std::pair<std::string, std::vector<uint32_t>>> got;
        for (const auto &job : response.jobs()) {
            QCOMPARE(job.end_time_ms(), int64_t { 0 });
            QVERIFY(job.id() != 0);
            got[job.name()] = { job.owner(), jobGpus(job) };
        }
        QCOMPARE(got.size(), expected.size());
        for (const auto &[name, job] : expected) {
            QVERIFY2(got.count(name) == 1, name.c_str());
            QCOMPARE(got[name].first, job.first);
            QCOMPARE(got[name].second, job.second);
        }
    }

    // A fleet that moves: after half a minute of scrapes, QueryRange over it (from Prometheus' range API) gives at
    // each sample time the values of the frame the exporter served at that scrape; and the degrading GPU's XIDs
    // reach StreamEvents, from before the backend's start (range queries) and live (changes between polls).
    void historyAndEventsOfAMovingFleet()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        // A minute of simulated time per second: the bad-gpu scenario's GPU logs an XID (92 or 63) every step
        // from the 12th on.
        be::SimulationOptions options;
        options.gpuCount = 256;
        options.seed = 5;
        options.interval = 1000ms;
        options.speed = 60;
        options.scenario = be::Scenario::Kind::BadGpu;
        const auto simulatedSimulator = be::simulatedSource(options);
        be::FrameSource &simulator = *simulatedSimulator;
        const auto badGpu = be::Scenario(be::Scenario::Kind::BadGpu, simulator.shape(), options.seed).badGpu();
        QVERIFY(badGpu >= 0);
        be::ExporterServer exporter(simulator, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        const QString config = m_dir.filePath(QStringLiteral("moving.yml"));
        QVERIFY(fleetscope::testing::writeFile(config, fleetscope::testing::scrapeConfig(exporter.port())));
        const int port = freePort();
        ProcessGuard server;
        QVERIFY(fleetscope::testing::startPrometheus(
            &server, prometheus, config, m_dir.filePath(QStringLiteral("moving-data")), port));

        // Half a minute of scrapes of one GPU's temperature, and so of every GPU's.
        const auto &first = simulator.shape().nodes.front();
        const QString oneSeries = QStringLiteral("count_over_time(DCGM_FI_DEV_GPU_TEMP{Hostname=\"%1\",gpu=\"0\"}[5m])")
                                      .arg(QString::fromStdString(first.hostname));
        const QString late = fleetscope::testing::waitForServer(
            server, QStringLiteral("Prometheus"), 90000,
            [&](QString *detail) {
                const auto count = instantQuery(port, oneSeries);
                *detail = QStringLiteral("%1 scrapes of one GPU, 32 wanted")
                              .arg(count.isEmpty() ? 0.0 : sampleValue(count.at(0)));
                return !count.isEmpty() && sampleValue(count.at(0)) >= 32;
            },
            500);
        QVERIFY2(late.isEmpty(), qPrintable(late));

        const QString path = m_dir.filePath(QStringLiteral("topology-moving.json"));
        QVERIFY(fleetscope::testing::writeFile(path, topologyFileOf(simulator.shape())));
        auto sourceLog = std::make_shared<std::pair<std::mutex, std::string>>();
        auto source = std::make_unique<be::PrometheusSource>([sourceLog](const std::string &line) {
            std::lock_guard lock(sourceLog->first);
            sourceLog->second += line + '\n';
        });
        be::PrometheusSource::Options sourceOptions;
        sourceOptions.url = "http://127.0.0.1:" + std::to_string(port);
        sourceOptions.topologyFile = path.toStdString();
        // Past events on the scrapes' own grid, so that none falls between two steps.
        sourceOptions.eventStep = 1000ms;
        QVERIFY2(source->start(sourceOptions, &error), error.c_str());
        be::SimulationOptions backendOptions;
        backendOptions.interval = 200ms;
        be::BackendServer backend(be::judgedSource(std::move(source), backendOptions));
        QVERIFY2(backend.start("127.0.0.1:0", &error), error.c_str());
        auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(backend.listeningAddress(), grpc::InsecureChannelCredentials()));

        // The last 30 s, a row a second, every GPU.
        const auto newest = instantQuery(port, QStringLiteral("max(timestamp(DCGM_FI_DEV_GPU_TEMP))"));
        QCOMPARE(newest.size(), 1);
        const int64_t to = std::llround(sampleValue(newest.at(0)) * 1000.0);
        pb::QueryRangeRequest request;
        for (const auto &m : comparedMetrics()) {
            request.add_metric_ids(m.second.toStdString());
        }
        request.set_from_ms(to - 30000);
        request.set_to_ms(to);
        request.set_step_ms(1000);
        std::map<std::string, std::vector<int64_t>> sampleTimes;
        std::map<std::string, std::string> values;
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 30s);
            auto reader = stub->QueryRange(&context, request);
            pb::QueryRangePart part;
            while (reader->Read(&part)) {
                QCOMPARE(static_cast<uint32_t>(part.gpus_size()), simulator.shape().gpuCount);
                auto &times = sampleTimes[part.metric_id()];
                times.insert(times.end(), part.sample_times_ms().begin(), part.sample_times_ms().end());
                values[part.metric_id()] += part.values();
            }
            const auto status = reader->Finish();
            QVERIFY2(status.ok(), status.error_message().c_str());
        }
        // How long each scrape took, by its timestamp: the exporter answered it within that time, and under a
        // sanitizer on a loaded machine that can be more than a frame's interval after the scrape's timestamp.
        std::map<int64_t, int64_t> scrapeMs;
        {
            const auto durations
                = instantQuery(port, QStringLiteral("scrape_duration_seconds{job=\"dcgm\"}[2m]"), to + 1000);
            QCOMPARE(durations.size(), 1);
            const auto samples = durations.at(0).toObject().value(QStringLiteral("values")).toArray();
            for (const auto &sample : samples) {
                const auto pair = sample.toArray();
                scrapeMs[std::llround(pair.at(0).toDouble() * 1000.0)]
                    = static_cast<int64_t>(std::ceil(pair.at(1).toString().toDouble() * 1000.0));
            }
            QVERIFY(!scrapeMs.empty());
        }
        const auto frames = simulator.framesBetween(to - 40000, to + 5000);
        const uint32_t n = simulator.shape().gpuCount;
        size_t rows = 0;
        for (const auto &[id, key] : comparedMetrics()) {
            const auto &times = sampleTimes[key.toStdString()];
            const auto &bytes = values[key.toStdString()];
            QVERIFY2(times.size() >= 28, qPrintable(QStringLiteral("%1 rows of %2").arg(times.size()).arg(key)));
            QCOMPARE(bytes.size(), times.size() * n * sizeof(float));
            rows += times.size();
            for (size_t r = 0; r < times.size(); ++r) {
                const int64_t scraped = times[r];
                // The frame the exporter served at that scrape: the newest one published by the time the request
                // reached it, between the scrape's timestamp and its end. A frame is published after its sample
                // time (once simulated and judged: under a sanitizer that can take longer than a scrape), so by its
                // publication time.
                const auto took = scrapeMs.find(scraped);
                QVERIFY2(took != scrapeMs.end(), qPrintable(QStringLiteral("no scrape at %1").arg(scraped)));
                bool matched = false;
                QString tried;
                for (size_t f = 0; f < frames.size() && !matched; ++f) {
                    const bool publishedBefore = frames[f]->publishedMs <= scraped + took->second + 5;
                    const bool notYetReplaced = f + 1 == frames.size() || frames[f + 1]->publishedMs > scraped - 5;
                    if (!publishedBefore || !notYetReplaced) {
                        continue;
                    }
                    tried += QStringLiteral(" %1").arg(frames[f]->sequence);
                    const auto &plane = frames[f]->plane(id);
                    bool same = true;
                    for (uint32_t g = 0; g < n && same; ++g) {
                        float got = 0;
                        std::memcpy(&got, bytes.data() + (r * n + g) * sizeof(float), sizeof(float));
                        const float expected = throughTheChain(id, plane[g]);
                        same = std::isnan(plane[g]) ? std::isnan(got) : got == expected;
                    }
                    matched = same;
                }
                QVERIFY2(matched,
                    qPrintable(QStringLiteral("%1 at the scrape of %2 (%3 ms): no frame of those then latest (%4) "
                                              "has its values")
                                   .arg(key)
                                   .arg(scraped)
                                   .arg(took->second)
                                   .arg(tried)));
            }
        }
        QVERIFY(rows > 0);

        // XIDs of the degrading GPU: each one the simulator logged on it, by then.
        uint64_t after = 0;
        auto simulated = simulator.eventsAfter(0, &after, 0ms);
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 30s);
        pb::StreamEventsRequest since;
        since.set_since_ms(to - 3600000);
        auto reader = stub->StreamEvents(&context, since);
        pb::Event e;
        int xids = 0;
        int live = 0;
        while (live == 0 && reader->Read(&e)) {
            if (e.kind() != pb::EVENT_KIND_XID || e.gpu() != badGpu) {
                continue;
            }
            ++xids;
            live += e.time_ms() > to ? 1 : 0;
            // A live one may be newer than the simulator's log so far.
            for (auto &s : simulator.eventsAfter(0, &after, 0ms)) {
                simulated.push_back(std::move(s));
            }
            // Past events are on the step's grid: the change happened in the step before.
            const bool logged = std::any_of(simulated.begin(), simulated.end(), [&](const be::TimedEvent &s) {
                return s.event.kind == be::FleetEvent::Kind::Xid && s.event.gpu == badGpu && s.event.xid == e.xid()
                    && s.timeMs <= e.time_ms();
            });
            QVERIFY2(logged, e.text().c_str());
        }
        context.TryCancel();
        while (reader->Read(&e)) { }
        reader->Finish();
        std::lock_guard lock(sourceLog->first);
        QVERIFY2(xids >= 2 && live >= 1,
            qPrintable(QStringLiteral("%1 XID events of GPU %2, %3 live; the source's log:\n%4")
                           .arg(xids)
                           .arg(badGpu)
                           .arg(live)
                           .arg(QString::fromStdString(sourceLog->second))));
        backend.stop();
        simulator.stop();
    }

    // The fabric through the chain: each node's node_exporter page scraped by Prometheus under its hostname, read by
    // the source onto the GPUs (device mlx5_k of a host is its GPU k) and served to the client. Every online GPU's
    // link is up (state id 4 in Prometheus, 1 in the frame), its counters in Prometheus are the simulator's totals,
    // their 5-minute increase in the frame is 0 (the page is frozen); the flapping node's NICs are absent, so its
    // GPUs have no fabric data either.
    void fabricThroughTheChain()
    {
        const auto &shape = m_fleet.simulator->shape();
        const auto &frame = *m_fleet.frame;
        QVERIFY(frame.railTotals);
        const auto states = instantQuery(m_port, QStringLiteral("node_infiniband_state_id"));
        QCOMPARE(static_cast<uint32_t>(states.size()), m_fleet.online);
        std::set<std::pair<QString, QString>> nics;
        for (const auto &entry : states) {
            const auto labels = entry.toObject().value(QStringLiteral("metric")).toObject();
            QCOMPARE(sampleValue(entry), 4.0);
            nics.emplace(
                labels.value(QStringLiteral("instance")).toString(), labels.value(QStringLiteral("device")).toString());
        }
        double symbolErrors = 0;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const auto &node = shape.nodes[shape.nodeOfGpu[g]];
            const bool listed = nics.count({ QString::fromStdString(node.hostname),
                                    QStringLiteral("mlx5_%1").arg(g - node.firstGpu) })
                != 0;
            QCOMPARE(listed, online(frame, g));
            symbolErrors += online(frame, g) ? frame.railTotals->symbolErrors[g] : 0;
        }
        const auto total = instantQuery(m_port, QStringLiteral("sum(node_infiniband_symbol_error_total)"));
        QCOMPARE(total.size(), 1);
        QCOMPARE(sampleValue(total.at(0)), symbolErrors);

        // An increase needs two scrapes of a counter (alone, this test may come right after the first).
        const QString late = waitForServer(m_prometheus, QStringLiteral("Prometheus"), 10000, [&](QString *detail) {
            const auto scrapes
                = instantQuery(m_port, QStringLiteral("min(count_over_time(node_infiniband_symbol_error_total[5m]))"));
            *detail
                = QStringLiteral("%1 scrapes of the counters").arg(scrapes.isEmpty() ? 0.0 : sampleValue(scrapes[0]));
            return !scrapes.isEmpty() && sampleValue(scrapes[0]) >= 2;
        });
        QVERIFY2(late.isEmpty(), qPrintable(late));
        const QString path = m_dir.filePath(QStringLiteral("topology-fabric.json"));
        QVERIFY(fleetscope::testing::writeFile(path, topologyFileOf(shape)));
        const auto topology = subscribe(path.toStdString(),
            { QStringLiteral("rail_link_state"), QStringLiteral("rail_symbol_errors"),
                QStringLiteral("rail_transmit_wait") });
        QVERIFY(topology);
        // The file cables nothing: each online GPU's leaf and port come from infiniband_exporter's uplink labels on
        // its node's page, read by the source at its start, as the simulated fabric has them.
        QCOMPARE(topology->gpuLinks.size(), size_t { shape.gpuCount });
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const auto &link = topology->gpuLinks[g];
            if (!online(frame, g)) {
                continue;
            }
            QVERIFY(link.leaf < topology->domains.size());
            QCOMPARE(topology->domains[link.leaf].name.toStdString(), shape.domains[shape.gpuLinks[g].leaf].name);
            QCOMPARE(link.port, shape.gpuLinks[g].port);
        }
        const MetricPlane *state = m_received->plane(QStringLiteral("rail_link_state"));
        const MetricPlane *symbols = m_received->plane(QStringLiteral("rail_symbol_errors"));
        const MetricPlane *wait = m_received->plane(QStringLiteral("rail_transmit_wait"));
        QVERIFY(state && symbols && wait);
        QCOMPARE(state->values.size(), size_t { shape.gpuCount });
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            if (online(frame, g)) {
                QCOMPARE(state->values[g], 1.0F);
                QCOMPARE(symbols->values[g], 0.0F);
                QCOMPARE(wait->values[g], 0.0F);
            } else {
                QVERIFY(std::isnan(state->values[g]) && std::isnan(symbols->values[g]));
            }
        }
    }

    // NVLink's errors as the catalogue sums them (MetricMap::increaseQuery: the flow-control and the data CRC
    // counters' increases, each on its own), asked of a real Prometheus: one series per online GPU with its node and
    // gpu labels and no label of the sum's making, the sum of the two counters' own increases (0: the page is
    // frozen), where one increase over both names would give each GPU two series of one label set.
    void nvlinkErrorsThroughPrometheus()
    {
        const auto map = be::MetricMap::profile(be::MetricMap::Profile::Gen3x482); // the simulator's page's
        const auto names = map.seriesNames(be::MetricId::NvlinkErrors);
        QCOMPARE(names.size(), size_t { 2 });
        for (const auto &name : names) {
            QCOMPARE(static_cast<uint32_t>(instantQuery(m_port, QString::fromStdString(name)).size()), m_fleet.online);
        }
        const QString late = waitForServer(m_prometheus, QStringLiteral("Prometheus"), 10000, [&](QString *detail) {
            const auto scrapes = instantQuery(
                m_port, QStringLiteral("min(count_over_time(%1[5m]))").arg(QString::fromStdString(names.back())));
            *detail
                = QStringLiteral("%1 scrapes of the counters").arg(scrapes.isEmpty() ? 0.0 : sampleValue(scrapes[0]));
            return !scrapes.isEmpty() && sampleValue(scrapes[0]) >= 2;
        });
        QVERIFY2(late.isEmpty(), qPrintable(late));
        const QString summed = QString::fromStdString(map.increaseQuery(be::MetricId::NvlinkErrors, ""));
        const auto answer = instantQuery(m_port, summed);
        QVERIFY2(static_cast<uint32_t>(answer.size()) == m_fleet.online, qPrintable(summed));
        std::set<std::pair<QString, QString>> gpus;
        for (const auto &entry : answer) {
            const auto labels = entry.toObject().value(QStringLiteral("metric")).toObject();
            QVERIFY(!labels.contains(QStringLiteral("fleetscope_part")));
            QVERIFY(!labels.contains(QStringLiteral("__name__")));
            gpus.emplace(
                labels.value(QStringLiteral("Hostname")).toString(), labels.value(QStringLiteral("gpu")).toString());
            QCOMPARE(sampleValue(entry), 0.0);
        }
        QCOMPARE(static_cast<uint32_t>(gpus.size()), m_fleet.online);
        const auto parts = instantQuery(m_port,
            QStringLiteral("sum(increase(%1[5m])) + sum(increase(%2[5m]))")
                .arg(QString::fromStdString(names[0]), QString::fromStdString(names[1])));
        const auto total = instantQuery(m_port, QStringLiteral("sum(%1)").arg(summed));
        QVERIFY(parts.size() == 1 && total.size() == 1);
        QCOMPARE(sampleValue(total[0]), sampleValue(parts[0]));
    }

    // A GPU's leaf switch and port from labels through a real Prometheus: the nodes' pages carry
    // infiniband_hca_uplink_info, UplinkLabels::query() asks for it, and applyUplinks on a layout whose file names no
    // fabric cables every online GPU as the simulated fabric does.
    void uplinksThroughPrometheus()
    {
        const auto &shape = m_fleet.simulator->shape();
        const auto answer = instantQuery(m_port, QString::fromStdString(be::UplinkLabels::query()));
        QCOMPARE(static_cast<uint32_t>(answer.size()), m_fleet.online);
        std::vector<be::UplinkLabels::Series> series;
        for (const auto &entry : answer) {
            const auto labels = entry.toObject().value(QStringLiteral("metric")).toObject();
            auto &s = series.emplace_back();
            for (auto it = labels.begin(); it != labels.end(); ++it) {
                s.read(it.key().toStdString(), it.value().toString().toStdString());
            }
        }
        const QString path = m_dir.filePath(QStringLiteral("topology-nofabric.json"));
        QVERIFY(fleetscope::testing::writeFile(path, topologyFileOf(shape)));
        be::TopologyFile file;
        std::string error;
        QVERIFY2(be::TopologyFile::load(path.toStdString(), &file, &error), error.c_str());
        auto topology = be::PrometheusTopology::fromFile(file);
        QVERIFY(topology.shape().gpuLinks.empty());
        const auto lines = topology.applyUplinks(series);
        QCOMPARE(lines.size(), size_t { 1 }); // nothing refused
        const auto &links = topology.shape().gpuLinks;
        QCOMPARE(links.size(), size_t { shape.gpuCount });
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            if (!online(*m_fleet.frame, g)) {
                QCOMPARE(links[g].leaf, be::GpuLink::none);
                continue;
            }
            QVERIFY(links[g].leaf < topology.shape().domains.size());
            const auto &leaf = topology.shape().domains[links[g].leaf];
            QCOMPARE(leaf.name, shape.domains.at(shape.gpuLinks.at(g).leaf).name);
            QCOMPARE(leaf.kind, be::DomainKind::LeafSwitch);
            QCOMPARE(links[g].port, shape.gpuLinks.at(g).port);
        }
    }

    // A leaf switch down, through a real Prometheus to the source's frame: the leaf-down scenario's fleet frozen just
    // after its onset, its node_exporter pages scraped, and the source's rail_link_state is 0 on exactly the GPUs the
    // simulator has down (the leaf's rail of its scalable unit) and 1 on the others.
    void leafDownThroughPrometheus()
    {
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        be::SimulationOptions options;
        options.gpuCount = 256;
        options.seed = 11;
        options.interval = 1000ms;
        options.speed = 130;
        options.scenario = be::Scenario::Kind::LeafDown;
        auto simulator = be::simulatedSource(options);
        simulator->waitForFrameAfter(0, 5000ms);
        simulator->stop();
        const auto frame = simulator->latest();
        QVERIFY(frame->sequence >= 1);
        const auto &shape = simulator->shape();
        const auto &simulated = frame->plane(be::MetricId::RailLinkState);
        uint32_t down = 0;
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            down += simulated[g] == 0.0F ? 1 : 0;
        }
        QVERIFY2(down > 0 && down < shape.gpuCount, qPrintable(QStringLiteral("%1 links down").arg(down)));

        be::ExporterServer exporter(*simulator, be::ExporterPage::Options());
        std::string error;
        QVERIFY2(exporter.start("127.0.0.1:0", &error), error.c_str());
        const QString targets = m_dir.filePath(QStringLiteral("leaf-node-targets.json"));
        QVERIFY2(exporter.writeNodeExporterTargetsFile(targets.toStdString(), &error), error.c_str());
        const QString config = m_dir.filePath(QStringLiteral("leaf.yml"));
        QVERIFY(fleetscope::testing::writeFile(config,
            fleetscope::testing::scrapeConfig(exporter.port()) + fleetscope::testing::nodeExporterScrapeJob(targets)));
        const int port = freePort();
        ProcessGuard server;
        QVERIFY(fleetscope::testing::startPrometheus(
            &server, prometheus, config, m_dir.filePath(QStringLiteral("leaf-data")), port));
        const QString late = waitForServer(server, QStringLiteral("Prometheus"), 30000, [&](QString *detail) {
            const auto links = instantQuery(port, QStringLiteral("node_infiniband_state_id"));
            const auto temps = instantQuery(port, QStringLiteral("DCGM_FI_DEV_GPU_TEMP"));
            *detail = QStringLiteral("%1 NICs, %2 GPUs").arg(links.size()).arg(temps.size());
            return links.size() == temps.size() && static_cast<uint32_t>(links.size()) == shape.gpuCount;
        });
        QVERIFY2(late.isEmpty(), qPrintable(late));

        const QString path = m_dir.filePath(QStringLiteral("topology-leaf.json"));
        QVERIFY(fleetscope::testing::writeFile(path, topologyFileOf(shape)));
        be::PrometheusSource source([](const std::string &) {});
        be::PrometheusSource::Options sourceOptions;
        sourceOptions.url = "http://127.0.0.1:" + std::to_string(port);
        sourceOptions.topologyFile = path.toStdString();
        QVERIFY2(source.start(sourceOptions, &error), error.c_str());
        const auto polled = source.poll();
        QVERIFY2(polled, source.upstreamError().c_str());
        const auto &links = polled->plane(be::MetricId::RailLinkState);
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            QCOMPARE(links[g], simulated[g]);
        }
        exporter.stop();
    }

    void cleanupTestCase()
    {
        m_client.reset();
        m_backend.reset();
        if (m_prometheus.process.state() != QProcess::NotRunning) {
            m_prometheus.process.terminate();
            QVERIFY(m_prometheus.process.waitForFinished(20000));
        }
    }

private:
    // Starts the backend in-process on the Prometheus source and subscribes the real client to it. Returns the
    // topology the client received, with m_received set to its first frame with data; null on failure.
    TopologyPtr subscribe(const std::string &topologyFile, const QStringList &moreMetrics = {})
    {
        m_received.reset();
        m_client.reset();
        m_backend.reset();

        auto source = std::make_unique<be::PrometheusSource>([this](const std::string &line) {
            std::lock_guard lock(m_logMutex);
            m_log += line + '\n';
        });
        be::PrometheusSource::Options options;
        options.url = "http://127.0.0.1:" + std::to_string(m_port);
        options.topologyFile = topologyFile;
        options.timeout = 5000ms;
        std::string error;
        if (!source->start(options, &error)) {
            qWarning("the Prometheus source did not start: %s", error.c_str());
            return nullptr;
        }
        {
            // The simulator's page is a dcgm-exporter before 4.8.3 (label Hostname); a real Prometheus answers the
            // queries that recognise it (discovery by __name__ and both node labels, the names of one node).
            std::lock_guard lock(m_logMutex);
            if (m_log.find("dcgm-exporter profile 3.x-4.8.2 (label Hostname) chosen from the series present\n")
                    == std::string::npos
                || m_log.find("is not known") != std::string::npos) {
                qWarning("the profile was not recognised from the series; the log:\n%s", m_log.c_str());
                return nullptr;
            }
        }
        be::SimulationOptions sourceOptions;
        sourceOptions.interval = 200ms;
        m_backend = std::make_unique<be::BackendServer>(be::judgedSource(std::move(source), sourceOptions));
        if (!m_backend->start("127.0.0.1:0", &error)) {
            qWarning("the backend did not start: %s", error.c_str());
            return nullptr;
        }

        m_client = std::make_unique<TelemetryClient>();
        QStringList ids;
        for (const auto &m : comparedMetrics()) {
            ids.append(m.second);
        }
        m_client->setMetrics(ids + moreMetrics);
        QSignalSpy frames(m_client.get(), &TelemetryClient::frameReady);
        m_client->start(QString::fromStdString(m_backend->listeningAddress()));
        m_received = waitForFrameWithData(frames, m_received, 15000);
        if (!m_received || m_received->sequence == 0) {
            std::lock_guard lock(m_logMutex);
            qWarning("no frame with data reached the client (state: %s); the source's log:\n%s",
                qPrintable(m_client->stateDetail()), m_log.c_str());
            return nullptr;
        }
        return m_client->topology();
    }

    // Every GPU of the received frame against the frozen simulator frame, and its sample time against the scrape
    // times the server holds (chainDifference).
    void checkFrame(const std::vector<int64_t> &simulatorGpu)
    {
        QVERIFY(m_received);
        const QString difference = chainDifference(m_port, *m_received, m_fleet, simulatorGpu);
        QVERIFY2(difference.isEmpty(), qPrintable(difference));
    }

    // Destroyed in reverse: the client, the backend (before the log it writes to), Prometheus, then the exporter and
    // the simulator it serves.
    FrozenFleetPage m_fleet;
    QTemporaryDir m_dir;
    ProcessGuard m_prometheus;
    int m_port = 0;
    std::mutex m_logMutex; // the source logs from the backend's ticker thread
    std::string m_log;
    std::unique_ptr<be::BackendServer> m_backend;
    std::unique_ptr<TelemetryClient> m_client;
    FramePtr m_received;
};

QTEST_GUILESS_MAIN(TestPrometheusE2e)
#include "tst_prometheus_e2e.moc"
