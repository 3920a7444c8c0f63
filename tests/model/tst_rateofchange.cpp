// SPDX-License-Identifier: Apache-2.0
// RateOfChange: the rates derived by hand from synthetic frames, its resets and memory bound, and the cooling-failure
// scenario's heat front travelling along the row in rate mode, fed from the simulator.
#include "core/metriccatalog.h"
#include "model/fleetmodel.h"
#include "model/rateofchange.h"
#include "sim/simulator.h"

#include <QElapsedTimer>
#include <QTest>

#include <chrono>
#include <cmath>
#include <limits>

using namespace fleetscope;
using namespace std::chrono_literals;

namespace {
constexpr float noValue = std::numeric_limits<float>::quiet_NaN();
const QString temp = QStringLiteral("gpu_temp");

FramePtr makeFrame(int64_t timeMs, std::vector<float> values, uint64_t generation = 1, const QString &id = temp)
{
    auto f = std::make_shared<Frame>();
    f->sequence = static_cast<uint64_t>(timeMs / 1000) + 1;
    f->sampleTimeMs = timeMs;
    f->topologyGeneration = generation;
    f->health.assign(values.size(), static_cast<uint8_t>(f->sequence & 0x3FU));
    f->planes.push_back({ id, std::move(values) });
    return f;
}

const std::vector<float> &rates(const FramePtr &f)
{
    const MetricPlane *p = f->plane(RateOfChange::rateId(temp));
    Q_ASSERT(p != nullptr);
    return p->values;
}

bool allNan(const FramePtr &f)
{
    const auto &v = rates(f);
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isnan(x); });
}

// Linear in time, 0.5 units per second up on GPU 0, down on GPU 1, flat on GPU 2.
std::vector<float> slopes(double seconds)
{
    const auto t = static_cast<float>(seconds);
    return { 40.0F + 0.5F * t, 90.0F - 0.5F * t, 55.0F };
}

// Mean of the non-NaN values of a contiguous GPU range.
double meanOf(const std::vector<float> &v, uint32_t first, uint32_t count)
{
    double sum = 0;
    uint32_t n = 0;
    for (uint32_t g = first; g < first + count; ++g) {
        if (!std::isnan(v[g])) {
            sum += v[g];
            ++n;
        }
    }
    return n == 0 ? std::nan("") : sum / n;
}
} // namespace

class TestRateOfChange : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void rateMetricDescribesTheRate()
    {
        const auto &def = backend::metricCatalog()[static_cast<size_t>(backend::MetricId::GpuTemp)];
        MetricInfo base { QString::fromStdString(def.key), QString::fromStdString(def.name),
            QString::fromStdString(def.unit), QString::fromStdString(def.dcgmField),
            QString::fromStdString(def.colourMap), def.rangeMin, def.rangeMax, def.isRate, {} };
        const MetricInfo rate = RateOfChange::rateMetric(base);
        QCOMPARE(rate.id, QStringLiteral("gpu_temp:rate"));
        QCOMPARE(rate.name, QStringLiteral("GPU temperature change"));
        QCOMPARE(rate.unit, QStringLiteral("°C/min"));
        QCOMPARE(rate.colourMap, QStringLiteral("coolwarm"));
        QVERIFY(rate.isRate);
        QCOMPARE(rate.rangeMin, -5.0F);
        QCOMPARE(rate.rangeMax, 5.0F);
        QCOMPARE(rate.id, RateOfChange::rateId(base.id));
    }

    // 0.5 units a second is 30 units a minute, exactly, from a quarter of the window on; NaN before.
    void linearSlopesGiveThirtyPerMinute()
    {
        RateOfChange roc(temp, 60s);
        for (int s = 0; s <= 180; ++s) {
            const auto in = makeFrame(s * 1000LL, slopes(s));
            const auto out = roc.apply(in);
            QCOMPARE(out->sequence, in->sequence);
            QCOMPARE(out->sampleTimeMs, in->sampleTimeMs);
            QCOMPARE(out->topologyGeneration, in->topologyGeneration);
            QCOMPARE(out->health, in->health);
            QCOMPARE(out->planes.size(), size_t(1));
            const auto &r = rates(out);
            QCOMPARE(r.size(), size_t(3));
            if (s < 15) {
                QVERIFY2(allNan(out), qPrintable(QStringLiteral("at %1 s").arg(s)));
                continue;
            }
            QVERIFY2(std::abs(r[0] - 30.0F) < 1e-3F, qPrintable(QStringLiteral("%1 at %2 s").arg(r[0]).arg(s)));
            QVERIFY2(std::abs(r[1] + 30.0F) < 1e-3F, qPrintable(QStringLiteral("%1 at %2 s").arg(r[1]).arg(s)));
            QCOMPARE(r[2], 0.0F);
        }
        QVERIFY(roc.heldSamples() <= 12);
    }

    void nanAtEitherEndGivesNan()
    {
        RateOfChange roc(temp, 60s);
        // GPU 0 has no value for the first 10 s (the far end, later on), GPU 1 none from 100 s (the near end).
        for (int s = 0; s <= 120; ++s) {
            std::vector<float> v = { 50.0F + 0.5F * static_cast<float>(s), 50.0F + 0.5F * static_cast<float>(s) };
            if (s < 10) {
                v[0] = noValue;
            }
            if (s >= 100) {
                v[1] = noValue;
            }
            const auto out = roc.apply(makeFrame(s * 1000LL, v));
            const auto &r = rates(out);
            if (s < 15) {
                continue;
            }
            // The far end lies 60 s back, give or take half a slot (3 s).
            if (s < 10 + 60 - 3) {
                QVERIFY2(std::isnan(r[0]), qPrintable(QStringLiteral("%1 at %2 s").arg(r[0]).arg(s)));
            } else if (s > 10 + 60 + 3) {
                QVERIFY2(std::abs(r[0] - 30.0F) < 1e-3F, qPrintable(QStringLiteral("%1 at %2 s").arg(r[0]).arg(s)));
            }
            if (s >= 100) {
                QVERIFY(std::isnan(r[1]));
            } else {
                QVERIFY(std::abs(r[1] - 30.0F) < 1e-3F);
            }
        }
    }

    // A step shows for the window, give or take a slot (6 s of a minute), then no longer.
    void aStepOlderThanTheWindowNoLongerShows()
    {
        RateOfChange roc(temp, 60s);
        constexpr int step = 100;
        for (int s = 0; s <= 240; ++s) {
            const float v = s < step ? 40.0F : 50.0F;
            const float r = rates(roc.apply(makeFrame(s * 1000LL, { v })))[0];
            if (s < step) {
                QVERIFY(s < 15 || r == 0.0F);
            } else if (s <= step + 60 - 6) {
                // 10 units over the span used, which is the window give or take half a slot.
                QVERIFY2(r >= 10.0F * 60 / 63 - 1e-4F && r <= 10.0F * 60 / 57 + 1e-4F,
                    qPrintable(QStringLiteral("%1 at %2 s").arg(r).arg(s)));
            } else if (s >= step + 60 + 6) {
                QVERIFY2(r == 0.0F, qPrintable(QStringLiteral("%1 at %2 s").arg(r).arg(s)));
            }
        }
    }

    void resetsOnGenerationGpuCountAndTimeGoingBack()
    {
        RateOfChange roc(temp, 60s);
        for (int s = 0; s <= 60; ++s) {
            roc.apply(makeFrame(s * 1000LL, slopes(s)));
        }
        QVERIFY(!allNan(roc.apply(makeFrame(61'000, slopes(61)))));

        // A new topology generation: the old history is not compared with the new fleet.
        QVERIFY(allNan(roc.apply(makeFrame(62'000, slopes(62), 2))));
        QCOMPARE(roc.heldSamples(), size_t(1));
        for (int s = 63; s < 62 + 15; ++s) {
            QVERIFY(allNan(roc.apply(makeFrame(s * 1000LL, slopes(s), 2))));
        }
        QVERIFY(!allNan(roc.apply(makeFrame(77'000, slopes(77), 2))));

        // Time going backwards (a replay, a backend restart).
        QVERIFY(allNan(roc.apply(makeFrame(30'000, slopes(30), 2))));
        QCOMPARE(roc.heldSamples(), size_t(1));
        QVERIFY(allNan(roc.apply(makeFrame(40'000, slopes(40), 2))));
        QVERIFY(!allNan(roc.apply(makeFrame(45'000, slopes(45), 2))));

        // Another GPU count under the same generation.
        const auto out = roc.apply(makeFrame(46'000, { 1.0F, 2.0F, 3.0F, 4.0F }, 2));
        QCOMPARE(rates(out).size(), size_t(4));
        QVERIFY(allNan(out));
        QCOMPARE(roc.heldSamples(), size_t(1));
    }

    void framesWithoutThePlaneAreIgnored()
    {
        RateOfChange roc(temp, 60s);
        for (int s = 0; s <= 90; ++s) {
            if (s % 3 == 1) {
                // Another metric only, even from another generation: no rate, no change to the history.
                const auto in = makeFrame(s * 1000LL, { 1.0F, 2.0F }, 7, QStringLiteral("power"));
                const size_t held = roc.heldSamples();
                const auto out = roc.apply(in);
                QVERIFY(out->planes.empty());
                QCOMPARE(out->sequence, in->sequence);
                QCOMPARE(out->health, in->health);
                QCOMPARE(roc.heldSamples(), held);
                continue;
            }
            const auto out = roc.apply(makeFrame(s * 1000LL, slopes(s)));
            const auto &r = rates(out);
            if (s >= 15) {
                QVERIFY2(std::abs(r[0] - 30.0F) < 1e-3F, qPrintable(QStringLiteral("%1 at %2 s").arg(r[0]).arg(s)));
            }
        }
        QVERIFY(roc.heldSamples() >= 10);
        QCOMPARE(roc.apply(nullptr), FramePtr());
    }

    // Frames further apart than twice the window give no rate; up to that, a rate over the frame interval.
    void framesFarApartForTheWindow()
    {
        RateOfChange tenSeconds(temp, 10s);
        for (int s = 0; s <= 600; s += 60) {
            QVERIFY(allNan(tenSeconds.apply(makeFrame(s * 1000LL, slopes(s)))));
        }
        RateOfChange minute(temp, 60s);
        for (int s = 0; s <= 600; s += 60) {
            const auto out = minute.apply(makeFrame(s * 1000LL, slopes(s)));
            QCOMPARE(allNan(out), s == 0);
            QVERIFY(s == 0 || std::abs(rates(out)[0] - 30.0F) < 1e-3F);
        }
        // A gap of ten minutes in a 1 Hz stream: no rate over the gap, a rate again a quarter window after it.
        QVERIFY(allNan(minute.apply(makeFrame(1'200'000, slopes(1200)))));
        QVERIFY(allNan(minute.apply(makeFrame(1'214'000, slopes(1214)))));
        QVERIFY(!allNan(minute.apply(makeFrame(1'215'000, slopes(1215)))));
    }

    // At most 12 planes whatever the window, with frames at 1 Hz and with jittered frame times.
    void memoryIsBounded()
    {
        for (const auto window : RateOfChange::windowChoices) {
            RateOfChange roc(temp, window);
            size_t most = 0;
            const int64_t frames = 3 * window.count() / 1000;
            for (int64_t i = 0; i < frames; ++i) {
                const int64_t jitter = (i * 7919) % 301 - 150; // ±150 ms
                roc.apply(makeFrame(i * 1000 + jitter, { static_cast<float>(i) }));
                most = std::max(most, roc.heldSamples());
            }
            QVERIFY2(
                most <= 12 && most >= 11, qPrintable(QStringLiteral("%1 for %2 ms").arg(most).arg(window.count())));
        }
    }

    // The cooling-failure scenario from the simulator, in rate mode. Jobs in the simulator heat and cool whole racks
    // by up to 30 °C/min (a checkpoint pause, a job starting), so the scenario's own part of the rate is told apart
    // with a twin: the same fleet and seed without the scenario, which has the same jobs. The scenario's part of the
    // rack-mean rate passes +1 °C/min rack after rack along the affected row, each when the front reaches it, and is
    // nil elsewhere; and what the console shows, the rate itself, goes past the colour range's +5 °C/min at every
    // rack of the row as the front passes it.
    void coolingFailureFrontTravelsInRateMode()
    {
        using namespace fleetscope::backend;
        Simulator sim(1024, 1, 1.0, Scenario::Kind::CoolingFailure);
        Simulator twin(1024, 1, 1.0, Scenario::Kind::None);
        const auto &shape = sim.shape();
        const auto &scenario = sim.scenario();
        const uint32_t affected = scenario.affectedRow();
        const auto &row = shape.rows[affected];
        QVERIFY(row.rackCount >= 4);
        QVERIFY(shape.rows.size() >= 2);
        auto rackRange = [&](uint32_t k) {
            const auto &rack = shape.racks[k];
            const uint32_t first = shape.nodes[rack.firstNode].firstGpu;
            const auto &last = shape.nodes[rack.firstNode + rack.nodeCount - 1];
            return std::pair { first, last.firstGpu + last.gpuCount - first };
        };
        auto frameOf = [](Simulator &s) {
            const auto snap = s.snapshot();
            auto f = std::make_shared<fleetscope::Frame>();
            f->sequence = s.steps();
            f->sampleTimeMs = 1'700'000'000'000LL + std::llround(s.nowSeconds() * 1000);
            f->topologyGeneration = 1;
            f->planes.push_back({ temp, snap->plane(MetricId::GpuTemp) });
            f->health = snap->health;
            return FramePtr(std::move(f));
        };

        RateOfChange roc(temp, 60s);
        RateOfChange twinRoc(temp, 60s);
        std::vector<double> reached(row.rackCount, -1); // the scenario's part first above +1 °C/min
        std::vector<double> shown(row.rackCount, 0); // the rate shown, its peak as the front passes
        double elsewhere = 0; // the scenario's part, largest, in the other rows
        const double end = scenario.coolingOnsetAt(row.rackCount - 1) + 120;
        while (sim.nowSeconds() < end) {
            sim.step();
            twin.step();
            const auto out = roc.apply(frameOf(sim));
            const auto twinOut = twinRoc.apply(frameOf(twin));
            const auto &r = rates(out);
            const auto &r0 = rates(twinOut);
            for (uint32_t k = 0; k < shape.racks.size(); ++k) {
                const auto [first, count] = rackRange(k);
                const double rate = meanOf(r, first, count);
                const double part = rate - meanOf(r0, first, count);
                if (std::isnan(part)) {
                    continue;
                }
                const uint32_t p = shape.racks[k].position;
                if (shape.racks[k].row != affected) {
                    elsewhere = std::max(elsewhere, std::abs(part));
                    continue;
                }
                if (reached[p] < 0 && part > 1.0) {
                    reached[p] = sim.nowSeconds();
                }
                const double onset = scenario.coolingOnsetAt(p);
                if (sim.nowSeconds() >= onset && sim.nowSeconds() <= onset + 90) {
                    shown[p] = std::max(shown[p], rate);
                }
            }
        }
        QString times;
        QString peaks;
        for (uint32_t p = 0; p < row.rackCount; ++p) {
            times += QStringLiteral(" %1").arg(reached[p] - scenario.coolingOnsetAt(p));
            peaks += QStringLiteral(" %1").arg(shown[p], 0, 'f', 1);
        }
        qInfo("rack by rack: +1 °C/min%s s after the front reaches it, peaks%s °C/min shown; elsewhere ±%.3f °C/min",
            qPrintable(times), qPrintable(peaks), elsewhere);
        for (uint32_t p = 0; p < row.rackCount; ++p) {
            const double onset = scenario.coolingOnsetAt(p);
            QVERIFY2(reached[p] >= onset && reached[p] < onset + 60,
                qPrintable(QStringLiteral("rack %1 at %2 s, front there at %3 s").arg(p).arg(reached[p]).arg(onset)));
            if (p > 0) {
                QVERIFY2(reached[p] > reached[p - 1], qPrintable(times));
            }
            QVERIFY2(shown[p] > 5.0, qPrintable(peaks));
        }
        QVERIFY2(elsewhere < 0.1, qPrintable(QString::number(elsewhere)));
    }

    // The cost of apply() at a million GPUs, logged (no assertion on time: machines differ), and the rates checked.
    void costAtAMillionGpus()
    {
        constexpr size_t gpus = 1U << 20U;
        RateOfChange roc(temp, 60s);
        std::vector<float> values(gpus);
        FramePtr out;
        qint64 worstNs = 0;
        qint64 totalNs = 0;
        int timed = 0;
        for (int s = 0; s <= 75; ++s) {
            for (size_t g = 0; g < gpus; ++g) {
                values[g] = 30.0F + static_cast<float>(g % 50) + 0.5F * static_cast<float>(s);
            }
            auto in = makeFrame(s * 1000LL, values);
            QElapsedTimer timer;
            timer.start();
            out = roc.apply(in);
            const qint64 ns = timer.nsecsElapsed();
            if (s >= 60) {
                worstNs = std::max(worstNs, ns);
                totalNs += ns;
                ++timed;
            }
        }
        qInfo("apply() at %zu GPUs: mean %.2f ms, worst %.2f ms over %d frames; %zu planes held", gpus,
            static_cast<double>(totalNs) / timed / 1e6, static_cast<double>(worstNs) / 1e6, timed, roc.heldSamples());
        const auto &r = rates(out);
        QCOMPARE(r.size(), gpus);
        for (size_t g = 0; g < gpus; g += 4099) {
            QVERIFY(std::abs(r[g] - 30.0F) < 1e-2F);
        }
        QVERIFY(roc.heldSamples() <= 12);
    }
};

QTEST_GUILESS_MAIN(TestRateOfChange)
#include "tst_rateofchange.moc"
