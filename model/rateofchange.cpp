// SPDX-License-Identifier: Apache-2.0
#include "model/rateofchange.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

namespace fleetscope {

namespace {
constexpr float noValue = std::numeric_limits<float>::quiet_NaN();
constexpr double msPerMinute = 60'000.0;
} // namespace

RateOfChange::RateOfChange(QString metricId, Window window)
    : m_metricId(std::move(metricId))
    , m_window(std::max(window, Window(slotsPerWindow)))
    , m_slotMs(m_window.count() / slotsPerWindow)
{ }

void RateOfChange::setMetricId(const QString &metricId)
{
    m_metricId = metricId;
    reset();
}

void RateOfChange::setWindow(Window window)
{
    m_window = std::max(window, Window(slotsPerWindow));
    m_slotMs = m_window.count() / slotsPerWindow;
    reset();
}

void RateOfChange::reset()
{
    m_samples.clear();
    m_spare = {};
}

QString RateOfChange::rateId(const QString &metricId)
{
    return metricId + QStringLiteral(":rate");
}

MetricInfo RateOfChange::rateMetric(const MetricInfo &base)
{
    MetricInfo info;
    info.id = rateId(base.id);
    info.name = base.name + QStringLiteral(" change");
    info.unit = base.unit + QStringLiteral("/min");
    info.dcgmField = base.dcgmField; // where the values it derives from come from
    info.colourMap = QStringLiteral("coolwarm");
    const float reach = std::abs(base.rangeMax - base.rangeMin) / 16.0F;
    info.rangeMin = -reach;
    info.rangeMax = reach;
    info.isRate = true;
    return info;
}

int64_t RateOfChange::slotOf(int64_t timeMs) const
{
    // Slots are centred on the first sample's time: frames that come once a slot with some jitter (1 Hz frames, a
    // 10 s window) then fall one in each slot instead of two in one and none in the next. Floor, not truncation:
    // times before the first sample are negative here.
    const int64_t t = timeMs - m_anchorMs + m_slotMs / 2;
    const int64_t q = t / m_slotMs;
    return (t % m_slotMs < 0) ? q - 1 : q;
}

bool RateOfChange::usable(const Sample &sample, int64_t nowMs) const
{
    const int64_t span = nowMs - sample.timeMs;
    return span * 4 >= m_window.count() && span <= 2 * m_window.count();
}

const RateOfChange::Sample *RateOfChange::then(int64_t nowMs)
{
    const int64_t target = nowMs - m_window.count();
    // A sample with a later one still at or before the target can never be the nearest again: the target only moves
    // forwards.
    while (m_samples.size() > 1 && m_samples[1].timeMs <= target) {
        m_spare = std::move(m_samples.front().values);
        m_samples.pop_front();
    }
    // Now the nearest usable sample is one of the first two: every later one is nearer to now than the second.
    const Sample *best = nullptr;
    for (size_t i = 0; i < std::min<size_t>(2, m_samples.size()); ++i) {
        const Sample &s = m_samples[i];
        if (usable(s, nowMs) && (best == nullptr || std::abs(s.timeMs - target) < std::abs(best->timeMs - target))) {
            best = &s;
        }
    }
    return best;
}

void RateOfChange::record(int64_t timeMs, const std::vector<float> &values)
{
    if (m_samples.empty()) {
        m_anchorMs = timeMs;
    } else if (slotOf(m_samples.back().timeMs) >= slotOf(timeMs)) {
        return;
    }
    Sample sample;
    sample.timeMs = timeMs;
    sample.values = std::move(m_spare);
    m_spare = {};
    sample.values.assign(values.begin(), values.end());
    m_samples.push_back(std::move(sample));
}

FramePtr RateOfChange::apply(const FramePtr &frame)
{
    if (!frame) {
        return nullptr;
    }
    auto out = std::make_shared<Frame>();
    out->sequence = frame->sequence;
    out->sampleTimeMs = frame->sampleTimeMs;
    out->topologyGeneration = frame->topologyGeneration;
    out->health = frame->health;

    const MetricPlane *plane = frame->plane(m_metricId);
    if (plane == nullptr) {
        return out;
    }
    const int64_t nowMs = frame->sampleTimeMs;
    if (!m_samples.empty()
        && (frame->topologyGeneration != m_generation || plane->values.size() != m_samples.front().values.size()
            || nowMs < m_lastTimeMs)) {
        reset();
    }
    m_generation = frame->topologyGeneration;
    m_lastTimeMs = nowMs;

    MetricPlane rate;
    rate.metricId = rateId(m_metricId);
    const auto &now = plane->values;
    if (const Sample *past = then(nowMs)) {
        const auto perMinute = static_cast<float>(msPerMinute / static_cast<double>(nowMs - past->timeMs));
        rate.values.resize(now.size());
        // NaN at either end stays NaN through the subtraction: no branch, and the loop vectorises.
        std::transform(now.begin(), now.end(), past->values.begin(), rate.values.begin(),
            [perMinute](float a, float b) { return (a - b) * perMinute; });
    } else {
        rate.values.assign(now.size(), noValue);
    }
    out->planes.push_back(std::move(rate));
    record(nowMs, now);
    return out;
}

} // namespace fleetscope
