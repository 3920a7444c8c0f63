// SPDX-License-Identifier: Apache-2.0
#include "analytics/anomalydetector.h"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace fleetscope::backend {

namespace {

double threadCpuSeconds()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6U) + (h >> 2U);
    return h;
}
} // namespace

float AnomalyDetector::medianOf(std::vector<float> &values)
{
    auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), mid, values.end());
    return *mid;
}

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
    m_unseen = static_cast<uint32_t>(n);
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
    // it sat. Not while it is odd: that would learn the fault in force as its normal. Not where it was never seen
    // with data: the job it is in is where it is first seen.
    if (m_lastTime < 0) {
        return;
    }
    for (uint32_t g = 0; g < n; ++g) {
        const uint64_t now = m_groups[static_cast<size_t>(m_groupOf[g])].jobId;
        auto &st = m_state[g];
        if (now != before[g] && st.seenWithData != 0) {
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
    // Which GPUs have had a reading of their own (whatever their peers): a job they are in before that is where they
    // are first seen (rebuildGroups). Looked for until every GPU has had one.
    if (m_unseen > 0) {
        for (uint32_t g = 0; g < m_shape.gpuCount; ++g) {
            auto &st = m_state[g];
            for (size_t k = 0; k < judged.size() && st.seenWithData == 0; ++k) {
                const auto &plane = frame.plane(judged[k]);
                if (g < plane.size() && !std::isnan(plane[g])) {
                    st.seenWithData = 1;
                    --m_unseen;
                }
            }
        }
    }
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

} // namespace fleetscope::backend
