// SPDX-License-Identifier: Apache-2.0
// The incident folder's fold: the onsets that waited together, cause by cause, named by the domain that explains the
// most of them, or left to their node's own incident.
#include "analytics/incidentfolder.h"

#include "analytics/incidentwords.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace fleetscope::backend {

using incidentwords::plural;

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
            m_index.forEachDomainOf(p.gpu, [&](uint32_t d) {
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
            m_index.forEachDomainOf(left[i].gpu, [&](uint32_t d) {
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
            m_index.forEachDomainOf(g, [&](uint32_t d) {
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
                    || (m_pend[d] == m_pend[best] && m_index.gpus(d) < m_index.gpus(best))) {
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
            // Twins are a rack's two PDUs: both in one rack's list (whatever order a topology file gave the table).
            const auto sameRack = [this](uint32_t a, uint32_t b) {
                return std::any_of(m_shape.racks.begin(), m_shape.racks.end(), [&](const auto &rack) {
                    const auto &list = rack.domains;
                    return std::find(list.begin(), list.end(), a) != list.end()
                        && std::find(list.begin(), list.end(), b) != list.end();
                });
            };
            for (uint32_t d = 0; d < domains.size(); ++d) {
                if (d == best || m_pend[d] == 0 || domains[d].kind != domains[best].kind) {
                    continue;
                }
                if (twin == none && m_pend[d] == m_pend[best] && m_index.gpus(d) == m_index.gpus(best)
                    && sameRack(d, best)) {
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
                m_index.forEachDomainOf(left[i].gpu, [&](uint32_t d) {
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
        && static_cast<double>(m_symp[domain]) >= share * m_index.gpus(domain);
}

} // namespace fleetscope::backend
