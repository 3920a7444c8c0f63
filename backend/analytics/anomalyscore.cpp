// SPDX-License-Identifier: Apache-2.0
// The anomaly detector's score of each GPU, metric by metric: against its peers, its rack, its usual place and the
// spread of its peers' residuals (docs/ANOMALY.md, steps 1 to 4).
#include "analytics/anomalydetector.h"

#include <algorithm>
#include <cmath>

namespace fleetscope::backend {

// The median of the sampled members' values of a group (NaN when fewer than minPeers have one), and their spread
// into *spread (1.4826 MAD): what take(g) gives, skipping NaN.
template <typename Take> float AnomalyDetector::groupMedian(const Group &group, Take take, float *spread)
{
    const uint32_t stride = std::max<uint32_t>(1, group.count / m_options.peerSample);
    m_scratch.clear();
    for (uint32_t i = 0; i < group.count; i += stride) {
        const float v = take(m_members[group.first + i]);
        if (!std::isnan(v)) {
            m_scratch.push_back(v);
        }
    }
    if (m_scratch.size() < m_options.minPeers) {
        *spread = nan;
        return nan;
    }
    const float m = medianOf(m_scratch);
    for (float &v : m_scratch) {
        v = std::fabs(v - m);
    }
    *spread = madToSigma * medianOf(m_scratch);
    return m;
}

void AnomalyDetector::slotPlaces(const std::vector<float> &departure)
{
    // From a sample of the fleet (an odd stride: a chassis's slots all come up), per kind of group (idle rack, job
    // idle, job busy) and slot.
    const size_t n = departure.size();
    const size_t stride = std::max<size_t>(1, n / 65536) | 1U;
    for (auto &bucket : m_slotValues) {
        bucket.clear();
    }
    for (size_t g = 0; g < n; g += stride) {
        const float v = departure[g];
        if (!std::isnan(v)) {
            m_slotValues[slotBucket(static_cast<uint32_t>(g))].push_back(v);
        }
    }
    for (size_t i = 0; i < m_slotValues.size(); ++i) {
        m_slotPlace[i] = m_slotValues[i].size() < m_options.minPeers ? 0.0F : medianOf(m_slotValues[i]);
    }
}

size_t AnomalyDetector::slotBucket(uint32_t gpu) const
{
    const auto &group = m_groups[static_cast<size_t>(m_groupOf[gpu])];
    const size_t kind = group.jobId == 0 ? 0 : 1U + m_groupBusy[static_cast<size_t>(m_groupOf[gpu])];
    return kind * maxSlots + m_slotOf[gpu];
}

void AnomalyDetector::scoreMetric(size_t k, const std::vector<float> &plane, float alpha, float fast, float dt)
{
    const float floor = floorOf(judged[k]);
    const float residualFloor = residualFloorOf(judged[k]);
    auto &median = m_median[k];
    auto &scale = m_scale[k];
    auto &score = m_score[k];
    auto &deviation = m_deviation[k];
    median.assign(m_groups.size(), nan);
    scale.assign(m_groups.size(), nan);
    // 1. Each group's median and spread, from at most peerSample of its members; GPUs that just left a job are still
    // cooling: no peers of the idle ones yet, unless all of them are (a rack idle at the start, or a job over the
    // whole rack just ended: they cool together, and are each other's peers).
    for (size_t gi = 0; gi < m_groups.size(); ++gi) {
        const bool idle = m_groups[gi].jobId == 0;
        float spread = 0;
        median[gi] = groupMedian(
            m_groups[gi], [&](uint32_t g) { return idle && m_state[g].settleLeft > 0 ? nan : plane[g]; }, &spread);
        if (idle && std::isnan(median[gi])) {
            median[gi] = groupMedian(
                m_groups[gi], [&](uint32_t g) { return plane[g]; }, &spread);
        }
        scale[gi] = std::max(spread, floor);
    }
    const size_t n = plane.size();
    for (size_t g = 0; g < n; ++g) {
        deviation[g] = plane[g] - median[static_cast<size_t>(m_groupOf[g])]; // NaN when either is
        score[g] = deviation[g];
    }
    // 2. A rack's job GPUs breathe the same air: their common offset is the rack's, not theirs.
    for (const auto &rack : m_shape.racks) {
        if (rack.nodeCount == 0) {
            continue;
        }
        const uint32_t from = m_shape.nodes[rack.firstNode].firstGpu;
        const auto &last = m_shape.nodes[rack.firstNode + rack.nodeCount - 1];
        const uint32_t to = last.firstGpu + last.gpuCount;
        m_scratch.clear();
        for (uint32_t g = from; g < to; ++g) {
            if (!std::isnan(score[g]) && m_groups[static_cast<size_t>(m_groupOf[g])].jobId != 0) {
                m_scratch.push_back(score[g]);
            }
        }
        if (m_scratch.size() < m_options.minPeers) {
            continue;
        }
        const float offset = medianOf(m_scratch);
        for (uint32_t g = from; g < to; ++g) {
            if (m_groups[static_cast<size_t>(m_groupOf[g])].jobId != 0) {
                score[g] -= offset;
            }
        }
    }
    // 3. Where the GPU usually sits among its peers (its slot's airflow, its silicon) is its own normal: what is left
    // is its residual. Until it has a place (the start, a phase first seen, places let go) it is judged against its
    // peers as if it sat where GPUs of its slot in a chassis sit among theirs (the last GPU in a chassis's airflow runs
    // 10 °C above a job's median, the first a few below: the slot's median over the fleet), in how far its peers
    // spread from their slots' places: learning is no blind window.
    slotPlaces(score);
    for (size_t gi = 0; gi < m_groups.size(); ++gi) {
        float spread = 0;
        groupMedian(
            m_groups[gi], [&](uint32_t g) { return score[g] - slotPlace(g); }, &spread);
        m_slotScale[gi] = std::isnan(spread) ? nan : std::max(spread, floor);
    }
    const auto bit = static_cast<uint8_t>(1U << k);
    const auto learn = static_cast<float>(m_options.learnSeconds);
    for (size_t g = 0; g < n; ++g) {
        const float r = score[g];
        if (std::isnan(r)) {
            continue;
        }
        auto &st = m_state[g];
        const auto gi = static_cast<size_t>(m_groupOf[g]);
        const uint8_t busy = m_groupBusy[gi];
        float &b = m_usual[k * 2 + busy][g];
        float &seen = m_seen[k * 2 + busy][g];
        float &inLine = m_inLine[k][g];
        const float peers = m_slotScale[gi];
        const float slot = slotPlace(static_cast<uint32_t>(g));
        const float u = r - slot; // its departure from where its slot sits
        auto letGo = [&] {
            for (size_t phase = 0; phase < 2; ++phase) {
                m_usual[k * 2 + phase][g] = nan;
                m_seen[k * 2 + phase][g] = 0;
            }
            inLine = 0;
        };
        if (st.relearn != 0) {
            // Its places were learnt during a fault (one metric found it): all of them are learnt afresh, in both
            // phases (a clock stuck low through a settling was learnt in both, with the power and heat that go with
            // it).
            letGo();
        }
        const bool odd = st.pendingSince >= 0 || st.anomalous != 0;
        // A sample its place may be learnt from: it does not look odd, and it is not far off its peers (a GPU that far
        // off from the start is one to look at, not one whose place that is).
        const bool learnable = !odd && std::fabs(u) <= m_options.placeCap * peers;
        if (st.settleLeft > 0) {
            // Settling in a new job: not judged; where it sits is followed closely (its temperature's time constant).
            if (st.learning != 0 && learnable) {
                b = std::isnan(b) ? r : b + (r - b) * fast;
                seen = std::min(seen + dt, learn);
            }
            score[g] = nan;
            continue;
        }
        if (std::isnan(b) || seen < learn) {
            // No place yet: the mean of its samples in this phase, begun again when it moves away from it by more
            // than the peers' spread (a fault coming on is not averaged into its normal).
            if (learnable) {
                if (std::isnan(b) || (seen >= m_options.persistSeconds && std::fabs(r - b) > peers)) {
                    b = r;
                    seen = 0;
                } else {
                    b += (r - b) * (seen + dt > 0 ? dt / (seen + dt) : 1.0F);
                    seen += dt;
                }
            }
            m_unplaced[g] |= bit;
            score[g] = u;
            inLine = 0;
            continue;
        }
        const float lastSpread = m_lastResidualScale[k][gi];
        if (std::fabs(u) <= peers && std::fabs(b - slot) >= m_options.farPlace * peers
            && std::fabs(r - b) >= m_options.startScore * lastSpread) {
            // It runs with its peers while its place says it sits far from them, and would look odd against that
            // place: it was learnt during a fault (a clock stuck low through a job change). Judged against its peers,
            // not flagged for being back in line; its places are learnt afresh unless it leaves them again at once (a
            // phase's transient).
            inLine += dt;
            if (inLine >= m_options.letGoSeconds) {
                letGo();
                st.relearn = 2;
            }
            m_unplaced[g] |= bit;
            score[g] = u;
            continue;
        }
        score[g] = r - b;
        if (!odd) {
            if (learnable) {
                b += (r - b) * alpha;
            }
            inLine = 0;
        } else if (st.unconfirmedLeft > 0 && std::fabs(u) < std::fabs(b - slot)) {
            // Odd from its first judged frame against a place just learnt, nearer its peers than that place says: it
            // was learnt while a fault was in force (a cooling fault that began as it settled and ended as it was
            // first judged); after a while its places are learnt afresh.
            inLine += dt;
            if (inLine >= m_options.relearnSeconds) {
                letGo();
                st.relearn = 2;
            }
        } else {
            inLine = 0;
        }
    }
    // A chassis's GPUs breathe its air, each the exhaust of those upstream: when one of them draws less (or its fans
    // change), the others move together, by the same few degrees. Their common departure is the chassis's.
    if (judged[k] == MetricId::GpuTemp || judged[k] == MetricId::MemTemp) {
        for (const auto &node : m_shape.nodes) {
            m_scratch.clear();
            for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
                if (!std::isnan(score[g])) {
                    m_scratch.push_back(score[g]);
                }
            }
            if (m_scratch.size() < m_options.minPeers) {
                continue;
            }
            const float common = medianOf(m_scratch);
            for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
                score[g] -= common;
            }
        }
    }
    // 4. How far residuals spread among the peers right now: small in a steady phase (each GPU's place is known), wide
    // while the group changes phase (GPUs follow at their own pace). A residual is judged in that unit.
    // Of the GPUs with a place only; one without is judged in its peers' spread (so is one whose group has too few
    // GPUs with places for a spread of theirs).
    for (size_t gi = 0; gi < m_groups.size(); ++gi) {
        float spread = 0;
        groupMedian(
            m_groups[gi], [&](uint32_t g) { return (m_unplaced[g] & bit) != 0 ? nan : score[g]; }, &spread);
        m_residualScale[gi] = std::isnan(spread) ? nan : std::max(spread, residualFloor);
    }
    m_lastResidualScale[k] = m_residualScale;
    for (size_t g = 0; g < n; ++g) {
        const auto gi = static_cast<size_t>(m_groupOf[g]);
        const float r = m_residualScale[gi];
        score[g] /= (m_unplaced[g] & bit) != 0 || std::isnan(r) ? m_slotScale[gi] : r; // NaN stays NaN: not judged
    }
}

} // namespace fleetscope::backend
