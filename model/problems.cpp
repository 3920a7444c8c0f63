// SPDX-License-Identifier: Apache-2.0
#include "model/problems.h"

#include <QDateTime>

#include <algorithm>
#include <unordered_set>

namespace fleetscope {

QString describe(Problem::Kind kind)
{
    switch (kind) {
    case Problem::Kind::XidBurst:
        return QStringLiteral("XID burst");
    case Problem::Kind::EccDoubleBit:
        return QStringLiteral("ECC double-bit");
    case Problem::Kind::ThermalThrottle:
        return QStringLiteral("Thermal throttling");
    case Problem::Kind::PowerThrottle:
        return QStringLiteral("Power throttling");
    case Problem::Kind::NodeDown:
        return QStringLiteral("Node down");
    case Problem::Kind::Anomaly:
        return QStringLiteral("Anomaly");
    case Problem::Kind::Drift:
        return QStringLiteral("Version drift");
    }
    return {};
}

QString problemSummary(const Problem &p)
{
    switch (p.kind) {
    case Problem::Kind::XidBurst: {
        QStringList parts;
        for (const auto &[xid, count] : p.xids) {
            const QString meaning = xidMeaningText(xid);
            QString part = meaning.isEmpty() ? QString::number(xid)
                                             : QStringLiteral("%1 (%2)").arg(QString::number(xid), meaning);
            if (count > 1) {
                part += QStringLiteral(" ×%1").arg(count);
            }
            parts << part;
        }
        return QStringLiteral("XID burst: %1").arg(parts.join(QStringLiteral(", ")));
    }
    case Problem::Kind::Anomaly: // the detector's reason says what and by how much
    case Problem::Kind::Drift: // the versions and how many GPUs run each
        return p.text.isEmpty() ? describe(p.kind) : p.text;
    default:
        return describe(p.kind);
    }
}

QString problemPlace(const Problem &p, const Topology *topology)
{
    if (topology == nullptr) {
        return p.gpu >= 0 ? QStringLiteral("GPU #%1").arg(p.gpu) : QStringLiteral("node #%1").arg(p.node);
    }
    if (p.gpu >= 0 && static_cast<uint64_t>(p.gpu) < topology->gpuCount) {
        const auto gpu = static_cast<uint32_t>(p.gpu);
        const auto &node = topology->nodeOf(gpu);
        return QStringLiteral("%1 GPU %2").arg(node.hostname).arg(gpu - node.firstGpu);
    }
    if (p.rack >= 0 && static_cast<uint64_t>(p.rack) < topology->racks.size()) {
        return QStringLiteral("rack %1 (%2 GPUs)")
            .arg(topology->racks[static_cast<size_t>(p.rack)].name)
            .arg(p.gpus.size());
    }
    if (p.gpu < 0 && p.node >= 0 && static_cast<uint64_t>(p.node) < topology->nodes.size()) {
        return topology->nodes[static_cast<size_t>(p.node)].hostname;
    }
    if (p.kind == Problem::Kind::Drift && !p.gpus.empty()) { // a job's GPUs off its majority, wherever they are
        std::vector<uint32_t> racks;
        for (uint32_t gpu : p.gpus) {
            if (gpu < topology->gpuCount) {
                racks.push_back(topology->nodeOf(gpu).rack);
            }
        }
        std::sort(racks.begin(), racks.end());
        racks.erase(std::unique(racks.begin(), racks.end()), racks.end());
        if (racks.size() == 1) {
            return QStringLiteral("rack %1 (%2 GPUs)").arg(topology->racks[racks[0]].name).arg(p.gpus.size());
        }
        return QStringLiteral("%1 GPUs in %2 racks").arg(p.gpus.size()).arg(racks.size());
    }
    return QStringLiteral("(not in this topology)");
}

void ProblemBoard::clear()
{
    m_problems.clear();
    m_dropped = 0;
}

void ProblemBoard::add(const FleetEvent &e)
{
    auto open = [&](Problem::Kind kind, int64_t where, const QString &metric = QString()) -> Problem * {
        const Key key { static_cast<int>(kind), where, metric };
        if (m_problems.size() >= maxProblems && m_problems.find(key) == m_problems.end()) {
            ++m_dropped;
            return nullptr;
        }
        auto [it, added] = m_problems.try_emplace(key);
        Problem &p = it->second;
        if (added) {
            p.kind = kind;
            p.gpu = e.gpu;
            p.node = e.node;
            p.sinceMs = e.timeMs;
            p.severity = e.severity;
            p.metric = metric;
        }
        p.lastMs = std::max(p.lastMs, e.timeMs);
        p.severity = std::max(p.severity, e.severity);
        p.text = e.text;
        return &p;
    };
    auto close = [&](Problem::Kind kind, int64_t where, const QString &metric = QString()) {
        m_problems.erase(Key { static_cast<int>(kind), where, metric });
    };

    switch (e.kind) {
    case EventKind::Xid: {
        if (e.gpu < 0) {
            return;
        }
        const Key key { static_cast<int>(Problem::Kind::XidBurst), e.gpu, QString() };
        // A burst ends after three minutes without an XID; the next one starts another.
        if (auto it = m_problems.find(key); it != m_problems.end() && e.timeMs - it->second.lastMs > burstSilenceMs) {
            m_problems.erase(it);
        }
        Problem *burst = open(Problem::Kind::XidBurst, e.gpu);
        if (burst == nullptr) {
            return;
        }
        auto seen = std::find_if(
            burst->xids.begin(), burst->xids.end(), [&e](const auto &entry) { return entry.first == e.xid; });
        if (seen != burst->xids.end()) {
            ++seen->second;
        } else if (burst->xids.size() < maxXidCodes) {
            burst->xids.emplace_back(e.xid, 1);
        } else {
            ++m_dropped;
        }
        return;
    }
    case EventKind::EccDoubleBit:
        if (Problem *ecc = e.gpu >= 0 ? open(Problem::Kind::EccDoubleBit, e.gpu) : nullptr) {
            ecc->severity = EventSeverity::Critical;
        }
        return;
    case EventKind::ThermalThrottleStart:
        if (e.gpu >= 0) {
            open(Problem::Kind::ThermalThrottle, e.gpu);
        }
        return;
    case EventKind::ThermalThrottleEnd:
        close(Problem::Kind::ThermalThrottle, e.gpu);
        return;
    case EventKind::PowerThrottleStart:
        if (e.gpu >= 0) {
            open(Problem::Kind::PowerThrottle, e.gpu);
        }
        return;
    case EventKind::PowerThrottleEnd:
        close(Problem::Kind::PowerThrottle, e.gpu);
        return;
    case EventKind::NodeDown:
        if (Problem *down = e.node >= 0 ? open(Problem::Kind::NodeDown, e.node) : nullptr) {
            down->gpu = -1;
            down->severity = EventSeverity::Critical;
        }
        return;
    case EventKind::NodeUp:
        close(Problem::Kind::NodeDown, e.node);
        return;
    case EventKind::AnomalyStart:
        if (e.gpu >= 0) {
            open(Problem::Kind::Anomaly, e.gpu, e.metric);
        }
        return;
    case EventKind::AnomalyEnd:
        close(Problem::Kind::Anomaly, e.gpu, e.metric);
        return;
    case EventKind::JobStart:
    case EventKind::JobEnd:
    case EventKind::IncidentOpen:
    case EventKind::IncidentUpdate:
    case EventKind::IncidentClose:
        return;
    }
}

std::vector<uint32_t> ProblemBoard::gpusWith(Problem::Kind kind) const
{
    std::vector<uint32_t> gpus;
    for (const auto &[key, problem] : m_problems) {
        if (problem.kind == kind && problem.gpu >= 0 && problem.gpu <= int64_t { UINT32_MAX }) {
            gpus.push_back(static_cast<uint32_t>(problem.gpu));
        }
    }
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    return gpus;
}

std::vector<Problem> ProblemBoard::open(int64_t nowMs, const Topology *topology, const JobList *jobs) const
{
    std::vector<Problem> problems;
    problems.reserve(m_problems.size());
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
    }
    sortProblems(problems);
}

void sortProblems(std::vector<Problem> *problems)
{
    std::sort(problems->begin(), problems->end(), [](const Problem &a, const Problem &b) {
        if (a.severity != b.severity) {
            return a.severity > b.severity;
        }
        if (a.blastGpus != b.blastGpus) {
            return a.blastGpus > b.blastGpus;
        }
        return a.sinceMs != b.sinceMs ? a.sinceMs < b.sinceMs : a.key() < b.key();
    });
}

std::vector<Problem> driftProblems(const VersionDrift &drift)
{
    std::vector<Problem> problems;
    auto gpusOn = [&drift](int version) {
        return version >= 0 && static_cast<size_t>(version) < drift.versions.size()
            ? drift.versions[static_cast<size_t>(version)]
            : VersionDrift::Version {};
    };
    for (const auto &group : drift.groups) {
        if (group.offGpus.empty()) {
            continue;
        }
        Problem p;
        p.kind = Problem::Kind::Drift;
        p.severity = group.jobId != 0 ? EventSeverity::Warning : EventSeverity::Info;
        p.driftJob = group.jobId;
        p.rack = group.jobId != 0 ? -1 : group.rack;
        p.sinceMs = group.sinceMs;
        p.lastMs = group.sinceMs;
        p.gpus = group.offGpus;
        // "job llm-7b: 16 of 256 GPUs on driver 550.127.08 · VBIOS 96.00.A5.00.01; the rest on driver 550.54.15 · …"
        QStringList others;
        for (int v : group.others) {
            others << gpusOn(v).label();
        }
        p.text = QStringLiteral("%1 %2: %3 of %4 GPUs on %5; the rest on %6")
                     .arg(group.jobId != 0 ? QStringLiteral("job") : QStringLiteral("rack"), group.name)
                     .arg(group.offGpus.size())
                     .arg(group.gpus)
                     .arg(others.join(QStringLiteral(" or ")), gpusOn(group.majority).label());
        problems.push_back(std::move(p));
    }
    return problems;
}

} // namespace fleetscope
