// SPDX-License-Identifier: Apache-2.0
#include "model/problems.h"

#include <QDateTime>
#include <QLocale>

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
    case Problem::Kind::Incident:
        return QStringLiteral("Incident");
    }
    return {};
}

namespace {
QString plural(uint64_t n, const char *one, const char *many)
{
    return QStringLiteral("%1 %2").arg(
        QLocale().toString(static_cast<qulonglong>(n)), QLatin1String(n == 1 ? one : many));
}

// "79 (GPU has fallen off the bus) ×3, 48 (…)"
QString xidList(const Problem &p)
{
    QStringList parts;
    for (const auto &[xid, count] : p.xids) {
        const QString meaning = xidMeaningText(xid);
        QString part
            = meaning.isEmpty() ? QString::number(xid) : QStringLiteral("%1 (%2)").arg(QString::number(xid), meaning);
        if (count > 1) {
            part += QStringLiteral(" ×%1").arg(count);
        }
        parts << part;
    }
    return parts.join(QStringLiteral(", "));
}

// What several GPUs of one job share: "3 GPUs with double-bit ECC errors".
QString foldedSummary(const Problem &p)
{
    const QString gpus = plural(p.gpus.size(), "GPU", "GPUs");
    switch (p.kind) {
    case Problem::Kind::XidBurst:
        return QStringLiteral("%1 with XID bursts: %2").arg(gpus, xidList(p));
    case Problem::Kind::EccDoubleBit:
        return QStringLiteral("%1 with double-bit ECC errors").arg(gpus);
    case Problem::Kind::ThermalThrottle:
        return QStringLiteral("%1 thermal throttling").arg(gpus);
    case Problem::Kind::PowerThrottle:
        return QStringLiteral("%1 power throttling").arg(gpus);
    case Problem::Kind::Anomaly:
        return QStringLiteral("%1 out of line with their peers (%2)").arg(gpus, p.metric);
    default:
        return QStringLiteral("%1: %2").arg(gpus, describe(p.kind));
    }
}
} // namespace

QString problemSummary(const Problem &p)
{
    if (p.foldedJob != 0) {
        return foldedSummary(p);
    }
    switch (p.kind) {
    case Problem::Kind::XidBurst:
        return QStringLiteral("XID burst: %1").arg(xidList(p));
    case Problem::Kind::Incident:
        if (!p.text.isEmpty()) {
            return p.text;
        }
        return p.incident
            ? QStringLiteral("%1 incident: %2").arg(p.incident->cause, plural(p.incident->gpuCount, "GPU", "GPUs"))
            : describe(p.kind);
    case Problem::Kind::Anomaly: // the detector's reason says what and by how much
    case Problem::Kind::Drift: // the versions and how many GPUs run each
        return p.text.isEmpty() ? describe(p.kind) : p.text;
    default:
        return describe(p.kind);
    }
}

QString problemPlace(const Problem &p, const Topology *topology)
{
    if (p.foldedJob != 0) {
        return p.foldedJobName.isEmpty() ? QStringLiteral("job %1").arg(p.foldedJob)
                                         : QStringLiteral("job %1").arg(p.foldedJobName);
    }
    if (p.kind == Problem::Kind::Incident) {
        const int64_t domain = p.incident ? p.incident->domain : -1;
        if (topology != nullptr && domain >= 0 && static_cast<uint64_t>(domain) < topology->domains.size()) {
            const auto &d = topology->domains[static_cast<size_t>(domain)];
            return QStringLiteral("%1 %2").arg(QLatin1String(domainKindName(d.kind)), d.name);
        }
        if (topology != nullptr && !p.gpus.empty()) {
            return smallestPlaceHolding(p.gpus, *topology).name(*topology);
        }
        return plural(p.incident ? p.incident->gpuCount : p.gpusHit, "GPU", "GPUs");
    }
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

bool isSharedIncident(const Problem &p)
{
    return p.kind == Problem::Kind::Incident && p.incident && p.incident->domain >= 0;
}

QString incidentCauseLabel(const Problem &p)
{
    if (p.kind != Problem::Kind::Incident) {
        return {};
    }
    return p.incident && !p.incident->cause.isEmpty() ? p.incident->cause.toUpper() : QStringLiteral("INCIDENT");
}

Place smallestPlaceHolding(const std::vector<uint32_t> &gpus, const Topology &topology)
{
    if (gpus.empty() || gpus.back() >= topology.gpuCount || topology.nodeOfGpu.size() < topology.gpuCount) {
        return Place::fleet();
    }
    const uint32_t first = gpus.front();
    const uint32_t last = gpus.back();
    if (first == last) {
        return Place::gpu(first);
    }
    const uint32_t firstNode = topology.nodeOfGpu[first];
    const uint32_t lastNode = topology.nodeOfGpu[last];
    if (firstNode == lastNode) {
        return Place::node(firstNode);
    }
    const uint32_t firstRack = topology.nodes[firstNode].rack;
    const uint32_t lastRack = topology.nodes[lastNode].rack;
    if (firstRack == lastRack) {
        return Place::rack(firstRack);
    }
    if (topology.racks[firstRack].row == topology.racks[lastRack].row) {
        return Place::row(topology.racks[firstRack].row);
    }
    return Place::fleet();
}

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

ProblemTally tallyProblems(const std::vector<Problem> &problems)
{
    ProblemTally tally;
    for (const auto &p : problems) {
        const bool critical = p.severity == EventSeverity::Critical;
        if (isSharedIncident(p)) {
            ++tally.incidents;
            tally.criticalIncidents += critical ? 1 : 0;
        } else {
            ++tally.others;
            tally.criticalOthers += critical ? 1 : 0;
        }
    }
    return tally;
}

QString tallyText(const ProblemTally &t)
{
    if (t.incidents == 0 && t.others == 0) {
        return QStringLiteral("No open problems");
    }
    QStringList parts;
    if (t.incidents > 0) {
        parts << plural(t.incidents, "incident", "incidents");
    }
    if (t.others > 0 || t.incidents == 0) {
        parts << (t.incidents > 0 ? plural(t.others, "other problem", "other problems")
                                  : plural(t.others, "problem", "problems"));
    }
    QString text = parts.join(QStringLiteral(" · "));
    if (const uint32_t critical = t.criticalIncidents + t.criticalOthers; critical > 0) {
        text += QStringLiteral(" (%1 critical)").arg(critical);
    }
    return text;
}

QString leadIncidentLine(const std::vector<Problem> &ranked, const ProblemTally &tally, EventSeverity *severity)
{
    const auto lead = std::find_if(ranked.begin(), ranked.end(), isSharedIncident);
    if (lead == ranked.end()) {
        return {};
    }
    if (severity != nullptr) {
        *severity = lead->severity;
    }
    QString line = incidentCauseLabel(*lead) + QStringLiteral(" · ") + lead->text;
    if (tally.incidents > 1) {
        line += QStringLiteral(" · ") + plural(tally.incidents - 1, "more incident", "more incidents");
    }
    if (tally.others > 0) {
        line += QStringLiteral(" · ") + plural(tally.others, "other problem", "other problems");
    }
    return line;
}

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
    return kind != K::Drift && kind != K::Incident; // a GPU's or a node's own incident
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
