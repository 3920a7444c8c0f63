// SPDX-License-Identifier: Apache-2.0
// What an incident says, for people: its headline, evidence, cause, severity and the event that carries it.
#include "analytics/incidentwords.h"

#include "analytics/incidentfolder.h"

#include <algorithm>

#include <fmt/format.h>

namespace fleetscope::backend::incidentwords {

std::string capitalised(std::string text)
{
    if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') {
        text[0] = static_cast<char>(text[0] - 'a' + 'A');
    }
    return text;
}

std::string plural(DomainKind kind)
{
    const std::string name = domainKindName(kind);
    return name == "leaf" ? std::string("leaves") : name + "s";
}

std::string count(size_t n, const char *one, const char *many)
{
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

// What a GPU shows, for people: "thermal throttling, link down".
std::string symptomWords(uint16_t bits)
{
    static constexpr const char *words[IncidentFolder::symptomCount] = { "down", "thermal throttling", "power-braked",
        "link down", "link errors climbing", "leak", "coolant warming", "anomalous", "serious GPU error" };
    std::string out;
    for (int i = 0; i < IncidentFolder::symptomCount; ++i) {
        if ((bits & (1U << static_cast<uint32_t>(i))) != 0) {
            out += out.empty() ? "" : ", ";
            out += words[i];
        }
    }
    return out;
}

} // namespace fleetscope::backend::incidentwords

namespace fleetscope::backend {

using incidentwords::capitalised;
using incidentwords::count;
using incidentwords::plural;
using incidentwords::symptomWords;

// "r03-k05-n04, corded to it alone, went down", or "2 nodes corded to it alone went down (r01-k02-t04, r01-k02-t12)".
std::string IncidentFolder::corded(const std::vector<uint32_t> &nodes) const
{
    if (nodes.size() == 1) {
        return fmt::format("{}, corded to it alone, went down", m_shape.nodes[nodes[0]].hostname);
    }
    constexpr size_t named = 3;
    std::string hosts;
    for (size_t i = 0; i < nodes.size() && i < named; ++i) {
        hosts += (i == 0 ? "" : ", ") + m_shape.nodes[nodes[i]].hostname;
    }
    if (nodes.size() > named) {
        hosts += fmt::format(" and {} more", nodes.size() - named);
    }
    return fmt::format("{} nodes corded to it alone went down ({})", nodes.size(), hosts);
}

EventSeverity IncidentFolder::severityOf(const Open &o) const
{
    const bool takesGpusOut = (o.seen & (Down | LinkDown | Leak | GpuError)) != 0 || o.cls == GpuClass;
    return takesGpusOut || o.jobs.size() >= m_options.criticalJobs ? EventSeverity::Critical : EventSeverity::Warning;
}

std::shared_ptr<Incident> IncidentFolder::describe(const Open &o) const
{
    auto incident = std::make_shared<Incident>();
    incident->id = o.id;
    incident->startSeconds = o.start;
    incident->domain = o.domain;
    if (o.domain >= 0) {
        // By what it is about, not the domain's kind: a leak in an NVLink domain (a rack) is about its cooling.
        static constexpr const char *causes[] = { "cooling", "cooling", "power", "network" };
        incident->cause = causes[std::clamp(o.cls, 0, 3)];
    } else {
        incident->cause = o.members.size() == 1 && (o.seen & Down) == 0 ? "gpu" : "node";
    }
    incident->evidence = evidence(o);
    incident->gpuCount = static_cast<uint32_t>(o.members.size());
    for (const uint32_t g : o.members) {
        if (!incident->gpuRuns.empty() && incident->gpuRuns.back().first + incident->gpuRuns.back().second == g) {
            ++incident->gpuRuns.back().second;
        } else {
            incident->gpuRuns.emplace_back(g, 1);
        }
    }
    incident->jobs.reserve(o.jobs.size());
    for (const auto &job : o.jobs) {
        incident->jobs.push_back(job.first);
    }
    return incident;
}

std::string IncidentFolder::headline(const Open &o) const
{
    const size_t gpus = o.members.size();
    const bool out = (o.seen & (Down | LinkDown | Leak)) != 0;
    const std::string jobs = o.jobs.empty()
        ? std::string()
        : fmt::format(", {} {}", count(o.jobs.size(), "job", "jobs"), out ? "stalled" : "slowed");
    if (o.domain < 0) {
        const auto node = static_cast<uint32_t>(o.node);
        const auto &host = m_shape.nodes[node].hostname;
        if ((o.seen & Down) != 0) {
            return fmt::format("{} down{}", host, jobs);
        }
        if (!o.firstText.empty()) {
            return o.firstText + jobs;
        }
        if (gpus == 1) {
            return fmt::format(
                "{} GPU {}: {}{}", host, o.members[0] - m_shape.nodes[node].firstGpu, symptomWords(o.seen), jobs);
        }
        return fmt::format("{}: {} {}{}", host, count(gpus, "GPU", "GPUs"), symptomWords(o.seen), jobs);
    }
    const Domain &d = m_shape.domains[static_cast<size_t>(o.domain)];
    const std::string name = capitalised(fmt::format("{} {}", domainKindName(d.kind), d.name));
    const auto down = o.peak.of(Down);
    switch (o.cls) {
    case LeakClass:
        return fmt::format("Leak in {}: {} hit, {} down{}", name, count(gpus, "GPU", "GPUs"), down, jobs);
    case CoolingClass:
        return o.peak.of(Thermal) > 0
            ? fmt::format("{} failing: {} throttling{}", name, count(o.peak.of(Thermal), "GPU", "GPUs"), jobs)
            : fmt::format("{} failing: coolant warming on {}{}", name, count(gpus, "GPU", "GPUs"), jobs);
    case PowerClass:
        return fmt::format(
            "{} tripped: {} power-braked, {} down{}", name, count(o.peak.of(PowerBrake), "GPU", "GPUs"), down, jobs);
    default:
        return o.peak.of(LinkDown) > 0
            ? fmt::format("{} down: {} lost their link{}", name, count(gpus, "GPU", "GPUs"), jobs)
            : fmt::format("{}: link errors on {}{}", name, count(gpus, "GPU", "GPUs"), jobs);
    }
}

std::string IncidentFolder::evidence(const Open &o) const
{
    const size_t gpus = o.members.size();
    if (o.domain < 0) {
        const auto &host = m_shape.nodes[static_cast<size_t>(o.node)].hostname;
        return fmt::format("{}: {} {}; no shared domain shows it", host, count(gpus, "GPU", "GPUs"),
            symptomWords(static_cast<uint16_t>(o.seen & ~Anomalous)));
    }
    const Domain &d = m_shape.domains[static_cast<size_t>(o.domain)];
    const auto total = m_index.gpus(static_cast<size_t>(o.domain));
    const std::string name = fmt::format("{} {}", domainKindName(d.kind), d.name);
    switch (o.cls) {
    case LeakClass:
        return fmt::format("{}: leak sensors on {} tripped, {} down{}", capitalised(name),
            count(o.peak.nodesLeaking, "tray", "trays"), count(o.peak.nodesDown, "node", "nodes"), o.openEvidence);
    case CoolingClass: {
        const std::string supply
            = o.peak.coolantRise > 0 ? fmt::format(" (supply +{:.0f} °C)", o.peak.coolantRise) : std::string();
        return fmt::format("{}: {} warming{}, {} of {} GPUs throttling{}", capitalised(name),
            count(o.peak.racks, "rack", "racks"), supply, o.peak.of(Thermal), total, o.openEvidence);
    }
    case PowerClass:
        return fmt::format("{} tripped: {} power-braked, {} down{}", capitalised(name),
            count(o.peak.nodesBraked, "node", "nodes"), count(o.peak.nodesDown, "node", "nodes"), o.openEvidence);
    default:
        return o.peak.of(LinkDown) > 0
            ? fmt::format("{} of {} GPUs behind {} lost their link{}", gpus, total, name, o.openEvidence)
            : fmt::format("{} of {} GPUs behind {} with link errors climbing{}", gpus, total, name, o.openEvidence);
    }
}

FleetEvent IncidentFolder::eventOf(
    const Open &o, EventKind kind, double now, std::shared_ptr<const Incident> incident) const
{
    int64_t gpu = -1;
    int64_t node = -1;
    if (o.domain < 0) {
        node = o.node;
        gpu = incident->cause == "gpu" && !o.members.empty() ? static_cast<int64_t>(o.members[0]) : -1;
    }
    FleetEvent e(now, kind, severityOf(o), gpu, node, headline(o));
    e.incident = std::move(incident);
    return e;
}

} // namespace fleetscope::backend
