// SPDX-License-Identifier: Apache-2.0
// JobTrack's timeline (its utilisation band and phase spans, bounded) and its report.
#include "analytics/jobphases.h"

#include <algorithm>
#include <cmath>

namespace fleetscope::backend {

void JobTrack::addBand(int64_t timeMs, const Scan &s)
{
    if (m_pending.frames == 0) {
        m_pending = {};
        m_pending.timeMs = timeMs;
    }
    m_pending.p10 += s.p10;
    m_pending.median += s.median;
    m_pending.p90 += s.p90;
    m_pending.reporting += s.reporting;
    if (++m_pending.frames < m_framesPerPoint) {
        return;
    }
    const double n = m_pending.frames;
    m_band.push_back(
        { m_pending.timeMs, static_cast<float>(m_pending.p10 / n), static_cast<float>(m_pending.median / n),
            static_cast<float>(m_pending.p90 / n), static_cast<uint32_t>(std::lround(m_pending.reporting / n)) });
    m_pending.frames = 0;
    if (m_band.size() < JobReport::maxBandPoints) {
        return;
    }
    // Full: neighbours merged pairwise, each point now standing for twice the frames.
    size_t out = 0;
    for (size_t i = 0; i + 1 < m_band.size(); i += 2) {
        const JobBandPoint &a = m_band[i];
        const JobBandPoint &b = m_band[i + 1];
        m_band[out++] = { a.timeMs, (a.p10 + b.p10) / 2, (a.median + b.median) / 2, (a.p90 + b.p90) / 2,
            (a.reporting + b.reporting + 1) / 2 };
    }
    m_band.resize(out);
    m_framesPerPoint *= 2;
}

void JobTrack::addSpan(JobPhase phase, int64_t fromMs, int64_t toMs, uint64_t incidentId, const std::string &why)
{
    if (!m_spans.empty()) {
        JobPhaseSpan &last = m_spans.back();
        if (last.phase == phase && last.incidentId == incidentId && last.why == why) {
            last.toMs = toMs;
            return;
        }
    }
    m_spans.push_back({ phase, fromMs, toMs, incidentId, why });
    if (m_spans.size() > JobReport::maxPhaseSpans) {
        // The oldest two become one, of the longer one's phase.
        JobPhaseSpan &first = m_spans[0];
        JobPhaseSpan &second = m_spans[1];
        if (first.toMs - first.fromMs > second.toMs - second.fromMs) {
            second.phase = first.phase;
            second.incidentId = first.incidentId;
            second.why = std::move(first.why);
        }
        second.fromMs = first.fromMs;
        m_spans.pop_front();
    }
}

void JobTrack::report(JobReport *out) const
{
    out->job = m_info;
    out->asOfMs = m_asOfMs;
    out->watchedFromMs = m_watchedFromMs;
    out->gpuHours = m_gpuHours;
    out->productiveGpuHours = m_productive;
    out->goodput = m_gpuHours > 0 ? std::clamp(m_productive / m_gpuHours, 0.0, 1.0) : 0.0;
    out->losses = m_losses;
    if (m_pendingIdle > 0) {
        // A checkpoint under way reads as one until it lasts too long.
        auto it = std::find_if(out->losses.begin(), out->losses.end(),
            [](const GoodputLoss &l) { return l.cause == LossCause::Checkpoint; });
        if (it == out->losses.end()) {
            GoodputLoss loss;
            loss.cause = LossCause::Checkpoint;
            loss.jobId = m_info.id;
            loss.what = "checkpoints";
            it = out->losses.insert(out->losses.end(), loss);
        }
        it->gpuHours += m_pendingIdle;
    }
    capLosses(&out->losses, JobReport::maxLosses);
    m_stragglers.ranked(m_asOfMs, m_gpus, &out->stragglers);
    out->phases.assign(m_spans.begin(), m_spans.end());
    out->band = m_band;
    if (m_pending.frames > 0) {
        const double n = m_pending.frames;
        out->band.push_back(
            { m_pending.timeMs, static_cast<float>(m_pending.p10 / n), static_cast<float>(m_pending.median / n),
                static_cast<float>(m_pending.p90 / n), static_cast<uint32_t>(std::lround(m_pending.reporting / n)) });
    }
    out->phase = m_silent && !m_ended ? JobPhase::Unwatched : m_phase;
    out->stepSeconds = stepSeconds();
    out->allReduceShare = m_computeMs > 0 ? std::clamp(static_cast<double>(m_dipMs) / m_computeMs, 0.0, 1.0) : 0.0;
    out->restarts = m_restarts;
}

JobBrief JobTrack::brief() const
{
    return { m_info.id, m_gpuHours > 0 ? std::clamp(m_productive / m_gpuHours, 0.0, 1.0) : 0.0,
        m_silent && !m_ended ? JobPhase::Unwatched : m_phase, m_stragglers.count() };
}

} // namespace fleetscope::backend
