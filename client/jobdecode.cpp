// SPDX-License-Identifier: Apache-2.0
#include "client/jobdecode.h"

#include "client/answerdecode.h"
#include "client/wiretext.h"

#include "model/viewstate.h"

#include <QStringList>

#include <algorithm>
#include <cmath>
#include <utility>

namespace fleetscope {

JobPhase decodeJobPhase(int wire)
{
    switch (wire) {
    case pb::JOB_PHASE_COMPUTE:
        return JobPhase::Compute;
    case pb::JOB_PHASE_CHECKPOINT:
        return JobPhase::Checkpoint;
    case pb::JOB_PHASE_STALL:
        return JobPhase::Stall;
    case pb::JOB_PHASE_RESTART:
        return JobPhase::Restart;
    case pb::JOB_PHASE_ENDED:
        return JobPhase::Ended;
    default:
        return JobPhase::Unwatched;
    }
}

LossCause decodeLossCause(int wire)
{
    switch (wire) {
    case pb::LOSS_CAUSE_INCIDENT:
        return LossCause::Incident;
    case pb::LOSS_CAUSE_STRAGGLER:
        return LossCause::Straggler;
    case pb::LOSS_CAUSE_RESTART:
        return LossCause::Restart;
    case pb::LOSS_CAUSE_CHECKPOINT:
        return LossCause::Checkpoint;
    case pb::LOSS_CAUSE_STALL:
        return LossCause::Stall;
    default:
        return LossCause::Unspecified;
    }
}

std::optional<GoodputLoss> decodeLoss(const pb::GoodputLoss &l, const LossBounds &bounds, QString *problem)
{
    if (!(l.gpu_hours() >= 0 && l.gpu_hours() <= bounds.gpuHours)) {
        *problem = QStringLiteral("%1 GPU-hours lost, of at most %2").arg(l.gpu_hours()).arg(bounds.gpuHours);
    } else if (l.gpu() < -1 || l.gpu() >= static_cast<int64_t>(bounds.gpus)) {
        *problem = QStringLiteral("GPU %1 of a fleet of %2").arg(l.gpu()).arg(bounds.gpus);
    } else if (l.node() < -1 || (l.node() >= 0 && static_cast<uint64_t>(l.node()) >= bounds.nodes)) {
        *problem = QStringLiteral("node %1 of %2").arg(l.node()).arg(bounds.nodes);
    } else if (l.has_domain() && l.domain() >= bounds.domains) {
        *problem = QStringLiteral("domain %1 of %2").arg(l.domain()).arg(bounds.domains);
    }
    if (!problem->isEmpty()) {
        return std::nullopt;
    }
    GoodputLoss loss;
    loss.cause = decodeLossCause(l.cause());
    loss.gpuHours = l.gpu_hours();
    loss.incidentId = l.incident_id();
    loss.domain = l.has_domain() ? int64_t { l.domain() } : -1;
    loss.gpu = l.gpu();
    loss.node = l.node();
    loss.jobId = l.job_id();
    loss.jobs = l.jobs();
    loss.what = wireText(l.what(), maxJobReasonText);
    return loss;
}

namespace {
// The problems of one report: the first maxJobReportProblems said, the rest counted.
class Notes
{
public:
    explicit Notes(QStringList *problems)
        : m_problems(problems)
    { }
    ~Notes()
    {
        if (m_more > 0) {
            *m_problems << QStringLiteral("and %1 more problems like these").arg(m_more);
        }
    }
    Notes(const Notes &) = delete;
    Notes &operator=(const Notes &) = delete;

    void operator()(const QString &problem)
    {
        if (m_problems->size() < maxJobReportProblems) {
            *m_problems << problem;
        } else {
            ++m_more;
        }
    }

private:
    QStringList *m_problems;
    quint64 m_more = 0;
};

bool finiteAtLeast0(double v)
{
    return std::isfinite(v) && v >= 0;
}
bool share(double v)
{
    return v >= 0 && v <= 1; // false for NaN
}
bool percent(float v)
{
    return v >= 0 && v <= 100;
}

// The count of a list kept: at most bound, the rest said.
template <typename List> size_t bounded(const List &list, size_t bound, const char *kind, Notes &note)
{
    const auto size = static_cast<size_t>(list.size());
    if (size > bound) {
        note(QStringLiteral("dropped %1 %2 past the first %3").arg(size - bound).arg(QLatin1String(kind)).arg(bound));
    }
    return std::min(size, bound);
}

void decodeLosses(const pb::JobReport &a, size_t count, const Topology &topology, JobReport *r, Notes &note)
{
    const LossBounds bounds { topology.gpuCount, topology.nodes.size(), topology.domains.size(),
        r->gpuHours * (1 + 1e-9) + 1e-9 };
    r->losses.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        QString problem;
        if (auto loss = decodeLoss(a.losses(static_cast<int>(i)), bounds, &problem)) {
            r->losses.push_back(std::move(*loss));
        } else {
            note(QStringLiteral("dropped loss %1: %2").arg(i).arg(problem));
        }
    }
}

void decodeStragglers(const pb::JobReport &a, size_t count, JobReport *r, Notes &note)
{
    r->stragglers.reserve(count);
    const auto &gpus = r->job.gpus; // ascending
    for (size_t i = 0; i < count; ++i) {
        const auto &s = a.stragglers(static_cast<int>(i));
        QString why;
        if (!std::binary_search(gpus.begin(), gpus.end(), s.gpu())) {
            why = QStringLiteral("GPU %1 is not the job's").arg(s.gpu());
        } else if (std::any_of(r->stragglers.begin(), r->stragglers.end(),
                       [&s](const Straggler &k) { return k.gpu == s.gpu(); })) {
            why = QStringLiteral("GPU %1 is listed before").arg(s.gpu());
        } else if (!finiteAtLeast0(s.score()) || !std::isfinite(s.value()) || !std::isfinite(s.job_median())
            || !finiteAtLeast0(s.gpu_hours_lost()) || s.gpu_hours_lost() > r->gpuHours * (1 + 1e-9) + 1e-9) {
            why = QStringLiteral("score %1, value %2, median %3 or %4 GPU-hours is not a finite figure in range")
                      .arg(s.score())
                      .arg(s.value())
                      .arg(s.job_median())
                      .arg(s.gpu_hours_lost());
        } else if (!share(s.hold_back())) {
            why = QStringLiteral("its hold-back %1 is outside 0..1").arg(s.hold_back());
        } else if (!isSaneJobTime(s.since_ms())) {
            why = QStringLiteral("its time %1 is not sane").arg(s.since_ms());
        }
        if (!why.isEmpty()) {
            note(QStringLiteral("dropped straggler %1: %2").arg(i).arg(why));
            continue;
        }
        Straggler k;
        k.gpu = s.gpu();
        k.score = s.score();
        k.metricId = wireText(s.metric_id(), ViewState::maxIdLength);
        if (!ViewState::isIdentifier(k.metricId)) {
            k.metricId.clear(); // a view could not carry it
        }
        k.value = s.value();
        k.jobMedian = s.job_median();
        k.holdBack = s.hold_back();
        k.sinceMs = s.since_ms();
        k.gpuHoursLost = s.gpu_hours_lost();
        k.reason = wireText(s.reason(), maxJobReasonText);
        r->stragglers.push_back(std::move(k));
    }
}

void decodePhases(const pb::JobReport &a, size_t count, JobReport *r, Notes &note)
{
    r->phases.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const auto &p = a.phases(static_cast<int>(i));
        QString why;
        if (!isSaneJobTime(p.from_ms()) || !isSaneJobTime(p.to_ms()) || p.to_ms() < p.from_ms()) {
            why = QStringLiteral("%1 to %2 is no span of sane times").arg(p.from_ms()).arg(p.to_ms());
        } else if (!r->phases.empty() && p.from_ms() < r->phases.back().toMs) {
            why = QStringLiteral("it starts at %1, before the span before it ends").arg(p.from_ms());
        }
        if (!why.isEmpty()) {
            note(QStringLiteral("dropped phase span %1: %2").arg(i).arg(why));
            continue;
        }
        r->phases.push_back({ decodeJobPhase(p.phase()), p.from_ms(), p.to_ms(), p.incident_id(),
            wireText(p.why(), maxJobReasonText) });
    }
}

void decodeBand(const pb::JobReport &a, size_t count, size_t jobGpus, JobReport *r, Notes &note)
{
    r->band.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const auto &b = a.band(static_cast<int>(i));
        QString why;
        if (!isSaneJobTime(b.time_ms()) || (!r->band.empty() && b.time_ms() <= r->band.back().timeMs)) {
            why = QStringLiteral("its time %1 is not sane or not after the point before").arg(b.time_ms());
        } else if (!percent(b.p10()) || !percent(b.median()) || !percent(b.p90()) || b.p10() > b.median()
            || b.median() > b.p90()) {
            why = QStringLiteral("%1 / %2 / %3 % are no percentiles of utilisation")
                      .arg(b.p10())
                      .arg(b.median())
                      .arg(b.p90());
        } else if (b.reporting() > jobGpus) {
            why = QStringLiteral("%1 GPUs reporting in a job of %2").arg(b.reporting()).arg(jobGpus);
        }
        if (!why.isEmpty()) {
            note(QStringLiteral("dropped band point %1: %2").arg(i).arg(why));
            continue;
        }
        r->band.push_back({ b.time_ms(), b.p10(), b.median(), b.p90(), b.reporting() });
    }
}

// The figures of the whole: a bad one becomes 0, said.
void decodeFigures(const pb::JobReport &a, uint32_t gpuCount, JobReport *r, Notes &note)
{
    const double watchedHours = static_cast<double>(r->asOfMs - r->watchedFromMs) / 3.6e6;
    // Every GPU of the fleet in the job for the whole time watched is the most there can be.
    const double most = static_cast<double>(gpuCount) * watchedHours * (1 + 1e-9) + 1e-9;
    if (finiteAtLeast0(a.gpu_hours()) && a.gpu_hours() <= most && finiteAtLeast0(a.productive_gpu_hours())
        && a.productive_gpu_hours() <= a.gpu_hours() * (1 + 1e-9) + 1e-9) {
        r->gpuHours = a.gpu_hours();
        r->productiveGpuHours = a.productive_gpu_hours();
    } else {
        note(QStringLiteral("dropped the GPU-hours: %1 productive of %2, of at most %3 over the time watched")
                 .arg(a.productive_gpu_hours())
                 .arg(a.gpu_hours())
                 .arg(most));
    }
    const auto figure = [&note](double value, bool good, const char *name) {
        if (good) {
            return value;
        }
        note(QStringLiteral("dropped the %1 %2: out of range").arg(QLatin1String(name)).arg(value));
        return 0.0;
    };
    r->goodput = figure(a.goodput(), share(a.goodput()), "goodput");
    r->allReduceShare = figure(a.all_reduce_share(), share(a.all_reduce_share()), "all-reduce share");
    r->stepSeconds = figure(a.step_seconds(), finiteAtLeast0(a.step_seconds()), "step");
    r->checkpointLimitSeconds
        = figure(a.checkpoint_limit_seconds(), finiteAtLeast0(a.checkpoint_limit_seconds()), "checkpoint limit");
    r->restarts = a.restarts();
    r->phase = decodeJobPhase(a.phase());
}
} // namespace

std::shared_ptr<JobReport> decodeJobReport(const pb::JobReport &a, const Topology &topology, QString *failure)
{
    auto r = std::make_shared<JobReport>();
    r->topologyGeneration = topology.generation;
    QString problem;
    std::optional<Job> job = decodeJob(a.job(), topology.gpuCount, &problem);
    if (!job) {
        *failure
            = QStringLiteral("job %1 (%2) %3").arg(a.job().id()).arg(wireText(a.job().name(), maxJobText), problem);
        return nullptr;
    }
    if (!isSaneJobTime(a.as_of_ms()) || !isSaneJobTime(a.watched_from_ms()) || a.as_of_ms() < a.watched_from_ms()) {
        *failure = QStringLiteral("job %1's account runs from %2 to %3: no span of sane times")
                       .arg(job->id)
                       .arg(a.watched_from_ms())
                       .arg(a.as_of_ms());
        return nullptr;
    }
    // The job's own times too (0 = none for the checkpoint and the end): the timeline subtracts and rounds them.
    if (!isSaneJobTime(job->startTimeMs) || !isSaneJobTime(job->endTimeMs) || !isSaneJobTime(job->lastCheckpointMs)) {
        *failure = QStringLiteral("job %1 starts at %2, ends at %3, checkpointed last at %4: not all sane times")
                       .arg(job->id)
                       .arg(job->startTimeMs)
                       .arg(job->endTimeMs)
                       .arg(job->lastCheckpointMs);
        return nullptr;
    }
    r->job = std::move(*job);
    r->asOfMs = a.as_of_ms();
    r->watchedFromMs = a.watched_from_ms();
    {
        Notes note(&r->problems);
        if (!problem.isEmpty()) {
            note(QStringLiteral("job %1 %2").arg(r->job.id).arg(problem));
        }
        // The lists cut at their bounds are said first: thousands of parts dropped one by one say less.
        const size_t losses = bounded(a.losses(), JobReport::maxLosses, "losses", note);
        const size_t stragglers = bounded(a.stragglers(), JobReport::maxStragglers, "stragglers", note);
        const size_t phases = bounded(a.phases(), JobReport::maxPhaseSpans, "phase spans", note);
        const size_t band = bounded(a.band(), JobReport::maxBandPoints, "band points", note);
        decodeFigures(a, topology.gpuCount, r.get(), note);
        decodeLosses(a, losses, topology, r.get(), note);
        decodeStragglers(a, stragglers, r.get(), note);
        decodePhases(a, phases, r.get(), note);
        // The band is the job's GPUs' percentiles: no more of them report than the job has.
        decodeBand(a, band, r->job.gpus.size(), r.get(), note);
    }
    return r;
}

QString jobAnswerMismatch(const pb::JobReport &answer, uint64_t id, const QString &name)
{
    if (id != 0) {
        return answer.job().id() == id
            ? QString()
            : QStringLiteral("the backend answered for job %1, not job %2").arg(answer.job().id()).arg(id);
    }
    // Compared as the wire carries it: a name cut or cleaned for display could match one it is not.
    if (answer.job().name() != name.toStdString()) {
        return QStringLiteral("the backend answered for job %1 named \"%2\", not \"%3\"")
            .arg(answer.job().id())
            .arg(wireText(answer.job().name(), maxJobText), name.left(maxJobText));
    }
    return {};
}

} // namespace fleetscope
