// SPDX-License-Identifier: Apache-2.0
#include "client/answerdecode.h"

#include "client/jobdecode.h"
#include "client/wiretext.h"

#include "model/viewstate.h"

#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

namespace fleetscope {

namespace {
QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}
} // namespace

MetricInfo decodeMetricInfo(const pb::MetricInfo &info)
{
    MetricInfo m;
    m.id = qs(info.id());
    m.name = qs(info.name());
    m.unit = qs(info.unit());
    m.dcgmField = qs(info.dcgm_field());
    m.colourMap = qs(info.colour_map());
    m.rangeMin = info.range_min();
    m.rangeMax = info.range_max() > info.range_min() ? info.range_max() : info.range_min() + 1;
    m.isRate = info.kind() == pb::METRIC_KIND_RATE;
    return m;
}

std::vector<MetricInfo> decodeMetricCatalogue(const pb::ListMetricsResponse &response, QStringList *problems)
{
    std::vector<MetricInfo> metrics;
    if (response.metrics_size() > maxCatalogueMetrics) {
        *problems << QStringLiteral("the metric catalogue lists %1 metrics: the first %2 kept")
                         .arg(response.metrics_size())
                         .arg(maxCatalogueMetrics);
    }
    const int count = std::min(response.metrics_size(), maxCatalogueMetrics);
    metrics.reserve(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
        const auto &info = response.metrics(i);
        const QString id = info.id().size() <= static_cast<size_t>(ViewState::maxIdLength) ? qs(info.id()) : QString();
        if (!ViewState::isIdentifier(id)) {
            *problems << QStringLiteral("metric %1 dropped: its id %2 is not letters, digits, '_', '-' and '.' (at "
                                        "most %3)")
                             .arg(i)
                             .arg(quotedWireText(info.id()))
                             .arg(ViewState::maxIdLength);
            continue;
        }
        if (std::any_of(metrics.begin(), metrics.end(), [&id](const MetricInfo &m) { return m.id == id; })) {
            *problems << QStringLiteral("metric %1 dropped: %2 is listed before it").arg(i).arg(id);
            continue;
        }
        MetricInfo m = decodeMetricInfo(info); // an empty or reversed range becomes min .. min + 1
        // The colour scale divides by the span: it must be finite and more than nothing in single precision.
        if (!std::isfinite(m.rangeMin) || !std::isfinite(m.rangeMax) || !(m.rangeMax > m.rangeMin)
            || !std::isfinite(m.rangeMax - m.rangeMin)) {
            *problems << QStringLiteral("metric %1 dropped: its range %2 .. %3 is no finite span")
                             .arg(id)
                             .arg(info.range_min())
                             .arg(info.range_max());
            continue;
        }
        m.id = id;
        m.name = wireText(info.name(), maxMetricNameLength);
        if (m.name.isEmpty()) {
            m.name = id;
        }
        m.unit = wireText(info.unit(), maxMetricUnitLength);
        m.dcgmField = wireText(info.dcgm_field(), maxMetricFieldLength);
        if (!m.colourMap.isEmpty() && !ViewState::isIdentifier(m.colourMap)) {
            m.colourMap.clear();
        }
        metrics.push_back(std::move(m));
    }
    return metrics;
}

namespace {
// A job's GPUs as the wire gives them, checked without expanding anything: inside the fleet, ascending, none twice;
// runs not empty, each starting past the end of the one before. Returns how many GPUs they are (at most the fleet),
// or sets *problem.
uint64_t claimedGpus(const pb::Job &j, uint32_t n, QString *problem)
{
    // Its times too: views subtract them from the clock (how long a version has run, say), which a time near the int64
    // range's lower end would overflow.
    if (j.start_time_ms() < 0 || j.last_checkpoint_ms() < 0 || j.end_time_ms() < 0
        || (j.end_time_ms() != 0 && j.end_time_ms() < j.start_time_ms())) {
        *problem = QStringLiteral("has a time before the epoch, or ends before it starts");
        return 0;
    }
    if (!j.gpus().empty() && !j.gpu_runs().empty()) {
        *problem = QStringLiteral("lists its GPUs both one by one and as runs");
        return 0;
    }
    uint64_t next = 0; // the least GPU the next one may be
    uint64_t count = 0;
    for (const auto &run : j.gpu_runs()) {
        if (run.count() == 0 || run.first() >= n || run.count() > n - run.first()) {
            *problem = QStringLiteral("names GPUs %1 to %2 of a fleet of %3")
                           .arg(run.first())
                           .arg(uint64_t { run.first() } + run.count())
                           .arg(n);
            return 0;
        }
        if (run.first() < next) {
            *problem = QStringLiteral("lists its GPUs out of order or twice");
            return 0;
        }
        next = uint64_t { run.first() } + run.count();
        count += run.count();
    }
    for (const uint32_t gpu : j.gpus()) {
        if (gpu >= n) {
            *problem = QStringLiteral("names GPU %1 of a fleet of %2").arg(gpu).arg(n);
            return 0;
        }
        if (gpu < next) {
            *problem = QStringLiteral("lists its GPUs out of order or twice");
            return 0;
        }
        next = uint64_t { gpu } + 1;
        ++count;
    }
    return count;
}

// A job's fields but its GPUs. Its account in brief when it holds together (a goodput in 0..1, no more stragglers
// than GPUs), else none (counted in *badAccounts); a phase this console does not know is Unwatched.
Job jobFields(const pb::Job &j, size_t *badAccounts)
{
    Job job;
    job.id = j.id();
    job.name = wireText(j.name(), maxJobText);
    job.owner = wireText(j.owner(), maxJobText);
    job.startTimeMs = j.start_time_ms();
    job.lastCheckpointMs = j.last_checkpoint_ms();
    job.endTimeMs = j.end_time_ms();
    const uint64_t gpus = static_cast<uint64_t>(j.gpus_size())
        + std::accumulate(j.gpu_runs().begin(), j.gpu_runs().end(), uint64_t { 0 },
            [](uint64_t sum, const pb::GpuRun &run) { return sum + run.count(); });
    if ((j.has_goodput() && !(j.goodput() >= 0 && j.goodput() <= 1)) || j.straggler_count() > gpus) {
        ++*badAccounts;
        return job;
    }
    job.goodput = j.has_goodput() ? j.goodput() : -1;
    job.phase = decodeJobPhase(j.phase());
    job.stragglerCount = j.straggler_count();
    return job;
}

// Calls f(gpu) for each GPU of a job whose GPUs claimedGpus accepted, in order, until f returns false.
template <typename F> void forEachGpu(const pb::Job &j, F f)
{
    for (const auto &run : j.gpu_runs()) {
        for (uint32_t g = run.first(); g < run.first() + run.count(); ++g) {
            if (!f(g)) {
                return;
            }
        }
    }
    for (const uint32_t gpu : j.gpus()) {
        if (!f(gpu)) {
            return;
        }
    }
}
} // namespace

std::optional<Job> decodeJob(const pb::Job &j, uint32_t gpuCount, QString *problem)
{
    const uint64_t gpus = claimedGpus(j, gpuCount, problem);
    if (!problem->isEmpty()) {
        return std::nullopt;
    }
    size_t badAccounts = 0;
    Job job = jobFields(j, &badAccounts);
    if (badAccounts > 0) {
        *problem = QStringLiteral("has an account that does not hold together (goodput %1, %2 stragglers)")
                       .arg(j.goodput())
                       .arg(j.straggler_count());
    }
    job.gpus.reserve(static_cast<size_t>(gpus));
    forEachGpu(j, [&job](uint32_t g) {
        job.gpus.push_back(g);
        return true;
    });
    return job;
}

JobsPtr decodeJobs(const pb::ListJobsResponse &response, const Topology &topology, QString *error)
{
    const uint32_t n = topology.gpuCount;
    const uint64_t bound = maxJobGpuEntries(n);
    const int count = response.jobs_size();
    auto list = std::make_shared<JobList>();
    list->topologyGeneration = topology.generation;
    list->runningJobOfGpu.assign(n, -1); // while decoding: the wire index of the running job holding the GPU
    std::vector<std::optional<Job>> kept(static_cast<size_t>(count));
    // The first maxJobProblemsSaid dropped jobs' wire indices and reasons, and how many were dropped in all.
    std::vector<std::pair<int, QString>> problems;
    size_t dropped = 0;
    const auto drop = [&](int index, const QString &problem) {
        if (problems.size() < static_cast<size_t>(maxJobProblemsSaid)) {
            problems.emplace_back(index, problem);
        }
        ++dropped;
    };
    size_t badAccounts = 0; // jobs kept without their account
    uint64_t spent = 0; // GPU entries looked at so far, of jobs kept or dropped
    uint32_t runningPast = 0; // jobs left out past the bound
    uint32_t endedPast = 0;
    size_t keptCount = 0;

    const auto decode = [&](int index) {
        const pb::Job &j = response.jobs(index);
        const bool running = j.end_time_ms() == 0;
        QString problem;
        const uint64_t gpus = claimedGpus(j, n, &problem);
        if (!problem.isEmpty()) {
            drop(index, problem);
            return;
        }
        if (spent + gpus > bound) {
            ++(running ? runningPast : endedPast);
            return;
        }
        Job job = jobFields(j, &badAccounts);
        job.gpus.reserve(static_cast<size_t>(gpus));
        forEachGpu(j, [&](uint32_t g) {
            ++spent;
            if (running && list->runningJobOfGpu[g] >= 0) {
                const auto holder = static_cast<size_t>(list->runningJobOfGpu[g]);
                problem = QStringLiteral("holds GPU %1, which running job %2 holds too").arg(g).arg(kept[holder]->id);
                return false;
            }
            job.gpus.push_back(g);
            return true;
        });
        if (!problem.isEmpty()) {
            drop(index, problem);
            return;
        }
        if (running) {
            for (const uint32_t g : job.gpus) {
                list->runningJobOfGpu[g] = index;
            }
        }
        kept[static_cast<size_t>(index)] = std::move(job);
        ++keptCount;
    };
    // Running jobs first, in the wire's order; then the ended ones, newest first, so that the bound leaves out the
    // oldest, as the backend does under its message limit.
    for (int i = 0; i < count; ++i) {
        if (response.jobs(i).end_time_ms() == 0) {
            decode(i);
        }
    }
    for (int i = count - 1; i >= 0; --i) {
        if (response.jobs(i).end_time_ms() != 0) {
            decode(i);
        }
    }

    // The jobs in the wire's order; the GPUs' holders from wire indices to the list's.
    std::vector<int32_t> position(static_cast<size_t>(count), -1);
    list->jobs.reserve(keptCount);
    for (int i = 0; i < count; ++i) {
        if (kept[static_cast<size_t>(i)]) {
            position[static_cast<size_t>(i)] = static_cast<int32_t>(list->jobs.size());
            list->jobs.push_back(std::move(*kept[static_cast<size_t>(i)]));
        }
    }
    for (int32_t &holder : list->runningJobOfGpu) {
        if (holder >= 0) {
            holder = position[static_cast<size_t>(holder)];
        }
    }
    const auto plus = [](uint32_t a, uint32_t b) {
        return static_cast<uint32_t>(std::min<uint64_t>(uint64_t { a } + b, std::numeric_limits<uint32_t>::max()));
    };
    list->runningJobsLeftOut = plus(response.running_jobs_left_out(), runningPast);
    list->endedJobsLeftOut = plus(response.ended_jobs_left_out(), endedPast);

    QStringList said;
    if (dropped > 0) {
        std::sort(problems.begin(), problems.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
        QStringList described;
        for (const auto &[index, problem] : problems) {
            const pb::Job &j = response.jobs(index);
            described << QStringLiteral("job %1 (%2) %3").arg(j.id()).arg(wireText(j.name(), maxJobText), problem);
        }
        const QString more
            = dropped > problems.size() ? QStringLiteral("; and %1 more").arg(dropped - problems.size()) : QString();
        said << QStringLiteral("dropped %1 job(s): %2%3").arg(dropped).arg(described.join(QStringLiteral("; ")), more);
    }
    if (runningPast + endedPast > 0) {
        said << QStringLiteral("left out %1 running and %2 ended job(s) past the %3 GPU entries a job list may hold "
                               "for a fleet of %4 GPUs")
                    .arg(runningPast)
                    .arg(endedPast)
                    .arg(bound)
                    .arg(n);
    }
    if (badAccounts > 0) {
        said << QStringLiteral("dropped the account of %1 job(s): a goodput outside 0..1 or more stragglers than GPUs")
                    .arg(badAccounts);
    }
    if (!said.isEmpty()) {
        *error = said.join(QStringLiteral("; "));
    }
    return list;
}

namespace {
SummaryRollup decodeRollup(const pb::Rollup &r)
{
    return { wireText(r.name(), maxNameText), r.gpu_count(), r.mean_utilisation(), r.busy_gpu_hours(),
        r.idle_gpu_hours(), r.unhealthy_gpus(), r.availability(), r.failures() };
}

// The jobs' goodput and losses over the summary's range, the losses' subjects bounded by its fleet rollup (no topology
// here: the views check the GPUs, nodes and domains against theirs).
void decodeJobsAccount(const pb::Summary &answer, Summary *s)
{
    const uint32_t n = std::min(answer.fleet().gpu_count(), maxGpus);
    // No bound by the fleet's GPUs x the range: jobs may share GPUs (Slurm jobs sharing a node each count its GPUs,
    // time-slicing, MIG), so their GPU-hours may well pass the fleet's. What the page computes with must be finite,
    // not negative and hold together.
    const double hours = answer.job_gpu_hours();
    const double productive = answer.productive_gpu_hours();
    QString why;
    if (answer.has_goodput() && !(answer.goodput() >= 0 && answer.goodput() <= 1)) {
        why = QStringLiteral("goodput %1 is outside 0..1").arg(answer.goodput());
    } else if (!(std::isfinite(hours) && hours >= 0)
        || !(std::isfinite(productive) && productive >= 0 && productive <= hours * (1 + 1e-9) + 1e-9)) {
        why = QStringLiteral("%1 productive of %2 GPU-hours").arg(productive).arg(hours);
    }
    if (!why.isEmpty()) {
        s->problems << QStringLiteral("dropped the jobs' goodput and losses: %1").arg(why);
        return;
    }
    if (answer.jobs_accounted() == 0) {
        return; // none said
    }
    if (!answer.has_goodput()) {
        // The contract leaves goodput out only when no job ran: jobs counted without it are said, and nothing is
        // shown as a goodput (never 0 %).
        s->problems << QStringLiteral("dropped the jobs' account: %1 jobs ran, but no goodput came with them")
                           .arg(answer.jobs_accounted());
        return;
    }
    s->jobsAccounted = answer.jobs_accounted();
    s->goodput = answer.goodput();
    s->jobGpuHours = hours;
    s->productiveGpuHours = productive;
    const int count = std::min(answer.losses_size(), static_cast<int>(maxSummaryLosses));
    if (answer.losses_size() > count) {
        s->problems << QStringLiteral("dropped %1 job losses past the first %2")
                           .arg(answer.losses_size() - count)
                           .arg(maxSummaryLosses);
    }
    const LossBounds bounds { n, n, maxDomains(n), hours * (1 + 1e-9) + 1e-9 };
    s->losses.reserve(static_cast<size_t>(count));
    int dropped = 0;
    QString first;
    for (int i = 0; i < count; ++i) {
        QString problem;
        if (auto loss = decodeLoss(answer.losses(i), bounds, &problem)) {
            loss->jobId = 0; // summed over jobs
            s->losses.push_back(std::move(*loss));
        } else if (dropped++ == 0) {
            first = problem;
        }
    }
    if (dropped > 0) {
        s->problems << QStringLiteral("dropped %1 job losses (the first: %2)").arg(dropped).arg(first);
    }
}
} // namespace

std::shared_ptr<Summary> decodeSummary(const pb::Summary &answer, QString *failure)
{
    auto summary = std::make_shared<Summary>();
    summary->fromMs = answer.from_ms();
    summary->toMs = answer.to_ms();
    summary->frames = answer.frames();
    summary->fleet = decodeRollup(answer.fleet());
    // Copied no further than validateSummary keeps (a list's rollups share the fleet; offenders are the request's top
    // ones), so that a 16 MiB answer of empty entries of two bytes each is not first made a list of millions.
    const int most = static_cast<int>(std::min(answer.fleet().gpu_count(), maxGpus));
    const auto rollups = [&](const auto &list, std::vector<SummaryRollup> *out, const char *kind) {
        const int count = std::min(list.size(), most);
        if (list.size() > count) {
            summary->problems << QStringLiteral("dropped %1 %2 rollups past the fleet's %3 GPUs")
                                     .arg(list.size() - count)
                                     .arg(QLatin1String(kind))
                                     .arg(most);
        }
        out->reserve(static_cast<size_t>(count));
        for (int i = 0; i < count; ++i) {
            out->push_back(decodeRollup(list.Get(i)));
        }
    };
    rollups(answer.rows(), &summary->rows, "row");
    rollups(answer.racks(), &summary->racks, "rack");
    rollups(answer.jobs(), &summary->jobs, "job");
    const int offenders = std::min<int>(answer.offenders_size(), static_cast<int>(maxOffenders));
    if (answer.offenders_size() > offenders) {
        summary->problems << QStringLiteral("dropped %1 offenders past the first %2")
                                 .arg(answer.offenders_size() - offenders)
                                 .arg(maxOffenders);
    }
    summary->offenders.reserve(static_cast<size_t>(offenders));
    for (int i = 0; i < offenders; ++i) {
        summary->offenders.push_back({ answer.offenders(i).gpu(), answer.offenders(i).failures() });
    }
    summary->totalFailures = answer.total_failures();
    const int repeat = std::min<int>(answer.repeat_offenders_size(), static_cast<int>(maxRepeatOffenders));
    if (answer.repeat_offenders_size() > repeat) {
        summary->problems << QStringLiteral("dropped %1 repeat offenders past the first %2")
                                 .arg(answer.repeat_offenders_size() - repeat)
                                 .arg(maxRepeatOffenders);
    }
    summary->repeatOffenders.reserve(static_cast<size_t>(repeat));
    for (int i = 0; i < repeat; ++i) {
        const auto &o = answer.repeat_offenders(i);
        summary->repeatOffenders.push_back({ o.gpu(), o.score(), o.xids(), o.serious_xids(), o.ecc_double_bit(),
            o.remapped_rows(), o.remapped_rows_correctable(), o.pcie_replays(), o.throttle_hours() });
    }
    summary->topPercentFailureShare = answer.top_percent_failure_share();
    summary->unitHours
        = { answer.unit_gpu_hours_lost(), answer.stranded_gpu_hours(), answer.units(), answer.healthy_units_at_end() };
    decodeJobsAccount(answer, summary.get());
    if (!validateSummary(summary.get())) {
        *failure = summary->problems.join(QStringLiteral("; "));
    }
    return summary;
}

} // namespace fleetscope