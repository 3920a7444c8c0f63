// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QString>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <vector>

namespace fleetscope {

// Per-GPU rate of change of one metric, in its unit per minute, over a chosen window: the heatmap's rate mode, in
// which a heat front shows as a band of warm colour travelling across the floor rather than as a slowly growing hot
// area.
//
// Not thread-safe: one owner feeds it every frame, in order, and uses the frames it returns.
//
// Memory: instead of every frame of the window it holds one plane per slot of window / 10 (the first frame to fall in
// each slot of sample time; slots are centred on the first frame's time, so that jittered frames once a slot fill
// one slot each): at most 12 planes and one kept for reuse, 52 MB at a million GPUs where 60 one-second
// frames would be 240 MB.
// The price is that the "then" end is the held sample nearest to now - window, so the span actually used is the
// window give or take half a slot (5%) when frames come more often than slots; the rate is divided by the span
// actually used, so a steady slope reads exactly whatever the span.
//
// Only spans from a quarter of the window to twice the window count: the whole plane is NaN until a quarter of the
// window has been seen (at the start, after a reset, after a gap in the stream), and when frames come further apart
// than twice the window (a 10 s window on a simulator at --speed 60: choose a longer window). Within that the "then"
// sample is the nearest to now - window. A GPU's rate is NaN where its value now or then is NaN, with no fallback to
// another sample: one pass over the plane per frame.
class RateOfChange
{
public:
    using Window = std::chrono::milliseconds;
    static constexpr Window defaultWindow = std::chrono::seconds(60);
    // The windows the console offers.
    static constexpr std::array<Window, 4> windowChoices
        = { std::chrono::seconds(10), std::chrono::minutes(1), std::chrono::minutes(5), std::chrono::minutes(15) };
    static constexpr int slotsPerWindow = 10;

    explicit RateOfChange(QString metricId, Window window = defaultWindow);

    const QString &metricId() const { return m_metricId; }
    Window window() const { return m_window; }
    // Both forget the history.
    void setMetricId(const QString &metricId);
    void setWindow(Window window);
    void reset();

    // Records the frame's plane of the metric and returns a frame with the same sequence, sample time, topology
    // generation and health bytes, and one plane, rateId(metricId()), of per-GPU rates (all NaN until there is enough
    // history). A frame without the metric's plane leaves the history alone and gives a frame without planes; null
    // gives null. The history is forgotten, and starts again with this frame, when the topology generation or the
    // GPU count changes or the sample time goes backwards (a replay, a backend restart).
    FramePtr apply(const FramePtr &frame);

    // Planes held now, for tests and memory accounting.
    size_t heldSamples() const { return m_samples.size(); }

    // "<id>:rate"
    static QString rateId(const QString &metricId);
    // The description of the rate of a metric: "<name> change" in "<unit>/min", a diverging colour map and a range
    // symmetric about zero of a sixteenth of the metric's range per minute (±5 °C/min for a 20..100 °C temperature:
    // a steadily running rack stays inside it; in the simulator a failed cooling unit's front, 20 to 28 °C/min, goes
    // past it, as do jobs starting and pausing for checkpoints).
    static MetricInfo rateMetric(const MetricInfo &base);

private:
    struct Sample
    {
        int64_t timeMs = 0;
        std::vector<float> values;
    };

    int64_t slotOf(int64_t timeMs) const;
    void record(int64_t timeMs, const std::vector<float> &values);
    bool usable(const Sample &sample, int64_t nowMs) const;
    const Sample *then(int64_t nowMs);

    QString m_metricId;
    Window m_window;
    int64_t m_slotMs;
    uint64_t m_generation = 0;
    int64_t m_lastTimeMs = 0;
    int64_t m_anchorMs = 0; // the first sample's time since the last reset: slots are centred on it
    std::deque<Sample> m_samples; // oldest first, one per slot; at most one at or before now - window
    std::vector<float> m_spare; // the plane of the last sample dropped, reused for the next one
};

} // namespace fleetscope
