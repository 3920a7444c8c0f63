// SPDX-License-Identifier: Apache-2.0
// Contract tests: the real backend on loopback, spoken to with the generated gRPC stub, as any client would.
#include "client/protodecode.h"
#include "servedbackend.h"
#include "service/backendserver.h"
#include "service/frameencoder.h"
#include "service/summary.h"
#include "sim/simulatedfleet.h"
#include "tests/backend/testing/jobgpus.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QTest>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

using namespace std::chrono_literals;
namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;

namespace {
constexpr size_t fourMiB = 4U << 20U;

int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::vector<pb::QueryRangePart> queryRange(
    pb::Telemetry::Stub &stub, const pb::QueryRangeRequest &request, grpc::Status *status)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 20s);
    auto reader = stub.QueryRange(&context, request);
    std::vector<pb::QueryRangePart> parts;
    pb::QueryRangePart part;
    while (reader->Read(&part)) {
        parts.push_back(part);
    }
    *status = reader->Finish();
    return parts;
}

float valueAt(const pb::QueryRangePart &part, int row, int column)
{
    float v = 0;
    std::memcpy(&v, part.values().data() + (static_cast<size_t>(row) * part.gpus_size() + column) * 4, 4);
    return v;
}

using Backend = fleetscope::testing::ServedBackend;

Backend start(const be::SimulationOptions &options)
{
    return fleetscope::testing::serveSimulation(options);
}

be::SimulationOptions fleet(uint32_t gpus, std::chrono::milliseconds interval = 100ms)
{
    be::SimulationOptions o;
    o.gpuCount = gpus;
    o.seed = 5;
    o.interval = interval;
    return o;
}

std::vector<pb::TopologyPart> topologyParts(pb::Telemetry::Stub &stub)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 20s);
    auto reader = stub.GetTopology(&context, pb::GetTopologyRequest());
    std::vector<pb::TopologyPart> parts;
    pb::TopologyPart part;
    while (reader->Read(&part)) {
        parts.push_back(part);
    }
    if (!reader->Finish().ok()) {
        parts.clear();
    }
    return parts;
}

// Reads whole frames from a Subscribe stream: all parts of one sequence.
struct FrameReader
{
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<pb::FramePart>> reader;

    FrameReader(pb::Telemetry::Stub &stub, const pb::SubscribeRequest &request)
    {
        context.set_deadline(std::chrono::system_clock::now() + 30s);
        reader = stub.Subscribe(&context, request);
    }
    // The parts of the next frame; empty when the stream ended.
    std::vector<pb::FramePart> next()
    {
        std::vector<pb::FramePart> parts;
        pb::FramePart part;
        while (reader->Read(&part)) {
            parts.push_back(part);
            if (part.part_index() + 1 == part.part_count()) {
                break;
            }
        }
        return parts;
    }
    grpc::Status finish()
    {
        context.TryCancel();
        return reader->Finish();
    }
};
} // namespace

class TestContract : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void topologyIsStreamedInPartsUnder4MiBAndConsistent()
    {
        auto b = start(fleet(200000, 1000ms));
        const auto parts = topologyParts(*b.stub);
        QVERIFY(parts.size() > 1);
        for (const auto &p : parts) {
            QVERIFY(p.ByteSizeLong() < fourMiB);
        }
        QString error;
        const auto topology = fleetscope::decodeTopology(parts, &error);
        QVERIFY2(topology, qPrintable(error));
        QCOMPARE(topology->gpuCount, 200000U);
        // A rack's and a node's GPUs are contiguous ranges, in order (decodeTopology checks the tiling); every GPU
        // has a distinct UUID.
        std::set<QUuid> uuids(topology->gpuUuids.begin(), topology->gpuUuids.end());
        QCOMPARE(uuids.size(), size_t(200000));
        QVERIFY(!topology->racks.empty() && topology->racks[1].position == 1);

        // The shared domains come spread over the parts, as many as the header says; every index in them points
        // into the table, parents before children; each GPU has its leaf and port, on the rail of its index.
        std::vector<pb::Domain> domains;
        for (const auto &p : parts) {
            domains.insert(domains.end(), p.domains().begin(), p.domains().end());
        }
        QCOMPARE(domains.size(), size_t { parts.front().domain_count() });
        QVERIFY(parts.front().domains_size() < static_cast<int>(domains.size()));
        for (size_t d = 0; d < domains.size(); ++d) {
            QVERIFY(!domains[d].has_parent() || domains[d].parent() < d);
        }
        QCOMPARE(parts.front().racks(0).domains_size(), 3); // PDU a, PDU b, the cooling unit
        for (const auto &rack : parts.front().racks()) {
            for (const uint32_t d : rack.domains()) {
                QVERIFY(d < domains.size());
            }
        }
        uint32_t n = 0;
        for (const auto &p : parts) {
            for (const auto &node : p.nodes()) {
                QCOMPARE(node.gpu_leaves_size(), static_cast<int>(node.gpu_count()));
                // Its scalable unit; a node corded to one PDU alone (the 4th and 8th of a rack) that PDU too.
                QCOMPARE(node.domains_size(), n++ % 4 == 3 ? 2 : 1);
                QCOMPARE(domains[node.domains(0)].kind(), pb::DOMAIN_KIND_SCALABLE_UNIT);
                QVERIFY(node.domains_size() == 1 || domains[node.domains(1)].kind() == pb::DOMAIN_KIND_PDU);
                for (int i = 0; i < node.gpu_leaves_size(); ++i) {
                    const auto &leaf = domains[node.gpu_leaves(i)];
                    QCOMPARE(leaf.kind(), pb::DOMAIN_KIND_LEAF_SWITCH);
                    QCOMPARE(leaf.rail(), static_cast<uint32_t>(i));
                    QVERIFY(node.gpu_ports(i) >= 1 && node.gpu_ports(i) <= 32);
                }
            }
        }
        // The console's model holds them as sent, and names a GPU's domains as the backend does: node 66 is the
        // third of scalable unit 3, its GPU 5 on rail 5's leaf.
        QCOMPARE(topology->domains.size(), domains.size());
        for (const size_t d : { size_t { 0 }, domains.size() / 2, domains.size() - 1 }) {
            QCOMPARE(topology->domains[d].name, QString::fromStdString(domains[d].name()));
            QCOMPARE(static_cast<int>(topology->domains[d].kind) + 1, static_cast<int>(domains[d].kind()));
        }
        const auto &node = topology->nodes[66];
        const QString rack = topology->racks[node.rack].name;
        QCOMPARE(topology->domainLine(node.firstGpu + 5),
            QStringLiteral("PDU %1-a · PDU %1-b · cooling unit %2 · leaf su03-l5 port 3, rail 5")
                .arg(rack, topology->domains[topology->racks[node.rack].domains[2]].name));
        QVERIFY(topology->domains[topology->racks[node.rack].domains[2]].name.contains(QStringLiteral("-crah")));
    }

    // An NVL72 fleet over the wire: every rack says it is an NVLink domain of 18 trays of 4 GPUs, the GPUs say
    // what they are; an HGX fleet's racks say they are not.
    void nvl72RacksArriveAsNvlinkDomains()
    {
        auto options = fleet(72 * 6, 1000ms);
        options.hardware = be::Hardware::Gb200Nvl72;
        auto b = start(options);
        QString error;
        const auto topology = fleetscope::decodeTopology(topologyParts(*b.stub), &error);
        QVERIFY2(topology, qPrintable(error));
        QCOMPARE(topology->racks.size(), size_t(6));
        for (const auto &rack : topology->racks) {
            QVERIFY(rack.nvlinkDomain);
            QCOMPARE(rack.nodeCount, 18U);
            for (uint32_t n = rack.firstNode; n < rack.firstNode + rack.nodeCount; ++n) {
                QCOMPARE(topology->nodes[n].gpuCount, 4U);
                QCOMPARE(topology->nodes[n].model, QStringLiteral("NVIDIA GB200"));
            }
        }
        QCOMPARE(topology->nodes[19].hostname, QStringLiteral("r01-k02-t02"));
        // Its domains: the rack's PDUs, its CDU's first loop, its NVLink domain; tray 2's GPU 1 on rail 1's leaf of the
        // scalable unit of 8 racks, at the port of the unit's 20th tray.
        QCOMPARE(topology->domainLine(19 * 4 + 1),
            QStringLiteral("PDU r01-k02-a · PDU r01-k02-b · coolant loop r01-cdu1-a · NVLink domain r01-k02-nvl · leaf "
                           "su01-l1 port 20, rail 1"));

        auto hgx = start(fleet(72 * 6, 1000ms));
        const auto hgxTopology = fleetscope::decodeTopology(topologyParts(*hgx.stub), &error);
        QVERIFY2(hgxTopology, qPrintable(error));
        QVERIFY(std::none_of(hgxTopology->racks.begin(), hgxTopology->racks.end(),
            [](const fleetscope::Topology::Rack &r) { return r.nvlinkDomain; }));
        QCOMPARE(hgxTopology->nodes[0].model, QStringLiteral("NVIDIA H100 80GB HBM3"));
        QVERIFY(topology->generation != hgxTopology->generation); // the same size and seed, another layout

        // 1,200 W GPUs: the power colour range widens with them; an HGX fleet keeps the catalogue's.
        const auto powerRange = [](pb::Telemetry::Stub &stub) {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 20s);
            pb::ListMetricsResponse metrics;
            if (!stub.ListMetrics(&context, pb::ListMetricsRequest(), &metrics).ok()) {
                return -1.0F;
            }
            for (const auto &m : metrics.metrics()) {
                if (m.id() == "power") {
                    return m.range_max();
                }
            }
            return -2.0F;
        };
        QCOMPARE(powerRange(*b.stub), 1300.0F);
        QCOMPARE(powerRange(*hgx.stub), 800.0F);
    }

    void catalogueNamesEveryRequiredMetric()
    {
        auto b = start(fleet(64));
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 5s);
        pb::ListMetricsResponse response;
        QVERIFY(b.stub->ListMetrics(&context, pb::ListMetricsRequest(), &response).ok());
        std::set<std::string> ids;
        for (const auto &m : response.metrics()) {
            ids.insert(m.id());
            QVERIFY(!m.unit().empty());
            QVERIFY(m.range_max() > m.range_min());
            QVERIFY(m.kind() != pb::METRIC_KIND_UNSPECIFIED);
        }
        for (const char *id : { "gpu_temp", "mem_temp", "power", "gpu_util", "mem_copy_util", "sm_clock", "fb_used",
                 "ecc_sbe", "ecc_dbe", "xid_errors", "nvlink_errors", "pcie_replays", "throttle_reasons", "health",
                 "anomaly", "remapped_rows", "remapped_rows_correctable", "offender", "rail_link_state",
                 "rail_link_downs", "rail_symbol_errors", "rail_receive_errors", "rail_transmit_wait" }) {
            QVERIFY2(ids.count(id) == 1, id);
        }
        // An air-cooled simulated fleet lists no coolant metrics; a liquid-cooled one does.
        QCOMPARE(ids.count("coolant_supply_temp"), size_t(0));
        auto options = fleet(72 * 2);
        options.hardware = be::Hardware::Gb200Nvl72;
        auto nvl = start(options);
        grpc::ClientContext nvlContext;
        nvlContext.set_deadline(std::chrono::system_clock::now() + 5s);
        pb::ListMetricsResponse nvlResponse;
        QVERIFY(nvl.stub->ListMetrics(&nvlContext, pb::ListMetricsRequest(), &nvlResponse).ok());
        QVERIFY(std::any_of(nvlResponse.metrics().begin(), nvlResponse.metrics().end(),
            [](const pb::MetricInfo &m) { return m.id() == "coolant_supply_temp"; }));
    }

    void framesHaveNValuesPerPlaneAndReassemble()
    {
        auto b = start(fleet(150000, 300ms));
        const auto parts = topologyParts(*b.stub);
        QString error;
        const auto topology = fleetscope::decodeTopology(parts, &error);
        pb::SubscribeRequest request; // empty: the default set
        FrameReader frames(*b.stub, request);
        const auto frame = frames.next();
        QCOMPARE(frame.size(), size_t(5)); // 150,000 GPUs in parts of 32,768
        fleetscope::FrameAssembler assembler(topology);
        fleetscope::FramePtr assembled;
        for (const auto &p : frame) {
            QVERIFY(p.ByteSizeLong() < fourMiB);
            QVERIFY(p.planes_size() >= 3);
            for (const auto &plane : p.planes()) {
                QCOMPARE(plane.values().size(), size_t(p.gpu_count()) * 4);
            }
            auto r = assembler.add(p);
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            assembled = r.frame;
        }
        QVERIFY(assembled);
        for (const auto &plane : assembled->planes) {
            QCOMPARE(plane.values.size(), size_t(150000));
        }
        frames.finish();
    }

    void resumeContinuesWithTheNextFrame()
    {
        auto b = start(fleet(1024, 50ms));
        uint64_t last = 0;
        {
            FrameReader frames(*b.stub, pb::SubscribeRequest());
            for (int i = 0; i < 3; ++i) {
                last = frames.next().at(0).sequence();
            }
            frames.finish();
        }
        // Let the server move on a few frames while we are away.
        QTRY_VERIFY_WITH_TIMEOUT(b.server->source().latest()->sequence > last + 3, 5000);
        pb::SubscribeRequest request;
        request.set_resume_after_sequence(last);
        FrameReader frames(*b.stub, request);
        for (uint64_t expected = last + 1; expected < last + 5; ++expected) {
            const auto frame = frames.next();
            QVERIFY(!frame.empty());
            QCOMPARE(frame.at(0).sequence(), expected);
        }
        frames.finish();
    }

    void resumeFromASequenceNoLongerHeldSaysSo()
    {
        auto options = fleet(1024, 50ms);
        options.frameMemoryBudget = 1; // keeps the minimum, two frames
        auto b = start(options);
        QTRY_VERIFY_WITH_TIMEOUT(b.server->source().latest()->sequence > 5, 5000);
        for (const uint64_t resume : { uint64_t(1), uint64_t(1000000) }) {
            pb::SubscribeRequest request;
            request.set_resume_after_sequence(resume);
            FrameReader frames(*b.stub, request);
            QVERIFY(frames.next().empty());
            const auto status = frames.reader->Finish();
            QCOMPARE(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
            QVERIFY2(status.error_message().find("holds frames") != std::string::npos, status.error_message().c_str());
        }
    }

    void badArgumentsGiveTheDocumentedStatus()
    {
        auto b = start(fleet(64));
        {
            pb::SubscribeRequest request;
            request.add_metric_ids("gpu_temperature_typo");
            FrameReader frames(*b.stub, request);
            QVERIFY(frames.next().empty());
            const auto status = frames.reader->Finish();
            QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
            QVERIFY(status.error_message().find("gpu_temperature_typo") != std::string::npos);
        }
        {
            pb::SubscribeRequest request;
            request.set_topology_generation(12345);
            FrameReader frames(*b.stub, request);
            QVERIFY(frames.next().empty());
            QCOMPARE(frames.reader->Finish().error_code(), grpc::StatusCode::FAILED_PRECONDITION);
        }
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 5s);
            pb::StreamEventsRequest request;
            request.set_since_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch() + 24h)
                                     .count());
            auto reader = b.stub->StreamEvents(&context, request);
            pb::Event e;
            QVERIFY(!reader->Read(&e));
            QCOMPARE(reader->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        }
    }

    void eventsReplayThenFollow()
    {
        // node-flap at 5 simulated seconds per 50 ms step: the node goes down after about 1.2 s.
        auto options = fleet(1024, 50ms);
        options.speed = 100;
        options.scenario = be::Scenario::Kind::NodeFlap;
        auto b = start(options);
        const auto flapping = b.server->source().shape().nodes[static_cast<size_t>(
            be::Scenario(be::Scenario::Kind::NodeFlap, b.server->source().shape(), 5).flappingNode())];
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 20s);
        pb::StreamEventsRequest request;
        request.set_since_ms(1); // everything held
        auto reader = b.stub->StreamEvents(&context, request);
        pb::Event e;
        uint64_t lastSequence = 0;
        int64_t lastTime = 0;
        int downs = 0;
        int ups = 0;
        while (reader->Read(&e) && (downs < 2 || ups < 1)) {
            QVERIFY(e.sequence() > lastSequence);
            QVERIFY(e.time_ms() >= lastTime);
            lastSequence = e.sequence();
            lastTime = e.time_ms();
            if (e.text().find(flapping.hostname) != std::string::npos) {
                downs += e.kind() == pb::EVENT_KIND_NODE_DOWN ? 1 : 0;
                ups += e.kind() == pb::EVENT_KIND_NODE_UP ? 1 : 0;
                QCOMPARE(
                    e.severity(), e.kind() == pb::EVENT_KIND_NODE_DOWN ? pb::SEVERITY_CRITICAL : pb::SEVERITY_INFO);
            }
        }
        context.TryCancel();
        QVERIFY2(downs >= 2 && ups >= 1, qPrintable(QStringLiteral("%1 down, %2 up").arg(downs).arg(ups)));
    }

    void queryRangeReturnsWhatSubscribeDelivered()
    {
        auto b = start(fleet(4096, 100ms));
        pb::SubscribeRequest request;
        request.add_metric_ids("gpu_temp");
        request.add_metric_ids("power");
        FrameReader frames(*b.stub, request);
        std::vector<pb::FramePart> delivered;
        for (int i = 0; i < 4; ++i) {
            delivered.push_back(frames.next().at(0));
        }
        frames.finish();
        const std::vector<uint32_t> gpus = { 0, 17, 4095, 2048 };
        pb::QueryRangeRequest query;
        query.add_metric_ids("gpu_temp");
        query.add_metric_ids("power");
        *query.mutable_gpus() = { gpus.begin(), gpus.end() };
        query.set_from_ms(delivered.front().sample_time_ms());
        query.set_to_ms(delivered.back().sample_time_ms());
        query.set_step_ms(1);
        grpc::Status status;
        const auto parts = queryRange(*b.stub, query, &status);
        QVERIFY2(status.ok(), status.error_message().c_str());
        QCOMPARE(parts.size(), size_t(2)); // one per metric
        for (const auto &part : parts) {
            const int plane = part.metric_id() == "gpu_temp" ? 0 : 1;
            QCOMPARE(part.gpus_size(), 4);
            for (const auto &frame : delivered) {
                // The row whose time is the frame's own sample time holds exactly the delivered values.
                const auto it = std::find(part.times_ms().begin(), part.times_ms().end(), frame.sample_time_ms());
                QVERIFY(it != part.times_ms().end());
                const int row = static_cast<int>(it - part.times_ms().begin());
                QCOMPARE(part.sample_times_ms(row), frame.sample_time_ms());
                for (int c = 0; c < 4; ++c) {
                    float sent = 0;
                    std::memcpy(&sent, frame.planes(plane).values().data() + gpus[c] * 4, 4);
                    QCOMPARE(valueAt(part, row, c), sent);
                }
            }
        }
    }

    void queryRangeBadArguments_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("code");
        QTest::newRow("unknown metric") << 0 << int(grpc::StatusCode::INVALID_ARGUMENT);
        QTest::newRow("gpu out of range") << 1 << int(grpc::StatusCode::INVALID_ARGUMENT);
        QTest::newRow("reversed") << 2 << int(grpc::StatusCode::INVALID_ARGUMENT);
        QTest::newRow("zero step") << 3 << int(grpc::StatusCode::INVALID_ARGUMENT);
        QTest::newRow("too large") << 4 << int(grpc::StatusCode::RESOURCE_EXHAUSTED);
    }
    void queryRangeBadArguments()
    {
        QFETCH(int, kind);
        QFETCH(int, code);
        auto b = start(fleet(1024));
        pb::QueryRangeRequest q;
        q.set_from_ms(nowMs() - 60000);
        q.set_to_ms(nowMs());
        q.set_step_ms(1000);
        switch (kind) {
        case 0:
            q.add_metric_ids("nope");
            break;
        case 1:
            q.add_gpus(1024);
            break;
        case 2:
            q.set_to_ms(q.from_ms() - 1);
            break;
        case 3:
            q.set_step_ms(0);
            break;
        case 4:
            q.set_step_ms(1); // 60,001 times x 1,024 GPUs x 4 metrics
            break;
        }
        grpc::Status status;
        queryRange(*b.stub, q, &status);
        QCOMPARE(int(status.error_code()), code);
        if (kind == 4) {
            QVERIFY2(
                status.error_message().find("limit of 20000000") != std::string::npos, status.error_message().c_str());
        }
    }

    void historyIsThereAtStartAndSummarised()
    {
        auto options = fleet(10240, 1000ms);
        options.history = std::chrono::hours(2);
        auto b = start(options);
        const int64_t now = nowMs();
        pb::QueryRangeRequest q;
        q.add_metric_ids("gpu_util");
        q.set_first_gpu(100);
        q.set_gpu_count(8);
        q.set_from_ms(now - 2 * 3600 * 1000);
        q.set_to_ms(now);
        q.set_step_ms(10 * 60 * 1000);
        grpc::Status status;
        const auto parts = queryRange(*b.stub, q, &status);
        QVERIFY2(status.ok(), status.error_message().c_str());
        QCOMPARE(parts.size(), size_t(1));
        QVERIFY2(parts[0].times_ms_size() >= 11, qPrintable(QString::number(parts[0].times_ms_size())));
        QVERIFY(parts[0].sample_times_ms(0) < now - 100 * 60 * 1000);

        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 20s);
        pb::GetSummaryRequest request;
        request.set_from_ms(now - 2 * 3600 * 1000);
        pb::Summary summary;
        QVERIFY(b.stub->GetSummary(&context, request, &summary).ok());
        QVERIFY(summary.frames() >= 100);
        const auto &fleetRollup = summary.fleet();
        QCOMPARE(fleetRollup.gpu_count(), 10240U);
        QVERIFY2(fleetRollup.mean_utilisation() > 60 && fleetRollup.mean_utilisation() < 95,
            qPrintable(QString::number(fleetRollup.mean_utilisation())));
        // About two hours of 10,240 GPUs, split into busy, idle and offline.
        const double hours = fleetRollup.busy_gpu_hours() + fleetRollup.idle_gpu_hours();
        QVERIFY2(hours > 10240 * 1.9 * fleetRollup.availability() && hours < 10240 * 2.01,
            qPrintable(QString::number(hours)));
        QCOMPARE(summary.rows_size(), 10);
        QCOMPARE(summary.racks_size(), 160);
        QVERIFY(summary.jobs_size() > 0);
        for (int i = 1; i < summary.offenders_size(); ++i) {
            QVERIFY(summary.offenders(i - 1).failures() >= summary.offenders(i).failures());
        }

        grpc::ClientContext bad;
        request.set_to_ms(request.from_ms() - 1);
        QCOMPARE(b.stub->GetSummary(&bad, request, &summary).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    }

    // The rollup arithmetic on frames the test makes itself.
    void summaryFiguresFromKnownFrames()
    {
        const auto shape = be::FleetShape::forGpuCount(16);
        auto frame = [&](int64_t t, float utilFirstNode, uint8_t healthOfGpu3) {
            auto f = std::make_shared<be::Frame>();
            f->sampleTimeMs = t;
            auto &util = f->planes[static_cast<size_t>(be::MetricId::GpuUtil)];
            util.assign(16, 0.0F);
            std::fill_n(util.begin(), 8, utilFirstNode);
            f->health.assign(16, fleetscope::health::Ok);
            f->health[3] = healthOfGpu3;
            return std::shared_ptr<const be::Frame>(f);
        };
        const int64_t h = 3600 * 1000;
        // Hour 1: node 0 at 100%, node 1 idle. Hour 2: node 0 at 50%, GPU 3 offline.
        const std::vector<std::shared_ptr<const be::Frame>> frames
            = { frame(0, 100, fleetscope::health::Ok), frame(h, 50, fleetscope::health::Offline) };
        std::vector<be::TimedEvent> events(3);
        for (auto &e : events) {
            e.event.kind = be::FleetEvent::Kind::Xid;
            e.event.gpu = 9;
        }
        events[2].event.gpu = 1;
        const auto s = be::summarise(shape, frames, events, {}, 0, 2 * h, 5);
        QCOMPARE(s.fleet().gpu_count(), 16U);
        // Online GPU-hours: 16 + 15; utilisation-hours: 8 x 100 + 7 x 50.
        QCOMPARE(s.fleet().busy_gpu_hours(), 15.0);
        QCOMPARE(s.fleet().idle_gpu_hours(), 16.0);
        QCOMPARE(s.fleet().mean_utilisation(), (800.0 + 350.0) / 31.0);
        QCOMPARE(s.fleet().availability(), 31.0 / 32.0);
        QCOMPARE(s.fleet().unhealthy_gpus(), 1U);
        QCOMPARE(s.total_failures(), uint64_t(3));
        QCOMPARE(s.offenders_size(), 2);
        QCOMPARE(s.offenders(0).gpu(), 9U);
        QCOMPARE(s.offenders(0).failures(), uint64_t(2));
    }

    void jobsHoldDistinctGpusOfTheFleet()
    {
        auto b = start(fleet(10240));
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 5s);
        pb::ListJobsResponse response;
        QVERIFY(b.stub->ListJobs(&context, pb::ListJobsRequest(), &response).ok());
        QVERIFY(response.jobs_size() > 5);
        std::set<uint32_t> held;
        for (const auto &job : response.jobs()) {
            QVERIFY(!job.name().empty() && !job.owner().empty());
            const auto gpus = jobGpus(job);
            QVERIFY(gpus.size() >= 8 && gpus.size() <= 4096);
            // The simulator's jobs take whole nodes of consecutive GPUs: runs, far smaller than the list.
            QVERIFY(job.gpus().empty() && !job.gpu_runs().empty());
            QVERIFY(std::is_sorted(gpus.begin(), gpus.end()));
            QVERIFY(job.start_time_ms() > 0);
            if (job.end_time_ms() == 0) {
                for (uint32_t g : gpus) {
                    QVERIFY(g < 10240);
                    QVERIFY2(held.insert(g).second, "a GPU held by two running jobs");
                }
            }
        }
        QVERIFY(held.size() > 10240 / 2);
        QCOMPARE(response.running_jobs_left_out(), 0U);
        QCOMPARE(response.ended_jobs_left_out(), 0U);
    }

    // A job's GPUs go as a list or as runs, whichever is smaller on the wire.
    void jobGpusGoAsTheSmallerOfListAndRuns()
    {
        be::JobInfo whole;
        whole.id = 1;
        whole.firstGpu = 1000;
        whole.gpuCount = 4096;
        be::JobInfo scattered;
        scattered.id = 2;
        scattered.gpus = { 3, 5, 7, 9, 11 };
        be::JobInfo nodes;
        nodes.id = 3;
        for (uint32_t node : { 10U, 11U, 12U, 40U, 41U }) {
            for (uint32_t g = 0; g < 8; ++g) {
                nodes.gpus.push_back(node * 8 + g);
            }
        }
        const auto response = be::encodeJobs({ whole, scattered, nodes });
        QCOMPARE(response.jobs_size(), 3);
        QCOMPARE(response.jobs(0).gpu_runs_size(), 1);
        QCOMPARE(response.jobs(0).gpu_runs(0).first(), 1000U);
        QCOMPARE(response.jobs(0).gpu_runs(0).count(), 4096U);
        QVERIFY(response.jobs(0).gpus().empty());
        QCOMPARE(jobGpus(response.jobs(1)), scattered.gpus);
        QVERIFY(response.jobs(1).gpu_runs().empty());
        QCOMPARE(response.jobs(2).gpu_runs_size(), 2); // nodes 10-12 and 40-41
        QCOMPARE(jobGpus(response.jobs(2)), nodes.gpus);
        QCOMPARE(jobGpus(response.jobs(0)).size(), size_t(4096));
    }

    // A fleet of 1,048,576 GPUs whose jobs would take the answer past the 4 MiB message limit: it stays under it, the
    // oldest ended jobs left out first and counted, the running ones all there; and when the running jobs alone are
    // too many (one GPU each, scattered), the newest running ones go, counted too. Before, the answer was refused
    // by the server (RESOURCE_EXHAUSTED) and the console showed no jobs at all.
    void jobsAtAMillionGpusStayUnderTheMessageLimit()
    {
        constexpr uint32_t gpus = 1U << 20U;
        std::vector<be::JobInfo> jobs;
        // Running: 8-GPU jobs on every other node, and one job on every other GPU of the other half.
        for (uint32_t node = 0; node < gpus / 16; node += 2) {
            be::JobInfo job;
            job.id = jobs.size() + 1;
            job.name = "train-" + std::to_string(job.id);
            job.owner = "ml";
            job.firstGpu = node * 8;
            job.gpuCount = 8;
            job.startMs = 1000 + node;
            jobs.push_back(job);
        }
        be::JobInfo sparse;
        sparse.id = jobs.size() + 1;
        sparse.name = "sparse";
        sparse.owner = "hpc";
        for (uint32_t g = gpus / 2; g < gpus; g += 2) {
            sparse.gpus.push_back(g);
        }
        sparse.firstGpu = sparse.gpus.front();
        sparse.gpuCount = sparse.gpus.back() - sparse.gpus.front() + 1;
        sparse.startMs = 500;
        jobs.push_back(sparse);
        const size_t running = jobs.size();
        // Ended: 100,000 jobs of 8 GPUs each, by start time.
        for (uint32_t i = 0; i < 100000; ++i) {
            be::JobInfo job;
            job.id = jobs.size() + 1;
            job.name = "ended-" + std::to_string(i);
            job.owner = "ml";
            job.gpus = { i * 8 % gpus, i * 8 % gpus + 2, i * 8 % gpus + 4 };
            job.startMs = 10 + i;
            job.endMs = 20 + i;
            jobs.push_back(job);
        }
        auto response = be::encodeJobs(jobs);
        QVERIFY(response.ByteSizeLong() <= be::maxMessageBytes);
        QCOMPARE(response.running_jobs_left_out(), 0U);
        QVERIFY(response.ended_jobs_left_out() > 0);
        QCOMPARE(size_t(response.jobs_size()) + response.ended_jobs_left_out(), jobs.size());
        // Every running job is there, in the source's order; the ended ones kept are the newest, in order.
        for (size_t i = 0; i < running; ++i) {
            QCOMPARE(response.jobs(int(i)).id(), jobs[i].id);
        }
        QCOMPARE(response.jobs(response.jobs_size() - 1).id(), jobs.back().id);
        QCOMPARE(response.jobs(int(running)).id(), jobs[running + response.ended_jobs_left_out()].id);
        QCOMPARE(jobGpus(response.jobs(int(running - 1))), sparse.gpus);

        // What the console makes of it: every running job on its GPUs, the left-out count kept.
        QString error;
        const auto topology
            = fleetscope::decodeTopology(be::encodeTopology(be::FleetShape::forGpuCount(gpus), 1), &error);
        QVERIFY2(topology, qPrintable(error));
        const auto decoded = fleetscope::decodeJobs(response, *topology, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(decoded->jobs.size(), size_t(response.jobs_size()));
        QCOMPARE(decoded->endedJobsLeftOut, response.ended_jobs_left_out());
        QCOMPARE(decoded->runningJobOn(gpus / 2 + 2)->id, sparse.id);
        QVERIFY(decoded->runningJobOn(gpus / 2 + 1) == nullptr);
        QCOMPARE(decoded->runningJobOn(17)->id, jobs[1].id);

        // One-GPU running jobs on every GPU: their names alone pass the limit, so the newest are left out.
        std::vector<be::JobInfo> tiny(gpus);
        for (uint32_t g = 0; g < gpus; ++g) {
            tiny[g].id = g + 1;
            tiny[g].name = "single-gpu-job-" + std::to_string(g);
            tiny[g].owner = "batch";
            tiny[g].firstGpu = g;
            tiny[g].gpuCount = 1;
            tiny[g].startMs = g;
        }
        response = be::encodeJobs(tiny);
        QVERIFY(response.ByteSizeLong() <= be::maxMessageBytes);
        QVERIFY(response.running_jobs_left_out() > 0);
        QCOMPARE(size_t(response.jobs_size()) + response.running_jobs_left_out(), tiny.size());
        QCOMPARE(response.jobs(0).id(), 1U);
    }
};

QTEST_GUILESS_MAIN(TestContract)
#include "tst_contract.moc"
