// SPDX-License-Identifier: Apache-2.0
#include "analytics/incidentfolder.h"

#include "common/health.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
// DCGM's clock-event reasons (ThrottleReasons): software and hardware thermal slowdown; the software power cap and
// the hardware power brake.
constexpr uint32_t reasonsThermal = 0x20 | 0x40;
constexpr uint32_t reasonsPower = 0x4 | 0x80;
constexpr uint32_t none = std::numeric_limits<uint32_t>::max();

constexpr uint32_t kindBit(DomainKind kind)
{
    return 1U << static_cast<uint32_t>(kind);
}

const float *planeOf(const Frame &frame, MetricId id, uint32_t gpus)
{
    const auto &plane = frame.plane(id);
    return plane.size() == gpus ? plane.data() : nullptr;
}

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
    , m_cur(shape.gpuCount, 0)
    , m_prev(shape.gpuCount, 0)
    , m_eventBits(shape.gpuCount, 0)
    , m_owner(shape.gpuCount, -1)
    , m_heatSince(shape.gpuCount, -std::numeric_limits<float>::infinity())
    , m_nodeDown(shape.nodes.size(), 0)
{
    const size_t domains = shape.domains.size();
    m_domainGpus.assign(domains, 0);
    m_domainNodes.assign(domains, 0);
    m_domainRacks.assign(domains, 0);
    m_pend.assign(domains, 0);
    m_symp.assign(domains, 0);
    m_sympNodes.assign(domains, 0);
    m_lastNode.assign(domains, none);
    m_recentNodes.assign(domains, 0);
    m_lastRecentNode.assign(domains, none);
    m_pendFirst.assign(domains, 0);
    m_pendLast.assign(domains, 0);
    m_domainSlot.assign(domains, -1);
    std::vector<uint32_t> lastRack(domains, none);
    for (uint32_t g = 0; g < m_gpus && domains > 0; ++g) {
        const uint32_t node = shape.nodeOfGpu[g];
        const uint32_t rack = shape.nodes[node].rack;
        forEachDomainOf(g, [&](uint32_t d) {
            ++m_domainGpus[d];
            if (m_lastNode[d] != node) {
                m_lastNode[d] = node;
                ++m_domainNodes[d];
            }
            if (lastRack[d] != rack) {
                lastRack[d] = rack;
                ++m_domainRacks[d];
            }
        });
    }
}

// Each domain that serves the GPU once, its own (leaf, rack's, node's) and their parents; no allocation.
template <typename F> void IncidentFolder::forEachDomainOf(uint32_t gpu, F &&f) const
{
    const auto &domains = m_shape.domains;
    if (domains.empty() || gpu >= m_gpus) {
        return;
    }
    std::array<uint32_t, 24> seen {};
    size_t n = 0;
    const auto visit = [&](uint32_t d) {
        for (int depth = 0; d < domains.size() && depth < 8; ++depth) {
            if (std::find(seen.begin(), seen.begin() + static_cast<ptrdiff_t>(n), d)
                != seen.begin() + static_cast<ptrdiff_t>(n)) {
                return;
            }
            if (n < seen.size()) {
                seen[n++] = d;
            }
            f(d);
            const int32_t parent = domains[d].parent;
            if (parent < 0) {
                return;
            }
            d = static_cast<uint32_t>(parent);
        }
    };
    if (gpu < m_shape.gpuLinks.size() && m_shape.gpuLinks[gpu].leaf != GpuLink::none) {
        visit(m_shape.gpuLinks[gpu].leaf);
    }
    const auto &node = m_shape.nodes[m_shape.nodeOfGpu[gpu]];
    for (const uint32_t d : m_shape.racks[node.rack].domains) {
        visit(d);
    }
    for (const uint32_t d : node.domains) {
        visit(d);
    }
}

bool IncidentFolder::domainHolds(uint32_t domain, uint32_t gpu) const
{
    bool found = false;
    forEachDomainOf(gpu, [&](uint32_t d) { found = found || d == domain; });
    return found;
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

void IncidentFolder::readEvents(const std::vector<FleetEvent> &events, size_t count, double now)
{
    const auto remember = [&](uint32_t key, const std::string &text) {
        if (m_textOf.size() < m_options.maxOpen) {
            m_textOf.emplace(key, text);
        }
    };
    for (size_t i = 0; i < count; ++i) {
        const FleetEvent &e = events[i];
        const bool gpuValid = e.gpu >= 0 && e.gpu < static_cast<int64_t>(m_gpus);
        const bool nodeValid = e.node >= 0 && e.node < static_cast<int64_t>(m_nodeDown.size());
        const auto g = static_cast<uint32_t>(gpuValid ? e.gpu : 0);
        const auto setBit = [&](uint16_t bit, bool on) {
            if (gpuValid) {
                m_eventBits[g] = static_cast<uint16_t>(on ? (m_eventBits[g] | bit) : (m_eventBits[g] & ~bit));
            }
        };
        switch (e.kind) {
        case EventKind::NodeDown:
        case EventKind::NodeUp:
            if (nodeValid) {
                m_nodeDown[static_cast<size_t>(e.node)] = e.kind == EventKind::NodeDown ? 1 : 0;
                if (e.kind == EventKind::NodeDown) {
                    remember(nodeKey | static_cast<uint32_t>(e.node), e.text);
                }
            }
            break;
        case EventKind::ThermalThrottleStart:
        case EventKind::ThermalThrottleEnd:
            setBit(Thermal, e.kind == EventKind::ThermalThrottleStart);
            break;
        case EventKind::PowerThrottleStart:
        case EventKind::PowerThrottleEnd:
            setBit(PowerBrake, e.kind == EventKind::PowerThrottleStart);
            break;
        case EventKind::AnomalyStart:
        case EventKind::AnomalyEnd:
            setBit(Anomalous, e.kind == EventKind::AnomalyStart);
            break;
        case EventKind::Xid:
        case EventKind::EccDoubleBit:
            if (!gpuValid || (e.kind == EventKind::Xid && e.severity != EventSeverity::Critical)) {
                break;
            }
            remember(g, e.text);
            if ((m_eventBits[g] & GpuError) != 0) {
                for (auto &entry : m_errorUntil) {
                    if (entry.first == g) {
                        entry.second = now + m_options.errorSymptomSeconds;
                    }
                }
            } else if (m_errorUntil.size() < m_options.maxPending) {
                setBit(GpuError, true);
                m_errorUntil.emplace_back(g, now + m_options.errorSymptomSeconds);
            } else {
                ++m_dropped;
            }
            break;
        default:
            break;
        }
    }
    const auto expired = std::remove_if(m_errorUntil.begin(), m_errorUntil.end(), [&](const auto &entry) {
        if (entry.second > now) {
            return false;
        }
        m_eventBits[entry.first] = static_cast<uint16_t>(m_eventBits[entry.first] & ~GpuError);
        return true;
    });
    m_errorUntil.erase(expired, m_errorUntil.end());
}

void IncidentFolder::scan(const Frame &frame, double now)
{
    m_prev.swap(m_cur);
    m_onsets.clear();
    if (m_epoch < 0) {
        m_epoch = now;
    }
    const float *throttle = planeOf(frame, MetricId::ThrottleReasons, m_gpus);
    const float *link = planeOf(frame, MetricId::RailLinkState, m_gpus);
    const float *downs = planeOf(frame, MetricId::RailLinkDowns, m_gpus);
    const float *symbols = planeOf(frame, MetricId::RailSymbolErrors, m_gpus);
    const float *leak = planeOf(frame, MetricId::LeakDetected, m_gpus);
    const float *supply = planeOf(frame, MetricId::CoolantSupplyTemp, m_gpus);
    const uint8_t *healthBytes = frame.health.size() == m_gpus ? frame.health.data() : nullptr;
    if (supply != nullptr && m_coolantBase.empty()) {
        m_coolantBase.assign(m_gpus, std::numeric_limits<float>::quiet_NaN());
    }
    m_supply = supply;
    const double dt = m_lastNow < 0 ? 0.0 : std::clamp(now - m_lastNow, 0.0, m_options.coolantLearnSeconds);
    const auto learn = static_cast<float>(dt / m_options.coolantLearnSeconds);
    const float linkDowns = m_options.linkDownsPerWindow;
    const float symbolErrors = m_options.symbolErrorsPerWindow;

    for (uint32_t g = 0; g < m_gpus; ++g) {
        const uint16_t fromEvents = m_eventBits[g];
        auto s = static_cast<uint16_t>(fromEvents & (Anomalous | GpuError));
        if (m_nodeDown[m_shape.nodeOfGpu[g]] != 0
            || (healthBytes != nullptr && health::stateOf(healthBytes[g]) == health::Offline)) {
            s |= Down;
        }
        const float reasons = throttle != nullptr ? throttle[g] : std::numeric_limits<float>::quiet_NaN();
        if (std::isnan(reasons)) {
            s |= fromEvents & (Thermal | PowerBrake);
        } else if (reasons > 0) {
            const auto r = static_cast<uint32_t>(reasons);
            s |= (r & reasonsThermal) != 0 ? Thermal : 0;
            s |= (r & reasonsPower) != 0 ? PowerBrake : 0;
        }
        if (link != nullptr && link[g] < 0.5F) {
            s |= LinkDown;
        }
        if ((downs != nullptr && downs[g] >= linkDowns) || (symbols != nullptr && symbols[g] >= symbolErrors)) {
            s |= LinkErrors;
        }
        if (leak != nullptr && leak[g] >= 0.5F) {
            s |= Leak;
        }
        if (supply != nullptr && !std::isnan(supply[g])) {
            float &base = m_coolantBase[g];
            if (std::isnan(base)) {
                base = supply[g];
            } else if (supply[g] - base >= m_options.coolantRiseC) {
                s |= CoolantWarm; // the average holds still while it is warm
            } else {
                base += (supply[g] - base) * learn;
            }
        }
        if ((s & Down) != 0) {
            // A node that is down shows no throttling or link of its own: those are its being down.
            s &= Down | Leak | GpuError | Anomalous;
        }
        m_cur[g] = s;
        const auto onset = static_cast<uint16_t>(s & ~m_prev[g]);
        if (onset != 0) {
            m_onsets.push_back(Pending { g, onset, now });
            if ((onset & Thermal) != 0) {
                m_heatSince[g] = static_cast<float>(now - m_epoch);
            }
        }
    }
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
    forEachDomainOf(gpu, [&](uint32_t d) {
        const int32_t slot = m_domainSlot[d];
        if (found == none && slot >= 0 && (bits & m_open[static_cast<size_t>(slot)].joins) != 0
            && mayTake(static_cast<uint32_t>(slot), gpu)) {
            found = static_cast<uint32_t>(slot);
        }
    });
    return found;
}

void IncidentFolder::fold(double now, std::vector<FleetEvent> *out)
{
    for (int cls = 0; cls < static_cast<int>(classes.size()); ++cls) {
        foldClass(cls, now, out);
    }
    m_pending.clear();
    m_pendingSince = -1;
    m_textOf.clear();
}

void IncidentFolder::foldClass(int cls, double now, std::vector<FleetEvent> *out)
{
    const CauseClass &c = classes[static_cast<size_t>(cls)];
    const auto taken = [&](const Pending &p) {
        const int32_t owner = m_owner[p.gpu];
        return owner >= 0 && m_open[static_cast<size_t>(owner)].domain >= 0
            && (p.bits & c.opens & ~m_open[static_cast<size_t>(owner)].joins) == 0;
    };
    std::vector<Pending> &left = m_left;
    left.clear();
    for (const Pending &p : m_pending) {
        if ((p.bits & c.opens) != 0 && !taken(p)) {
            left.push_back(p);
        }
    }
    if (left.empty()) {
        return;
    }
    std::vector<uint8_t> &done = m_done;
    done.assign(left.size(), 0);
    const auto &domains = m_shape.domains;
    if (c.kinds != 0 && !domains.empty()) {
        std::fill(m_pend.begin(), m_pend.end(), 0);
        std::fill(m_symp.begin(), m_symp.end(), 0);
        std::fill(m_sympNodes.begin(), m_sympNodes.end(), 0);
        std::fill(m_lastNode.begin(), m_lastNode.end(), none);
        std::fill(m_recentNodes.begin(), m_recentNodes.end(), 0);
        std::fill(m_lastRecentNode.begin(), m_lastRecentNode.end(), none);
        const auto recentSince = static_cast<float>(now - m_epoch - m_options.coolingRecentSeconds);
        const auto inKinds = [&](uint32_t d) { return (c.kinds & kindBit(domains[d].kind)) != 0; };
        for (const Pending &p : left) {
            forEachDomainOf(p.gpu, [&](uint32_t d) {
                if (!inKinds(d)) {
                    return;
                }
                m_pendFirst[d] = m_pend[d] == 0 ? p.time : std::min(m_pendFirst[d], p.time);
                m_pendLast[d] = m_pend[d] == 0 ? p.time : std::max(m_pendLast[d], p.time);
                ++m_pend[d];
            });
        }
        // The waiting onsets by domain (counting sort), to take a chosen domain's at once.
        m_bucketStart.assign(domains.size() + 1, 0);
        for (uint32_t d = 0; d < domains.size(); ++d) {
            m_bucketStart[d + 1] = m_bucketStart[d] + m_pend[d];
        }
        m_bucket.resize(m_bucketStart.back());
        m_bucketFill.assign(m_bucketStart.begin(), m_bucketStart.end() - 1);
        for (uint32_t i = 0; i < left.size(); ++i) {
            forEachDomainOf(left[i].gpu, [&](uint32_t d) {
                if (inKinds(d)) {
                    m_bucket[m_bucketFill[d]++] = i;
                }
            });
        }
        // Every GPU that shows it now, whenever it began: a domain is named when enough of it does. A GPU throttling
        // for heat comes and goes as its clock drops and it cools: a recent start counts whether or not it throttles
        // at this moment.
        for (uint32_t g = 0; g < m_gpus; ++g) {
            const bool shows = (m_cur[g] & c.opens) != 0;
            const bool recentHeat = cls == CoolingClass && m_heatSince[g] >= recentSince;
            if (!shows && !recentHeat) {
                continue;
            }
            const uint32_t node = m_shape.nodeOfGpu[g];
            forEachDomainOf(g, [&](uint32_t d) {
                if (!inKinds(d)) {
                    return;
                }
                if (shows) {
                    ++m_symp[d];
                    if (m_lastNode[d] != node) {
                        m_lastNode[d] = node;
                        ++m_sympNodes[d];
                    }
                }
                if (recentHeat && m_lastRecentNode[d] != node) {
                    m_lastRecentNode[d] = node;
                    ++m_recentNodes[d];
                }
            });
        }
        bool opened = false;
        for (;;) {
            uint32_t best = none;
            for (uint32_t d = 0; d < domains.size(); ++d) {
                if (m_pend[d] == 0 || !explains(cls, d)) {
                    continue;
                }
                if (best == none || m_pend[d] > m_pend[best]
                    || (m_pend[d] == m_pend[best] && m_domainGpus[d] < m_domainGpus[best])) {
                    best = d;
                }
            }
            if (best == none) {
                break;
            }
            // What was seen as it was folded: how close together, and whether its likes saw it too (a twin that
            // serves the same GPUs, as a rack's two PDUs do, is told apart only by the nodes corded to one alone).
            size_t others = 0;
            uint32_t twin = none;
            for (uint32_t d = 0; d < domains.size(); ++d) {
                if (d == best || m_pend[d] == 0 || domains[d].kind != domains[best].kind) {
                    continue;
                }
                if (twin == none && m_pend[d] == m_pend[best] && m_domainGpus[d] == m_domainGpus[best]) {
                    twin = d;
                } else {
                    ++others;
                }
            }
            const uint32_t tripped
                = twin != none && domains[best].kind == DomainKind::Pdu ? trippedOf(best, twin) : none;
            if (tripped != none && tripped == twin) {
                std::swap(best, twin);
            }
            const std::string kind = domainKindName(domains[best].kind);
            const double spread = std::ceil(m_pendLast[best] - m_pendFirst[best]);
            std::string seen = fmt::format(" within {:.0f} s; ", std::max(spread, 1.0));
            seen += others == 0
                ? fmt::format("no other {} did", kind)
                : fmt::format("{} other {} did on fewer GPUs", others, others == 1 ? kind : plural(domains[best].kind));
            if (tripped != none) {
                seen += fmt::format(
                    "; {}, and no node corded to {} {} alone did", corded(m_toldNodes), kind, domains[twin].name);
            } else if (twin != none) {
                seen += fmt::format(
                    "; {} {} serves the same GPUs, which cannot tell the two apart", kind, domains[twin].name);
            }
            uint32_t slot = m_domainSlot[best] >= 0 ? static_cast<uint32_t>(m_domainSlot[best]) : openSlot();
            if (slot == none) {
                m_dropped += m_pend[best];
                break;
            }
            Open &o = m_open[slot];
            if (o.domain < 0) {
                o.domain = best;
                o.cls = cls;
                o.start = m_pendFirst[best];
                o.openEvidence = seen;
                m_domainSlot[best] = static_cast<int32_t>(slot);
            }
            o.joins |= c.joins;
            opened = true;
            // Its onsets no longer count towards another domain.
            for (uint32_t k = m_bucketStart[best]; k < m_bucketStart[best + 1]; ++k) {
                const uint32_t i = m_bucket[k];
                if (done[i] != 0) {
                    continue;
                }
                done[i] = 1;
                forEachDomainOf(left[i].gpu, [&](uint32_t d) {
                    if (inKinds(d) && m_pend[d] > 0) {
                        --m_pend[d];
                    }
                });
            }
        }
        if (opened) {
            absorb(c.opens | c.joins, out, now);
        }
    }

    // What no domain explains: its node's own incident.
    std::vector<uint32_t> order(left.size());
    std::iota(order.begin(), order.end(), 0U);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return left[a].gpu < left[b].gpu; });
    for (const uint32_t i : order) {
        const Pending &p = left[i];
        if (done[i] != 0 || taken(p)) {
            continue;
        }
        const uint32_t node = m_shape.nodeOfGpu[p.gpu];
        const auto it = m_nodeIncident.find(node);
        uint32_t slot = it != m_nodeIncident.end() ? it->second : openSlot();
        if (slot == none) {
            ++m_dropped;
            continue;
        }
        Open &o = m_open[slot];
        if (it == m_nodeIncident.end()) {
            m_nodeIncident.emplace(node, slot);
            o.node = node;
            o.cls = cls;
            o.joins = 0x1FF;
            o.start = p.time;
            const auto text = m_textOf.find((p.bits & Down) != 0 ? (nodeKey | node) : p.gpu);
            o.firstText = text != m_textOf.end() ? text->second : std::string();
        }
        if (m_owner[p.gpu] != static_cast<int32_t>(slot)) {
            if (m_owner[p.gpu] < 0) {
                adopt(slot, p.gpu, out, now);
            } else if (std::find(o.members.begin(), o.members.end(), p.gpu) == o.members.end()) {
                o.members.push_back(p.gpu); // a GPU of a domain incident with a fault of its own
                o.membersDirty = true;
            }
        }
        o.start = std::min(o.start, p.time);
        o.seen |= p.bits;
    }
}

// Of two PDUs that serve the same GPUs, the one that tripped: the nodes that went down among the onsets waiting in
// the first are all corded to that one alone (FleetShape::cordsOf), and one did at least. none when no such node went
// down, or one corded to both (or to the other side too) did. The nodes are kept in m_toldNodes.
uint32_t IncidentFolder::trippedOf(uint32_t a, uint32_t b)
{
    m_toldNodes.clear();
    uint32_t side = none;
    for (uint32_t k = m_bucketStart[a]; k < m_bucketStart[a + 1]; ++k) {
        const uint32_t i = m_bucket[k];
        if (m_done[i] != 0 || (m_left[i].bits & Down) == 0) {
            continue;
        }
        const uint32_t node = m_shape.nodeOfGpu[m_left[i].gpu];
        if (std::find(m_toldNodes.begin(), m_toldNodes.end(), node) != m_toldNodes.end()) {
            continue;
        }
        const auto cords = m_shape.cordsOf(node);
        const uint32_t only = cords.size() == 1 && (cords[0] == a || cords[0] == b) ? cords[0] : none;
        if (only == none || (side != none && only != side)) {
            return none;
        }
        side = only;
        m_toldNodes.push_back(node);
    }
    return side;
}

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

// Whether enough of a domain shows its symptoms for it to be named.
bool IncidentFolder::explains(int cls, uint32_t domain) const
{
    if (cls == LeakClass) {
        return m_symp[domain] > 0;
    }
    if (cls == CoolingClass && m_recentNodes[domain] >= m_options.coolingRecentNodes) {
        return true;
    }
    const double share = cls == CoolingClass ? m_options.coolingMinShare : m_options.minShare;
    return m_symp[domain] >= m_options.minGpus && m_sympNodes[domain] >= m_options.minNodes
        && static_cast<double>(m_symp[domain]) >= share * m_domainGpus[domain];
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
    const auto total = m_domainGpus[static_cast<size_t>(o.domain)];
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
