// SPDX-License-Identifier: Apache-2.0
#include "analytics/jobphases.h"

#include "analytics/jobledger.h"
#include "common/health.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetscope::backend {

namespace {

constexpr double msPerHour = 3600.0 * 1000.0;
// A job's own losses by key: more than this (stragglers come and go) and the smallest are summed into one.
constexpr size_t maxHeldLosses = 256;

float at(const std::vector<float> &plane, uint32_t gpu)
{
    return gpu < plane.size() ? plane[gpu] : std::numeric_limits<float>::quiet_NaN();
}

} // namespace

void capLosses(std::vector<GoodputLoss> *losses, size_t maxLosses)
{
    std::sort(losses->begin(), losses->end(),
        [](const GoodputLoss &a, const GoodputLoss &b) { return a.gpuHours > b.gpuHours; });
    if (losses->size() <= maxLosses) {
        return;
    }
    GoodputLoss rest;
    rest.jobId = (*losses)[0].jobId;
    rest.what = "the rest";
    for (size_t i = maxLosses - 1; i < losses->size(); ++i) {
        rest.gpuHours += (*losses)[i].gpuHours;
    }
    losses->resize(maxLosses - 1);
    losses->push_back(std::move(rest));
}

JobTrack::JobTrack(const JobInfo &info, std::vector<uint32_t> gpus, int64_t watchedFromMs)
    : m_info(info)
    , m_gpus(std::move(gpus))
    , m_watchedFromMs(watchedFromMs)
    , m_asOfMs(watchedFromMs)
{
    m_stragglers.resize(m_gpus.size());
    m_band.reserve(JobReport::maxBandPoints);
}

bool JobTrack::sameGpus(const JobInfo &info, uint32_t fleetGpus) const
{
    if (!info.gpus.empty()) {
        size_t i = 0;
        for (const uint32_t g : info.gpus) {
            if (g >= fleetGpus) {
                continue;
            }
            if (i >= m_gpus.size() || m_gpus[i] != g) {
                return false;
            }
            ++i;
        }
        return i == m_gpus.size();
    }
    const uint64_t end = std::min<uint64_t>(static_cast<uint64_t>(info.firstGpu) + info.gpuCount, fleetGpus);
    const uint64_t count = end > info.firstGpu ? end - info.firstGpu : 0;
    return count == m_gpus.size() && (m_gpus.empty() || m_gpus.front() == info.firstGpu);
}

void JobTrack::setGpus(std::vector<uint32_t> gpus)
{
    m_stragglers.remap(m_gpus, gpus);
    m_gpus = std::move(gpus);
}

void JobTrack::setInfo(const JobInfo &info)
{
    m_info = info;
}

bool JobTrack::scan(const Frame &frame, const Context &ctx, Scan *out) const
{
    const auto &util = frame.plane(MetricId::GpuUtil);
    if (util.empty()) {
        return false; // the producer says nothing of utilisation: this frame tells nothing
    }
    const auto &rail = frame.plane(MetricId::RailLinkState);
    std::vector<float> &values = ctx.scratch;
    values.clear();
    Scan s;
    for (const uint32_t g : m_gpus) {
        const auto state = g < frame.health.size() ? health::stateOf(frame.health[g]) : health::NoData;
        const float u = at(util, g);
        if (state == health::Offline || !std::isfinite(u)) {
            if (s.offline++ == 0) {
                s.offlineGpu = g;
            }
            s.saidOffline += state == health::Offline ? 1 : 0;
            if (ctx.names.nodeOf(g) == ctx.names.nodeOf(static_cast<uint32_t>(s.offlineGpu))) {
                ++s.offlineOnNode;
            }
            continue;
        }
        ++s.reporting;
        values.push_back(u);
        if (state == health::Critical && s.impaired++ == 0) {
            s.impairedGpu = g;
        }
        if (at(rail, g) == 0.0F && s.cut++ == 0) {
            s.cutGpu = g;
        }
    }
    if (!values.empty()) {
        const auto n = values.size();
        const auto mid = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
        std::nth_element(values.begin(), mid, values.end());
        s.median = *mid;
        const auto low = values.begin() + static_cast<std::ptrdiff_t>((n - 1) / 10);
        std::nth_element(values.begin(), low, mid);
        s.p10 = *low;
        const auto high = values.begin() + static_cast<std::ptrdiff_t>((n - 1) * 9 / 10);
        if (high > mid) {
            std::nth_element(mid + 1, high, values.end());
        }
        s.p90 = high > mid ? *high : s.median;
    }
    *out = s;
    return true;
}

JobTrack::Subject JobTrack::subjectOf(const Scan &s, const FleetNames &names) const
{
    Subject subject;
    if (s.offline > 0) {
        const auto g = static_cast<uint32_t>(s.offlineGpu);
        subject.gpu = g;
        subject.node = names.nodeOf(g);
        subject.why = s.offlineOnNode > 1 ? fmt::format("{} down", names.nodeName(subject.node))
                                          : fmt::format("{} offline", names.gpuName(g));
    } else if (s.impaired > 0) {
        const auto g = static_cast<uint32_t>(s.impairedGpu);
        subject.gpu = g;
        subject.node = names.nodeOf(g);
        subject.why = fmt::format("{} impaired", names.gpuName(g));
    } else if (s.cut > 0) {
        const auto g = static_cast<uint32_t>(s.cutGpu);
        subject.gpu = g;
        subject.node = names.nodeOf(g);
        subject.why = fmt::format("{} rail link down", names.gpuName(g));
    }
    return subject;
}

void JobTrack::account(const Frame &frame, const Context &ctx)
{
    const int64_t t = frame.sampleTimeMs;
    if (m_ended || (m_started && t <= m_asOfMs)) {
        return;
    }
    Scan s;
    if (!scan(frame, ctx, &s)) {
        return;
    }
    int64_t from = m_started ? m_asOfMs : std::min(m_watchedFromMs, t);
    m_started = true;
    addBand(t, s);
    m_silent = s.reporting == 0 && s.saidOffline == 0;
    if (m_silent) {
        notWatched(from, t, ctx);
        m_away = false;
        m_asOfMs = t;
        return;
    }
    if (m_away) {
        chargeAway(from, t, ctx);
        from = t;
    }
    // A gap far beyond the job's usual frame interval (an upstream down for hours) is not what this frame shows:
    // a bounded span before it is charged to its phase, the rest to nothing known, as a silent frame's.
    const int64_t bound = std::min(static_cast<int64_t>(ctx.checkpointLimitSeconds * 1000.0),
        m_usualMs > 0 ? std::max(2 * m_usualMs, minGapBoundMs) : std::numeric_limits<int64_t>::max());
    int64_t dtMs = t - from;
    m_usualMs = dtMs;
    if (dtMs > bound) {
        notWatched(from, t - bound, ctx);
        from = t - bound;
        dtMs = bound;
    }

    const bool idle = s.reporting == 0 || s.median < idleBelow;
    const bool busy = !idle && s.median >= computeFrom;
    const bool fault = s.offline + s.impaired + s.cut > 0;
    JobPhase phase = JobPhase::Compute;
    if (idle) {
        if (fault && m_phase != JobPhase::Stall) {
            // Held by a fault: a stall from here; a checkpoint under way until now stays one.
            if (m_phase == JobPhase::Checkpoint) {
                settleIdle(LossCause::Checkpoint, nullptr, ctx);
            }
            m_stallFromMs = from;
            m_stallLostGpus = false;
            m_stall = subjectOf(s, ctx.names);
            phase = JobPhase::Stall;
        } else if (m_phase == JobPhase::Stall) {
            if (m_stall.gpu < 0 && fault) {
                m_stall = subjectOf(s, ctx.names);
            }
            phase = JobPhase::Stall;
        } else {
            if (m_phase != JobPhase::Checkpoint) {
                m_idleFromMs = from;
            }
            phase = JobPhase::Checkpoint;
            if (static_cast<double>(t - m_idleFromMs) > ctx.checkpointLimitSeconds * 1000.0) {
                idleBecomesStall(ctx);
                phase = JobPhase::Stall;
            }
        }
    } else {
        if (m_phase == JobPhase::Checkpoint) {
            settleIdle(LossCause::Checkpoint, nullptr, ctx);
            m_checkpointSeen = true;
            m_markMs = from;
            m_markProductive = m_productive;
        }
        if (m_phase == JobPhase::Stall && m_stallLostGpus) {
            restart(from, ctx);
            phase = busy ? JobPhase::Compute : JobPhase::Restart;
        } else if (m_phase == JobPhase::Restart) {
            phase = busy ? JobPhase::Compute : JobPhase::Restart;
        }
    }
    if (phase == JobPhase::Stall && s.offline > 0) {
        m_stallLostGpus = true;
    }

    if (phase == JobPhase::Compute) {
        countDip(!busy, t, dtMs);
        if (busy && m_stragglers.due(t)) {
            m_stragglers.observe(frame, m_gpus, t, &ctx.scratch);
        }
    } else {
        m_inDip = false;
        m_lastDipStartMs = 0;
    }

    // The interval since the previous frame, charged to what this frame says.
    const double gpuHours = static_cast<double>(m_gpus.size()) * static_cast<double>(dtMs) / msPerHour;
    m_gpuHours += gpuHours;
    double productive = 0;
    uint64_t incidentId = 0;
    std::string why;
    const HeldIncident *incident = nullptr;
    if (phase == JobPhase::Stall) {
        incident = incidentCovering(ctx.incidents, m_info.id, m_gpus);
    } else if (phase == JobPhase::Compute && m_stragglers.slowest() >= 0) {
        // A straggler's pace is an incident's only when the incident covers the straggler itself (not merely the
        // job: a job id names none, 0): otherwise the straggler is credited and blamed alike.
        const std::vector<uint32_t> slowest { m_gpus[static_cast<size_t>(m_stragglers.slowest())] };
        incident = incidentCovering(ctx.incidents, 0, slowest);
    }
    switch (phase) {
    case JobPhase::Compute: {
        const double pace = m_stragglers.paceLost();
        productive = gpuHours * (1.0 - pace);
        double lost = gpuHours * pace;
        m_stragglers.charge(lost);
        // A straggler just found: its time slow before, counted productive then, is lost too.
        const double late = std::min(m_stragglers.takeFoundLate(), std::max(0.0, m_productive + productive));
        productive -= late;
        lost += late;
        if (lost > 0 && m_stragglers.slowest() >= 0) {
            if (incident != nullptr) {
                addLoss(incidentLoss(*incident), lost, from, t, ctx);
            } else {
                const auto gpu = m_gpus[static_cast<size_t>(m_stragglers.slowest())];
                GoodputLoss key;
                key.cause = LossCause::Straggler;
                key.gpu = gpu;
                key.what = fmt::format("{} {:.0f}% slow", ctx.names.gpuName(gpu), pace * 100);
                addLoss(key, lost, from, t, ctx);
            }
        }
        break;
    }
    case JobPhase::Checkpoint: {
        m_pendingIdle += gpuHours;
        const int64_t hour = t - t % JobLedger::bucketMs;
        if (m_pendingByHour.empty() || m_pendingByHour.back().first != hour) {
            m_pendingByHour.emplace_back(hour, 0.0);
        }
        m_pendingByHour.back().second += gpuHours;
        break;
    }
    case JobPhase::Stall: {
        if (incident != nullptr) {
            addLoss(incidentLoss(*incident), gpuHours, from, t, ctx);
            m_stallIncident = incident->incident->id;
            m_stallIncidentWhy = incident->headline;
            incidentId = m_stallIncident;
            why = m_stallIncidentWhy;
        } else {
            GoodputLoss key;
            key.cause = LossCause::Stall;
            key.gpu = m_stall.gpu;
            key.node = m_stall.node;
            key.what = m_stall.why;
            addLoss(key, gpuHours, from, t, ctx);
            why = m_stall.why;
        }
        break;
    }
    case JobPhase::Restart: {
        GoodputLoss key;
        key.cause = LossCause::Restart;
        key.gpu = m_stall.gpu;
        key.node = m_stall.node;
        key.what = "restart after " + m_stall.why;
        addLoss(key, gpuHours, from, t, ctx);
        why = key.what;
        break;
    }
    default:
        break;
    }
    m_productive += productive;
    ctx.ledger.post(from, t, m_info.id, gpuHours, productive);
    addSpan(phase, from, t, incidentId, why);
    m_phase = phase;
    m_asOfMs = t;
}

void JobTrack::notWatched(int64_t fromMs, int64_t toMs, const Context &ctx)
{
    // No GPU of it says anything, not even that it is offline, or no frame came: the telemetry is missing, not the
    // job. Its time is lost to nothing known (Unspecified), and what it was doing carries on when the telemetry
    // returns.
    const double gpuHours = static_cast<double>(m_gpus.size()) * static_cast<double>(toMs - fromMs) / msPerHour;
    m_gpuHours += gpuHours;
    GoodputLoss key;
    key.what = "no telemetry";
    addLoss(key, gpuHours, fromMs, toMs, ctx);
    ctx.ledger.post(fromMs, toMs, m_info.id, gpuHours, 0);
    addSpan(JobPhase::Unwatched, fromMs, toMs, 0, key.what);
}

void JobTrack::countDip(bool dip, int64_t timeMs, int64_t dtMs)
{
    // Only frames close together see an all-reduce. Further apart, a frame at dip level is a step sampled in its dip
    // (a 30 s step sampled each minute read as a 300 s step with 13.6% in all-reduces): it counts as compute, not as
    // a dip, its time is not in the share, and the periods between dips start over.
    if (dtMs > finestDipFrameMs) {
        m_inDip = false;
        m_lastDipStartMs = 0;
        return;
    }
    m_computeMs += dtMs;
    if (!dip) {
        m_inDip = false;
        return;
    }
    if (!m_inDip) {
        m_inDip = true;
        if (m_lastDipStartMs > 0) {
            m_periods[m_periodCount % m_periods.size()] = static_cast<float>(timeMs - m_lastDipStartMs) / 1000.0F;
            ++m_periodCount;
        }
        m_lastDipStartMs = timeMs;
    }
    if (timeMs - m_lastDipStartMs <= longestDipMs) {
        m_dipMs += dtMs;
    }
}

double JobTrack::stepSeconds() const
{
    const size_t n = std::min<size_t>(m_periodCount, m_periods.size());
    if (n == 0) {
        return 0;
    }
    std::array<float, 32> periods = m_periods;
    std::nth_element(periods.begin(), periods.begin() + static_cast<std::ptrdiff_t>(n / 2),
        periods.begin() + static_cast<std::ptrdiff_t>(n));
    return periods[n / 2];
}

GoodputLoss JobTrack::incidentLoss(const HeldIncident &held) const
{
    GoodputLoss key;
    key.cause = LossCause::Incident;
    key.incidentId = held.incident->id;
    key.domain = held.incident->domain;
    key.what = fmt::format("incident {}: {}", held.incident->id, held.headline);
    return key;
}

void JobTrack::addLoss(const GoodputLoss &key, double gpuHours, int64_t fromMs, int64_t toMs, const Context &ctx)
{
    if (gpuHours == 0) {
        return;
    }
    ctx.ledger.postLoss(fromMs, toMs, m_info.id, key, gpuHours);
    const LossKey k = LossKey::of(key);
    for (GoodputLoss &loss : m_losses) {
        if (LossKey::of(loss) == k) {
            loss.gpuHours += gpuHours;
            return;
        }
    }
    GoodputLoss loss = key;
    loss.gpuHours = gpuHours;
    loss.jobId = m_info.id;
    m_losses.push_back(std::move(loss));
    if (m_losses.size() > maxHeldLosses) {
        capLosses(&m_losses, maxHeldLosses / 2);
    }
}

void JobTrack::settleIdle(LossCause cause, const HeldIncident *incident, const Context &ctx)
{
    GoodputLoss key = incident != nullptr ? incidentLoss(*incident) : GoodputLoss {};
    if (incident == nullptr) {
        key.cause = cause;
        key.what = cause == LossCause::Checkpoint ? "checkpoints" : m_stall.why;
        if (cause == LossCause::Stall) {
            key.gpu = m_stall.gpu;
            key.node = m_stall.node;
        }
    }
    for (const auto &[hourMs, gpuHours] : m_pendingByHour) {
        addLoss(key, gpuHours, hourMs, hourMs, ctx);
    }
    m_pendingByHour.clear();
    m_pendingIdle = 0;
}

void JobTrack::idleBecomesStall(const Context &ctx)
{
    // Idle together past the checkpoint limit: the whole idle span was a stall, from its start.
    m_stallFromMs = m_idleFromMs;
    m_stallLostGpus = false;
    m_stall = Subject {};
    m_stall.why = fmt::format("idle past the checkpoint limit ({:.0f} s)", ctx.checkpointLimitSeconds);
    const HeldIncident *incident = incidentCovering(ctx.incidents, m_info.id, m_gpus);
    settleIdle(LossCause::Stall, incident, ctx);
    if (!m_spans.empty() && m_spans.back().phase == JobPhase::Checkpoint) {
        JobPhaseSpan &span = m_spans.back();
        span.phase = JobPhase::Stall;
        span.incidentId = incident != nullptr ? incident->incident->id : 0;
        span.why = incident != nullptr ? incident->headline : m_stall.why;
        if (m_spans.size() > 1) {
            JobPhaseSpan &before = m_spans[m_spans.size() - 2];
            if (before.phase == span.phase && before.incidentId == span.incidentId && before.why == span.why) {
                before.toMs = span.toMs;
                m_spans.pop_back();
            }
        }
    }
}

void JobTrack::restart(int64_t timeMs, const Context &ctx)
{
    // The work since the last checkpoint before the stall is redone: GPUs x (stall start - that checkpoint's end),
    // at most what was counted productive since.
    const int64_t reference
        = m_checkpointSeen ? m_markMs : std::max({ m_info.lastCheckpointMs, m_info.startMs, m_watchedFromMs });
    const double window = static_cast<double>(std::max<int64_t>(0, m_stallFromMs - reference));
    const double rework = std::clamp(
        static_cast<double>(m_gpus.size()) * window / msPerHour, 0.0, std::max(0.0, m_productive - m_markProductive));
    ++m_restarts;
    if (rework > 0) {
        m_productive -= rework;
        // Booked back over the hours the lost work was done in, not the restart's: an hour's rework is then at most
        // its GPU-hours, and a day's range never shows more lost to restarts than the jobs had.
        ctx.ledger.post(reference, m_stallFromMs, m_info.id, 0, -rework);
        GoodputLoss key;
        key.cause = LossCause::Restart;
        key.gpu = m_stall.gpu;
        key.node = m_stall.node;
        key.what = "restart after " + m_stall.why;
        addLoss(key, rework, reference, m_stallFromMs, ctx);
    }
    // A restart resumes from a checkpoint: work lost in a later stall is counted from here.
    m_checkpointSeen = true;
    m_markMs = timeMs;
    m_markProductive = m_productive;
}

void JobTrack::end(int64_t endMs, const Context &ctx)
{
    if (m_ended) {
        return;
    }
    if (m_phase == JobPhase::Checkpoint) {
        settleIdle(LossCause::Checkpoint, nullptr, ctx);
    }
    m_ended = true;
    m_endMs = endMs;
    m_endListed = m_info.endMs != 0;
    // A job the producer stopped listing ended when last seen: its report says so as ListJobs would.
    if (m_info.endMs == 0) {
        m_info.endMs = endMs;
    }
    m_phase = JobPhase::Ended;
}

void JobTrack::reopen()
{
    m_ended = false;
    m_endMs = 0;
    m_info.endMs = 0;
    m_away = true;
    m_phase = JobPhase::Stall;
    m_stallFromMs = m_asOfMs;
    // Listed with an end, it was stopped and started again (a Slurm requeue): a restart from its checkpoint. Missing
    // from a poll or two, it ran on: a stall of the time it was not listed only, resumed without a restart unless its
    // frames show GPUs lost.
    m_stallLostGpus = m_endListed;
    m_stall = Subject {};
    m_stall.why = m_endListed ? "ended and listed again (requeued)" : "not listed";
    m_stallIncident = 0;
}

void JobTrack::chargeAway(int64_t fromMs, int64_t toMs, const Context &ctx)
{
    m_away = false;
    m_usualMs = 0; // its frames' interval is to be learnt again
    const double gpuHours = static_cast<double>(m_gpus.size()) * static_cast<double>(toMs - fromMs) / msPerHour;
    m_gpuHours += gpuHours;
    GoodputLoss key;
    key.cause = LossCause::Stall;
    key.what = m_stall.why;
    addLoss(key, gpuHours, fromMs, toMs, ctx);
    ctx.ledger.post(fromMs, toMs, m_info.id, gpuHours, 0);
    addSpan(JobPhase::Stall, fromMs, toMs, 0, m_stall.why);
}

} // namespace fleetscope::backend
