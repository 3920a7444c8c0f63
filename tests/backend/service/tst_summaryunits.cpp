// SPDX-License-Identifier: Apache-2.0
// GetSummary's GPU-hours lost in schedulable units (an HGX node, an NVL72 rack) through the real gRPC service, over
// constructed frames with known health, whole and clipped to a range.
#include "analytics/fleetanalytics.h"
#include "core/framesource.h"
#include "service/backendserver.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QtTest>

#include <chrono>
#include <limits>

using namespace std::chrono_literals;
using namespace fleetscope::backend;
namespace health = fleetscope::health;
namespace pb = fleetscope::telemetry::v1;

namespace {
constexpr int64_t hourMs = 3600000;
constexpr int64_t t0 = 1700000000000; // the first frame

// One row: rack 0 an HGX rack of two 8-GPU nodes (two units), rack 1 an NVL rack of two 4-GPU trays (one unit).
FleetShape mixedShape()
{
    FleetShape s;
    s.gpuCount = 24;
    s.simulated = false;
    s.rows.push_back({ "r01", "hall", 0, 2 });
    s.racks.push_back({ "r01-k01", 0, 0, 0, 2, false, {} });
    s.racks.push_back({ "r01-k02", 0, 1, 2, 2, true, {} });
    s.nodes.push_back({ "r01-k01-n01", 0, 0, 8, {}, {}, {}, {} });
    s.nodes.push_back({ "r01-k01-n02", 0, 8, 8, {}, {}, {}, {} });
    s.nodes.push_back({ "r01-k02-t01", 1, 16, 4, {}, {}, {}, {} });
    s.nodes.push_back({ "r01-k02-t02", 1, 20, 4, {}, {}, {}, {} });
    for (uint32_t k = 0; k < s.nodes.size(); ++k) {
        s.nodeOfGpu.insert(s.nodeOfGpu.end(), s.nodes[k].gpuCount, k);
    }
    s.uuids.assign(s.gpuCount, {});
    return s;
}

std::shared_ptr<Frame> frameAt(
    int64_t timeMs, uint64_t sequence, std::initializer_list<std::pair<uint32_t, uint8_t>> bad)
{
    auto f = std::make_shared<Frame>();
    f->sequence = sequence;
    f->sampleTimeMs = timeMs;
    for (auto &plane : f->planes) {
        plane.assign(24, std::numeric_limits<float>::quiet_NaN());
    }
    f->health.assign(24, health::Ok);
    for (const auto &[gpu, byte] : bad) {
        f->health[gpu] = byte;
    }
    return f;
}

// Three frames an hour apart, held from the start; no new ones.
class ConstructedFleet final : public FramePoller
{
public:
    const FleetShape &shape() const override { return m_shape; }
    uint64_t topologyGeneration() const override { return 1; }
    Past pastFrames(int64_t, std::chrono::milliseconds, size_t) override
    {
        Past past;
        // Node 0: GPU 3 warm; the NVL rack: an XID on GPU 20. Node 1 is whole.
        past.frames.push_back(frameAt(t0, 1, { { 3, health::Warning }, { 20, health::Ok | health::xidFlag } }));
        // Node 1: an ECC error on GPU 10 (GPU 9 throttling at OK is healthy); the NVL rack: 16 offline, 17 critical.
        past.frames.push_back(frameAt(t0 + hourMs, 2,
            { { 9, health::Ok | health::throttledFlag }, { 10, health::Ok | health::eccFlag }, { 16, health::Offline },
                { 17, health::Critical } }));
        return past;
    }
    // Node 0: GPU 0 without data. The other two units whole at the end.
    std::shared_ptr<Frame> firstFrame() override { return frameAt(t0 + 2 * hourMs, 3, { { 0, health::NoData } }); }
    std::shared_ptr<Frame> poll() override { return nullptr; }
    std::string upstreamError() const override { return {}; }

private:
    FleetShape m_shape = mixedShape();
};
} // namespace

class TestSummaryUnits : public QObject
{
    Q_OBJECT

    std::unique_ptr<BackendServer> m_server;
    std::unique_ptr<pb::Telemetry::Stub> m_stub;

    pb::Summary summary(int64_t fromMs, int64_t toMs)
    {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 10s);
        pb::GetSummaryRequest request;
        request.set_from_ms(fromMs);
        request.set_to_ms(toMs);
        pb::Summary answer;
        const auto status = m_stub->GetSummary(&context, request, &answer);
        if (!status.ok()) {
            qWarning("GetSummary: %s", status.error_message().c_str());
        }
        return answer;
    }

private Q_SLOTS:
    void initTestCase()
    {
        FrameSource::Options options;
        options.interval = 1h; // the newest frame stands for an hour
        m_server = std::make_unique<BackendServer>(judgedSource(std::make_unique<ConstructedFleet>(), options));
        std::string error;
        QVERIFY2(m_server->start("127.0.0.1:0", &error), error.c_str());
        m_stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(m_server->listeningAddress(), grpc::InsecureChannelCredentials()));
    }

    void lostAndStrandedOverTheWholeRange()
    {
        const pb::Summary s = summary(t0, t0 + 3 * hourMs);
        QCOMPARE(s.frames(), 3U);
        QCOMPARE(s.units(), 3U);
        // Hour 1: node 0 (8 lost, 7 stranded) and the NVL rack (8, 7). Hour 2: node 1 (8, 7) and the NVL rack (8, 6).
        // Hour 3: node 0 (8, 7).
        QCOMPARE(s.unit_gpu_hours_lost(), 40.0);
        QCOMPARE(s.stranded_gpu_hours(), 34.0);
        QCOMPARE(s.healthy_units_at_end(), 2U);
    }

    void clippedToTheRange()
    {
        // Half of hour 1, hour 2, half of hour 3.
        const pb::Summary s = summary(t0 + hourMs / 2, t0 + 5 * hourMs / 2);
        QCOMPARE(s.unit_gpu_hours_lost(), 8.0 + 16.0 + 4.0);
        QCOMPARE(s.stranded_gpu_hours(), 7.0 + 13.0 + 3.5);
        QCOMPARE(s.units(), 3U);
        QCOMPARE(s.healthy_units_at_end(), 2U);
        // Hour 2 alone: the newest frame of that range is the second.
        const pb::Summary middle = summary(t0 + hourMs, t0 + 2 * hourMs - 1);
        QCOMPARE(middle.healthy_units_at_end(), 1U); // node 0
        QVERIFY(std::abs(middle.unit_gpu_hours_lost() - 16.0 * (hourMs - 1) / hourMs) < 1e-9);
    }

    void cleanupTestCase()
    {
        m_stub.reset();
        m_server.reset();
    }
};

QTEST_GUILESS_MAIN(TestSummaryUnits)
#include "tst_summaryunits.moc"
