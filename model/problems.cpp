// SPDX-License-Identifier: Apache-2.0
// ProblemBoard's events folded into problems as they come, and drift's problems.
#include "model/problems.h"

#include <algorithm>

namespace fleetscope {

void ProblemBoard::clear()
{
    m_problems.clear();
    m_incidents.clear();
    m_dropped = 0;
}

void ProblemBoard::add(const FleetEvent &e)
{
    auto open = [&](Problem::Kind kind, int64_t where, const QString &metric = QString()) -> Problem * {
        const Key key { static_cast<int>(kind), where, metric };
        if (m_problems.size() + m_incidents.size() >= maxProblems && m_problems.find(key) == m_problems.end()) {
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
    case EventKind::IncidentOpen:
    case EventKind::IncidentUpdate: { // an update of an incident not seen (the stream began after its open) opens it
        if (!e.incident) {
            ++m_dropped;
            return;
        }
        auto it = m_incidents.find(e.incident->id);
        if (it == m_incidents.end()) {
            if (m_problems.size() + m_incidents.size() >= maxProblems) {
                ++m_dropped;
                return;
            }
            it = m_incidents.try_emplace(e.incident->id).first;
        }
        Problem &p = it->second;
        p = Problem {}; // the incident as sent now, nothing kept from before
        p.kind = Problem::Kind::Incident;
        p.incident = e.incident;
        p.severity = e.severity;
        p.sinceMs = e.incident->startMs > 0 ? e.incident->startMs : e.timeMs;
        p.lastMs = e.timeMs;
        p.text = e.text;
        return;
    }
    case EventKind::IncidentClose:
        if (e.incident) {
            m_incidents.erase(e.incident->id);
        }
        return;
    case EventKind::JobStart:
    case EventKind::JobEnd:
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
