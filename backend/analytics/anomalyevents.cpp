// SPDX-License-Identifier: Apache-2.0
// The anomaly detector's anomalies: when a GPU's score starts one or ends it, and what its event says.
#include "analytics/anomalydetector.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

std::string duration(double seconds)
{
    if (seconds < 120) {
        return fmt::format("{:.0f} s", seconds);
    }
    return fmt::format("{:.0f} min", seconds / 60);
}

std::string amount(float value, const std::string &unit)
{
    const float a = std::fabs(value);
    return a < 10 ? fmt::format("{:.1f} {}", a, unit) : fmt::format("{:.0f} {}", a, unit);
}
} // namespace

void AnomalyDetector::persist(std::vector<float> *plane, double now, double dt, std::vector<FleetEvent> *events)
{
    const size_t n = m_shape.gpuCount;
    if (plane != nullptr) {
        plane->assign(n, nan); // not judged, unless scored below
    }
    for (size_t g = 0; g < n; ++g) {
        float best = -1;
        uint8_t bestMetric = 0;
        for (size_t k = 0; k < judged.size(); ++k) {
            const float a = std::fabs(m_score[k][g]);
            if (a > best) { // false for NaN
                best = a;
                bestMetric = static_cast<uint8_t>(k);
            }
        }
        const bool any = best >= 0;
        if (any && plane != nullptr) {
            (*plane)[g] = std::min(best, 99.0F);
        }
        bool data = false;
        for (size_t k = 0; k < judged.size() && !data; ++k) {
            data = !std::isnan(m_deviation[k][g]);
        }
        auto &st = m_state[g];
        if (any && st.unconfirmedLeft > 0 && m_unplaced[g] == 0 && st.pendingSince < 0 && st.anomalous == 0
            && best < m_options.startScore) {
            // Judged in line with the places it learnt: they are its own.
            st.unconfirmedLeft = std::max(0.0F, st.unconfirmedLeft - static_cast<float>(dt));
        }
        if (data && st.settleLeft > 0) {
            // Settling counts time with data only: a GPU without peers or readings has learnt nothing meanwhile.
            st.settleLeft = std::max(0.0F, st.settleLeft - static_cast<float>(dt));
            st.learning = st.settleLeft > 0 ? st.learning : 0;
        }
        st.relearn = st.relearn > 0 ? st.relearn - 1 : 0; // 2 set this frame: the next frame lets every place go
        if (any && best >= m_options.startScore) {
            if (st.pendingSince < 0) {
                st.pendingSince = now;
                st.pendingSamples = 0;
            }
            st.pendingSamples = static_cast<uint16_t>(std::min<int>(st.pendingSamples + 1, 60000));
            st.missed = 0;
            st.quietSince = -1;
            if (st.anomalous == 0 && now - st.pendingSince >= m_options.persistSeconds && st.pendingSamples >= 3) {
                st.anomalous = 1;
                st.startedAt = st.pendingSince;
                st.metric = bestMetric;
                events->push_back(describe(static_cast<uint32_t>(g), now, true));
            }
            continue;
        }
        // One sample below in a run (a phase dip) does not break it; two do.
        if (st.pendingSince >= 0 && ++st.missed <= m_options.missesAllowed) {
            continue;
        }
        st.pendingSince = -1;
        st.pendingSamples = 0;
        st.missed = 0;
        if (st.anomalous == 0) {
            continue;
        }
        if (any && best >= m_options.endScore) {
            st.quietSince = -1;
            continue;
        }
        if (st.quietSince < 0) {
            st.quietSince = now;
        }
        if (now - st.quietSince >= m_options.clearSeconds) {
            st.anomalous = 0;
            events->push_back(describe(static_cast<uint32_t>(g), now, false));
        }
    }
}

FleetEvent AnomalyDetector::describe(uint32_t gpu, double now, bool start) const
{
    const auto &st = m_state[gpu];
    const uint32_t nodeIndex = m_shape.nodeOfGpu[gpu];
    const auto &node = m_shape.nodes[nodeIndex];
    const size_t k = st.metric;
    const auto &def = metricCatalog()[static_cast<size_t>(judged[k])];
    const auto &group = m_groups[static_cast<size_t>(m_groupOf[gpu])];
    const bool inJob = group.jobId != 0;
    std::string text;
    if (start) {
        const float off = m_deviation[k][gpu];
        const auto gi = static_cast<size_t>(m_groupOf[gpu]);
        const float usual = m_usual[k * 2 + m_groupBusy[gi]][gpu];
        const bool placed = (m_unplaced[gpu] & (1U << k)) == 0;
        // Memory is judged against its own GPU: its deviation is how much further above it than its peers' memory.
        const bool memory = judged[k] == MetricId::MemTemp;
        text = fmt::format("GPU {} of {} runs {} {} {} median{} for {} ({})", gpu - node.firstGpu, node.hostname,
            amount(off, def.unit), off >= 0 ? "above" : "below", inJob ? "its job's" : "its rack's idle GPUs'",
            memory ? ", against its own GPU" : "", duration(now - st.startedAt), def.name);
        if (!placed) {
            text += "; no history yet";
        } else if (std::fabs(usual) >= 0.5F) {
            text += fmt::format("; it usually runs {} {}", amount(usual, def.unit), usual >= 0 ? "above" : "below");
        }
    } else {
        text = fmt::format("GPU {} of {} back in line with {} after {} ({})", gpu - node.firstGpu, node.hostname,
            inJob ? "its job" : "its rack's idle GPUs", duration(now - st.startedAt), def.name);
    }
    FleetEvent e(now, start ? FleetEvent::Kind::AnomalyStart : FleetEvent::Kind::AnomalyEnd,
        FleetEvent::Severity::Warning, gpu, nodeIndex, std::move(text));
    e.jobId = group.jobId;
    e.metric = judged[k];
    return e;
}

} // namespace fleetscope::backend
