// SPDX-License-Identifier: Apache-2.0
// The repeat-offender score on constructed frames and events, the simulator's bad actors ranked over a simulated day,
// and the score through the real gRPC service (ListMetrics, Subscribe, GetSummary).
#include "analytics/offenderscore.h"
#include "service/backendserver.h"
#include "sim/simulatedfleet.h"
#include "sim/simulator.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

using namespace std::chrono_literals;
using namespace fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;

namespace {
constexpr float noValue = std::numeric_limits<float>::quiet_NaN();
constexpr double day = 86400.0;

// A frame of n GPUs with data (health OK) and every plane NaN but those a test sets.
Frame frameOf(uint32_t n)
{
    Frame f;
    f.health.assign(n, fleetscope::health::Ok);
    for (auto &plane : f.planes) {
        plane.assign(n, noValue);
    }
    return f;
}

FleetEvent xid(int64_t gpu, uint32_t code)
{
    FleetEvent e(0, FleetEvent::Kind::Xid, FleetEvent::Severity::Warning, gpu, 0, "xid");
    e.xid = code;
    return e;
}

float &at(Frame &f, MetricId id, uint32_t gpu)
{
    return f.planes[static_cast<size_t>(id)][gpu];
}

// The score a summary entry's parts make, by the documented weights.
double weighted(const pb::RepeatOffender &o)
{
    return 1.0 * o.xids() + 4.0 * o.serious_xids() + 5.0 * o.ecc_double_bit() + 2.0 * o.remapped_rows()
        + 0.5 * o.remapped_rows_correctable() + 0.02 * o.pcie_replays() + 0.5 * o.throttle_hours();
}
} // namespace

class TestOffenders : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void xidsWeighSeriousOnesMore()
    {
        OffenderScore score(8);
        Frame f = frameOf(8);
        // A soft XID, a serious one (79: fallen off the bus), XID 48 (the ECC counter's to weigh), and events for no
        // GPU of the fleet or for a node.
        score.update(&f, 1000, { xid(1, 13), xid(2, 79), xid(3, 48), xid(8, 79), xid(-1, 79), xid(1 << 30, 95) });
        QCOMPARE(score.score(1), 1.0F);
        QCOMPARE(score.score(2), 5.0F);
        QCOMPARE(score.score(3), 1.0F);
        QCOMPARE(score.score(0), 0.0F);
        QCOMPARE(score.entry(2).xids, 1.0F);
        QCOMPARE(score.entry(2).seriousXids, 1.0F);
        QVERIFY(std::isnan(score.score(8)));
        // The frame carries the plane and the ranking, highest first.
        QCOMPARE(f.plane(MetricId::Offender)[2], 5.0F);
        QVERIFY(f.offenders);
        QCOMPARE(f.offenders->top.size(), size_t(3));
        QCOMPARE(f.offenders->top[0].gpu, 2U);
        QCOMPARE(f.offenders->top[1].gpu, 1U); // ties: the lower GPU first
        QCOMPARE(f.offenders->top[2].gpu, 3U);
        // Failures: 3 XIDs, one GPU is the top 1% of 8 (at least one GPU), holding one of them.
        QCOMPARE(f.offenders->failures, 3.0);
        QCOMPARE(f.offenders->topPercentFailureShare, 1.0 / 3.0);
    }

    void decayHalvesInOneHalfLife()
    {
        OffenderScore::Options options;
        options.halfLifeSeconds = 7 * day;
        OffenderScore score(4, options);
        Frame f = frameOf(4);
        score.update(&f, 0, { xid(0, 79), xid(0, 79) });
        QCOMPARE(score.score(0), 10.0F);
        f = frameOf(4);
        score.update(&f, 7 * day, {});
        QCOMPARE(score.score(0), 5.0F);
        f = frameOf(4);
        score.update(&f, 21 * day, {});
        QCOMPARE(score.score(0), 1.25F);
        // A clock that goes back counts as no time: nothing decays, nothing grows.
        f = frameOf(4);
        score.update(&f, 1 * day, {});
        QCOMPARE(score.score(0), 1.25F);
        QCOMPARE(f.plane(MetricId::Offender)[0], 1.25F);
    }

    void windowCountsAddUpToEachErrorOnce()
    {
        // A real fleet's planes: counts within the last 5 minutes. One double-bit error, one uncorrectable and two
        // correctable remapped rows and 100 PCIe replays sit in the window for 300 s of frames 10 s apart.
        OffenderScore score(4);
        double t = 5000;
        Frame f = frameOf(4);
        score.update(&f, t, {}); // the first frame: no time has passed
        for (int i = 0; i < 30; ++i) {
            f = frameOf(4);
            at(f, MetricId::EccDbe, 1) = 1;
            at(f, MetricId::RemappedRows, 1) = 1;
            at(f, MetricId::RemappedRowsCorrectable, 1) = 2;
            at(f, MetricId::PcieReplays, 2) = 100;
            t += 10;
            score.update(&f, t, {});
        }
        const auto e = score.entry(1);
        QVERIFY(std::abs(e.eccDoubleBit - 1.0F) < 1e-3F); // decay over 300 s of 7 days: 3e-4
        QVERIFY(std::abs(e.remappedRows - 1.0F) < 1e-3F);
        QVERIFY(std::abs(e.remappedRowsCorrectable - 2.0F) < 2e-3F);
        QVERIFY(std::abs(score.score(1) - (5.0F + 2.0F + 1.0F)) < 1e-2F);
        QVERIFY(std::abs(score.entry(2).pcieReplays - 100.0F) < 0.1F);
        QVERIFY(std::abs(score.score(2) - 2.0F) < 1e-2F);
        // A gap of an hour counts for one window, not twelve.
        f = frameOf(4);
        at(f, MetricId::EccDbe, 3) = 1;
        score.update(&f, t + 3600, {});
        QVERIFY(std::abs(score.entry(3).eccDoubleBit - 1.0F) < 1e-3F);
    }

    void throttleTimeCountsThermalNotThePowerCap()
    {
        OffenderScore score(4);
        double t = 0;
        Frame f = frameOf(4);
        score.update(&f, t, {});
        for (int i = 0; i < 360; ++i) { // an hour in 10 s frames
            f = frameOf(4);
            at(f, MetricId::ThrottleReasons, 0) = 0x20; // thermal slowdown
            at(f, MetricId::ThrottleReasons, 1) = 0x4; // power cap: the site's choice
            at(f, MetricId::ThrottleReasons, 2) = 0x8 | 0x4; // hardware slowdown
            at(f, MetricId::ThrottleReasons, 3) = -32; // nonsense
            t += 10;
            score.update(&f, t, {});
        }
        QVERIFY(std::abs(score.entry(0).throttleHours - 1.0F) < 5e-3F); // decayed by up to 2^(-1/168) meanwhile
        QVERIFY(std::abs(score.score(0) - 0.5F) < 3e-3F);
        QCOMPARE(score.score(1), 0.0F);
        QVERIFY(std::abs(score.entry(2).throttleHours - 1.0F) < 5e-3F);
        QCOMPARE(score.score(3), 0.0F);
    }

    void nanInfiniteAndMissingAreSkipped()
    {
        OffenderScore score(4);
        Frame f = frameOf(4);
        score.update(&f, 0, {});
        f = frameOf(4);
        at(f, MetricId::EccDbe, 0) = noValue;
        at(f, MetricId::EccDbe, 1) = std::numeric_limits<float>::infinity();
        at(f, MetricId::EccDbe, 2) = -3;
        at(f, MetricId::ThrottleReasons, 0) = noValue;
        at(f, MetricId::ThrottleReasons, 1) = std::numeric_limits<float>::infinity();
        f.planes[static_cast<size_t>(MetricId::PcieReplays)].clear(); // a plane the producer does not have
        f.planes[static_cast<size_t>(MetricId::RemappedRows)].assign(3, 1.0F); // nor one of the wrong size
        f.health[3] = fleetscope::health::NoData;
        score.update(&f, 60, {});
        for (uint32_t g = 0; g < 4; ++g) {
            QCOMPARE(score.score(g), 0.0F);
        }
        // No data and no score: NaN on the map; a GPU with a score keeps it through an outage.
        QVERIFY(std::isnan(f.plane(MetricId::Offender)[3]));
        QCOMPARE(f.plane(MetricId::Offender)[2], 0.0F);
        f = frameOf(4);
        f.health[3] = fleetscope::health::NoData;
        score.update(&f, 120, { xid(3, 79) });
        QCOMPARE(f.plane(MetricId::Offender)[3], 5.0F);
        QVERIFY(!f.offenders->top.empty());
    }

    void rawCountersGiveExactIncrements()
    {
        OffenderScore score(4);
        auto raw = [](uint32_t dbe, uint32_t pcie) {
            auto r = std::make_shared<RawErrorFields>();
            for (auto &t : r->totals) {
                t.assign(4, 0);
            }
            r->totals[EccDbeCount][1] = dbe;
            r->totals[PcieReplayCount][1] = pcie;
            return std::shared_ptr<const RawErrorFields>(std::move(r));
        };
        Frame f = frameOf(4);
        f.rawErrors = raw(7, 1000); // counted before the start: not news
        at(f, MetricId::EccDbe, 1) = 7; // the window planes are not read beside the counters
        score.update(&f, 0, {});
        QCOMPARE(score.score(1), 0.0F);
        f = frameOf(4);
        f.rawErrors = raw(9, 1100);
        at(f, MetricId::EccDbe, 1) = 9;
        score.update(&f, 1, {});
        QCOMPARE(score.entry(1).eccDoubleBit, 2.0F);
        QCOMPARE(score.entry(1).pcieReplays, 100.0F);
        // The same counters shared by the next frame: nothing new.
        const auto shared = f.rawErrors;
        f = frameOf(4);
        f.rawErrors = shared;
        score.update(&f, 2, {});
        QVERIFY(std::abs(score.entry(1).eccDoubleBit - 2.0F) < 1e-5F);
        // A counter that falls was reset: what it holds now is new.
        f = frameOf(4);
        f.rawErrors = raw(1, 1100);
        score.update(&f, 3, {});
        QVERIFY(std::abs(score.entry(1).eccDoubleBit - 3.0F) < 1e-5F);
    }

    void aMillionGpusInBoundedMemory()
    {
        constexpr uint32_t n = 1U << 20U;
        QVERIFY(OffenderScore::bytesPerGpu() * n <= 32U << 20U); // seven floats a GPU
        OffenderScore score(n);
        Frame f = frameOf(n);
        score.update(&f, 0, {});
        f = frameOf(n);
        for (uint32_t g = 0; g < n; g += 97) {
            at(f, MetricId::PcieReplays, g) = static_cast<float>(g % 13);
            at(f, MetricId::ThrottleReasons, g) = (g % 3 == 0) ? 0x20 : 0;
        }
        std::vector<FleetEvent> events;
        for (uint32_t g = 0; g < n; g += 1009) {
            events.push_back(xid(g, g % 2 ? 79 : 13));
        }
        score.update(&f, 10, events);
        QCOMPARE(f.plane(MetricId::Offender).size(), size_t(n));
        QCOMPARE(f.offenders->top.size(), size_t(1000));
        QVERIFY(std::is_sorted(f.offenders->top.begin(), f.offenders->top.end(),
            [](const auto &a, const auto &b) { return a.score > b.score; }));
        qInfo("1,048,576 GPUs: %.1f ms per frame", score.lastCostSeconds() * 1000.0);
    }

    // The fault model's bad actors (about 1% of GPUs, 150 times as error-prone) rank on top after a simulated day,
    // and the worst 1% carry a large share of the failures.
    void simulatedBadActorsRankOnTop()
    {
        constexpr uint32_t n = 10240;
        Simulator sim(n, 7);
        OffenderScore score(n);
        // Three days in 5-minute steps: at Llama 3's rates (docs/FAULTS.md) a bad actor scores about a point a day and
        // one in a few hundred other GPUs logs a soft XID, which weighs as much; one day does not sort them apart.
        for (int i = 0; i < 3 * 24 * 12; ++i) {
            sim.step(300.0);
            auto frame = sim.snapshot();
            score.update(frame.get(), sim.nowSeconds(), sim.takeEvents());
        }
        const auto &faults = sim.faults();
        auto propensity = [&](uint32_t g) { return faults.propensity(g); };
        std::vector<uint32_t> byPropensity(n);
        std::iota(byPropensity.begin(), byPropensity.end(), 0U);
        std::sort(byPropensity.begin(), byPropensity.end(),
            [&](uint32_t a, uint32_t b) { return propensity(a) > propensity(b); });
        std::vector<uint32_t> byScore = byPropensity;
        std::sort(
            byScore.begin(), byScore.end(), [&](uint32_t a, uint32_t b) { return score.score(a) > score.score(b); });
        // The worst 1% by score: most are among the worst 2% by propensity (the bad actors, about 1%, and the top of
        // the rest's log-normal spread). Not all after three days: a few dozen of the other 10,000 log an XID, which
        // alone weighs as much as a bad actor's day; a week sorts them apart.
        const size_t onePercent = n / 100;
        std::vector<uint8_t> bad(n, 0);
        for (size_t i = 0; i < 2 * onePercent; ++i) {
            bad[byPropensity[i]] = 1;
        }
        size_t hits = 0;
        for (size_t i = 0; i < onePercent; ++i) {
            hits += bad[byScore[i]];
        }
        qInfo(
            "three simulated days of %u GPUs: %zu of the top %zu by score are bad actors; top score %.1f, 100th %.1f, "
            "median %.3f",
            n, hits, onePercent, double(score.score(byScore[0])), double(score.score(byScore[onePercent - 1])),
            double(score.score(byScore[n / 2])));
        QVERIFY2(hits >= onePercent * 7 / 10, qPrintable(QString::number(hits)));
        auto frame = sim.snapshot();
        score.update(frame.get(), sim.nowSeconds() + 60, {});
        qInfo("the worst 1%% carry %.0f%% of %.0f failures", frame->offenders->topPercentFailureShare * 100.0,
            frame->offenders->failures);
        QVERIFY(frame->offenders->topPercentFailureShare > 0.35);
    }

    void servedThroughTheService()
    {
        SimulationOptions options;
        options.gpuCount = 2048;
        options.seed = 3;
        options.interval = 50ms;
        options.speed = 7200; // six simulated minutes a step: errors come quickly
        options.pastEvents = 0ms;
        auto owned = simulatedSource(options);
        FrameSource *source = owned.get();
        BackendServer server(std::move(owned));
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(server.listeningAddress(), grpc::InsecureChannelCredentials()));
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 5s);
            pb::ListMetricsResponse metrics;
            QVERIFY(stub->ListMetrics(&context, pb::ListMetricsRequest(), &metrics).ok());
            auto find = [&](const std::string &id) {
                return std::find_if(metrics.metrics().begin(), metrics.metrics().end(),
                    [&](const pb::MetricInfo &m) { return m.id() == id; });
            };
            const auto offender = find("offender");
            QVERIFY(offender != metrics.metrics().end());
            QCOMPARE(offender->name(), std::string("Repeat-offender score"));
            QCOMPARE(offender->range_min(), 0.0F);
            QCOMPARE(offender->range_max(), 50.0F);
            QCOMPARE(offender->colour_map(), std::string("inferno"));
            QVERIFY(find("remapped_rows") != metrics.metrics().end());
            QVERIFY(find("remapped_rows_correctable") != metrics.metrics().end());
        }
        {
            // Frames carry the plane, and some GPU soon scores above 0.
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 30s);
            pb::SubscribeRequest request;
            request.add_metric_ids("offender");
            request.add_metric_ids("remapped_rows");
            auto reader = stub->Subscribe(&context, request);
            pb::FramePart part;
            bool scored = false;
            while (!scored && reader->Read(&part)) {
                QCOMPARE(part.planes_size(), 2);
                QCOMPARE(part.planes(0).metric_id(), std::string("offender"));
                QCOMPARE(part.planes(0).values().size(), size_t(part.gpu_count()) * sizeof(float));
                std::vector<float> v(part.gpu_count());
                std::memcpy(v.data(), part.planes(0).values().data(), v.size() * sizeof(float));
                scored = std::any_of(v.begin(), v.end(), [](float s) { return s > 0; });
            }
            QVERIFY(scored);
            context.TryCancel();
            reader->Finish();
        }
        // Enough offenders for a list, then the source held still so that its newest frame is the summary's.
        QVERIFY(QTest::qWaitFor([&] { return source->latest()->offenders->top.size() >= 10; }, 30000));
        source->stop();
        const auto newest = source->latest();
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 10s);
        pb::GetSummaryRequest request;
        request.set_from_ms(newest->sampleTimeMs - 60000);
        request.set_top_offenders(10);
        pb::Summary summary;
        const auto status = stub->GetSummary(&context, request, &summary);
        QVERIFY2(status.ok(), status.error_message().c_str());
        QCOMPARE(summary.repeat_offenders_size(), 10);
        const auto &plane = newest->plane(MetricId::Offender);
        for (int i = 0; i < summary.repeat_offenders_size(); ++i) {
            const auto &o = summary.repeat_offenders(i);
            QVERIFY(o.gpu() < options.gpuCount);
            QCOMPARE(o.score(), plane[o.gpu()]);
            QVERIFY(o.score() > 0);
            QVERIFY2(std::abs(weighted(o) - o.score()) < 1e-3 * o.score() + 1e-4, qPrintable(QString::number(i)));
            if (i > 0) {
                QVERIFY(o.score() <= summary.repeat_offenders(i - 1).score());
            }
        }
        const float highest = *std::max_element(plane.begin(), plane.end(),
            [](float a, float b) { return (std::isnan(a) ? 0.0F : a) < (std::isnan(b) ? 0.0F : b); });
        QCOMPARE(summary.repeat_offenders(0).score(), highest);
        QVERIFY(summary.top_percent_failure_share() >= 0 && summary.top_percent_failure_share() <= 1);
    }
};

QTEST_GUILESS_MAIN(TestOffenders)
#include "tst_offenders.moc"
