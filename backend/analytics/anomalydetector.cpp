// SPDX-License-Identifier: Apache-2.0
#include "analytics/anomalydetector.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
constexpr float nan = std::numeric_limits<float>::quiet_NaN();
constexpr float madToSigma = 1.4826F; // a normal distribution's standard deviation per MAD

double threadCpuSeconds()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The median of values (reordered), which must not be empty.
float medianOf(std::vector<float> &values)
{
    auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), mid, values.end());
    return *mid;
}

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

uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6U) + (h >> 2U);
    return h;
}
} // namespace

float AnomalyDetector::floorOf(MetricId metric)
{
    switch (metric) {
    case MetricId::GpuTemp:
    case MetricId::MemTemp:
        return 1.5F; // °C; DCGM reads whole degrees
    case MetricId::Power:
        return 15.0F; // W
    case MetricId::GpuUtil:
        return 5.0F; // %
    case MetricId::SmClock:
        return 30.0F; // MHz
    default:
        return 1.0F;
    }
}

float AnomalyDetector::residualFloorOf(MetricId metric)
{
    switch (metric) {
    case MetricId::GpuTemp:
    case MetricId::MemTemp:
        return 0.75F; // °C: a reading rounded to whole degrees flips by one
    case MetricId::Power:
        return 7.5F; // W
    case MetricId::GpuUtil:
        return 3.0F; // %
    case MetricId::SmClock:
        return 15.0F; // MHz
    default:
        return 1.0F;
    }
}

AnomalyDetector::AnomalyDetector(const FleetShape &shape)
    : AnomalyDetector(shape, Options {})
{ }

AnomalyDetector::AnomalyDetector(const FleetShape &shape, const Options &options)
    : m_shape(shape)
    , m_options(options)
{
    const size_t n = shape.gpuCount;
    m_rackOf.resize(n);
    for (size_t g = 0; g < n; ++g) {
        m_rackOf[g] = shape.nodes[shape.nodeOfGpu[g]].rack;
    }
    m_state.resize(n);
    m_slotOf.resize(n);
    for (size_t g = 0; g < n; ++g) {
        const auto slot = g - shape.nodes[shape.nodeOfGpu[g]].firstGpu;
        m_slotOf[g] = static_cast<uint8_t>(std::min<size_t>(slot, maxSlots - 1));
    }
    m_slotValues.resize(3 * maxSlots);
    m_slotPlace.assign(3 * maxSlots, 0.0F);
    for (auto &usual : m_usual) {
        usual.assign(n, nan);
    }
    for (auto &seen : m_seen) {
        seen.assign(n, 0.0F);
    }
    m_unplaced.assign(n, 0);
    for (size_t k = 0; k < judged.size(); ++k) {
        m_score[k].assign(n, nan);
        m_deviation[k].assign(n, nan);
        m_inLine[k].assign(n, 0.0F);
    }
    m_jobsSignature = 1; // not that of the empty list: the first setJobs() builds the groups
    setJobs({});
}

void AnomalyDetector::setJobs(const std::vector<JobInfo> &jobs)
{
    uint64_t signature = 0;
    for (const auto &j : jobs) {
        if (j.endMs == 0) {
            signature = mix(mix(mix(signature, j.id), j.firstGpu), (uint64_t { j.gpuCount } << 32U) | j.gpus.size());
        }
    }
    if (signature == m_jobsSignature) {
        return;
    }
    m_jobsSignature = signature;
    m_jobs.clear();
    for (const auto &j : jobs) {
        if (j.endMs == 0) {
            m_jobs.push_back(j);
        }
    }
    rebuildGroups();
}

void AnomalyDetector::rebuildGroups()
{
    const uint32_t n = m_shape.gpuCount;
    // The job each GPU was judged with, to tell which GPUs changed job.
    std::vector<uint64_t> before(n, 0);
    for (uint32_t g = 0; g < n && !m_groupOf.empty(); ++g) {
        before[g] = m_groupOf[g] >= 0 ? m_groups[static_cast<size_t>(m_groupOf[g])].jobId : 0;
    }
    m_groups.clear();
    m_members.clear();
    m_members.reserve(n);
    m_groupOf.assign(n, -1);
    for (const auto &job : m_jobs) {
        Group group { job.id, static_cast<uint32_t>(m_members.size()), 0 };
        for (uint32_t g : job.gpuList()) {
            if (g < n && m_groupOf[g] < 0) {
                m_groupOf[g] = static_cast<int32_t>(m_groups.size());
                m_members.push_back(g);
                ++group.count;
            }
        }
        m_groups.push_back(group);
    }
    // The idle GPUs of each rack: racks are contiguous index ranges.
    for (const auto &rack : m_shape.racks) {
        if (rack.nodeCount == 0) {
            continue;
        }
        const uint32_t from = m_shape.nodes[rack.firstNode].firstGpu;
        const auto &last = m_shape.nodes[rack.firstNode + rack.nodeCount - 1];
        Group group { 0, static_cast<uint32_t>(m_members.size()), 0 };
        for (uint32_t g = from; g < last.firstGpu + last.gpuCount; ++g) {
            if (m_groupOf[g] < 0) {
                m_groupOf[g] = static_cast<int32_t>(m_groups.size());
                m_members.push_back(g);
                ++group.count;
            }
        }
        m_groups.push_back(group);
    }
    m_groupLoad.assign(m_groups.size(), nan);
    m_groupBusy.assign(m_groups.size(), 0);
    m_residualScale.assign(m_groups.size(), nan);
    m_slotScale.assign(m_groups.size(), nan);
    for (auto &last : m_lastResidualScale) {
        last.assign(m_groups.size(), nan);
    }
    // A GPU that joined or left a job heats up or cools down for a few minutes: not judged meanwhile, and where it
    // sits among its new peers (their average slot and silicon differ from the old ones') is learnt again from where
    // it sat. Not while it is odd: that would learn the fault in force as its normal.
    if (m_lastTime < 0) {
        return;
    }
    for (uint32_t g = 0; g < n; ++g) {
        const uint64_t now = m_groups[static_cast<size_t>(m_groupOf[g])].jobId;
        auto &st = m_state[g];
        if (now != before[g]) {
            st.settleLeft = static_cast<float>(m_options.settleSeconds);
            st.learning = st.anomalous == 0 && st.pendingSince < 0 ? 1 : 0;
            if (st.learning != 0) {
                // Its places with the old peers do not carry over (an idle rack's place is no place in a job's
                // checkpoints): each phase is learnt afresh, from its first visit.
                for (size_t i = 0; i < m_usual.size(); ++i) {
                    m_usual[i][g] = nan;
                    m_seen[i][g] = 0;
                }
                st.unconfirmedLeft = static_cast<float>(m_options.persistSeconds);
            }
        }
    }
}

float AnomalyDetector::peerMad(MetricId metric, uint32_t gpu) const
{
    for (size_t k = 0; k < judged.size(); ++k) {
        if (judged[k] == metric && !m_scale[k].empty()) {
            const int32_t group = m_groupOf[gpu];
            return group < 0 ? nan : m_scale[k][static_cast<size_t>(group)] / madToSigma;
        }
    }
    return nan;
}

void AnomalyDetector::judge(Frame *frame, double timeSeconds, std::vector<FleetEvent> *events)
{
    const double cpuBefore = threadCpuSeconds();
    assess(*frame, timeSeconds, &frame->planes[static_cast<size_t>(MetricId::Anomaly)], events);
    m_lastCost = threadCpuSeconds() - cpuBefore;
}

void AnomalyDetector::warm(const std::vector<std::shared_ptr<const Frame>> &past, const std::vector<JobInfo> &jobs)
{
    if (past.empty() || m_lastTime >= 0) {
        return;
    }
    // The newest frames first: within warmSeconds of the last, warmEvery apart, at most warmFrames of them.
    const double last = static_cast<double>(past.back()->sampleTimeMs) / 1000.0;
    std::vector<const Frame *> taken;
    double next = last;
    for (auto it = past.rbegin(); it != past.rend() && taken.size() < m_options.warmFrames; ++it) {
        const double t = static_cast<double>((*it)->sampleTimeMs) / 1000.0;
        if (t < last - m_options.warmSeconds) {
            break;
        }
        if (t <= next) {
            taken.push_back(it->get());
            next = t - m_options.warmEvery;
        }
    }
    std::vector<JobInfo> running;
    std::vector<FleetEvent> discarded;
    for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
        const int64_t ms = (*it)->sampleTimeMs;
        running.clear();
        for (const auto &j : jobs) {
            if (j.startMs <= ms && (j.endMs == 0 || j.endMs > ms)) {
                running.push_back(j);
                running.back().endMs = 0;
            }
        }
        setJobs(running);
        discarded.clear();
        assess(**it, static_cast<double>(ms) / 1000.0, nullptr, &discarded);
    }
    // What it learnt stays; what it would have raised does not: a GPU still odd is found again, live, with events.
    for (auto &st : m_state) {
        st.pendingSince = -1;
        st.quietSince = -1;
        st.pendingSamples = 0;
        st.missed = 0;
        st.anomalous = 0;
    }
}

void AnomalyDetector::assess(
    const Frame &frame, double timeSeconds, std::vector<float> *anomalyPlane, std::vector<FleetEvent> *events)
{
    const double dt = m_lastTime < 0 ? 0 : std::clamp(timeSeconds - m_lastTime, 0.0, 600.0);
    const auto alpha = static_cast<float>(1.0 - std::exp(-dt / m_options.historySeconds));
    // While settling, where it sits is followed closely (its temperature's own time constant).
    const auto fast = static_cast<float>(1.0 - std::exp(-dt / 30.0));
    if (m_lastTime < 0) {
        // Nothing is known of anyone yet: every GPU is judged against its peers while it learns its places, which
        // are confirmed as its own once it has been judged in line with them.
        for (auto &st : m_state) {
            st.unconfirmedLeft = static_cast<float>(m_options.persistSeconds);
        }
    }
    m_lastTime = timeSeconds;
    const auto &util = frame.plane(MetricId::GpuUtil);
    if (util.size() == m_shape.gpuCount) {
        updatePhases(util, dt);
    }
    std::fill(m_unplaced.begin(), m_unplaced.end(), 0);
    for (size_t k = 0; k < judged.size(); ++k) {
        const auto &plane = frame.plane(judged[k]);
        auto none = [&] {
            std::fill(m_score[k].begin(), m_score[k].end(), nan);
            std::fill(m_deviation[k].begin(), m_deviation[k].end(), nan);
        };
        if (judged[k] == MetricId::MemTemp && plane.size() == m_shape.gpuCount) {
            // Memory follows its GPU's die a minute late: judged is how far it runs above its own GPU.
            const auto &gpu = frame.plane(MetricId::GpuTemp);
            if (gpu.size() != m_shape.gpuCount) {
                none();
                continue;
            }
            m_memAboveGpu.resize(plane.size());
            for (size_t g = 0; g < plane.size(); ++g) {
                m_memAboveGpu[g] = plane[g] - gpu[g];
            }
            scoreMetric(k, m_memAboveGpu, alpha, fast, static_cast<float>(dt));
        } else if (plane.size() == m_shape.gpuCount) {
            scoreMetric(k, plane, alpha, fast, static_cast<float>(dt));
        } else {
            none();
        }
    }
    persist(anomalyPlane, timeSeconds, dt, events);
}

void AnomalyDetector::updatePhases(const std::vector<float> &util, double dt)
{
    const auto alpha = static_cast<float>(1.0 - std::exp(-dt / 60.0));
    for (size_t gi = 0; gi < m_groups.size(); ++gi) {
        const auto &group = m_groups[gi];
        if (group.jobId == 0) {
            continue; // idle GPUs are idle
        }
        const uint32_t stride = std::max<uint32_t>(1, group.count / m_options.peerSample);
        m_scratch.clear();
        for (uint32_t i = 0; i < group.count; i += stride) {
            const float v = util[m_members[group.first + i]];
            if (!std::isnan(v)) {
                m_scratch.push_back(v);
            }
        }
        if (m_scratch.empty()) {
            continue;
        }
        const float median = medianOf(m_scratch);
        float &load = m_groupLoad[gi];
        load = std::isnan(load) ? median : load + (median - load) * alpha;
        m_groupBusy[gi] = load >= 40.0F ? 1 : 0;
    }
}

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
