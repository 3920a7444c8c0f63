// SPDX-License-Identifier: Apache-2.0
// The anomaly detector on constructed planes, its ground truth in the simulator, and its metric and events through the
// real gRPC service.
#include "analytics/anomalydetector.h"
#include "analytics/fleetanalytics.h"
#include "core/framesource.h"
#include "service/backendserver.h"
#include "sim/simulatedfleet.h"
#include "sim/simulator.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QtTest>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

using namespace std::chrono_literals;
using namespace fleetscope::backend;
using fleetscope::EventKind;
namespace pb = fleetscope::telemetry::v1;

namespace {
constexpr float noValue = std::numeric_limits<float>::quiet_NaN();
constexpr double step = 10.0; // seconds between frames

// One job over the whole fleet of 64 GPUs (8 nodes in one rack), in a compute phase: every GPU near the same
// values, each a little apart from the others (its slot, its silicon), with the reading's rounding.
struct Fleet
{
    FleetShape shape = FleetShape::forGpuCount(64);
    AnomalyDetector detector { shape };
    std::vector<FleetEvent> events;
    double now = 0;

    Fleet() { detector.setJobs({ job(0, 64) }); }

    static JobInfo job(uint32_t first, uint32_t count)
    {
        JobInfo j;
        j.id = 7;
        j.firstGpu = first;
        j.gpuCount = count;
        return j;
    }

    // A frame of the fleet at phase level `load` (1 busy, 0 idle); tweak changes it before it is judged.
    Frame frame(float load, const std::function<void(Frame &)> &tweak = {})
    {
        Frame f;
        f.health.assign(shape.gpuCount, 0);
        for (auto &plane : f.planes) {
            plane.assign(shape.gpuCount, noValue);
        }
        for (uint32_t g = 0; g < shape.gpuCount; ++g) {
            const auto spread = static_cast<float>(static_cast<int>(g % 5) - 2); // -2 .. 2
            f.planes[size_t(MetricId::GpuTemp)][g] = std::round(35.0F + 30.0F * load + spread);
            f.planes[size_t(MetricId::MemTemp)][g] = std::round(40.0F + 30.0F * load + spread);
            f.planes[size_t(MetricId::Power)][g] = 70.0F + 550.0F * load + 4.0F * spread;
            f.planes[size_t(MetricId::GpuUtil)][g] = std::round(95.0F * load);
            f.planes[size_t(MetricId::SmClock)][g] = load > 0 ? 1980.0F : 345.0F;
        }
        if (tweak) {
            tweak(f);
        }
        return f;
    }

    // Judges n frames, one every 10 s; returns the last one judged.
    Frame run(int n, float load, const std::function<void(Frame &)> &tweak = {})
    {
        Frame f;
        for (int i = 0; i < n; ++i) {
            f = frame(load, tweak);
            now += step;
            detector.judge(&f, now, &events);
        }
        return f;
    }

    int count(EventKind kind) const
    {
        return static_cast<int>(
            std::count_if(events.begin(), events.end(), [&](const FleetEvent &e) { return e.kind == kind; }));
    }
};

// A simulator's jobs as the backend describes them, on its clock (milliseconds of simulated time), ended ones too.
std::vector<JobInfo> jobsOf(const Simulator &sim)
{
    std::vector<JobInfo> out;
    const auto &shape = sim.shape();
    auto describe = [&](const Simulator::Job &j, bool ended) {
        JobInfo info;
        info.id = j.id;
        info.firstGpu = shape.nodes[j.firstNode].firstGpu;
        const auto &last = shape.nodes[j.firstNode + j.nodeCount - 1];
        info.gpuCount = last.firstGpu + last.gpuCount - info.firstGpu;
        info.startMs = static_cast<int64_t>(j.startSeconds * 1000);
        info.endMs = ended ? static_cast<int64_t>(j.endSeconds * 1000) : 0;
        out.push_back(info);
    };
    for (const auto &j : sim.jobs()) {
        describe(j, false);
    }
    for (const auto &j : sim.endedJobs()) {
        describe(j, true);
    }
    return out;
}

// A producer of constructed frames for the service: the Fleet's, GPU 5 running 15 °C hot from frame 12 to 30 of
// every 60.
class ScriptedFleet final : public FramePoller
{
public:
    const FleetShape &shape() const override { return m_fleet.shape; }
    uint64_t topologyGeneration() const override { return 1; }
    std::shared_ptr<Frame> firstFrame() override { return next(); }
    std::shared_ptr<Frame> poll() override { return next(); }
    std::string upstreamError() const override { return {}; }
    std::vector<JobInfo> jobs() const override { return { Fleet::job(0, 64) }; }

private:
    std::shared_ptr<Frame> next()
    {
        const int i = m_index++;
        auto f = std::make_shared<Frame>(m_fleet.frame(1.0F, [i](Frame &f) {
            if (i % 80 >= 40 && i % 80 < 58) {
                f.planes[size_t(MetricId::GpuTemp)][5] += 15.0F;
            }
        }));
        f->sampleTimeMs = 1700000000000 + int64_t { i } * 10000;
        return f;
    }
    Fleet m_fleet;
    int m_index = 0;
};
} // namespace

class TestAnomaly : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void jobWidePhaseChangeIsNoAnomaly()
    {
        Fleet fleet;
        fleet.run(40, 1.0F); // past the detector's first 5 minutes, when it learns where each GPU sits
        // The whole job pauses for a checkpoint, then resumes: every metric moves, together. The paused phase is new:
        // each GPU is judged against its peers there, as if it sat where its slot's GPUs sit (these GPUs sit up to
        // 4 °C from that, in a spread of 1.5 °C): no anomaly, no GPU even at the score that ends one.
        const Frame paused = fleet.run(30, 0.0F);
        fleet.run(40, 1.0F);
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 0);
        for (uint32_t g = 0; g < 64; ++g) {
            QVERIFY2(paused.plane(MetricId::Anomaly)[g] < AnomalyDetector::Options {}.endScore,
                qPrintable(QString::number(paused.plane(MetricId::Anomaly)[g])));
        }
    }

    void oneGpuDriftingFromItsJobIs()
    {
        Fleet fleet;
        fleet.run(40, 1.0F); // past the detector's first 5 minutes, when it learns where each GPU sits
        auto hot = [](Frame &f) { f.planes[size_t(MetricId::GpuTemp)][13] += 12.0F; };
        const Frame f = fleet.run(12, 1.0F, hot); // 2 minutes
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        const auto &e = fleet.events.front();
        QCOMPARE(e.gpu, 13);
        QCOMPARE(e.jobId, uint64_t { 7 });
        QVERIFY(e.metric == MetricId::GpuTemp);
        // What a person can act on: which GPU, where, how far from what, for how long.
        QVERIFY2(e.text.find("GPU 5 of ") == 0, e.text.c_str());
        QVERIFY2(e.text.find("°C above its job's median for") != std::string::npos, e.text.c_str());
        QVERIFY(fleet.detector.anomalous(13));
        QVERIFY(f.plane(MetricId::Anomaly)[13] > 5.0F);
        QVERIFY(f.plane(MetricId::Anomaly)[12] < 1.0F);
        // It returns: the anomaly ends once it has stayed in line.
        fleet.run(20, 1.0F);
        QCOMPARE(fleet.count(EventKind::AnomalyEnd), 1);
        QVERIFY(!fleet.detector.anomalous(13));
    }

    void oneOddSampleNeverAlarms()
    {
        Fleet fleet;
        fleet.run(40, 1.0F); // past the detector's first 5 minutes, when it learns where each GPU sits
        // Spikes of a few samples each, under the persistence window, again and again.
        for (int i = 0; i < 10; ++i) {
            fleet.run(5, 1.0F, [](Frame &f) { f.planes[size_t(MetricId::SmClock)][20] = 800.0F; });
            fleet.run(3, 1.0F);
        }
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 0);
    }

    void madOfZeroDoesNotDivideByZero()
    {
        // Idle GPUs all read the same: MAD 0. A GPU one step of rounding off is not an anomaly (its score stays well
        // under the start); one far off is.
        Fleet fleet;
        auto flat = [](Frame &f) {
            for (auto id : AnomalyDetector::judged) {
                std::fill(f.planes[size_t(id)].begin(), f.planes[size_t(id)].end(), 30.0F);
            }
        };
        fleet.run(40, 0.0F, flat);
        const Frame f = fleet.run(1, 0.0F, [&](Frame &f) {
            flat(f);
            f.planes[size_t(MetricId::GpuTemp)][3] = 31.0F;
        });
        for (uint32_t g = 0; g < 64; ++g) {
            QVERIFY(std::isfinite(f.plane(MetricId::Anomaly)[g]));
        }
        QVERIFY(f.plane(MetricId::Anomaly)[3] < AnomalyDetector::Options {}.startScore / 2);
        QVERIFY(std::isfinite(fleet.detector.peerMad(MetricId::GpuTemp, 3)));
        QCOMPARE(fleet.detector.peerMad(MetricId::GpuTemp, 3), AnomalyDetector::floorOf(MetricId::GpuTemp) / 1.4826F);
        fleet.run(12, 0.0F, [&](Frame &f) {
            flat(f);
            f.planes[size_t(MetricId::GpuTemp)][3] = 45.0F;
        });
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
    }

    // A rack idle from the detector's start (every GPU of it settling at once) is judged once settled: its settling
    // GPUs are each other's peers when there are no others.
    void aRackIdleFromTheStartIsJudged()
    {
        Fleet fleet;
        fleet.detector.setJobs({});
        fleet.run(40, 0.0F); // past the first 5 minutes
        const Frame f = fleet.run(12, 0.0F, [](Frame &f) { f.planes[size_t(MetricId::GpuTemp)][21] += 15.0F; });
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        QCOMPARE(fleet.events.front().gpu, 21);
        QVERIFY(f.plane(MetricId::Anomaly)[20] < 1.0F);
    }

    void aDriftSmallAgainstThePeersSpreadIsFound()
    {
        // The job's GPUs sit far apart (their slots, their silicon: 4 °C steps, a MAD of 4 °C) but each holds its
        // place. GPU 13 warming by 3 MADs (12 °C) is well inside the job's spread, yet far from its own place: found.
        auto wide = [](Frame &f) {
            for (uint32_t g = 0; g < 64; ++g) {
                f.planes[size_t(MetricId::GpuTemp)][g] += 3.0F * static_cast<float>(static_cast<int>(g % 5) - 2);
            }
        };
        Fleet fleet;
        fleet.run(40, 1.0F, wide);
        QCOMPARE(fleet.detector.peerMad(MetricId::GpuTemp, 13), 4.0F);
        fleet.run(12, 1.0F, [&](Frame &f) {
            wide(f);
            f.planes[size_t(MetricId::GpuTemp)][13] += 12.0F;
            f.planes[size_t(MetricId::MemTemp)][13] += 12.0F; // its memory with it
        });
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        QCOMPARE(fleet.events.back().gpu, 13);
        QVERIFY(fleet.events.back().metric == MetricId::GpuTemp);
    }

    void oneSampleInLineDoesNotHideADrift()
    {
        // A job's phase dip can bring a degraded GPU's reading back in line for one sample: the run goes on.
        Fleet fleet;
        fleet.run(40, 1.0F);
        auto low = [](Frame &f) { f.planes[size_t(MetricId::Power)][21] -= 80.0F; };
        fleet.run(4, 1.0F, low);
        fleet.run(1, 1.0F);
        fleet.run(4, 1.0F, low);
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        QVERIFY(fleet.events.back().metric == MetricId::Power);
    }

    void aFaultInForceAtAJobChangeIsNotLearnt()
    {
        // GPU 13 runs hot; its job ends and another starts on the same GPUs while it still does. Where it usually sits
        // is kept, not learnt from the fault: once the new job's GPUs have settled, it is an anomaly again.
        Fleet fleet;
        fleet.run(40, 1.0F);
        auto hot = [](Frame &f) { f.planes[size_t(MetricId::GpuTemp)][13] += 12.0F; };
        fleet.run(12, 1.0F, hot);
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        JobInfo next = Fleet::job(0, 64);
        next.id = 8;
        fleet.detector.setJobs({ next });
        fleet.run(30, 1.0F, hot); // 5 minutes of settling, then judged
        fleet.run(12, 1.0F, hot);
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 2);
        QVERIFY(fleet.detector.anomalous(13));
        QCOMPARE(fleet.events.back().jobId, uint64_t { 8 });
        // Its peers, which changed job in line, are not.
        for (uint32_t g = 0; g < 64; ++g) {
            QVERIFY(g == 13 || !fleet.detector.anomalous(g));
        }
    }

    void memoryIsJudgedAgainstItsOwnGpu()
    {
        // Memory follows its GPU's die a minute late. Through checkpoints, where each GPU cools by its own amount (its
        // slot), every memory lags its GPU by its own amount: no anomaly. Memory running hot above its own GPU is one.
        Fleet fleet;
        std::vector<float> mem(64, noValue);
        float load = 1.0F;
        int hotMemory = -1;
        auto lagged = [&](Frame &f) {
            const float alpha = 1.0F - std::exp(-static_cast<float>(step) / 60.0F);
            for (uint32_t g = 0; g < 64; ++g) {
                const auto spread = static_cast<float>(static_cast<int>(g % 5) - 2);
                const float gpu = 35.0F + (24.0F + 2.0F * static_cast<float>(g % 7)) * load + spread;
                mem[g] = std::isnan(mem[g]) ? gpu + 5.0F : mem[g] + (gpu + 5.0F - mem[g]) * alpha;
                f.planes[size_t(MetricId::GpuTemp)][g] = std::round(gpu);
                f.planes[size_t(MetricId::MemTemp)][g] = std::round(mem[g] + (int(g) == hotMemory ? 10.0F : 0.0F));
            }
        };
        fleet.run(40, 1.0F, lagged);
        for (int checkpoint = 0; checkpoint < 20; ++checkpoint) {
            load = 0.0F;
            fleet.run(6, 0.0F, lagged); // a minute's checkpoint
            load = 1.0F;
            fleet.run(24, 1.0F, lagged);
        }
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 0);
        hotMemory = 30;
        fleet.run(12, 1.0F, lagged);
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        QCOMPARE(fleet.events.back().gpu, 30);
        QVERIFY(fleet.events.back().metric == MetricId::MemTemp);
    }

    void placesWithOldPeersAreForgottenAtAJobChange()
    {
        // At job 7's checkpoints GPU 13 ran 6 °C cooler than its peers; job 8 on the same GPUs has it in line at its
        // checkpoints. It is judged against a place learnt in job 8, not the one it had with job 7.
        Fleet fleet;
        fleet.run(40, 1.0F);
        bool cool = true;
        auto checkpointCool = [&](Frame &f) {
            if (cool && f.planes[size_t(MetricId::GpuUtil)][13] < 50.0F) {
                f.planes[size_t(MetricId::GpuTemp)][13] -= 6.0F;
                f.planes[size_t(MetricId::MemTemp)][13] -= 6.0F;
            }
        };
        auto checkpoints = [&] {
            for (int i = 0; i < 8; ++i) {
                fleet.run(18, 0.0F, checkpointCool);
                fleet.run(30, 1.0F, checkpointCool);
            }
        };
        checkpoints();
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 0);
        JobInfo next = Fleet::job(0, 64);
        next.id = 8;
        fleet.detector.setJobs({ next });
        cool = false;
        fleet.run(40, 1.0F);
        checkpoints();
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 0);
    }

    void aPlaceLearntDuringAFaultIsLetGo()
    {
        // GPU 13's clock sticks 300 MHz low (it draws less and runs cooler) just as a new job starts on it. Its place
        // in the new job is not learnt from that (10 of its peers' spreads off them): once settled it is an anomaly,
        // with no history yet. When the clock comes back it runs with its peers, though its power and heat places were
        // learnt while it settled: it is not flagged for that, the anomaly ends and no other follows.
        Fleet fleet;
        fleet.run(40, 1.0F);
        auto stuck = [](Frame &f) {
            f.planes[size_t(MetricId::SmClock)][13] -= 300.0F;
            f.planes[size_t(MetricId::Power)][13] -= 60.0F;
            f.planes[size_t(MetricId::GpuTemp)][13] -= 5.0F;
            f.planes[size_t(MetricId::MemTemp)][13] -= 5.0F;
        };
        JobInfo next = Fleet::job(0, 64);
        next.id = 8;
        fleet.detector.setJobs({ next });
        fleet.run(30, 1.0F, stuck); // settling
        fleet.run(12, 1.0F, stuck);
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        QVERIFY(fleet.detector.anomalous(13));
        QVERIFY2(
            fleet.events.back().text.find("no history yet") != std::string::npos, fleet.events.back().text.c_str());
        fleet.run(60, 1.0F); // 10 minutes back in line with its peers
        QVERIFY(!fleet.detector.anomalous(13));
        QCOMPARE(fleet.count(EventKind::AnomalyEnd), 1);
        fleet.run(60, 1.0F);
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
    }

    void aFaultEndingAsTheGpuSettlesIsNotLearntAsItsPlace()
    {
        // The job's GPUs sit far apart (4 °C steps), so a place a few degrees off is no place far from the peers.
        // GPU 12 runs 8 °C hot through its settling in a new job (a cooling fault that ends just as it settles): its
        // place in the job is learnt from the fault, and from its first judged frame it is odd against it, though it
        // runs where it ran before and nearer its peers. Never in line with that place, it takes where it is as its
        // place after a while: the anomaly ends and no other follows, at checkpoints (the other phase) included.
        auto wide = [](Frame &f) {
            for (uint32_t g = 0; g < 64; ++g) {
                f.planes[size_t(MetricId::GpuTemp)][g] += 3.0F * static_cast<float>(static_cast<int>(g % 5) - 2);
            }
        };
        auto hot = [&](Frame &f) {
            wide(f);
            f.planes[size_t(MetricId::GpuTemp)][12] += 8.0F;
        };
        Fleet fleet;
        fleet.run(40, 1.0F, wide);
        fleet.run(30, 0.0F, hot); // the old job's last checkpoint, the fault begins
        JobInfo next = Fleet::job(0, 64);
        next.id = 8;
        fleet.detector.setJobs({ next });
        fleet.run(20, 0.0F, hot); // the new job starts idle: its idle place is learnt from the fault too
        fleet.run(30, 1.0F, hot); // it settles and learns its busy place, the fault in force
        fleet.run(60, 1.0F, wide); // 10 minutes where it ran before the fault
        QVERIFY(!fleet.detector.anomalous(12));
        QCOMPARE(fleet.count(EventKind::AnomalyEnd), fleet.count(EventKind::AnomalyStart));
        const int starts = fleet.count(EventKind::AnomalyStart);
        for (int i = 0; i < 4; ++i) {
            fleet.run(30, 0.0F, wide);
            fleet.run(60, 1.0F, wide);
        }
        QCOMPARE(fleet.count(EventKind::AnomalyStart), starts);
        QVERIFY(!fleet.detector.anomalous(12));
    }

    void aChassisMovingTogetherIsNoAnomaly()
    {
        // The 8 GPUs of one chassis (GPUs 8 to 15) all run 5 °C cooler: the air they share changed (a GPU upstream
        // draws less), not each of them. One GPU of it 5 °C cooler on its own is an anomaly.
        Fleet fleet;
        fleet.run(40, 1.0F);
        fleet.run(12, 1.0F, [](Frame &f) {
            for (uint32_t g = 8; g < 16; ++g) {
                f.planes[size_t(MetricId::GpuTemp)][g] -= 5.0F;
            }
        });
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 0);
        fleet.run(12, 1.0F, [](Frame &f) { f.planes[size_t(MetricId::GpuTemp)][10] -= 5.0F; });
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        QCOMPARE(fleet.events.back().gpu, 10);
    }

    void nanAndMissingValuesAreSkipped()
    {
        Fleet fleet;
        fleet.run(40, 1.0F); // past the detector's first 5 minutes, when it learns where each GPU sits
        // A node without data (NaN everywhere), another GPU missing one metric, a plane absent altogether: no score
        // for what has no data, no anomaly for anyone, the others judged as before.
        const Frame f = fleet.run(20, 1.0F, [](Frame &f) {
            for (auto &plane : f.planes) {
                std::fill(plane.begin() + 8, plane.begin() + 16, noValue);
            }
            f.planes[size_t(MetricId::Power)][30] = noValue;
            f.planes[size_t(MetricId::MemTemp)].clear();
        });
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 0);
        for (uint32_t g = 8; g < 16; ++g) {
            QVERIFY(std::isnan(f.plane(MetricId::Anomaly)[g]));
        }
        QVERIFY(std::isfinite(f.plane(MetricId::Anomaly)[30]));
        QVERIFY(f.plane(MetricId::Anomaly)[30] < 1.0F);
        // A node of NaN in one metric inside a drifting GPU's job does not hide the drift.
        fleet.run(12, 1.0F, [](Frame &f) {
            std::fill(
                f.planes[size_t(MetricId::GpuTemp)].begin(), f.planes[size_t(MetricId::GpuTemp)].begin() + 8, noValue);
            f.planes[size_t(MetricId::GpuTemp)][40] -= 10.0F;
        });
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        QCOMPARE(fleet.events.back().gpu, 40);
        QVERIFY2(fleet.events.back().text.find("below its job's median") != std::string::npos,
            fleet.events.back().text.c_str());
    }

    // A GPU degraded from the detector's first frame is judged against its peers while no history of it is known:
    // found in the persistence window, with "no history yet", and not learnt as its normal later.
    void aGpuDegradedFromTheFirstFrameIsFound()
    {
        Fleet fleet;
        auto hot = [](Frame &f) {
            f.planes[size_t(MetricId::GpuTemp)][13] += 12.0F;
            f.planes[size_t(MetricId::MemTemp)][13] += 12.0F;
        };
        const Frame first = fleet.run(1, 1.0F, hot);
        QVERIFY(first.plane(MetricId::Anomaly)[13] > 5.0F);
        fleet.run(11, 1.0F, hot); // 2 minutes in all
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        const auto &e = fleet.events.front();
        QCOMPARE(e.gpu, 13);
        QVERIFY(e.metric == MetricId::GpuTemp);
        QVERIFY2(e.text.find("13 °C above its job's median") != std::string::npos, e.text.c_str());
        QVERIFY2(e.text.find("no history yet") != std::string::npos, e.text.c_str());
        fleet.run(60, 1.0F, hot); // 10 minutes more: still what it is, not its normal
        QVERIFY(fleet.detector.anomalous(13));
        QCOMPARE(fleet.count(EventKind::AnomalyEnd), 0);
        fleet.run(20, 1.0F); // fixed: in line with its peers, the anomaly ends
        QVERIFY(!fleet.detector.anomalous(13));
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        QCOMPARE(fleet.count(EventKind::AnomalyEnd), 1);
    }

    // A source whose first frame has no data and no jobs (remote write before its first window): the jobs that come
    // with the first data are where its GPUs are first seen, not jobs they joined; no GPU waits out a settling.
    void jobsKnownOnlyWithTheFirstDataAreNoJobChange()
    {
        Fleet fleet;
        fleet.detector.setJobs({});
        Frame empty = fleet.frame(1.0F, [](Frame &f) {
            for (auto &plane : f.planes) {
                std::fill(plane.begin(), plane.end(), noValue);
            }
        });
        fleet.now += step;
        fleet.detector.judge(&empty, fleet.now, &fleet.events);
        fleet.detector.setJobs({ Fleet::job(0, 64) });
        auto hot = [](Frame &f) {
            f.planes[size_t(MetricId::GpuTemp)][13] += 12.0F;
            f.planes[size_t(MetricId::MemTemp)][13] += 12.0F;
        };
        const Frame first = fleet.run(1, 1.0F, hot);
        QVERIFY(first.plane(MetricId::Anomaly)[13] > 5.0F); // judged at once, not settling
        fleet.run(11, 1.0F, hot); // 2 minutes: reported, with no history of it
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        QCOMPARE(fleet.events.front().gpu, 13);
        QVERIFY2(
            fleet.events.front().text.find("no history yet") != std::string::npos, fleet.events.front().text.c_str());
    }

    // A GPU of a job too small to have peers (2 GPUs: never judged against them) has had readings all the same: when
    // its job ends it settles among the idle GPUs of its rack like any other, rather than being judged at once.
    void aSmallJobsGpuSettlesWhenItsJobEnds()
    {
        Fleet fleet;
        JobInfo small = Fleet::job(0, 2);
        small.id = 9;
        fleet.detector.setJobs({ small });
        fleet.run(30, 1.0F);
        fleet.detector.setJobs({});
        const Frame after = fleet.run(1, 1.0F, [](Frame &f) {
            f.planes[size_t(MetricId::GpuTemp)][0] += 20.0F; // still warm from its job
        });
        QVERIFY(std::isnan(after.plane(MetricId::Anomaly)[0])); // settling: not judged
    }

    void aFaultComingOnAsItLearnsIsNotLearnt()
    {
        // From a minute after the first frame GPU 13 warms by 1.5 °C a minute (a fan failing): it is never learnt as
        // sitting where the fault has taken it; once far enough off its peers it is found, with no history of it.
        Fleet fleet;
        int i = 0;
        auto warming = [&](Frame &f) {
            const float rise = 0.25F * static_cast<float>(std::max(0, i++ - 6));
            f.planes[size_t(MetricId::GpuTemp)][13] += std::round(rise);
            f.planes[size_t(MetricId::MemTemp)][13] += std::round(rise);
        };
        fleet.run(60, 1.0F, warming); // 10 minutes: 13 °C
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
        QCOMPARE(fleet.events.front().gpu, 13);
        QVERIFY2(
            fleet.events.front().text.find("no history yet") != std::string::npos, fleet.events.front().text.c_str());
    }

    void aGpuRecoveringIsNotFlaggedForBeingBackInLine()
    {
        // GPU 13's clock is 300 MHz low (it draws 60 W less) from the first frame for 10 minutes: found as such, not
        // learnt. When it comes back it is in line with its peers: the anomaly ends and no other starts.
        auto stuck = [](Frame &f) {
            f.planes[size_t(MetricId::SmClock)][13] -= 300.0F;
            f.planes[size_t(MetricId::Power)][13] -= 60.0F;
        };
        {
            Fleet fleet;
            fleet.run(60, 1.0F, stuck);
            QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
            QVERIFY(fleet.events.front().metric == MetricId::SmClock || fleet.events.front().metric == MetricId::Power);
            fleet.run(60, 1.0F);
            QVERIFY(!fleet.detector.anomalous(13));
            QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
            QCOMPARE(fleet.count(EventKind::AnomalyEnd), 1);
        }
        // A clock 80 MHz low through a job change (under 3 of its peers' spreads, 30 MHz: nothing tells it from a
        // slow GPU's place, so it is learnt) that comes back later: its place is far from its peers (over twice their
        // spread) while it runs with them, so the place is let go, not the GPU flagged for being back in line.
        Fleet fleet;
        fleet.run(40, 1.0F);
        JobInfo next = Fleet::job(0, 64);
        next.id = 8;
        fleet.detector.setJobs({ next });
        auto slow = [](Frame &f) { f.planes[size_t(MetricId::SmClock)][13] -= 80.0F; };
        fleet.run(60, 1.0F, slow); // settles, then 5 minutes judged
        fleet.run(60, 1.0F); // back in line for 10 minutes
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 0);
        // Its place is learnt afresh: a new 80 MHz drop is found again.
        fleet.run(60, 1.0F);
        fleet.run(12, 1.0F, slow);
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 1);
    }

    void framesNotJudgedCarryNoValue()
    {
        // From the first frame every GPU with peers is judged, against them while it learns where it sits (GPU 0 sits
        // 2 °C below them: a score of its own, not 0). GPUs settling in a new job are not judged: no value, not 0.
        Fleet fleet;
        const Frame first = fleet.run(1, 1.0F);
        for (uint32_t g = 0; g < 64; ++g) {
            QVERIFY(std::isfinite(first.plane(MetricId::Anomaly)[g]));
        }
        QVERIFY(first.plane(MetricId::Anomaly)[0] > 0.5F);
        fleet.run(40, 1.0F);
        JobInfo moved = Fleet::job(0, 32);
        moved.id = 8;
        fleet.detector.setJobs({ moved, Fleet::job(32, 32) });
        const Frame settling = fleet.run(3, 1.0F);
        for (uint32_t g = 0; g < 64; ++g) {
            QVERIFY2(g < 32 ? std::isnan(settling.plane(MetricId::Anomaly)[g])
                            : std::isfinite(settling.plane(MetricId::Anomaly)[g]),
                qPrintable(QString::number(g)));
        }
        const Frame settled = fleet.run(30, 1.0F);
        for (uint32_t g = 0; g < 64; ++g) {
            QVERIFY(std::isfinite(settled.plane(MetricId::Anomaly)[g]));
        }
    }

    void theBadGpuScenarioWithHistoryIsFound()
    {
        // README's incident, `--scenario bad-gpu --history 30m`: the backend starts with 30 minutes simulated in steps
        // of a minute and held; the GPU began to degrade 2 minutes into them. The detector learns from them, silently,
        // without learning the fault as the GPU's normal (it has no history of it but the fault's): found within 2
        // minutes of the start.
        Simulator sim(1024, 1, 10.0, Scenario::Kind::BadGpu);
        const auto bad = static_cast<uint32_t>(sim.scenario().badGpu());
        std::vector<std::shared_ptr<const Frame>> past;
        for (int i = 0; i < 30; ++i) {
            sim.step(60.0);
            auto f = sim.snapshot();
            f->sampleTimeMs = static_cast<int64_t>(sim.nowSeconds() * 1000);
            past.push_back(f);
        }
        AnomalyDetector detector(sim.shape());
        detector.warm(past, jobsOf(sim));
        for (const auto &f : past) { // not written
            const auto &plane = f->plane(MetricId::Anomaly);
            QVERIFY(std::all_of(plane.begin(), plane.end(), [](float v) { return std::isnan(v); }));
        }
        QVERIFY(!detector.anomalous(bad)); // nothing odd carried over: found live, with its event
        std::vector<FleetEvent> events;
        auto found = [&] {
            return std::any_of(events.begin(), events.end(),
                [&](const FleetEvent &e) { return e.kind == EventKind::AnomalyStart && e.gpu == bad; });
        };
        for (int i = 0; i < 12 && !found(); ++i) { // 2 minutes
            sim.step();
            auto f = sim.snapshot();
            detector.setJobs(jobsOf(sim));
            detector.judge(f.get(), sim.nowSeconds(), &events);
        }
        QVERIFY(found());
    }

    void historyHeldAtTheStartIsLearntFrom()
    {
        // The job's GPUs sit far apart (4 °C steps, a spread of 6 °C). Half an hour of history, a frame a minute, is
        // learnt from before the first frame: GPU 13 warming by 5 °C at the start is found at once against its place,
        // though it is well inside its peers' spread. GPU 20, its clock 300 MHz low throughout the history, has not
        // learnt that as its place: it is found too, with no history yet. Neither was flagged by the history itself.
        auto wide = [](Frame &f) {
            for (uint32_t g = 0; g < 64; ++g) {
                f.planes[size_t(MetricId::GpuTemp)][g] += 3.0F * static_cast<float>(static_cast<int>(g % 5) - 2);
                f.planes[size_t(MetricId::MemTemp)][g] += 3.0F * static_cast<float>(static_cast<int>(g % 5) - 2);
            }
            f.planes[size_t(MetricId::SmClock)][20] -= 300.0F;
        };
        Fleet fleet;
        std::vector<std::shared_ptr<const Frame>> past;
        for (int i = 0; i < 30; ++i) {
            auto f = std::make_shared<Frame>(fleet.frame(1.0F, wide));
            f->sampleTimeMs = int64_t { i } * 60000;
            past.push_back(std::move(f));
        }
        fleet.detector.warm(past, { Fleet::job(0, 64) });
        fleet.now = 30 * 60;
        QVERIFY(!fleet.detector.anomalous(20));
        fleet.run(9, 1.0F, [&](Frame &f) {
            wide(f);
            f.planes[size_t(MetricId::GpuTemp)][13] += 5.0F;
            f.planes[size_t(MetricId::MemTemp)][13] += 5.0F;
        });
        QCOMPARE(fleet.count(EventKind::AnomalyStart), 2);
        for (const auto &e : fleet.events) {
            QVERIFY(e.gpu == 13 || e.gpu == 20);
            QVERIFY2((e.text.find("no history yet") != std::string::npos) == (e.gpu == 20), e.text.c_str());
        }
    }

    void aSourceWarmsItsJudgeFromTheFramesItHolds()
    {
        // A simulated fleet started with 10 minutes of history: its judge learns from the 9 frames held from before
        // the start (the 10th step is the first frame), with the jobs, before it judges the first frame; those
        // frames stay unjudged.
        struct Seen
        {
            size_t warmed = 0;
            size_t jobs = 0;
            bool judgedBeforeWarmed = false;
        } seen;
        class Recorder final : public FrameJudge
        {
        public:
            explicit Recorder(Seen *seen)
                : m_seen(seen)
            { }
            void warm(const std::vector<std::shared_ptr<const Frame>> &past, const std::vector<JobInfo> &jobs) override
            {
                m_seen->warmed = past.size();
                m_seen->jobs = jobs.size();
            }
            void judge(Frame *, const std::vector<JobInfo> &, std::vector<FleetEvent> *) override
            {
                m_seen->judgedBeforeWarmed |= m_seen->warmed == 0;
            }

        private:
            Seen *m_seen;
        };
        SimulationOptions options;
        options.gpuCount = 1024;
        options.history = std::chrono::minutes(10);
        options.interval = std::chrono::hours(1); // no poll during the test
        options.pastEvents = 0ms;
        FrameSource source(std::make_unique<SimulatedFleet>(options), options, std::make_unique<Recorder>(&seen));
        QCOMPARE(seen.warmed, size_t { 9 });
        QVERIFY(seen.jobs > 0);
        QVERIFY(!seen.judgedBeforeWarmed);
        const auto held = source.framesBetween(0, source.latest()->sampleTimeMs - 1);
        QCOMPARE(held.size(), size_t { 9 });
        for (const auto &f : held) {
            const auto &plane = f->plane(MetricId::Anomaly);
            QVERIFY(!plane.empty() && std::all_of(plane.begin(), plane.end(), [](float v) { return std::isnan(v); }));
        }
        source.stop();
    }

    // An upstream's past as history holds it: in time order and before the first frame, whatever it answered (a
    // replica ahead of the one the first poll asked, a skewed exporter's clock).
    void thePastIsKeptBeforeTheFirstFrame()
    {
        class Past final : public FramePoller
        {
        public:
            const FleetShape &shape() const override { return m_fleet.shape; }
            uint64_t topologyGeneration() const override { return 1; }
            FramePoller::Past pastFrames(int64_t, std::chrono::milliseconds, size_t) override
            {
                FramePoller::Past past;
                uint64_t sequence = 0;
                for (const int64_t t : { 100, 300, 200, 900, 1000 }) {
                    auto f = std::make_shared<Frame>(m_fleet.frame(1.0F));
                    f->sampleTimeMs = t;
                    f->sequence = sequence++;
                    past.frames.push_back(std::move(f));
                }
                return past;
            }
            std::shared_ptr<Frame> firstFrame() override
            {
                auto f = std::make_shared<Frame>(m_fleet.frame(1.0F));
                f->sampleTimeMs = 800;
                f->sequence = 5;
                return f;
            }
            std::shared_ptr<Frame> poll() override { return nullptr; }
            std::string upstreamError() const override { return {}; }
            std::vector<JobInfo> jobs() const override { return { Fleet::job(0, 64) }; }

        private:
            Fleet m_fleet;
        };
        FrameSource::Options options;
        options.interval = std::chrono::hours(1); // no poll during the test
        options.pastEvents = 0ms;
        FrameSource source(std::make_unique<Past>(), options);
        std::vector<int64_t> times;
        for (const auto &f : source.framesBetween(0, 10000)) {
            times.push_back(f->sampleTimeMs);
        }
        QCOMPARE(times, (std::vector<int64_t> { 100, 300, 800 }));
        source.stop();
    }

    void simulatorRecordsWhatItInjects()
    {
        Simulator plain(1024, 3, 10.0);
        Simulator faulty(1024, 3, 10.0);
        faulty.setDegradationRate(2.0); // per GPU and day: a few hundred over the run
        for (int i = 0; i < 360; ++i) {
            plain.step();
            faulty.step();
        }
        size_t degradations = 0;
        for (const auto &f : faulty.injectedFaults().faults()) {
            QVERIFY(f.gpu < 1024);
            QVERIFY(f.endSeconds > f.onsetSeconds);
            if (f.kind <= InjectedFaults::Kind::PowerDrop) {
                ++degradations;
                QVERIFY(f.size > 0);
            }
        }
        QVERIFY(degradations > 20);
        // A cooling fault in force shows on its GPU: hotter than the same GPU without it.
        const auto a = plain.snapshot();
        const auto b = faulty.snapshot();
        int hotter = 0;
        int cooling = 0;
        for (const auto &f : faulty.injectedFaults().faults()) {
            if (f.kind == InjectedFaults::Kind::Cooling && f.size > 8 && f.onsetSeconds < 3000
                && f.endSeconds > faulty.nowSeconds()) {
                ++cooling;
                hotter += b->plane(MetricId::GpuTemp)[f.gpu] > a->plane(MetricId::GpuTemp)[f.gpu] + 4 ? 1 : 0;
            }
        }
        QVERIFY(cooling > 0);
        QCOMPARE(hotter, cooling);
        // The default simulation injects nothing of its own.
        for (const auto &f : plain.injectedFaults().faults()) {
            QVERIFY(f.kind == InjectedFaults::Kind::Impaired || f.kind == InjectedFaults::Kind::Offline);
        }
    }

    void metricAndEventsThroughTheService()
    {
        FrameSource::Options options;
        options.interval = 20ms;
        options.pastEvents = 0ms;
        BackendServer server(judgedSource(std::make_unique<ScriptedFleet>(), options));
        std::string error;
        QVERIFY2(server.start("127.0.0.1:0", &error), error.c_str());
        auto stub = pb::Telemetry::NewStub(
            grpc::CreateChannel(server.listeningAddress(), grpc::InsecureChannelCredentials()));

        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 5s);
            pb::ListMetricsResponse metrics;
            QVERIFY(stub->ListMetrics(&context, pb::ListMetricsRequest(), &metrics).ok());
            const auto it = std::find_if(metrics.metrics().begin(), metrics.metrics().end(),
                [](const pb::MetricInfo &m) { return m.id() == "anomaly"; });
            QVERIFY(it != metrics.metrics().end());
            QVERIFY(it->range_max() > it->range_min());
        }
        {
            // Frames carry the plane: GPU 5 scores high while it runs hot, its peers low.
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + 10s);
            pb::SubscribeRequest request;
            request.add_metric_ids("anomaly");
            auto reader = stub->Subscribe(&context, request);
            pb::FramePart part;
            bool seenHot = false;
            while (!seenHot && reader->Read(&part)) {
                QCOMPARE(part.planes_size(), 1);
                QCOMPARE(part.planes(0).metric_id(), std::string("anomaly"));
                QCOMPARE(part.planes(0).values().size(), size_t { 64 } * sizeof(float));
                float v[64];
                std::memcpy(v, part.planes(0).values().data(), sizeof(v));
                QVERIFY(v[4] < 1.5F); // in line (its places learnt, or against its peers' spread before)
                seenHot = v[5] > 5.0F;
            }
            QVERIFY(seenHot);
            context.TryCancel();
            reader->Finish();
        }
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 20s);
        pb::StreamEventsRequest request;
        request.set_since_ms(1); // everything held
        auto reader = stub->StreamEvents(&context, request);
        pb::Event e;
        std::vector<pb::Event> anomalies;
        while (anomalies.size() < 2 && reader->Read(&e)) {
            if (e.kind() == pb::EVENT_KIND_ANOMALY_START || e.kind() == pb::EVENT_KIND_ANOMALY_END) {
                anomalies.push_back(e);
            }
        }
        QCOMPARE(anomalies.size(), size_t { 2 });
        QCOMPARE(anomalies[0].kind(), pb::EVENT_KIND_ANOMALY_START);
        QCOMPARE(anomalies[1].kind(), pb::EVENT_KIND_ANOMALY_END);
        for (const auto &a : anomalies) {
            QCOMPARE(a.gpu(), int64_t { 5 });
            QCOMPARE(a.metric_id(), std::string("gpu_temp"));
            QCOMPARE(a.job_id(), uint64_t { 7 });
        }
        QVERIFY2(anomalies[0].text().find("GPU 5 of ") == 0, anomalies[0].text().c_str());
        // GPU 5 runs 2 °C below the median (its slot): 15 °C hotter puts it 13 °C above, and says so.
        QVERIFY2(
            anomalies[0].text().find("13 °C above its job's median") != std::string::npos, anomalies[0].text().c_str());
        QVERIFY2(
            anomalies[0].text().find("usually runs 2.0 °C below") != std::string::npos, anomalies[0].text().c_str());
        QVERIFY(anomalies[1].time_ms() > anomalies[0].time_ms());
        context.TryCancel();
        reader->Finish();
    }
};

QTEST_GUILESS_MAIN(TestAnomaly)
#include "tst_anomaly.moc"
