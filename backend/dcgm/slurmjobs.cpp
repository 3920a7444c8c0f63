// SPDX-License-Identifier: Apache-2.0
#include "dcgm/slurmjobs.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
constexpr size_t aliasesPerNode = 4; // a node's worker pod, and the few it had across restarts

uint64_t fnv(std::string_view text)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : text) {
        h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    }
    return (h ^ 0xffU) * 0x100000001b3ULL;
}

// Ids and node names are names of things, not text: letters, digits and the few marks Slurm, DNS and Kubernetes use.
bool isName(std::string_view text, size_t maxBytes)
{
    return !text.empty() && text.size() <= maxBytes && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '-'
            || c == '_' || c == '+' || c == '[' || c == ']';
    });
}

// A job's or user's name as the console shows it: at most maxBytes, cut before a UTF-8 continuation byte, control
// bytes as '?'.
std::string shownName(std::string_view text)
{
    size_t length = std::min(text.size(), SlurmJobs::maxNameBytes);
    while (length > 0 && length < text.size() && (static_cast<unsigned char>(text[length]) & 0xC0U) == 0x80U) {
        --length;
    }
    std::string out(text.substr(0, length));
    for (char &c : out) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20U || byte == 0x7FU) {
            c = '?';
        }
    }
    return out;
}

void copyBounded(std::string_view value, size_t maxBytes, std::string *out, bool *tooLong)
{
    if (value.size() > maxBytes) {
        *tooLong = true;
        value = value.substr(0, maxBytes);
    }
    out->assign(value);
}
} // namespace

std::string SlurmJobs::query()
{
    return fmt::format("{0} or ({1} and on(job_id) {0})", nodeJobSeries, jobInfoSeries);
}

void SlurmJobs::readLabel(std::string_view name, std::string_view value, Series *series)
{
    if (name == "__name__") {
        series->kind = value == nodeJobSeries ? Series::Kind::NodeJob
            : value == jobInfoSeries          ? Series::Kind::JobInfo
                                              : Series::Kind::Other;
    } else if (name == "job_id") {
        copyBounded(value, maxIdBytes, &series->jobId, &series->tooLong);
    } else if (name == "node_name") {
        copyBounded(value, maxNodeNameBytes, &series->nodeName, &series->tooLong);
    } else if (name == "job_name") {
        // Cut to be shown, not refused: a long name still names its job.
        series->jobName = shownName(value);
    } else if (name == "user_name") {
        series->userName = shownName(value);
    } else if (name == "start_time") {
        series->startTime.assign(value.substr(0, 32));
    }
}

uint64_t SlurmJobs::idOf(std::string_view jobId)
{
    if (jobId.empty()) {
        return 0;
    }
    uint64_t id = 0;
    const auto [ptr, ec] = std::from_chars(jobId.data(), jobId.data() + jobId.size(), id);
    if (ec == std::errc() && ptr == jobId.data() + jobId.size() && id != 0 && (id >> 63U) == 0) {
        return id;
    }
    return fnv(jobId) | (1ULL << 63U);
}

void SlurmJobs::noteAlias(uint32_t node, std::string_view pod, size_t nodeCount)
{
    if (node >= nodeCount || !isName(pod, maxNodeNameBytes)) {
        return;
    }
    if (m_aliasesOfNode.size() != nodeCount) {
        m_aliasesOfNode.assign(nodeCount, {});
        m_aliases.clear();
    }
    auto &mine = m_aliasesOfNode[node];
    if (std::find(mine.begin(), mine.end(), pod) != mine.end()) {
        return;
    }
    auto forget = [&](const std::string &name) {
        if (const auto it = m_aliases.find(name); it != m_aliases.end()) {
            auto &theirs = m_aliasesOfNode[it->second];
            theirs.erase(std::remove(theirs.begin(), theirs.end(), name), theirs.end());
            m_aliases.erase(it);
        }
    };
    if (mine.size() >= aliasesPerNode) {
        forget(std::string(mine.front()));
    }
    std::string name(pod);
    forget(name); // moved from another node
    m_aliases.emplace(name, node);
    m_aliasesOfNode[node].push_back(std::move(name));
}

void SlurmJobs::begin()
{
    m_report = {};
    m_nodeNames.clear();
    m_idText.clear();
    m_info.clear();
}

void SlurmJobs::bad(const Series &series, const char *why)
{
    if (m_report.badSeries++ == 0) {
        m_report.badExample = fmt::format("job_id '{}' node_name '{}': {}", shownName(series.jobId.substr(0, 32)),
            shownName(series.nodeName.substr(0, 64)), why);
    }
}

void SlurmJobs::add(const Series &series)
{
    ++m_report.series;
    if (series.kind == Series::Kind::Other) {
        return; // another series the query's answer carried: not ours to judge
    }
    if (series.tooLong) {
        bad(series, "a label over its bound");
        return;
    }
    if (!isName(series.jobId, maxIdBytes)) {
        bad(series, "no job id, or one that is not a Slurm id");
        return;
    }
    const uint64_t id = idOf(series.jobId);
    if (series.kind == Series::Kind::NodeJob) {
        if (!isName(series.nodeName, maxNodeNameBytes)) {
            bad(series, "no node name, or one that is not a host or pod name");
            return;
        }
        auto it = m_nodeNames.find(id);
        if (it == m_nodeNames.end()) {
            if (m_nodeNames.size() >= maxJobs) {
                ++m_report.droppedJobs;
                return;
            }
            it = m_nodeNames.emplace(id, std::vector<std::string> {}).first;
            m_idText.emplace(id, series.jobId);
        }
        it->second.push_back(series.nodeName);
        return;
    }
    if (m_info.size() >= maxJobs) {
        ++m_report.droppedJobs;
        return;
    }
    if (!m_info.emplace(id, Info { series.jobName, series.userName, series.startTime }).second) {
        ++m_report.duplicateInfo;
    }
}

void SlurmJobs::finish(int64_t sampleMs, const FleetShape &shape, const NodeOf &nodeOf, std::vector<FleetEvent> *events)
{
    const uint32_t n = shape.gpuCount;
    const auto nodeCount = static_cast<int64_t>(shape.nodes.size());
    std::vector<uint64_t> next(n, 0);
    std::map<uint64_t, std::vector<uint32_t>> gpusOf;
    std::vector<uint32_t> nodes;
    for (const auto &[id, names] : m_nodeNames) {
        nodes.clear();
        for (const auto &name : names) {
            int64_t k = nodeOf(name);
            if (k < 0) {
                const auto alias = m_aliases.find(name);
                k = alias == m_aliases.end() ? -1 : static_cast<int64_t>(alias->second);
            }
            if (k < 0 || k >= nodeCount) {
                if (m_report.unknownNodes++ == 0) {
                    m_report.unknownExample = name;
                }
                continue;
            }
            nodes.push_back(static_cast<uint32_t>(k));
        }
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        std::vector<uint32_t> gpus;
        for (const uint32_t k : nodes) {
            const auto &node = shape.nodes[k];
            for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount && g < n; ++g) {
                gpus.push_back(g);
                // Jobs sharing a node: each has all its GPUs, and the GPU's one job is the lowest id's.
                next[g] = next[g] == 0 ? id : next[g];
            }
        }
        if (!gpus.empty()) {
            std::sort(gpus.begin(), gpus.end());
            gpusOf.emplace(id, std::move(gpus));
        }
    }

    auto event = [&](FleetEvent::Kind kind, const JobInfo &job, std::string text) {
        if (m_first) {
            return;
        }
        FleetEvent e;
        e.kind = kind;
        e.jobId = job.id;
        e.node
            = job.gpus.empty() || job.gpus.front() >= n ? -1 : static_cast<int64_t>(shape.nodeOfGpu[job.gpus.front()]);
        e.text = std::move(text);
        events->push_back(std::move(e));
    };
    for (auto it = m_running.begin(); it != m_running.end();) {
        if (gpusOf.count(it->first) == 0) {
            it->second.endMs = sampleMs;
            event(FleetEvent::Kind::JobEnd, it->second,
                fmt::format("Slurm job {} {} ({}) ended", it->second.id, it->second.name, it->second.owner));
            m_ended.push_back(std::move(it->second));
            it = m_running.erase(it);
        } else {
            ++it;
        }
    }
    m_ended.erase(std::remove_if(m_ended.begin(), m_ended.end(),
                      [&](const JobInfo &j) { return j.endMs < sampleMs - keepEndedMs; }),
        m_ended.end());
    for (auto &[id, gpus] : gpusOf) {
        auto [it, added] = m_running.try_emplace(id);
        JobInfo &job = it->second;
        if (added) {
            job.id = id;
            job.name = shownName(m_idText[id]);
            job.startMs = sampleMs;
            // Back after ending (scontrol requeue keeps the id; a missed scrape looks the same): the running job is
            // the one listed, from the poll that first saw it unless Slurm's start time says otherwise below.
            const auto was
                = std::find_if(m_ended.rbegin(), m_ended.rend(), [id = id](const JobInfo &j) { return j.id == id; });
            if (was != m_ended.rend()) {
                job.startMs = was->startMs;
                m_ended.erase(
                    std::remove_if(m_ended.begin(), m_ended.end(), [id = id](const JobInfo &j) { return j.id == id; }),
                    m_ended.end());
            }
        }
        if (const auto info = m_info.find(id); info != m_info.end()) {
            // Refreshed each poll: an info series that came late still names the job.
            job.name = info->second.name.empty() ? job.name : info->second.name;
            job.owner = info->second.user;
            int64_t seconds = 0;
            const auto &text = info->second.startTime;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
            if (!text.empty()) {
                // Within [2000, the sample + a day]: a clock a little ahead is Slurm's, a year ahead is not.
                const bool read = ec == std::errc() && ptr == text.data() + text.size();
                if (read && seconds >= minStartMs / 1000 && seconds <= (sampleMs + 86400000) / 1000) {
                    job.startMs = seconds * 1000;
                } else {
                    ++m_report.badStartTimes;
                }
            }
        }
        job.gpus = std::move(gpus);
        job.firstGpu = job.gpus.front();
        job.gpuCount = job.gpus.back() - job.gpus.front() + 1;
        if (added) {
            event(FleetEvent::Kind::JobStart, job,
                fmt::format("Slurm job {} {} ({}) started on {} GPUs from {}", job.id, job.name, job.owner,
                    job.gpus.size(), shape.nodes[shape.nodeOfGpu[job.gpus.front()]].hostname));
        }
    }
    m_report.jobs = m_running.size();
    m_jobOfGpu.swap(next);
    m_first = false;
}

std::vector<JobInfo> SlurmJobs::jobs() const
{
    std::vector<JobInfo> out;
    out.reserve(m_running.size() + m_ended.size());
    for (const auto &[id, job] : m_running) {
        out.push_back(job);
    }
    out.insert(out.end(), m_ended.begin(), m_ended.end());
    return merged(std::move(out), {});
}

std::vector<JobInfo> SlurmJobs::merged(std::vector<JobInfo> slurm, std::vector<JobInfo> pods)
{
    std::set<uint64_t> ids;
    for (const auto &job : slurm) {
        ids.insert(job.id);
    }
    for (auto &job : pods) {
        if (ids.count(job.id) == 0) {
            slurm.push_back(std::move(job));
        }
    }
    const auto running
        = std::stable_partition(slurm.begin(), slurm.end(), [](const JobInfo &j) { return j.endMs == 0; });
    auto byStart = [](const JobInfo &a, const JobInfo &b) {
        return a.startMs != b.startMs ? a.startMs < b.startMs : a.name != b.name ? a.name < b.name : a.id < b.id;
    };
    std::sort(slurm.begin(), running, byStart);
    std::sort(running, slurm.end(), byStart);
    return slurm;
}

void SlurmJobs::mergedJobOfGpu(const std::vector<uint64_t> &pods, std::vector<uint64_t> *out) const
{
    out->assign(pods.begin(), pods.end());
    out->resize(std::max(pods.size(), m_jobOfGpu.size()), 0);
    for (size_t g = 0; g < m_jobOfGpu.size(); ++g) {
        if (m_jobOfGpu[g] != 0) {
            (*out)[g] = m_jobOfGpu[g];
        }
    }
}

} // namespace fleetscope::backend
