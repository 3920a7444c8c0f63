// SPDX-License-Identifier: Apache-2.0
#include "dcgm/prometheusjobs.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
uint64_t fnv(uint64_t h, std::string_view text)
{
    for (const char c : text) {
        h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    }
    return (h ^ 0xffU) * 0x100000001b3ULL;
}
} // namespace

std::string PrometheusJobs::withoutOrdinal(const std::string &pod)
{
    const auto dash = pod.rfind('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == pod.size()) {
        return pod;
    }
    const bool numeric = std::all_of(pod.begin() + static_cast<std::ptrdiff_t>(dash) + 1, pod.end(),
        [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
    return numeric ? pod.substr(0, dash) : pod;
}

bool PrometheusJobs::keyOf(const PromSample &labels, Key *key)
{
    if (!labels.hpcJob.empty()) {
        key->name = labels.hpcJob;
        key->owner = labels.hpcUser;
        // A Slurm job id is a number and is the job's id here too; anything else is hashed.
        uint64_t id = 0;
        const auto [ptr, ec] = std::from_chars(labels.hpcJob.data(), labels.hpcJob.data() + labels.hpcJob.size(), id);
        key->id = ec == std::errc() && ptr == labels.hpcJob.data() + labels.hpcJob.size() && id != 0
            ? id
            : (fnv(0xcbf29ce484222325ULL, labels.hpcJob) | (1ULL << 63U));
        return true;
    }
    if (!labels.pod.empty()) {
        key->name = withoutOrdinal(labels.pod);
        key->owner = labels.nameSpace;
        // Hashed ids have the top bit set, so that they never collide with a numeric HPC job id.
        key->id = fnv(fnv(0xcbf29ce484222325ULL, key->owner), key->name) | (1ULL << 63U);
        return true;
    }
    return false;
}

void PrometheusJobs::begin(uint32_t gpuCount)
{
    m_keys.clear();
    m_gpus.clear();
    m_nextJobOfGpu.assign(gpuCount, 0);
    m_seen.assign(gpuCount, 0);
}

void PrometheusJobs::add(uint32_t gpu, const PromSample &labels)
{
    if (gpu >= m_nextJobOfGpu.size() || (labels.hpcJob.empty() && labels.pod.empty())) {
        return;
    }
    // Every metric's series of a GPU name the same job: only the first is looked at (a GPU shared by two jobs is
    // looked at again whenever its series alternate, which sorting out its GPUs at the end absorbs).
    const uint64_t seen
        = fnv(fnv(fnv(fnv(0xcbf29ce484222325ULL, labels.hpcJob), labels.hpcUser), labels.nameSpace), labels.pod);
    if (m_seen[gpu] == seen) {
        return;
    }
    m_seen[gpu] = seen;
    Key key;
    keyOf(labels, &key);
    const uint64_t id = key.id;
    m_keys.try_emplace(id, std::move(key));
    m_gpus[id].push_back(gpu);
    if (m_nextJobOfGpu[gpu] == 0) {
        m_nextJobOfGpu[gpu] = id;
    }
}

void PrometheusJobs::finish(int64_t sampleMs, const FleetShape &shape, std::vector<FleetEvent> *events)
{
    auto event = [&](FleetEvent::Kind kind, const JobInfo &job, std::string text) {
        if (m_first) {
            return;
        }
        FleetEvent e;
        e.kind = kind;
        e.jobId = job.id;
        e.node = job.gpus.empty() ? -1 : static_cast<int64_t>(shape.nodeOfGpu[job.gpus.front()]);
        e.text = std::move(text);
        events->push_back(std::move(e));
    };
    for (auto it = m_running.begin(); it != m_running.end();) {
        if (m_gpus.count(it->first) == 0) {
            it->second.endMs = sampleMs;
            event(FleetEvent::Kind::JobEnd, it->second,
                fmt::format("job {} ({}) ended", it->second.name, it->second.owner));
            m_ended.push_back(std::move(it->second));
            it = m_running.erase(it);
        } else {
            ++it;
        }
    }
    m_ended.erase(std::remove_if(m_ended.begin(), m_ended.end(),
                      [&](const JobInfo &j) { return j.endMs < sampleMs - keepEndedMs; }),
        m_ended.end());
    for (auto &[id, gpus] : m_gpus) {
        std::sort(gpus.begin(), gpus.end());
        gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
        auto [it, added] = m_running.try_emplace(id);
        JobInfo &job = it->second;
        if (added) {
            const Key &key = m_keys.at(id);
            job.id = id;
            job.name = key.name;
            job.owner = key.owner;
            job.startMs = sampleMs;
        }
        job.gpus = gpus;
        job.firstGpu = gpus.front();
        job.gpuCount = gpus.back() - gpus.front() + 1;
        if (added) {
            event(FleetEvent::Kind::JobStart, job,
                fmt::format("job {} ({}) started on {} GPUs from {}", job.name, job.owner, gpus.size(),
                    shape.nodes[shape.nodeOfGpu[gpus.front()]].hostname));
        }
    }
    m_jobOfGpu.swap(m_nextJobOfGpu);
    m_first = false;
}

std::vector<JobInfo> PrometheusJobs::jobs() const
{
    std::vector<JobInfo> out;
    out.reserve(m_running.size() + m_ended.size());
    for (const auto &[id, job] : m_running) {
        out.push_back(job);
    }
    auto byStart = [](const JobInfo &a, const JobInfo &b) {
        return a.startMs != b.startMs ? a.startMs < b.startMs : a.name < b.name;
    };
    std::sort(out.begin(), out.end(), byStart);
    const size_t running = out.size();
    out.insert(out.end(), m_ended.begin(), m_ended.end());
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(running), out.end(), byStart);
    return out;
}

} // namespace fleetscope::backend
