// SPDX-License-Identifier: Apache-2.0
// Anomaly detection against the simulator's ground truth (issue 16): precision, recall per fault kind, detection
// delay and false positives per GPU-evaluation of the backend's detector, beside a static-threshold baseline and a
// plain fleet-wide z-score judged on the same frames with the same persistence; and the detector's CPU time per frame.
//
//   bench_anomaly [gpus=10240] [hours=24] [step seconds=10] [degradations per GPU-day=0.05] [seed=1]
//   bench_anomaly cost [gpus=1048576] [frames=20]
// BENCH_ANOMALY_VERBOSE=1 prints each false start, each missed fault and the GPUs with the most evaluations flagged
// outside faults (an episode that begins in a fault and outlasts it shows only there); BENCH_ANOMALY_START / _END /
// _PERSIST override the detector's start score, end score and persistence (to see the trade-off in one binary).
#include "analytics/anomalydetector.h"
#include "sim/simulator.h"

#include "timing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace be = fleetscope::backend;
using be::InjectedFaults;
using be::MetricId;

namespace {
constexpr double graceSeconds
    = 600; // after a fault ends, a detection is still its (the GPU settles, the detector clears)

std::vector<be::JobInfo> jobsOf(const be::Simulator &sim)
{
    std::vector<be::JobInfo> out;
    const auto &shape = sim.shape();
    for (const auto &j : sim.jobs()) {
        be::JobInfo info;
        info.id = j.id;
        info.firstGpu = shape.nodes[j.firstNode].firstGpu;
        const auto &last = shape.nodes[j.firstNode + j.nodeCount - 1];
        info.gpuCount = last.firstGpu + last.gpuCount - info.firstGpu;
        out.push_back(info);
    }
    return out;
}

// The persistence rule the detector uses, for the baselines: on after 60 s at or above, off after 120 s below.
class Persistence
{
public:
    explicit Persistence(size_t n)
        : m_since(n, -1)
        , m_quiet(n, -1)
        , m_on(n, 0)
    { }
    // Returns +1 when g starts, -1 when it ends, 0 otherwise.
    int update(size_t g, bool above, double now)
    {
        if (above) {
            m_quiet[g] = -1;
            if (m_since[g] < 0) {
                m_since[g] = now;
            }
            if (m_on[g] == 0 && now - m_since[g] >= 60) {
                m_on[g] = 1;
                return 1;
            }
            return 0;
        }
        m_since[g] = -1;
        if (m_on[g] == 0) {
            return 0;
        }
        if (m_quiet[g] < 0) {
            m_quiet[g] = now;
        }
        if (now - m_quiet[g] >= 120) {
            m_on[g] = 0;
            return -1;
        }
        return 0;
    }
    bool on(size_t g) const { return m_on[g] != 0; }

private:
    std::vector<double> m_since, m_quiet;
    std::vector<uint8_t> m_on;
};

struct Episode
{
    uint32_t gpu;
    double start;
    double end = INFINITY;
};

// What one judge saw: its episodes and the evaluations it flagged outside every fault.
struct Tally
{
    explicit Tally(std::string name)
        : name(std::move(name))
    { }
    std::string name;
    std::vector<Episode> episodes;
    std::unordered_map<uint32_t, size_t> open; // gpu -> episode
    uint64_t flaggedOutsideFaults = 0;

    void start(uint32_t gpu, double t)
    {
        open[gpu] = episodes.size();
        episodes.push_back({ gpu, t });
    }
    void end(uint32_t gpu, double t)
    {
        auto it = open.find(gpu);
        if (it != open.end()) {
            episodes[it->second].end = t;
            open.erase(it);
        }
    }
};

// Where the detector's false positives and misses come from: counts by context, each context a dimension with a few
// buckets. Per bucket: [0] everything seen in it (evaluations, or faults to find), [1] those of interest (flagged
// outside faults, or found), [2] false starts.
struct Breakdown
{
    struct Dimension
    {
        const char *name;
        std::vector<const char *> buckets;
        std::vector<std::array<uint64_t, 3>> counts;
    };
    std::vector<Dimension> dims;

    size_t add(const char *name, std::vector<const char *> buckets)
    {
        const size_t n = buckets.size();
        dims.push_back({ name, std::move(buckets), std::vector<std::array<uint64_t, 3>>(n, { 0, 0, 0 }) });
        return dims.size() - 1;
    }
    void count(size_t dim, size_t bucket, size_t what, uint64_t by = 1) { dims[dim].counts[bucket][what] += by; }
};

// Buckets of the contexts, computed by the bench from the simulator's jobs and the frame (never from the ground truth
// but for "after a fault of its own").
enum Dim : size_t { DimState, DimSinceChange, DimHour, DimGroup, DimAfterFault, DimJobStall, DimMetric };
size_t stateOf(bool inJob, float util)
{
    if (!inJob) {
        return 0;
    }
    return util >= 40 ? 1 : util > 0.5F ? 2 : 3;
}
size_t sinceChangeOf(double since)
{
    return !std::isfinite(since) ? 0 : since < 600 ? 1 : since < 1800 ? 2 : since < 7200 ? 3 : 4;
}
size_t groupOf(uint32_t size)
{
    return size == 0 ? 0 : size <= 8 ? 1 : size <= 64 ? 2 : size <= 512 ? 3 : 4;
}
Breakdown contexts()
{
    Breakdown b;
    b.add("state", { "idle (no job)", "job busy", "job low (<40 %)", "job stalled (0 %)" });
    b.add("job change", { "never", "< 10 min ago", "10-30 min", "30-120 min", "> 2 h" });
    b.add("time", { "hour 1", "hours 2-6", "hours 7-24" });
    b.add("group", { "idle rack", "8 GPUs", "16-64", "128-512", ">= 1024" });
    b.add("own fault", { "none ended < 1 h ago", "one ended 10-60 min ago" });
    b.add("job stall", { "none in 30 min", "its job stalled < 30 min ago" });
    b.add("metric", { "gpu temp", "mem temp", "power", "util", "sm clock" });
    return b;
}

size_t judgedIndex(MetricId metric)
{
    const auto &judged = be::AnomalyDetector::judged;
    return static_cast<size_t>(std::find(judged.begin(), judged.end(), metric) - judged.begin());
}

void print(const Breakdown &b, const char *total, const char *of, bool starts)
{
    for (const auto &d : b.dims) {
        std::printf("  by %s:\n", d.name);
        for (size_t i = 0; i < d.buckets.size(); ++i) {
            const auto &c = d.counts[i];
            if (c[0] == 0 && c[1] == 0 && c[2] == 0) {
                continue;
            }
            std::printf("    %-30s %12llu %s, %10llu %s (%.4f%%)", d.buckets[i], static_cast<unsigned long long>(c[0]),
                total, static_cast<unsigned long long>(c[1]), of, c[0] ? 100.0 * double(c[1]) / double(c[0]) : 0.0);
            if (starts) {
                std::printf(", %llu false starts", static_cast<unsigned long long>(c[2]));
            }
            std::printf("\n");
        }
    }
}

int costOnly(uint32_t gpus, int frames)
{
    be::Simulator sim(gpus, 1, 10.0);
    be::AnomalyDetector detector(sim.shape());
    std::vector<double> cost;
    std::vector<be::FleetEvent> events;
    for (int i = 0; i < frames; ++i) {
        sim.step();
        auto frame = sim.snapshot();
        detector.setJobs(jobsOf(sim));
        detector.judge(frame.get(), sim.nowSeconds(), &events);
        if (i > 0) { // the first frame learns where every GPU sits
            cost.push_back(detector.lastCostSeconds());
        }
    }
    const fleetscope::bench::Distribution d(cost);
    std::printf("cost per frame at %u GPUs (%d frames, %zu racks): median %.1f ms, p90 %.1f ms of one core\n", gpus,
        frames, sim.shape().racks.size(), d.quantile(0.5) * 1e3, d.quantile(0.9) * 1e3);
    return 0;
}
} // namespace

int main(int argc, char **argv)
{
    if (argc > 1 && std::string(argv[1]) == "cost") {
        return costOnly(
            argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 1U << 20U, argc > 3 ? std::atoi(argv[3]) : 20);
    }
    const auto gpus = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 10240U;
    const double hours = argc > 2 ? std::atof(argv[2]) : 24.0;
    const double step = argc > 3 ? std::atof(argv[3]) : 10.0;
    const double rate = argc > 4 ? std::atof(argv[4]) : 0.05;
    const uint64_t seed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 1;

    be::Simulator sim(gpus, seed, step);
    sim.setDegradationRate(rate);
    be::AnomalyDetector::Options options;
    if (const char *v = std::getenv("BENCH_ANOMALY_START")) {
        options.startScore = static_cast<float>(std::atof(v));
    }
    if (const char *v = std::getenv("BENCH_ANOMALY_END")) {
        options.endScore = static_cast<float>(std::atof(v));
    }
    if (const char *v = std::getenv("BENCH_ANOMALY_PERSIST")) {
        options.persistSeconds = std::atof(v);
    }
    be::AnomalyDetector detector(sim.shape(), options);
    const size_t n = gpus;
    Tally ours("detector (peers, rack, history)");
    Tally fixed("static thresholds");
    Tally zscore("fleet z-score |z| >= 3");
    Persistence fixedState(n);
    Persistence zState(n);
    std::vector<be::FleetEvent> events;
    std::vector<double> cost;
    uint64_t evaluations = 0;
    // Ground truth seen so far, by GPU; and per fault, the peers' MAD and its effective size at onset.
    std::unordered_map<uint32_t, std::vector<size_t>> faultsOf;
    std::vector<float> madAtOnset;
    std::vector<float> effectiveSize;
    size_t faultsSeen = 0;
    std::shared_ptr<be::Frame> previous;
    // Context per GPU and fault, for the breakdowns.
    Breakdown fp = contexts();
    std::vector<uint64_t> jobOf(n, 0);
    std::vector<uint32_t> jobSize(n, 0);
    std::vector<double> changedAt(n, -INFINITY);
    std::vector<double> ownFaultEnd(n, -INFINITY);
    std::unordered_map<uint64_t, double> jobStalledAt;
    struct Onset
    {
        size_t state, sinceChange;
        float peak = 0; // the largest anomaly score of its GPU while it lasted
    };
    std::vector<Onset> onsets;
    const auto frames = static_cast<uint64_t>(hours * 3600 / step);
    const bool verbose = std::getenv("BENCH_ANOMALY_VERBOSE") != nullptr; // print each false start
    std::vector<uint32_t> falseOf(n, 0); // per GPU, its evaluations flagged outside faults

    auto inFault = [&](uint32_t gpu, double t) {
        auto it = faultsOf.find(gpu);
        if (it == faultsOf.end()) {
            return false;
        }
        for (size_t i : it->second) {
            const auto &f = sim.injectedFaults().faults()[i];
            if (t >= f.onsetSeconds && t <= f.endSeconds + graceSeconds) {
                return true;
            }
        }
        return false;
    };

    for (uint64_t i = 0; i < frames; ++i) {
        sim.step();
        const double now = sim.nowSeconds();
        auto frame = sim.snapshot();
        const auto jobs = jobsOf(sim);
        detector.setJobs(jobs);
        events.clear();
        detector.judge(frame.get(), now, &events);
        cost.push_back(detector.lastCostSeconds());
        const auto &util = frame->plane(MetricId::GpuUtil);
        {
            std::vector<uint64_t> jobNow(n, 0);
            std::fill(jobSize.begin(), jobSize.end(), 0);
            for (const auto &j : jobs) {
                bool stalled = false;
                for (uint32_t g = j.firstGpu; g < j.firstGpu + j.gpuCount; ++g) {
                    jobNow[g] = j.id;
                    jobSize[g] = j.gpuCount;
                    stalled |= !(util[g] > 0.5F);
                }
                if (stalled) {
                    jobStalledAt[j.id] = now;
                }
            }
            for (size_t g = 0; g < n; ++g) {
                if (jobNow[g] != jobOf[g] && i > 0) {
                    changedAt[g] = now;
                }
            }
            jobOf.swap(jobNow);
        }
        const auto &faults = sim.injectedFaults().faults();
        for (size_t fi = 0; fi < faults.size(); ++fi) {
            const auto &f = faults[fi];
            if (f.endSeconds <= now) {
                ownFaultEnd[f.gpu] = std::max(ownFaultEnd[f.gpu], f.endSeconds);
            } else if (fi < onsets.size() && f.onsetSeconds <= now && f.kind <= InjectedFaults::Kind::PowerDrop) {
                const float a = frame->plane(MetricId::Anomaly)[f.gpu];
                onsets[fi].peak = std::max(onsets[fi].peak, std::isnan(a) ? 0.0F : a);
            }
        }
        auto bucketsOf = [&](uint32_t g) {
            std::array<size_t, DimMetric> b {};
            b[DimState] = stateOf(jobOf[g] != 0, util[g]);
            b[DimSinceChange] = sinceChangeOf(now - changedAt[g]);
            b[DimHour] = now < 3600 ? 0 : now < 6 * 3600 ? 1 : 2;
            b[DimGroup] = groupOf(jobSize[g]);
            b[DimAfterFault] = now - ownFaultEnd[g] < 3600 ? 1 : 0;
            const auto stall = jobOf[g] != 0 ? jobStalledAt.find(jobOf[g]) : jobStalledAt.end();
            b[DimJobStall] = stall != jobStalledAt.end() && now - stall->second < 1800 ? 1 : 0;
            return b;
        };
        for (; faultsSeen < faults.size(); ++faultsSeen) {
            const auto &f = faults[faultsSeen];
            faultsOf[f.gpu].push_back(faultsSeen);
            const auto b = bucketsOf(f.gpu);
            onsets.push_back({ b[DimState], b[DimSinceChange] });
            madAtOnset.push_back(detector.peerMad(f.metric, f.gpu));
            // What the fault can move: a reading falls no lower than the simulator lets it.
            float size = f.size;
            if (previous && f.kind == InjectedFaults::Kind::ClockDrop) {
                size = std::min(size, previous->plane(MetricId::SmClock)[f.gpu] - 210.0F);
            } else if (previous && f.kind == InjectedFaults::Kind::PowerDrop) {
                size = std::min(size, previous->plane(MetricId::Power)[f.gpu] * 0.5F);
            }
            effectiveSize.push_back(size);
        }
        for (const auto &e : events) {
            if (e.kind == be::FleetEvent::Kind::AnomalyStart) {
                if (!inFault(static_cast<uint32_t>(e.gpu), now)) {
                    if (verbose) {
                        std::printf("false at %.0f s: %s\n", now, e.text.c_str());
                    }
                    const auto b = bucketsOf(static_cast<uint32_t>(e.gpu));
                    for (size_t d = 0; d < b.size(); ++d) {
                        fp.count(d, b[d], 2);
                    }
                    fp.count(DimMetric, judgedIndex(e.metric.value_or(MetricId::GpuTemp)), 2);
                }
                ours.start(static_cast<uint32_t>(e.gpu), now);
            } else {
                ours.end(static_cast<uint32_t>(e.gpu), now);
            }
        }
        // The baselines on the same frame.
        const auto &temp = frame->plane(MetricId::GpuTemp);
        const auto &mem = frame->plane(MetricId::MemTemp);
        const auto &clock = frame->plane(MetricId::SmClock);
        std::array<double, be::AnomalyDetector::judged.size()> mean {};
        std::array<double, be::AnomalyDetector::judged.size()> sd {};
        for (size_t k = 0; k < be::AnomalyDetector::judged.size(); ++k) {
            const auto &p = frame->plane(be::AnomalyDetector::judged[k]);
            double s = 0, s2 = 0, c = 0;
            for (float v : p) {
                if (!std::isnan(v)) {
                    s += v;
                    s2 += double(v) * v;
                    c += 1;
                }
            }
            mean[k] = c > 0 ? s / c : 0;
            sd[k] = c > 1 ? std::sqrt(std::max(0.0, s2 / c - mean[k] * mean[k])) : 0;
        }
        for (size_t g = 0; g < n; ++g) {
            if (std::isnan(temp[g]) && std::isnan(mem[g]) && std::isnan(util[g]) && std::isnan(clock[g])) {
                continue; // no data: nobody judges it
            }
            ++evaluations;
            const bool hot = temp[g] >= 85 || mem[g] >= 95 || (util[g] >= 50 && clock[g] < 1500);
            bool far = false;
            for (size_t k = 0; k < be::AnomalyDetector::judged.size(); ++k) {
                const float v = frame->plane(be::AnomalyDetector::judged[k])[g];
                far |= sd[k] > 0 && std::fabs(v - mean[k]) >= 3 * sd[k];
            }
            const auto gpu = static_cast<uint32_t>(g);
            for (auto [tally, state, above] : { std::tuple { &fixed, &fixedState, hot }, { &zscore, &zState, far } }) {
                const int change = state->update(g, above, now);
                if (change > 0) {
                    tally->start(gpu, now);
                } else if (change < 0) {
                    tally->end(gpu, now);
                }
            }
            const bool flagged[] = { detector.anomalous(gpu), fixedState.on(g), zState.on(g) };
            const bool outside = !inFault(gpu, now);
            const auto b = bucketsOf(gpu);
            for (size_t d = 0; d < b.size(); ++d) {
                fp.count(d, b[d], 0);
                fp.count(d, b[d], 1, flagged[0] && outside ? 1 : 0);
            }
            if (flagged[0] && outside) {
                fp.count(DimMetric, judgedIndex(detector.anomalyMetric(gpu)), 1);
                ++falseOf[g];
            }
            if ((flagged[0] || flagged[1] || flagged[2]) && outside) {
                ours.flaggedOutsideFaults += flagged[0] ? 1 : 0;
                fixed.flaggedOutsideFaults += flagged[1] ? 1 : 0;
                zscore.flaggedOutsideFaults += flagged[2] ? 1 : 0;
            }
        }
        previous = frame;
    }
    if (verbose) {
        std::vector<uint32_t> order;
        for (uint32_t g = 0; g < n; ++g) {
            if (falseOf[g] > 0) {
                order.push_back(g);
            }
        }
        std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return falseOf[a] > falseOf[b]; });
        std::printf("GPUs by evaluations flagged outside faults (%zu GPUs):\n", order.size());
        for (size_t i = 0; i < std::min<size_t>(order.size(), 60); ++i) {
            const auto &shape = sim.shape();
            const auto &node = shape.nodes[shape.nodeOfGpu[order[i]]];
            std::printf("  %s:%u %u\n", node.hostname.c_str(), order[i] - node.firstGpu, falseOf[order[i]]);
        }
    }

    const double end = sim.nowSeconds();
    const auto &faults = sim.injectedFaults().faults();
    std::printf("%u GPUs, %.1f simulated hours in %.0f s steps, degradations %.3f per GPU-day, seed %llu: %zu faults "
                "recorded, %llu GPU-evaluations\n",
        gpus, hours, step, rate, static_cast<unsigned long long>(seed), faults.size(),
        static_cast<unsigned long long>(evaluations));
    const fleetscope::bench::Distribution c(cost);
    std::printf("detector CPU per frame: median %.2f ms, p99 %.2f ms\n", c.quantile(0.5) * 1e3, c.quantile(0.99) * 1e3);
    // Which faults must be found: degradations of 3 MADs or more lasting 2 minutes or more (ended by the run's end).
    std::vector<uint8_t> qualifies(faults.size(), 0);
    std::map<InjectedFaults::Kind, int> qualifying;
    for (size_t i = 0; i < faults.size(); ++i) {
        const auto &f = faults[i];
        const double last = std::min(f.endSeconds, end);
        qualifies[i] = f.kind <= InjectedFaults::Kind::PowerDrop && last - f.onsetSeconds >= 120
                && end - f.onsetSeconds >= 600 && std::isfinite(madAtOnset[i]) && effectiveSize[i] >= 3 * madAtOnset[i]
            ? 1
            : 0;
        qualifying[f.kind] += qualifies[i];
    }
    Breakdown misses;
    misses.add("kind", { "cooling", "clock drop", "power drop" });
    misses.add("effective size", { "3-4.5 MADs", "4.5-10 MADs", ">= 10 MADs" });
    misses.add("duration", { "2-5 min", "5-30 min", ">= 30 min" });
    misses.add("state at onset", { "idle (no job)", "job busy", "job low (<40 %)", "job stalled (0 %)" });
    misses.add("job change at onset", { "never", "< 10 min ago", "10-30 min", "30-120 min", "> 2 h" });
    for (const Tally *t : { &ours, &fixed, &zscore }) {
        size_t trueEpisodes = 0;
        for (const auto &e : t->episodes) {
            bool hit = false;
            for (size_t i : faultsOf[e.gpu]) {
                const auto &f = faults[i];
                hit |= e.start >= f.onsetSeconds && e.start <= f.endSeconds + graceSeconds;
                hit |= e.start < f.onsetSeconds && e.end >= f.onsetSeconds; // already open when it began
            }
            trueEpisodes += hit ? 1 : 0;
        }
        std::map<InjectedFaults::Kind, int> found;
        std::vector<double> delays;
        for (size_t i = 0; i < faults.size(); ++i) {
            if (qualifies[i] == 0) {
                continue;
            }
            const auto &f = faults[i];
            double best = INFINITY;
            for (const auto &e : t->episodes) {
                if (e.gpu == f.gpu && e.end >= f.onsetSeconds && e.start <= f.endSeconds + graceSeconds) {
                    best = std::min(best, std::max(0.0, e.start - f.onsetSeconds));
                }
            }
            if (std::isfinite(best)) {
                ++found[f.kind];
                delays.push_back(best);
            }
            if (t == &ours) {
                const double ratio = effectiveSize[i] / madAtOnset[i];
                const double lasted = std::min(f.endSeconds, end) - f.onsetSeconds;
                const size_t b[] = { static_cast<size_t>(f.kind),
                    ratio < 4.5      ? 0U
                        : ratio < 10 ? 1U
                                     : 2U,
                    lasted < 300        ? 0U
                        : lasted < 1800 ? 1U
                                        : 2U,
                    onsets[i].state, onsets[i].sinceChange };
                for (size_t d = 0; d < std::size(b); ++d) {
                    misses.count(d, b[d], 0);
                    misses.count(d, b[d], 1, std::isfinite(best) ? 1 : 0);
                }
                if (verbose && !std::isfinite(best)) {
                    std::printf("missed %s on GPU %u at %.0f s for %.0f s: size %.1f, effective %.1f = %.1f MADs, "
                                "state %zu, job change bucket %zu, peak score %.1f\n",
                        InjectedFaults::kindName(f.kind), f.gpu, f.onsetSeconds, lasted, f.size, effectiveSize[i],
                        ratio, onsets[i].state, onsets[i].sinceChange, onsets[i].peak);
                }
            }
        }
        const fleetscope::bench::Distribution d(delays);
        std::printf("\n%s\n  episodes %zu, precision %.1f%%, false positives %.5f%% of GPU-evaluations\n",
            t->name.c_str(), t->episodes.size(),
            t->episodes.empty() ? 100.0 : 100.0 * double(trueEpisodes) / double(t->episodes.size()),
            100.0 * double(t->flaggedOutsideFaults) / double(std::max<uint64_t>(1, evaluations)));
        int all = 0;
        int allFound = 0;
        for (auto kind :
            { InjectedFaults::Kind::Cooling, InjectedFaults::Kind::ClockDrop, InjectedFaults::Kind::PowerDrop }) {
            all += qualifying[kind];
            allFound += found[kind];
            std::printf("  recall %-11s %5.1f%% (%d of %d)\n", InjectedFaults::kindName(kind),
                qualifying[kind] ? 100.0 * found[kind] / qualifying[kind] : 0.0, found[kind], qualifying[kind]);
        }
        std::printf("  recall all         %5.1f%% (%d of %d); delay median %.0f s, p90 %.0f s\n",
            all ? 100.0 * allFound / all : 0.0, allFound, all, d.quantile(0.5), d.quantile(0.9));
    }
    std::printf("\ndetector's false positives (GPU-evaluations flagged outside faults) by context:\n");
    print(fp, "evaluations", "flagged", true);
    std::printf("\ndetector's recall by context:\n");
    print(misses, "to find", "found", false);
    return 0;
}
