// SPDX-License-Identifier: Apache-2.0
// FlightRecorder: every stored frame comes back bit for bit (synthetic frames full of NaN payloads, negative zeros,
// denormals and random bits, and simulator frames), in every encoding; frameAt's at-or-before rule; retention and the
// memory cap; a change of topology generation or GPU count; frames out of order; and that simulator data compresses.
#include "core/metriccatalog.h"
#include "model/flightrecorder.h"
#include "sim/simulator.h"

#include <QTest>

#include <atomic>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

using namespace fleetscope;
using namespace std::chrono_literals;

Q_DECLARE_METATYPE(fleetscope::FlightRecorderOptions)

namespace {

constexpr int64_t t0 = 1'700'000'000'000LL;

float floatOf(uint32_t bits)
{
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// Equal in every bit, not by float comparison (NaN != NaN, -0 == 0).
bool identical(const Frame &a, const Frame &b, QString *why)
{
    if (a.sequence != b.sequence || a.sampleTimeMs != b.sampleTimeMs || a.topologyGeneration != b.topologyGeneration) {
        *why = QStringLiteral("header differs");
        return false;
    }
    if (a.health != b.health) {
        *why = QStringLiteral("health differs");
        return false;
    }
    if (a.planes.size() != b.planes.size()) {
        *why = QStringLiteral("plane count differs");
        return false;
    }
    for (size_t p = 0; p < a.planes.size(); ++p) {
        const auto &x = a.planes[p];
        const auto &y = b.planes[p];
        if (x.metricId != y.metricId || x.values.size() != y.values.size()
            || std::memcmp(x.values.data(), y.values.data(), x.values.size() * sizeof(float)) != 0) {
            *why = QStringLiteral("plane %1 (%2) differs").arg(p).arg(x.metricId);
            return false;
        }
    }
    return true;
}

#define QVERIFY_IDENTICAL(actual, expected)                                                                            \
    do {                                                                                                               \
        QVERIFY2((actual) != nullptr, "no frame");                                                                     \
        QString why_;                                                                                                  \
        QVERIFY2(identical(*(actual), *(expected), &why_), qPrintable(why_));                                          \
    } while (false)

// Values a float codec gets wrong when it is not exact: NaNs with payloads and sign, zeros of both signs, denormals,
// infinities, and plain random bits; some GPUs keep their value from frame to frame, some drift, some jump.
FramePtr syntheticFrame(std::mt19937 &rng, const FramePtr &before, int64_t timeMs, uint32_t gpus, uint64_t generation,
    const std::vector<QString> &metrics)
{
    static const std::vector<uint32_t> specials = { 0x7FC00000U, 0xFFC00000U, 0x7F800001U, 0x7FBFFFFFU, 0xFFFFFFFFU,
        0x80000000U, 0x00000000U, 0x00000001U, 0x807FFFFFU, 0x7F800000U, 0xFF800000U, 0x7F7FFFFFU };
    auto f = std::make_shared<Frame>();
    f->sequence = before ? before->sequence + 1 : 1;
    f->sampleTimeMs = timeMs;
    f->topologyGeneration = generation;
    const bool continues = before && before->health.size() == gpus && before->planes.size() == metrics.size();
    for (size_t m = 0; m < metrics.size(); ++m) {
        MetricPlane plane { metrics[m], std::vector<float>(gpus) };
        for (uint32_t g = 0; g < gpus; ++g) {
            const uint32_t r = rng();
            const float old = continues ? before->planes[m].values[g] : 50.0F;
            switch (r % 5) {
            case 0:
                plane.values[g] = old;
                break;
            case 1:
                plane.values[g] = old + floatOf(0x3C000000U | (r >> 12U)); // a small step
                break;
            case 2:
                plane.values[g] = floatOf(specials[(r >> 3U) % specials.size()]);
                break;
            default:
                plane.values[g] = floatOf(static_cast<uint32_t>(rng()));
                break;
            }
        }
        f->planes.push_back(std::move(plane));
    }
    f->health.resize(gpus);
    for (uint32_t g = 0; g < gpus; ++g) {
        f->health[g] = (rng() % 3 == 0 || !continues) ? static_cast<uint8_t>(rng()) : before->health[g];
    }
    return f;
}

const std::vector<backend::MetricId> &simMetrics()
{
    static const auto metrics = backend::defaultMetrics();
    return metrics;
}

FramePtr simulatorFrame(backend::Simulator &sim, uint64_t generation = 1)
{
    const auto snap = sim.snapshot();
    auto f = std::make_shared<Frame>();
    f->sequence = sim.steps();
    f->sampleTimeMs = t0 + std::llround(sim.nowSeconds() * 1000);
    f->topologyGeneration = generation;
    for (const auto id : simMetrics()) {
        f->planes.push_back(
            { QString::fromStdString(backend::metricCatalog()[static_cast<size_t>(id)].key), snap->plane(id) });
    }
    f->health = snap->health;
    return f;
}

FramePtr tinyFrame(int64_t timeMs, float value, uint64_t generation = 1, uint32_t gpus = 4)
{
    auto f = std::make_shared<Frame>();
    f->sequence = static_cast<uint64_t>(timeMs);
    f->sampleTimeMs = timeMs;
    f->topologyGeneration = generation;
    f->planes.push_back({ QStringLiteral("gpu_temp"), std::vector<float>(gpus, value) });
    f->health.assign(gpus, 1);
    return f;
}

FlightRecorderOptions options(
    FlightRecorderOptions::Reference reference, FlightRecorderOptions::Delta delta, uint32_t keyframeInterval)
{
    FlightRecorderOptions o;
    o.reference = reference;
    o.delta = delta;
    o.keyframeInterval = keyframeInterval;
    return o;
}

void addEncodings()
{
    using O = FlightRecorderOptions;
    QTest::addColumn<FlightRecorderOptions>("opts");
    QTest::newRow("default") << FlightRecorderOptions {};
    QTest::newRow("previous, xor, 5") << options(O::Reference::Previous, O::Delta::Xor, 5);
    QTest::newRow("previous, delta, 5") << options(O::Reference::Previous, O::Delta::IntegerDelta, 5);
    QTest::newRow("keyframe, xor, 7") << options(O::Reference::Keyframe, O::Delta::Xor, 7);
    QTest::newRow("keyframe, delta, 7") << options(O::Reference::Keyframe, O::Delta::IntegerDelta, 7);
    QTest::newRow("every frame a keyframe") << options(O::Reference::Keyframe, O::Delta::Xor, 1);
    auto floatBits = options(O::Reference::Keyframe, O::Delta::IntegerDelta, 7);
    floatBits.decimal = false;
    QTest::newRow("no decimal planes") << floatBits;
}

} // namespace

class TestFlightRecorder : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void syntheticRoundTripIsExact_data() { addEncodings(); }
    void syntheticRoundTripIsExact()
    {
        QFETCH(FlightRecorderOptions, opts);
        FlightRecorder recorder(opts);
        std::mt19937 rng(7);
        const std::vector<QString> two = { QStringLiteral("gpu_temp"), QStringLiteral("power") };
        const std::vector<QString> three
            = { QStringLiteral("gpu_temp"), QStringLiteral("power"), QStringLiteral("gpu_util") };
        std::vector<FramePtr> frames;
        FramePtr before;
        for (int i = 0; i < 40; ++i) {
            // The shape changes on the way: another metric subscribed at 17, another generation at 29.
            const auto &metrics = i < 17 ? two : three;
            const uint64_t generation = i < 29 ? 1 : 2;
            before = syntheticFrame(
                rng, before, t0 + i * 1000 + (i % 3) * 7, 1000 + (i >= 29 ? 24 : 0), generation, metrics);
            QVERIFY(recorder.record(before));
            frames.push_back(before);
        }
        QCOMPARE(recorder.frameCount(), frames.size());
        // In order, backwards and at random, so that each path through the decode cache is taken.
        for (const auto &f : frames) {
            QVERIFY_IDENTICAL(recorder.frameAt(f->sampleTimeMs), f);
        }
        for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
            QVERIFY_IDENTICAL(recorder.frameAt((*it)->sampleTimeMs), *it);
        }
        for (int k = 0; k < 100; ++k) {
            const auto &f = frames[rng() % frames.size()];
            QVERIFY_IDENTICAL(recorder.frameAt(f->sampleTimeMs), f);
        }
    }

    void simulatorRoundTripIsExactAndCompresses_data() { addEncodings(); }
    void simulatorRoundTripIsExactAndCompresses()
    {
        QFETCH(FlightRecorderOptions, opts);
        backend::Simulator sim(4096, 3);
        FlightRecorder recorder(opts);
        std::vector<FramePtr> frames;
        for (int i = 0; i < 60; ++i) {
            sim.step();
            frames.push_back(simulatorFrame(sim));
            QVERIFY(recorder.record(frames.back()));
        }
        for (const auto &f : frames) {
            QVERIFY_IDENTICAL(recorder.frameAt(f->sampleTimeMs), f);
        }
        const size_t values = frames.size() * frames.front()->planes.size() * frames.front()->health.size();
        QCOMPARE(recorder.storedValues(), values);
        const size_t raw = values * sizeof(float) + frames.size() * frames.front()->health.size();
        const double ratio = double(recorder.compressedBytes()) / double(raw);
        qInfo(
            "%.3f bytes per value, %.1f%% of raw", double(recorder.compressedBytes()) / double(values), 100.0 * ratio);
        QVERIFY2(recorder.compressedBytes() < raw, "simulator data held larger than raw");
        // Keyframes alone still compress (shuffled lanes of sign and exponent bytes); deltas take them well below.
        QVERIFY(ratio < (opts.keyframeInterval == 1 ? 0.85 : 0.7));
        size_t sum = recorder.healthBytes();
        for (const auto &s : recorder.metricStats()) {
            QCOMPARE(s.values, frames.size() * frames.front()->health.size());
            sum += s.compressedBytes;
        }
        QVERIFY(sum <= recorder.compressedBytes());
    }

    // Planes on a decimal grid (whole °C, milliwatts) are held as integers: exact, including the canonical NaN, and
    // a plane with one value off the grid (a negative zero, a NaN with a payload) falls back to float bits.
    void decimalPlanesRoundTripExactly_data() { addEncodings(); }
    void decimalPlanesRoundTripExactly()
    {
        QFETCH(FlightRecorderOptions, opts);
        FlightRecorder recorder(opts);
        std::mt19937 rng(5);
        const uint32_t gpus = 2000;
        std::vector<FramePtr> frames;
        std::vector<float> temp(gpus, 60.0F);
        std::vector<double> power(gpus, 300.0);
        for (int i = 0; i < 30; ++i) {
            auto f = std::make_shared<Frame>();
            f->sequence = uint64_t(i);
            f->sampleTimeMs = t0 + i * 1000;
            f->topologyGeneration = 1;
            MetricPlane t { QStringLiteral("gpu_temp"), {} };
            MetricPlane p { QStringLiteral("power"), {} };
            MetricPlane odd { QStringLiteral("gpu_util"), {} };
            for (uint32_t g = 0; g < gpus; ++g) {
                temp[g] = std::max(-40.0F, temp[g] + float(int(rng() % 3) - 1));
                power[g] = std::round((power[g] + double(int(rng() % 2001) - 1000) / 1000.0) * 1000.0) / 1000.0;
                const bool none = rng() % 50 == 0;
                t.values.push_back(none ? std::numeric_limits<float>::quiet_NaN() : temp[g]);
                p.values.push_back(none ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(power[g]));
                odd.values.push_back(float(g % 100));
            }
            odd.values[size_t(i) % gpus] = (i % 2 == 0) ? -0.0F : floatOf(0x7FC00001U);
            f->planes = { t, p, odd };
            f->health.assign(gpus, uint8_t(i % 3 == 0 ? 1 : 0));
            frames.push_back(f);
            QVERIFY(recorder.record(f));
        }
        for (const auto &f : frames) {
            QVERIFY_IDENTICAL(recorder.frameAt(f->sampleTimeMs), f);
        }
        if (opts.decimal && opts.keyframeInterval > 1) {
            // Held as integers, a temperature stepping by at most one degree a second takes under a byte (a quarter of
            // raw).
            for (const auto &s : recorder.metricStats()) {
                if (s.metricId == QStringLiteral("gpu_temp")) {
                    QVERIFY2(double(s.compressedBytes) / double(s.values) < 1.0,
                        qPrintable(QString::number(double(s.compressedBytes) / double(s.values))));
                }
            }
        }
    }

    void frameAtIsAtOrBefore()
    {
        FlightRecorder recorder;
        QCOMPARE(recorder.frameAt(t0), FramePtr());
        QCOMPARE(recorder.earliestMs(), 0);
        for (int i = 1; i <= 3; ++i) {
            QVERIFY(recorder.record(tinyFrame(i * 1000, float(i))));
        }
        QCOMPARE(recorder.frameAt(999), FramePtr());
        QCOMPARE(recorder.frameAt(1000)->sampleTimeMs, 1000);
        QCOMPARE(recorder.frameAt(2999)->sampleTimeMs, 2000);
        QCOMPARE(recorder.frameAt(2999)->planes[0].values[0], 2.0F);
        QCOMPARE(recorder.frameAt(3000)->sampleTimeMs, 3000);
        QCOMPARE(recorder.frameAt(std::numeric_limits<int64_t>::max())->sampleTimeMs, 3000);
        QCOMPARE(recorder.earliestMs(), 1000);
        QCOMPARE(recorder.latestMs(), 3000);
        QCOMPARE(recorder.sampleTimes(), (std::vector<int64_t> { 1000, 2000, 3000 }));
    }

    void retentionDropsOldFrames()
    {
        FlightRecorderOptions o;
        o.retention = 10s;
        o.keyframeInterval = 4;
        FlightRecorder recorder(o);
        for (int i = 0; i < 30; ++i) {
            QVERIFY(recorder.record(tinyFrame(t0 + i * 1000, float(i), 1, 1000)));
        }
        // The latest is t0 + 29 s: frames from t0 + 19 s on are within ten seconds of it.
        std::vector<int64_t> expected;
        for (int i = 19; i < 30; ++i) {
            expected.push_back(t0 + i * 1000);
        }
        QCOMPARE(recorder.sampleTimes(), expected);
        QCOMPARE(recorder.frameCount(), expected.size());
        QCOMPARE(recorder.earliestMs(), t0 + 19'000);
        QCOMPARE(recorder.frameAt(t0 + 18'999), FramePtr());
        QCOMPARE(recorder.frameAt(t0 + 19'000)->planes[0].values[0], 19.0F);
        // Whole groups go: at most one group of expired frames is still held.
        QVERIFY(recorder.storedValues() <= (expected.size() + o.keyframeInterval - 1) * 1000);
        QVERIFY(recorder.storedValues() >= expected.size() * 1000);
    }

    void memoryCapKeepsTheNewest()
    {
        backend::Simulator sim(4096, 5);
        FlightRecorderOptions o;
        o.keyframeInterval = 4;
        o.memoryCapBytes = 200'000;
        FlightRecorder recorder(o);
        FramePtr last;
        size_t peak = 0;
        for (int i = 0; i < 40; ++i) {
            sim.step();
            last = simulatorFrame(sim);
            QVERIFY(recorder.record(last));
            peak = std::max(peak, recorder.compressedBytes());
        }
        QVERIFY2(recorder.frameCount() < 40, "the cap dropped nothing");
        QVERIFY(recorder.frameCount() >= 1);
        // Dropped a group at a time once over, so at most one group (four frames of ~60 KB) above the cap.
        QVERIFY(peak < o.memoryCapBytes + 4 * 70'000);
        QVERIFY_IDENTICAL(recorder.frameAt(last->sampleTimeMs), last);
        const auto first = recorder.frameAt(recorder.earliestMs());
        QVERIFY(first != nullptr);
        QCOMPARE(first->sampleTimeMs, recorder.earliestMs());
    }

    void generationOrSizeChangeStartsAKeyframe()
    {
        FlightRecorderOptions o;
        o.reference = FlightRecorderOptions::Reference::Previous;
        FlightRecorder recorder(o);
        std::vector<FramePtr> frames;
        for (int i = 0; i < 5; ++i) {
            frames.push_back(tinyFrame(1000 + i, 10.0F + float(i), 1, 8));
        }
        for (int i = 5; i < 10; ++i) {
            frames.push_back(tinyFrame(1000 + i, 20.0F + float(i), 2, 8)); // new generation, same size
        }
        for (int i = 10; i < 15; ++i) {
            frames.push_back(tinyFrame(1000 + i, 30.0F + float(i), 2, 12)); // more GPUs
        }
        for (const auto &f : frames) {
            QVERIFY(recorder.record(f));
        }
        // Frames of the older generation stay, each with its own generation and size.
        for (const auto &f : frames) {
            QVERIFY_IDENTICAL(recorder.frameAt(f->sampleTimeMs), f);
        }
        QCOMPARE(recorder.frameAt(1004)->topologyGeneration, uint64_t(1));
        QCOMPARE(recorder.frameAt(1005)->topologyGeneration, uint64_t(2));
        QCOMPARE(recorder.frameAt(1014)->health.size(), size_t(12));
        QCOMPARE(recorder.storedValues(), size_t(5 * 8 + 5 * 8 + 5 * 12));
    }

    void framesOutOfOrderOrMalformedAreIgnored()
    {
        FlightRecorder recorder;
        QVERIFY(recorder.record(tinyFrame(2000, 2.0F)));
        QVERIFY(!recorder.record(tinyFrame(1000, 1.0F)));
        QVERIFY(!recorder.record(tinyFrame(2000, 5.0F))); // the same sample time again
        QVERIFY(!recorder.record(nullptr));
        auto bad = std::make_shared<Frame>(*tinyFrame(3000, 3.0F));
        bad->planes[0].values.pop_back();
        QVERIFY(!recorder.record(bad));
        QCOMPARE(recorder.frameCount(), size_t(1));
        QCOMPARE(recorder.frameAt(5000)->planes[0].values[0], 2.0F);
        QVERIFY(recorder.record(tinyFrame(3000, 3.0F)));
        QCOMPARE(recorder.sampleTimes(), (std::vector<int64_t> { 2000, 3000 }));
        recorder.clear();
        QCOMPARE(recorder.frameCount(), size_t(0));
        QCOMPARE(recorder.compressedBytes(), size_t(0));
        QVERIFY(recorder.record(tinyFrame(1000, 1.0F))); // after clear() time may start again
    }

    // One thread records while another seeks: every frame read back is one that was recorded, exactly.
    void readsWhileRecording()
    {
        FlightRecorderOptions o;
        o.keyframeInterval = 5;
        o.retention = 20s;
        FlightRecorder recorder(o);
        std::mt19937 rng(11);
        std::vector<FramePtr> frames;
        FramePtr before;
        for (int i = 0; i < 60; ++i) {
            before = syntheticFrame(rng, before, t0 + i * 1000, 500, 1, { QStringLiteral("gpu_temp") });
            frames.push_back(before);
        }
        // The writer waits after each frame until the reader has sought once more, so that reads fall between
        // records all along (a handshake, not a sleep).
        std::atomic<int> reads { 0 };
        std::atomic<bool> done { false };
        std::thread writer([&] {
            for (const auto &f : frames) {
                const int seen = reads.load();
                recorder.record(f);
                while (reads.load() == seen) {
                    std::this_thread::yield();
                }
            }
            done = true;
        });
        int checked = 0;
        int mismatches = 0;
        std::mt19937 pick(3);
        while (!done) {
            const auto got = recorder.frameAt(frames[pick() % frames.size()]->sampleTimeMs);
            if (got) {
                QString why;
                const auto &expected = *frames[static_cast<size_t>((got->sampleTimeMs - t0) / 1000)];
                mismatches += identical(*got, expected, &why) ? 0 : 1;
                ++checked;
            }
            ++reads;
        }
        writer.join();
        QCOMPARE(mismatches, 0);
        for (const auto t : recorder.sampleTimes()) {
            QVERIFY_IDENTICAL(recorder.frameAt(t), frames[static_cast<size_t>((t - t0) / 1000)]);
        }
        QVERIFY(checked >= 20);
    }
};

QTEST_GUILESS_MAIN(TestFlightRecorder)
#include "tst_flightrecorder.moc"
