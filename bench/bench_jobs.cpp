// SPDX-License-Identifier: Apache-2.0
// Jobs' accounting against the simulator's ground truth (issue 34): JobAccounting's stragglers (score >= 1) against
// the stragglers injected into jobs of 64, 256, 1,024 and 4,096 GPUs (precision, recall, the time from a straggler's
// start to its being ranked first in its job); its goodput per job against the truth's over a simulated day, and the
// GPU-hours lost per cause on both sides; its cost per frame at 1,048,576 GPUs beside the anomaly detector's, measured
// in the same run. docs/PERFORMANCE.md ("Jobs") has the figures and the commands.
//
//   bench_jobs stragglers [gpus=65536] [hours=12] [seeds=3]
//   bench_jobs goodput [gpus=10240] [hours=24] [seed=1] [straggler rate, x the documented one=10]
//                      [domain fault rate, x docs/FAULTS.md's=10]
//   bench_jobs cost [gpus=1048576] [frames=12]
//
// Frames are stamped with simulated time (10 s steps), so the accounting sees the simulator's clock.
// BENCH_JOBS_VERBOSE=1 prints each (job, GPU) scored >= 1 that was no injected straggler's.
#include "analytics/anomalydetector.h"
#include "analytics/fleetanalytics.h"
#include "analytics/jobaccounting.h"
#include "core/determinism.h"
#include "sim/simulator.h"

#include "timing.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace be = fleetscope::backend;
using fleetscope::bench::Distribution;

namespace {
constexpr double stepSeconds = 10;
constexpr int64_t epochMs = 1'700'000'000'000; // simulated time 0, so that back-dated jobs start after 1970

double threadSeconds()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int64_t ms(double simSeconds)
{
    return epochMs + static_cast<int64_t>(std::llround(simSeconds * 1000.0));
}

be::JobInfo infoOf(const be::Simulator &sim, const be::Simulator::Job &j)
{
    const auto &shape = sim.shape();
    be::JobInfo info;
    info.id = j.id;
    info.name = "job-" + std::to_string(j.id);
    info.firstGpu = shape.nodes[j.firstNode].firstGpu;
    const auto &last = shape.nodes[j.firstNode + j.nodeCount - 1];
    info.gpuCount = last.firstGpu + last.gpuCount - info.firstGpu;
    info.startMs = ms(j.startSeconds);
    if (!std::isnan(j.lastCheckpointSeconds)) {
        info.lastCheckpointMs = ms(j.lastCheckpointSeconds);
    }
    info.endMs = j.endSeconds <= sim.nowSeconds() ? ms(j.endSeconds) : 0;
    return info;
}

// The producer's jobs as SimulatedFleet lists them: running ones, then those ended within the hour.
std::vector<be::JobInfo> jobsOf(const be::Simulator &sim)
{
    std::vector<be::JobInfo> out;
    for (const auto &j : sim.jobs()) {
        out.push_back(infoOf(sim, j));
    }
    for (auto it = sim.endedJobs().rbegin(); it != sim.endedJobs().rend(); ++it) {
        out.push_back(infoOf(sim, *it));
    }
    return out;
}

std::shared_ptr<be::Frame> stepped(be::Simulator &sim)
{
    sim.step();
    auto frame = sim.snapshot();
    frame->sampleTimeMs = ms(sim.nowSeconds());
    return frame;
}

constexpr std::array<uint32_t, 4> sizes { 64, 256, 1024, 4096 };

// Stragglers' scores over runs: per size, the stragglers scored and detected and their times to be ranked first; the
// (job, GPU) pairs scored >= 1, and those that were an injected straggler's.
struct StragglerTotals
{
    std::array<size_t, sizes.size()> injected {}, detected {};
    std::array<std::vector<double>, sizes.size()> toFirst;
    size_t flagged = 0, flaggedTrue = 0;
    std::map<std::string, size_t> falseByMetric; // the pairs no injected straggler's, by the metric first flagged
};

void printStragglers(const StragglerTotals &totals)
{
    std::printf("%-10s %9s %9s %8s %10s %13s %12s\n", "job GPUs", "injected", "detected", "recall", "ranked 1st",
        "median to 1st", "p90 to 1st");
    size_t allInjected = 0, allDetected = 0;
    for (size_t s = 0; s < sizes.size(); ++s) {
        const size_t n = totals.injected[s], detected = totals.detected[s];
        allInjected += n;
        allDetected += detected;
        const Distribution d(totals.toFirst[s]);
        std::printf("%-10u %9zu %9zu %7.0f%% %10zu %9.1f min %8.1f min\n", sizes[s], n, detected,
            n ? 100.0 * detected / n : 0.0, totals.toFirst[s].size(), d.quantile(0.5) / 60, d.quantile(0.9) / 60);
    }
    std::printf("recall %.1f%% (%zu of %zu); precision %.1f%% (%zu of %zu (job, GPU) pairs scored >= 1 were an "
                "injected straggler in force or ended within 5 min)\n",
        allInjected ? 100.0 * allDetected / allInjected : 0.0, allDetected, allInjected,
        totals.flagged ? 100.0 * totals.flaggedTrue / totals.flagged : 0.0, totals.flaggedTrue, totals.flagged);
    if (!totals.falseByMetric.empty()) {
        std::printf("the others, by the metric that first flagged them:");
        for (const auto &[metric, n] : totals.falseByMetric) {
            std::printf(" %s %zu;", metric.c_str(), n);
        }
        std::printf("\n");
    }
}

// (a) Stragglers injected at random into running jobs of four sizes, a few in force in each size at a time.
void stragglers(uint32_t gpus, double hours, uint64_t seed, StragglerTotals *totals)
{
    constexpr size_t inForcePerSize = 2;
    be::Simulator sim(gpus, seed, stepSeconds);
    const auto perNode = be::HardwareSpec::of(sim.shape().hardware).gpusPerNode;
    be::JobAccounting accounting(sim.shape());
    struct Injected
    {
        uint32_t gpu;
        uint64_t job;
        size_t size; // index into sizes
        float drop;
        double start;
        double end;
        double rankedFirst = -1; // simulated seconds from start; -1: never
        bool flagged = false; // score >= 1 while it lasted (or within 5 minutes after)
    };
    std::vector<Injected> injected;
    // (job, GPU) flagged -> an injected straggler's, and the metric it was first flagged by
    std::map<std::pair<uint64_t, uint32_t>, std::pair<bool, be::MetricId>> flaggedPairs;
    uint64_t draw = 0;
    const auto uniform = [&] { return be::determinism::unit(be::determinism::hash(seed, 0x6a6f6273, ++draw)); };
    std::vector<double> cost;
    const bool verbose = std::getenv("BENCH_JOBS_VERBOSE") != nullptr;
    size_t reported = 0;
    const auto steps = static_cast<uint64_t>(hours * 3600 / stepSeconds);
    for (uint64_t i = 0; i < steps; ++i) {
        const double t = sim.nowSeconds();
        // Every simulated minute, top each size up to its stragglers in force: a random GPU of a random job of that
        // size that has run 15 minutes under watch (the accounting's baseline) and has none, 8-30 % for 30-120 min.
        if (i % 6 == 0 && t >= 900) {
            for (size_t s = 0; s < sizes.size(); ++s) {
                const auto open = std::count_if(injected.begin(), injected.end(),
                    [&](const Injected &x) { return x.size == s && x.end > t && sim.jobTruth().account(x.job); });
                if (static_cast<size_t>(open) >= inForcePerSize) {
                    continue;
                }
                std::vector<const be::Simulator::Job *> candidates;
                for (const auto &j : sim.jobs()) {
                    const bool busy = std::any_of(injected.begin(), injected.end(),
                        [&](const Injected &x) { return x.job == j.id && x.end > t; });
                    if (j.nodeCount * perNode == sizes[s] && !busy && j.startSeconds <= t - 900 && t - 900 >= 0
                        && j.endSeconds > t + 1800) {
                        candidates.push_back(&j);
                    }
                }
                if (candidates.empty()) {
                    continue;
                }
                const auto &job = *candidates[static_cast<size_t>(uniform() * candidates.size())];
                const auto info = infoOf(sim, job);
                const auto gpu = info.firstGpu + static_cast<uint32_t>(uniform() * info.gpuCount);
                const auto drop = static_cast<float>(0.08 + 0.22 * uniform());
                const double end = std::min(job.endSeconds, t + 1800 + 5400 * uniform());
                sim.addStraggler(gpu, drop, end);
                injected.push_back({ gpu, job.id, s, drop, t, end });
            }
        }
        auto frame = stepped(sim);
        const auto jobs = jobsOf(sim);
        const auto events = sim.takeEvents();
        const double t0 = threadSeconds();
        accounting.account(*frame, jobs, events);
        cost.push_back(threadSeconds() - t0);
        const double now = sim.nowSeconds();
        // Every frame, the jobs with a straggler not yet ranked first; every minute, every job of the four sizes.
        std::set<uint64_t> ask;
        for (const auto &x : injected) {
            if (x.rankedFirst < 0 && x.end > now - 300) {
                ask.insert(x.job);
            }
        }
        if (i % 6 == 0) {
            for (const auto &j : sim.jobs()) {
                if (std::find(sizes.begin(), sizes.end(), j.nodeCount * perNode) != sizes.end()) {
                    ask.insert(j.id);
                }
            }
        }
        be::JobReport report;
        for (const uint64_t id : ask) {
            if (!accounting.report(id, {}, &report)) {
                continue;
            }
            for (size_t k = 0; k < report.stragglers.size(); ++k) {
                const auto &s = report.stragglers[k];
                if (s.score < 1) {
                    continue;
                }
                bool matched = false;
                for (auto &x : injected) {
                    if (x.job == id && x.gpu == s.gpu && now >= x.start && now <= x.end + 300) {
                        matched = true;
                        x.flagged = true;
                        if (k == 0 && x.rankedFirst < 0 && now <= x.end) {
                            x.rankedFirst = now - x.start;
                        }
                    }
                }
                auto [pair, added] = flaggedPairs.try_emplace({ id, s.gpu }, false, s.metric);
                if (verbose && !matched && flaggedPairs.size() > reported) {
                    reported = flaggedPairs.size();
                    std::printf("  not injected: t %.0f s job %llu (%u GPUs) GPU %u rank %zu score %.2f %s %.1f vs "
                                "median %.1f since %.0f s: %s\n",
                        now, static_cast<unsigned long long>(id), report.job.gpuCount, s.gpu, k, s.score,
                        be::metricCatalog()[static_cast<size_t>(s.metric)].key.c_str(), s.value, s.jobMedian,
                        static_cast<double>(s.sinceMs - epochMs) / 1000.0, s.reason.c_str());
                }
                pair->second.first = pair->second.first || matched;
                (void)added;
            }
        }
    }
    StragglerTotals run;
    for (const auto &x : injected) {
        // Scored once it has had its chance: ended, or in force 20 minutes.
        if (x.end > sim.nowSeconds() && sim.nowSeconds() - x.start < 1200) {
            continue;
        }
        ++run.injected[x.size];
        run.detected[x.size] += x.flagged ? 1 : 0;
        if (x.rankedFirst >= 0) {
            run.toFirst[x.size].push_back(x.rankedFirst);
        }
    }
    run.flagged = flaggedPairs.size();
    for (const auto &[key, flag] : flaggedPairs) {
        if (flag.first) {
            ++run.flaggedTrue;
        } else {
            ++run.falseByMetric[be::metricCatalog()[static_cast<size_t>(flag.second)].key];
        }
    }
    std::printf("stragglers at %u GPUs, %.0f simulated hours, seed %llu: %zu injected (8-30 %% of the clock, 30-120 "
                "min); accounting %.2f ms per frame (median of one core)\n",
        gpus, hours, static_cast<unsigned long long>(seed), injected.size(), Distribution(cost).quantile(0.5) * 1e3);
    printStragglers(run);
    for (size_t s = 0; s < sizes.size(); ++s) {
        totals->injected[s] += run.injected[s];
        totals->detected[s] += run.detected[s];
        totals->toFirst[s].insert(totals->toFirst[s].end(), run.toFirst[s].begin(), run.toFirst[s].end());
    }
    totals->flagged += run.flagged;
    totals->flaggedTrue += run.flaggedTrue;
    for (const auto &[metric, n] : run.falseByMetric) {
        totals->falseByMetric[metric] += n;
    }
}

// (b) Goodput per job and the losses by cause, the accounting's (through the whole analytics, incidents included)
// against the truth's, over a simulated day with stragglers at random.
int goodput(uint32_t gpus, double hours, uint64_t seed, double stragglerScale, double domainScale)
{
    be::Simulator sim(gpus, seed, stepSeconds);
    sim.setStragglerRate(stragglerScale * be::StragglerModel::documentedRatePerGpuDay);
    sim.setDomainFaultScale(domainScale);
    be::FleetAnalytics analytics(sim.shape());
    const auto *accounts = analytics.jobAccounts();
    struct Compared
    {
        double truth = 0, theirs = 0, gpuHours = 0;
        std::array<double, 4> truthLoss {}, theirLoss {}; // checkpoint, stall (incidents included), restart, straggler
        double theirRest = 0;
    };
    std::map<uint64_t, Compared> compared;
    const auto compare = [&] {
        be::JobReport report;
        for (const auto &[id, a] : sim.jobTruth().accounts()) {
            if (a.gpuSeconds < 600.0 * a.gpuCount || !accounts->report(id, {}, &report)) {
                continue; // under 10 minutes watched: too short to say
            }
            Compared c;
            c.truth = a.goodput();
            c.theirs = report.goodput;
            c.gpuHours = a.gpuSeconds / 3600;
            c.truthLoss = { a.checkpoint / 3600, a.stall / 3600, a.restart / 3600, a.straggler / 3600 };
            for (const auto &loss : report.losses) {
                switch (loss.cause) {
                case be::LossCause::Checkpoint:
                    c.theirLoss[0] += loss.gpuHours;
                    break;
                case be::LossCause::Stall:
                case be::LossCause::Incident:
                    c.theirLoss[1] += loss.gpuHours;
                    break;
                case be::LossCause::Restart:
                    c.theirLoss[2] += loss.gpuHours;
                    break;
                case be::LossCause::Straggler:
                    c.theirLoss[3] += loss.gpuHours;
                    break;
                default:
                    c.theirRest += loss.gpuHours;
                    break;
                }
            }
            compared[id] = c; // the latest comparison of each job
        }
    };
    const auto steps = static_cast<uint64_t>(hours * 3600 / stepSeconds);
    for (uint64_t i = 0; i < steps; ++i) {
        auto frame = stepped(sim);
        const auto jobs = jobsOf(sim);
        auto events = sim.takeEvents();
        analytics.judge(frame.get(), jobs, &events);
        if ((i + 1) % 360 == 0) { // every simulated hour: jobs ended are held an hour on both sides
            compare();
        }
    }
    compare();
    std::vector<double> errors;
    uint64_t worstJob = 0;
    double worst = -1, gpuHours = 0;
    std::array<double, 4> truthLoss {}, theirLoss {};
    double theirRest = 0;
    for (const auto &[id, c] : compared) {
        const double e = std::abs(c.theirs - c.truth);
        errors.push_back(e);
        if (e > worst) {
            worst = e;
            worstJob = id;
        }
        gpuHours += c.gpuHours;
        for (size_t k = 0; k < 4; ++k) {
            truthLoss[k] += c.truthLoss[k];
            theirLoss[k] += c.theirLoss[k];
        }
        theirRest += c.theirRest;
    }
    double mae = 0;
    for (const double e : errors) {
        mae += e;
    }
    mae = errors.empty() ? 0 : mae / static_cast<double>(errors.size());
    const auto &w = compared[worstJob];
    std::printf(
        "goodput at %u GPUs, %.0f simulated hours, seed %llu, stragglers at %.0fx the documented rate, domain faults "
        "at %.0fx: %zu jobs compared (%.0f GPU-hours)\n",
        gpus, hours, static_cast<unsigned long long>(seed), stragglerScale, domainScale, errors.size(), gpuHours);
    std::printf("goodput error per job: mean absolute %.4f, p90 %.4f, worst %.4f (job %llu: truth %.3f, accounting "
                "%.3f)\n",
        mae, Distribution(errors).quantile(0.9), worst, static_cast<unsigned long long>(worstJob), w.truth, w.theirs);
    const char *names[] = { "checkpoint", "stall + incident", "restart", "straggler" };
    std::printf("the worst job's %.0f GPU-hours lost, truth / accounting:", w.gpuHours);
    for (size_t k = 0; k < 4; ++k) {
        std::printf(" %s %.1f / %.1f;", names[k], w.truthLoss[k], w.theirLoss[k]);
    }
    std::printf(" other - / %.1f\n", w.theirRest);
    std::printf("%-18s %14s %14s\n", "lost to", "truth GPU-h", "accounting GPU-h");
    for (size_t k = 0; k < 4; ++k) {
        std::printf("%-18s %14.1f %14.1f\n", names[k], truthLoss[k], theirLoss[k]);
    }
    std::printf("%-18s %14s %14.1f\n", "other", "-", theirRest);
    return 0;
}

// (c) The accounting's cost per frame at a million GPUs, beside the anomaly detector's on the same frames.
int cost(uint32_t gpus, int frames)
{
    be::Simulator sim(gpus, 1, stepSeconds);
    be::AnomalyDetector detector(sim.shape());
    be::JobAccounting accounting(sim.shape());
    std::vector<double> detect, account;
    size_t jobCount = 0;
    for (int i = 0; i < frames; ++i) {
        auto frame = stepped(sim);
        const auto jobs = jobsOf(sim);
        jobCount = sim.jobs().size();
        std::vector<be::FleetEvent> events = sim.takeEvents();
        detector.setJobs(jobs);
        double t0 = threadSeconds();
        detector.judge(frame.get(), sim.nowSeconds(), &events);
        detect.push_back(threadSeconds() - t0);
        t0 = threadSeconds();
        accounting.account(*frame, jobs, events);
        account.push_back(threadSeconds() - t0);
    }
    // The first frames start every job's track.
    detect.erase(detect.begin(), detect.begin() + std::min<size_t>(2, detect.size()));
    account.erase(account.begin(), account.begin() + std::min<size_t>(2, account.size()));
    const Distribution d(detect), a(account);
    std::printf("cost per frame at %u GPUs, %zu running jobs, %zu frames: accounting median %.1f ms (p90 %.1f, max "
                "%.1f); the anomaly detector's judge median %.1f ms (p90 %.1f) on the same frames, one core\n",
        gpus, jobCount, account.size(), a.quantile(0.5) * 1e3, a.quantile(0.9) * 1e3, a.max() * 1e3,
        d.quantile(0.5) * 1e3, d.quantile(0.9) * 1e3);
    return 0;
}
} // namespace

int main(int argc, char **argv)
{
    const std::string mode = argc > 1 ? argv[1] : "";
    const auto arg = [&](int k, double fallback) { return argc > k ? std::atof(argv[k]) : fallback; };
    const auto gpusArg = [&](double fallback) {
        const auto g = static_cast<uint32_t>(arg(2, fallback));
        return std::clamp(g, be::FleetShape::minGpus, be::FleetShape::maxGpus);
    };
    if (mode == "stragglers") {
        const auto seeds = static_cast<uint64_t>(std::max(1.0, arg(4, 3)));
        StragglerTotals totals;
        for (uint64_t seed = 1; seed <= seeds; ++seed) {
            stragglers(gpusArg(65536), arg(3, 12), seed, &totals);
        }
        if (seeds > 1) {
            std::printf("all %llu seeds:\n", static_cast<unsigned long long>(seeds));
            printStragglers(totals);
        }
        return 0;
    }
    if (mode == "goodput") {
        return goodput(gpusArg(10240), arg(3, 24), static_cast<uint64_t>(arg(4, 1)), arg(5, 10), arg(6, 10));
    }
    if (mode == "cost") {
        return cost(gpusArg(1 << 20), static_cast<int>(arg(3, 12)));
    }
    std::fprintf(stderr,
        "usage: bench_jobs stragglers [gpus] [hours] [seeds] | goodput [gpus] [hours] [seed] [straggler rate x] "
        "[domain rate x] | "
        "cost [gpus] [frames]\n");
    return 2;
}
