// SPDX-License-Identifier: Apache-2.0
// The incident folder's state machine: each frame's onsets joining open incidents or waiting for the fold, incidents
// opened, updated and closed, and what they hold (their GPUs, counts and jobs). What a frame's GPUs show is read in
// incidentsymptoms.cpp, the fold in incidentfold.cpp, what incidents say in incidentwords.cpp.
#include "analytics/incidentfolder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
int symptomIndex(uint16_t bit)
{
    int i = 0;
    while (bit > 1) {
        bit = static_cast<uint16_t>(bit >> 1U);
        ++i;
    }
    return i;
}
} // namespace

// In the order they are folded: a leak before the power its trays lose, heat and power before the fabric.
const std::array<IncidentFolder::CauseClass, 5> IncidentFolder::classes = { {
    { Leak, kindBit(DomainKind::NvlinkDomain) | kindBit(DomainKind::CoolantLoop) | kindBit(DomainKind::Cdu),
        Leak | Down | Thermal | CoolantWarm | PowerBrake | Anomalous },
    { static_cast<uint16_t>(Thermal | CoolantWarm),
        kindBit(DomainKind::CoolingUnit) | kindBit(DomainKind::CoolantLoop) | kindBit(DomainKind::Cdu),
        Thermal | CoolantWarm | Leak | Anomalous },
    { static_cast<uint16_t>(PowerBrake | Down),
        kindBit(DomainKind::Pdu) | kindBit(DomainKind::Busway) | kindBit(DomainKind::PowerFeed)
            | kindBit(DomainKind::NvlinkDomain),
        PowerBrake | Down | Anomalous },
    { static_cast<uint16_t>(LinkDown | LinkErrors),
        kindBit(DomainKind::LeafSwitch) | kindBit(DomainKind::ScalableUnit) | kindBit(DomainKind::SpinePlane),
        LinkDown | LinkErrors | Anomalous },
    { GpuError, 0, GpuError },
} };

IncidentFolder::IncidentFolder(const FleetShape &shape)
    : IncidentFolder(shape, Options {})
{ }

IncidentFolder::IncidentFolder(const FleetShape &shape, const Options &options)
    : m_shape(shape)
    , m_options(options)
    , m_gpus(shape.gpuCount)
    , m_index(shape)
    , m_cur(shape.gpuCount, 0)
    , m_prev(shape.gpuCount, 0)
    , m_eventBits(shape.gpuCount, 0)
    , m_owner(shape.gpuCount, -1)
    , m_heatSince(shape.gpuCount, -std::numeric_limits<float>::infinity())
    , m_nodeDown(shape.nodes.size(), 0)
{
    const size_t domains = shape.domains.size();
    m_pend.assign(domains, 0);
    m_symp.assign(domains, 0);
    m_sympNodes.assign(domains, 0);
    m_lastNode.assign(domains, none);
    m_recentNodes.assign(domains, 0);
    m_lastRecentNode.assign(domains, none);
    m_pendFirst.assign(domains, 0);
    m_pendLast.assign(domains, 0);
    m_domainSlot.assign(domains, -1);
}

void IncidentFolder::judge(
    const Frame &frame, const std::vector<JobInfo> &jobs, double now, std::vector<FleetEvent> *events)
{
    const size_t given = events->size();
    readEvents(*events, given, now);
    scan(frame, now);
    joinOrWait(now, events);
    if (!m_pending.empty() && now - m_pendingSince >= m_options.foldSeconds) {
        fold(now, events);
    }
    publish(now, jobs, events);
    m_supply = nullptr;
    m_lastNow = now;
}

void IncidentFolder::joinOrWait(double now, std::vector<FleetEvent> *out)
{
    for (const Pending &p : m_onsets) {
        const int32_t owner = m_owner[p.gpu];
        const Open *held = owner >= 0 ? &m_open[static_cast<size_t>(owner)] : nullptr;
        if (held != nullptr && held->domain >= 0 && (p.bits & ~held->joins) == 0) {
            continue; // more of what its incident already is
        }
        if (held == nullptr || held->domain < 0) {
            const uint32_t slot = domainIncidentOf(p.gpu, p.bits);
            if (slot != none) {
                adopt(slot, p.gpu, out, now);
                continue;
            }
            if (held != nullptr) {
                continue; // a node's own incident takes whatever else its GPUs show
            }
        }
        if ((p.bits & ~Anomalous) == 0) {
            continue; // an anomaly is its own event; it opens no incident by itself
        }
        if (m_pending.size() >= m_options.maxPending) {
            ++m_dropped;
            continue;
        }
        if (m_pending.empty()) {
            m_pendingSince = now;
        }
        m_pending.push_back(p);
    }
}

// The open domain incident, smallest domain first, that holds the GPU, takes these symptoms and may take it; or none.
uint32_t IncidentFolder::domainIncidentOf(uint32_t gpu, uint16_t bits) const
{
    uint32_t found = none;
    m_index.forEachDomainOf(gpu, [&](uint32_t d) {
        const int32_t slot = m_domainSlot[d];
        if (found == none && slot >= 0 && (bits & m_open[static_cast<size_t>(slot)].joins) != 0
            && mayTake(static_cast<uint32_t>(slot), gpu)) {
            found = static_cast<uint32_t>(slot);
        }
    });
    return found;
}

uint32_t IncidentFolder::openSlot()
{
    if (m_openCount >= m_options.maxOpen) {
        return none;
    }
    uint32_t slot = 0;
    if (!m_freeSlots.empty()) {
        slot = m_freeSlots.back();
        m_freeSlots.pop_back();
    } else {
        slot = static_cast<uint32_t>(m_open.size());
        m_open.emplace_back();
    }
    m_open[slot] = Open {};
    m_open[slot].used = true;
    m_open[slot].id = m_nextId++;
    ++m_openCount;
    return slot;
}

// Every GPU that shows one of these symptoms joins the open domain incident that holds it, if one may take it: the
// GPUs that began before the fold, and those beyond maxPending.
void IncidentFolder::absorb(uint16_t bits, std::vector<FleetEvent> *out, double now)
{
    for (uint32_t g = 0; g < m_gpus; ++g) {
        const uint16_t s = m_cur[g] & bits;
        if (s == 0) {
            continue;
        }
        const int32_t owner = m_owner[g];
        if (owner >= 0 && m_open[static_cast<size_t>(owner)].domain >= 0) {
            continue;
        }
        const uint32_t slot = domainIncidentOf(g, s);
        if (slot != none) {
            adopt(slot, g, out, now);
        }
    }
}

// A domain incident may take a GPU no other domain incident holds, from a node incident only when all that the node
// incident has seen is the domain incident's kind of trouble (a GPU's own ECC error stays its own).
bool IncidentFolder::mayTake(uint32_t slot, uint32_t gpu) const
{
    const int32_t owner = m_owner[gpu];
    if (owner < 0) {
        return true;
    }
    const Open &held = m_open[static_cast<size_t>(owner)];
    return owner != static_cast<int32_t>(slot) && held.domain < 0
        && (held.seen & ~m_open[slot].joins & ~Anomalous) == 0;
}

// A GPU joins an incident; a node incident it leaves closes when nothing is left of it.
void IncidentFolder::adopt(uint32_t slot, uint32_t gpu, std::vector<FleetEvent> *out, double now)
{
    const int32_t before = m_owner[gpu];
    if (before == static_cast<int32_t>(slot)) {
        return;
    }
    if (before >= 0) {
        Open &old = m_open[static_cast<size_t>(before)];
        if (old.members.size() <= 1) {
            close(static_cast<uint32_t>(before), now, out, fmt::format("folded into incident {}", m_open[slot].id));
        } else {
            old.members.erase(std::remove(old.members.begin(), old.members.end(), gpu), old.members.end());
        }
        m_owner[gpu] = -1;
    }
    m_owner[gpu] = static_cast<int32_t>(slot);
    m_open[slot].members.push_back(gpu);
    m_open[slot].membersDirty = true;
}

void IncidentFolder::release(uint32_t slot)
{
    Open &o = m_open[slot];
    for (const uint32_t g : o.members) {
        if (m_owner[g] == static_cast<int32_t>(slot)) {
            m_owner[g] = -1;
        }
    }
    if (o.node >= 0) {
        m_nodeIncident.erase(static_cast<uint32_t>(o.node));
    }
    if (o.domain >= 0 && m_domainSlot[static_cast<size_t>(o.domain)] == static_cast<int32_t>(slot)) {
        m_domainSlot[static_cast<size_t>(o.domain)] = -1;
    }
    o = Open {};
    m_freeSlots.push_back(slot);
    --m_openCount;
}

void IncidentFolder::close(uint32_t slot, double now, std::vector<FleetEvent> *out, const std::string &why)
{
    Open &o = m_open[slot];
    if (!o.fresh) {
        auto incident = describe(o);
        if (!why.empty()) {
            incident->evidence += "; " + why;
        }
        FleetEvent e = eventOf(o, EventKind::IncidentClose, now, incident);
        e.severity = EventSeverity::Info;
        e.text = fmt::format("Closed: {}", e.text);
        out->push_back(std::move(e));
    }
    release(slot);
}

uint32_t IncidentFolder::Counts::of(Symptom symptom) const
{
    return bySymptom[static_cast<size_t>(symptomIndex(symptom))];
}

void IncidentFolder::Counts::raise(const Counts &other)
{
    for (size_t i = 0; i < bySymptom.size(); ++i) {
        bySymptom[i] = std::max(bySymptom[i], other.bySymptom[i]);
    }
    active = std::max(active, other.active);
    nodesBraked = std::max(nodesBraked, other.nodesBraked);
    nodesDown = std::max(nodesDown, other.nodesDown);
    nodesLeaking = std::max(nodesLeaking, other.nodesLeaking);
    racks = std::max(racks, other.racks);
    coolantRise = std::max(coolantRise, other.coolantRise);
}

void IncidentFolder::tally(Open &o)
{
    if (o.membersDirty) {
        std::sort(o.members.begin(), o.members.end());
        o.members.erase(std::unique(o.members.begin(), o.members.end()), o.members.end());
        o.membersDirty = false;
    }
    Counts &c = o.now;
    c = Counts {};
    uint32_t lastBraked = none;
    uint32_t lastDown = none;
    uint32_t lastLeak = none;
    uint32_t lastRack = none;
    for (const uint32_t g : o.members) {
        const auto s = static_cast<uint16_t>(m_cur[g] & o.joins);
        if (s == 0) {
            continue;
        }
        ++c.active;
        o.seen |= s;
        for (int i = 0; i < symptomCount; ++i) {
            c.bySymptom[static_cast<size_t>(i)] += (s >> static_cast<uint32_t>(i)) & 1U;
        }
        const uint32_t node = m_shape.nodeOfGpu[g];
        const uint32_t rack = m_shape.nodes[node].rack;
        const auto countNode = [&](uint16_t bit, uint32_t *last, uint32_t *n) {
            if ((s & bit) != 0 && *last != node) {
                *last = node;
                ++*n;
            }
        };
        countNode(PowerBrake, &lastBraked, &c.nodesBraked);
        countNode(Down, &lastDown, &c.nodesDown);
        countNode(Leak, &lastLeak, &c.nodesLeaking);
        if (lastRack != rack) {
            lastRack = rack;
            ++c.racks;
        }
        if (m_supply != nullptr && !m_coolantBase.empty() && !std::isnan(m_supply[g])
            && !std::isnan(m_coolantBase[g])) {
            c.coolantRise = std::max(c.coolantRise, m_supply[g] - m_coolantBase[g]);
        }
    }
    o.peak.raise(c);
}

void IncidentFolder::countJobs(Open &o, const std::vector<JobInfo> &jobs)
{
    o.jobs.clear();
    const auto &m = o.members;
    for (const JobInfo &job : jobs) {
        if (job.endMs != 0 || m.empty()) {
            continue;
        }
        uint32_t hits = 0;
        if (job.gpus.empty()) {
            const uint64_t end = static_cast<uint64_t>(job.firstGpu) + job.gpuCount;
            const auto from = std::lower_bound(m.begin(), m.end(), job.firstGpu);
            const auto to = std::lower_bound(from, m.end(), end);
            hits = static_cast<uint32_t>(to - from);
        } else {
            auto it = m.begin();
            for (const uint32_t g : job.gpus) {
                it = std::lower_bound(it, m.end(), g);
                if (it == m.end()) {
                    break;
                }
                hits += *it == g ? 1 : 0;
            }
        }
        if (hits > 0) {
            o.jobs.emplace_back(job.id, hits);
        }
    }
    std::stable_sort(o.jobs.begin(), o.jobs.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
}

void IncidentFolder::publish(double now, const std::vector<JobInfo> &jobs, std::vector<FleetEvent> *out)
{
    for (uint32_t slot = 0; slot < m_open.size(); ++slot) {
        Open &o = m_open[slot];
        if (!o.used) {
            continue;
        }
        tally(o);
        const bool opening = o.fresh;
        if (opening) {
            o.fresh = false;
            countJobs(o, jobs);
            o.lastJobsAt = now;
        } else if (o.now.active == 0) {
            if (o.clearedSince < 0) {
                o.clearedSince = now;
            }
            if (now - o.clearedSince >= m_options.clearSeconds) {
                close(slot, now, out, std::string());
            }
            continue;
        } else {
            o.clearedSince = -1;
            if (now - o.lastSent < m_options.minUpdateSeconds) {
                continue;
            }
            if (now - o.lastJobsAt >= m_options.minUpdateSeconds) {
                countJobs(o, jobs);
                o.lastJobsAt = now;
            }
            const bool changed
                = o.members.size() != o.sentGpus || o.jobs.size() != o.sentJobs || severityOf(o) != o.sentSeverity;
            if (!changed && now - o.lastSent < m_options.refreshSeconds) {
                continue;
            }
        }
        out->push_back(eventOf(o, opening ? EventKind::IncidentOpen : EventKind::IncidentUpdate, now, describe(o)));
        o.lastSent = now;
        o.sentGpus = static_cast<uint32_t>(o.members.size());
        o.sentJobs = o.jobs.size();
        o.sentSeverity = severityOf(o);
    }
}

size_t IncidentFolder::heldBytes() const
{
    size_t bytes = m_pending.capacity() * sizeof(Pending) + m_onsets.capacity() * sizeof(Pending)
        + m_errorUntil.capacity() * sizeof(m_errorUntil[0]) + m_open.capacity() * sizeof(Open);
    for (const Open &o : m_open) {
        bytes += o.members.capacity() * sizeof(uint32_t) + o.jobs.capacity() * sizeof(o.jobs[0])
            + o.firstText.capacity() + o.openEvidence.capacity();
    }
    for (const auto &text : m_textOf) {
        bytes += text.second.capacity() + 32;
    }
    return bytes;
}

} // namespace fleetscope::backend
