// SPDX-License-Identifier: Apache-2.0
// ProblemBoard::open: the open problems, those a shared incident explains counted on it, a job's folded into one
// line; then ranked.
#include "model/problems.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace fleetscope {

std::vector<std::pair<uint32_t, uint32_t>> gpuRuns(const std::vector<uint32_t> &gpus)
{
    std::vector<std::pair<uint32_t, uint32_t>> runs;
    for (uint32_t gpu : gpus) {
        if (!runs.empty() && runs.back().first + runs.back().second == gpu) {
            ++runs.back().second;
        } else {
            runs.emplace_back(gpu, 1);
        }
    }
    return runs;
}

namespace {
// Whether a problem of this kind can be the evidence of an incident of this cause (ProblemBoard's comment).
bool causeExplains(const QString &cause, Problem::Kind kind)
{
    using K = Problem::Kind;
    if (cause == QLatin1String("cooling")) {
        return kind == K::ThermalThrottle || kind == K::PowerThrottle || kind == K::Anomaly;
    }
    if (cause == QLatin1String("power")) {
        return kind == K::ThermalThrottle || kind == K::PowerThrottle || kind == K::Anomaly || kind == K::NodeDown
            || kind == K::XidBurst;
    }
    if (cause == QLatin1String("network")) {
        return kind == K::Anomaly || kind == K::XidBurst || kind == K::NodeDown;
    }
    return kind != K::Drift && kind != K::Incident && kind != K::Alert; // a GPU's or a node's own incident
}

// Whether the GPU is inside the domain: one of its rack's, its node's or its leaf switch's domains, or a parent of one
// (a busway over the rack's PDU, a CDU over its loop). The backend joins a symptom that begins there to the open
// incident of the domain, so the console takes it as the incident's before the incident's next update lists it.
bool gpuInDomain(const Topology &topology, uint32_t gpu, uint32_t domain)
{
    const auto within = [&](uint32_t start) {
        int64_t at = start;
        for (int depth = 0; depth < 16 && at >= 0 && static_cast<uint64_t>(at) < topology.domains.size(); ++depth) {
            if (at == domain) {
                return true;
            }
            at = topology.domains[static_cast<size_t>(at)].parent;
        }
        return false;
    };
    if (gpu >= topology.gpuCount || gpu >= topology.nodeOfGpu.size()) {
        return false;
    }
    const auto &node = topology.nodeOf(gpu);
    const auto &rack = topology.racks[node.rack];
    if (std::any_of(rack.domains.begin(), rack.domains.end(), within)
        || std::any_of(node.domains.begin(), node.domains.end(), within)) {
        return true;
    }
    return gpu < topology.gpuLinks.size() && topology.gpuLinks[gpu].leaf != Topology::GpuLink::none
        && within(topology.gpuLinks[gpu].leaf);
}

bool foldable(const Problem &p)
{
    using K = Problem::Kind;
    return p.gpu >= 0 && p.rack < 0 && p.gpus.size() == 1
        && (p.kind == K::XidBurst || p.kind == K::EccDoubleBit || p.kind == K::ThermalThrottle
            || p.kind == K::PowerThrottle || p.kind == K::Anomaly);
}

// Several GPUs of one running job with the same kind of problem (and metric): one line, at the first one's place.
void foldByJob(std::vector<Problem> *problems, const JobList &jobs)
{
    std::map<std::tuple<int, QString, uint64_t>, std::vector<size_t>> groups;
    for (size_t i = 0; i < problems->size(); ++i) {
        const Problem &p = (*problems)[i];
        if (!foldable(p)) {
            continue;
        }
        if (const Job *job = jobs.runningJobOn(p.gpus[0])) {
            groups[{ static_cast<int>(p.kind), p.metric, job->id }].push_back(i);
        }
    }
    std::vector<bool> gone(problems->size(), false);
    for (const auto &[key, members] : groups) {
        if (members.size() < 2) {
            continue;
        }
        Problem &line = (*problems)[members[0]];
        const Job *job = jobs.runningJobOn(line.gpus[0]);
        line.foldedJob = std::get<2>(key);
        line.foldedJobName = job != nullptr ? job->name : QString();
        line.gpu = -1;
        line.node = -1;
        for (size_t m = 1; m < members.size(); ++m) {
            const Problem &other = (*problems)[members[m]];
            line.gpus.push_back(other.gpus[0]);
            line.sinceMs = std::min(line.sinceMs, other.sinceMs);
            line.lastMs = std::max(line.lastMs, other.lastMs);
            line.severity = std::max(line.severity, other.severity);
            for (const auto &[xid, count] : other.xids) {
                auto seen = std::find_if(
                    line.xids.begin(), line.xids.end(), [xid = xid](const auto &entry) { return entry.first == xid; });
                if (seen != line.xids.end()) {
                    seen->second += count;
                } else if (line.xids.size() < ProblemBoard::maxXidCodes) {
                    line.xids.emplace_back(xid, count);
                }
            }
            gone[members[m]] = true;
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < problems->size(); ++i) {
        if (!gone[i]) {
            if (kept != i) {
                (*problems)[kept] = std::move((*problems)[i]);
            }
            ++kept;
        }
    }
    problems->resize(kept);
}
} // namespace

std::vector<Problem> ProblemBoard::open(int64_t nowMs, const Topology *topology, const JobList *jobs) const
{
    std::vector<Problem> problems;
    problems.reserve(m_problems.size() + m_incidents.size());
    // The shared incidents first, each with its GPUs (ascending, each once, within the topology: the runs are the
    // backend's); a node's or a GPU's own after the lines.
    std::vector<Problem> singles;
    for (const auto &[id, incident] : m_incidents) {
        Problem p = incident;
        const uint64_t bound = topology ? topology->gpuCount : uint64_t { maxIncidentGpus };
        for (const auto &[first, count] : p.incident->gpuRuns) {
            const uint64_t end = std::min<uint64_t>(uint64_t { first } + count, bound);
            for (uint64_t g = first; g < end && p.gpus.size() < maxIncidentGpus; ++g) {
                p.gpus.push_back(static_cast<uint32_t>(g));
            }
        }
        std::sort(p.gpus.begin(), p.gpus.end());
        p.gpus.erase(std::unique(p.gpus.begin(), p.gpus.end()), p.gpus.end());
        (isSharedIncident(p) ? problems : singles).push_back(std::move(p));
    }
    const size_t incidents = problems.size();
    // A problem an open incident explains is counted on it rather than listed (ProblemBoard's comment).
    auto coveredBy = [&](const Problem &p) -> Problem * {
        if (p.gpus.empty()) {
            return nullptr;
        }
        for (size_t i = 0; i < incidents; ++i) {
            Problem &incident = problems[i];
            if (!causeExplains(incident.incident->cause, p.kind) || p.sinceMs < incident.sinceMs - coveredLeadMs) {
                continue;
            }
            const int64_t domain = incident.incident->domain;
            const bool inDomain
                = topology != nullptr && domain >= 0 && static_cast<uint64_t>(domain) < topology->domains.size();
            const bool all = std::all_of(p.gpus.begin(), p.gpus.end(), [&](uint32_t gpu) {
                return std::binary_search(incident.gpus.begin(), incident.gpus.end(), gpu)
                    || (inDomain && gpuInDomain(*topology, gpu, static_cast<uint32_t>(domain)));
            });
            if (all) {
                return &incident;
            }
        }
        return nullptr;
    };

    // Throttling by rack, to merge where a rack has more than one GPU of it: (kind, rack) -> index in problems.
    std::map<std::pair<int, uint32_t>, size_t> rackProblem;
    for (const auto &[key, problem] : m_problems) {
        if (problem.kind == Problem::Kind::XidBurst && nowMs - problem.lastMs > burstSilenceMs) {
            continue; // the burst is over
        }
        Problem p = problem;
        // The GPUs it hits: its own, or its node's (checked against the topology: the events are the backend's).
        if (p.gpu >= 0 && (!topology || static_cast<uint64_t>(p.gpu) < topology->gpuCount)) {
            p.gpus.push_back(static_cast<uint32_t>(p.gpu));
        } else if (p.gpu < 0 && p.node >= 0 && topology && static_cast<uint64_t>(p.node) < topology->nodes.size()) {
            const auto &node = topology->nodes[static_cast<size_t>(p.node)];
            for (uint32_t i = 0; i < node.gpuCount; ++i) {
                p.gpus.push_back(node.firstGpu + i);
            }
        }
        if (Problem *incident = incidents > 0 ? coveredBy(p) : nullptr) {
            ++incident->covered;
            continue;
        }
        const bool throttle = p.kind == Problem::Kind::ThermalThrottle || p.kind == Problem::Kind::PowerThrottle;
        if (throttle && topology && p.gpus.size() == 1) {
            const uint32_t rack = topology->nodeOf(p.gpus[0]).rack;
            auto [at, first] = rackProblem.try_emplace({ static_cast<int>(p.kind), rack }, problems.size());
            if (!first) {
                Problem &group = problems[at->second];
                if (group.rack < 0) { // the second GPU of the rack: the first one's line becomes the rack's
                    group.rack = rack;
                    group.gpu = -1;
                    group.node = -1;
                }
                group.gpus.push_back(p.gpus[0]);
                group.sinceMs = std::min(group.sinceMs, p.sinceMs);
                group.lastMs = std::max(group.lastMs, p.lastMs);
                group.severity = std::max(group.severity, p.severity);
                continue;
            }
        }
        problems.push_back(std::move(p));
    }
    // A node's or a GPU's own incident where no line holds its GPUs: the lines say the same, in more detail.
    if (!singles.empty()) {
        std::vector<uint32_t> lined;
        for (size_t i = incidents; i < problems.size(); ++i) {
            lined.insert(lined.end(), problems[i].gpus.begin(), problems[i].gpus.end());
        }
        std::sort(lined.begin(), lined.end());
        for (Problem &single : singles) {
            const bool said = !single.gpus.empty()
                && std::all_of(single.gpus.begin(), single.gpus.end(),
                    [&](uint32_t gpu) { return std::binary_search(lined.begin(), lined.end(), gpu); });
            if (!said) {
                problems.push_back(std::move(single));
            }
        }
    }
    if (jobs != nullptr) {
        foldByJob(&problems, *jobs);
    }
    rankProblems(&problems, jobs);
    return problems;
}

void rankProblems(std::vector<Problem> *problems, const JobList *jobs)
{
    for (Problem &p : *problems) {
        std::sort(p.gpus.begin(), p.gpus.end());
        p.gpusHit = static_cast<uint32_t>(p.gpus.size());
        uint32_t outsideJobs = 0;
        uint32_t inJobs = 0;
        std::unordered_set<uint64_t> jobsHit;
        for (uint32_t gpu : p.gpus) {
            const Job *job = jobs ? jobs->runningJobOn(gpu) : nullptr;
            if (job == nullptr) {
                ++outsideJobs;
            } else if (jobsHit.insert(job->id).second) {
                p.jobIds.push_back(job->id);
                inJobs += static_cast<uint32_t>(job->gpus.size());
            }
        }
        p.blastGpus = inJobs + outsideJobs;
        if (p.incident) { // the backend's own counts where it knows more than the GPUs listed (runs cut, no jobs)
            p.gpusHit = std::max(p.gpusHit, p.incident->gpuCount);
            if (p.jobIds.empty()) {
                p.jobIds = p.incident->jobs;
            }
        }
    }
    sortProblems(problems);
}

void sortProblems(std::vector<Problem> *problems)
{
    std::sort(problems->begin(), problems->end(), [](const Problem &a, const Problem &b) {
        const bool aIncident = isSharedIncident(a);
        if (aIncident != isSharedIncident(b)) {
            return aIncident;
        }
        if (a.isQuietAlert() != b.isQuietAlert()) {
            return b.isQuietAlert();
        }
        if (a.severity != b.severity) {
            return a.severity > b.severity;
        }
        if (a.blastGpus != b.blastGpus) {
            return a.blastGpus > b.blastGpus;
        }
        return a.sinceMs != b.sinceMs ? a.sinceMs < b.sinceMs : a.key() < b.key();
    });
}

} // namespace fleetscope
