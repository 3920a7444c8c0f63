// SPDX-License-Identifier: Apache-2.0
#include "model/fleetmodel.h"

#include <QStringList>

#include <algorithm>
#include <iterator>
#include <string_view>

namespace fleetscope {

QString Topology::uuidText(uint32_t gpu) const
{
    if (gpu >= gpuUuids.size() || gpuUuids[gpu].isNull()) {
        return {};
    }
    return QStringLiteral("GPU-") + gpuUuids[gpu].toString(QUuid::WithoutBraces);
}

std::vector<uint32_t> Topology::domainsOfGpu(uint32_t gpu) const
{
    std::vector<uint32_t> out;
    if (gpu >= gpuCount || gpu >= nodeOfGpu.size() || domains.empty()) {
        return out;
    }
    // Indices are checked here too: a topology is not only what decodeTopology made (tests, files).
    const auto push = [&](uint32_t d) {
        if (d < domains.size() && std::find(out.begin(), out.end(), d) == out.end()) {
            out.push_back(d);
        }
    };
    if (gpu < gpuLinks.size() && gpuLinks[gpu].leaf != GpuLink::none) {
        push(gpuLinks[gpu].leaf);
    }
    const Node &node = nodeOf(gpu);
    if (node.rack < racks.size()) {
        for (const uint32_t d : racks[node.rack].domains) {
            push(d);
        }
    }
    for (const uint32_t d : node.domains) {
        push(d);
    }
    // Parents come before children in the table, so this ends; out grows while it is read.
    for (size_t i = 0; i < out.size(); ++i) {
        const int32_t parent = domains[out[i]].parent;
        if (parent >= 0 && static_cast<uint32_t>(parent) < out[i]) {
            push(static_cast<uint32_t>(parent));
        }
    }
    return out;
}

QString Topology::domainName(uint32_t domain) const
{
    if (domain >= domains.size()) {
        return {};
    }
    return QLatin1String(domainKindName(domains[domain].kind)) + QLatin1Char(' ') + domains[domain].name;
}

QString Topology::domainLine(uint32_t gpu) const
{
    QStringList texts;
    for (const auto &name : domainNames(gpu)) {
        texts << name.text;
    }
    return texts.join(QStringLiteral(" · "));
}

std::vector<Topology::DomainName> Topology::nodeDomainNames(uint32_t node) const
{
    std::vector<DomainName> out;
    if (node >= nodes.size()) {
        return out;
    }
    const auto add = [&](const std::vector<uint32_t> &list) {
        for (const uint32_t d : list) {
            if (d < domains.size()) {
                out.push_back({ domains[d].kind, domainName(d) });
            }
        }
    };
    // A node corded to one PDU alone names it among its own domains: it stands where its rack's PDUs would.
    const auto isPdu = [this](uint32_t d) { return d < domains.size() && domains[d].kind == DomainKind::Pdu; };
    const std::vector<uint32_t> &own = nodes[node].domains;
    const bool ownCords = std::any_of(own.begin(), own.end(), isPdu);
    std::vector<uint32_t> order;
    if (nodes[node].rack < racks.size()) {
        for (const uint32_t d : racks[nodes[node].rack].domains) {
            if (!ownCords || !isPdu(d)) {
                order.push_back(d);
            } else if (std::find_if(order.begin(), order.end(), isPdu) == order.end()) {
                std::copy_if(own.begin(), own.end(), std::back_inserter(order), isPdu);
            }
        }
    }
    for (const uint32_t d : own) {
        if (std::find(order.begin(), order.end(), d) == order.end()) {
            order.push_back(d);
        }
    }
    add(order);
    return out;
}

QStringList Topology::linesByCause(const std::vector<DomainName> &names)
{
    QStringList lines;
    std::string_view cause;
    for (size_t i = 0; i < names.size(); ++i) {
        // An NVLink domain is a fabric of its own (scale-up, not the leaves' scale-out): a line of its own.
        const std::string_view next
            = names[i].kind == DomainKind::NvlinkDomain ? std::string_view("nvlink") : domainCause(names[i].kind);
        if (i > 0 && next == cause) {
            lines.last() += QStringLiteral(" · ") + names[i].text;
        } else {
            lines << names[i].text;
        }
        cause = next;
    }
    return lines;
}

std::vector<Topology::DomainName> Topology::domainNames(uint32_t gpu) const
{
    std::vector<DomainName> parts;
    if (gpu >= gpuCount || gpu >= nodeOfGpu.size() || domains.empty()) {
        return parts;
    }
    const Node &node = nodeOf(gpu);
    if (node.rack < racks.size()) {
        for (const uint32_t d : racks[node.rack].domains) {
            if (d < domains.size()) {
                parts.push_back({ domains[d].kind, domainName(d) });
            }
        }
    }
    if (gpu < gpuLinks.size() && gpuLinks[gpu].leaf < domains.size()) {
        const Domain &leaf = domains[gpuLinks[gpu].leaf];
        // Joined, not arg()'d: a name holding "%1" is not a place to fill.
        QString link
            = QStringLiteral("leaf ") + leaf.name + QStringLiteral(" port ") + QString::number(gpuLinks[gpu].port);
        if (leaf.rail >= 0) {
            link += QStringLiteral(", rail ") + QString::number(leaf.rail);
        }
        parts.push_back({ leaf.kind, link });
    }
    return parts;
}

std::vector<std::pair<uint32_t, uint32_t>> Topology::gpuRunsOfDomain(uint32_t domain, PowerBy power) const
{
    std::vector<std::pair<uint32_t, uint32_t>> runs;
    if (domain >= domains.size()) {
        return runs;
    }
    // The domain and its descendants: parents come before children, so one pass from the domain on marks them.
    std::vector<uint8_t> within(domains.size(), 0);
    within[domain] = 1;
    for (size_t d = domain + 1; d < domains.size(); ++d) {
        const int32_t parent = domains[d].parent;
        within[d] = parent >= 0 && static_cast<size_t>(parent) < d && within[static_cast<size_t>(parent)] != 0 ? 1 : 0;
    }
    const auto any = [&](const std::vector<uint32_t> &list) {
        return std::any_of(list.begin(), list.end(), [&](uint32_t d) { return d < within.size() && within[d] != 0; });
    };
    const auto add = [&](uint32_t first, uint32_t count) {
        if (!runs.empty() && runs.back().first + runs.back().second == first) {
            runs.back().second += count;
        } else {
            runs.emplace_back(first, count);
        }
    };
    // By cords, a node corded to one PDU alone (its own domains name it) is powered by that one, not its rack's others.
    const auto isPdu = [this](uint32_t d) { return d < domains.size() && domains[d].kind == DomainKind::Pdu; };
    const auto rackServes = [&](const Node &node) {
        if (node.rack >= racks.size()) {
            return false;
        }
        const bool ownCords = power == PowerBy::Cords && std::any_of(node.domains.begin(), node.domains.end(), isPdu);
        const auto &list = racks[node.rack].domains;
        return std::any_of(list.begin(), list.end(),
            [&](uint32_t d) { return d < within.size() && within[d] != 0 && !(ownCords && isPdu(d)); });
    };
    for (const Node &node : nodes) {
        if (rackServes(node) || any(node.domains)) {
            add(node.firstGpu, node.gpuCount);
            continue;
        }
        for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount && g < gpuLinks.size(); ++g) {
            const uint32_t leaf = gpuLinks[g].leaf;
            if (leaf < within.size() && within[leaf] != 0) {
                add(g, 1);
            }
        }
    }
    return runs;
}

} // namespace fleetscope

namespace fleetscope::health {

namespace {
// By state (common/health.h).
const char *const stateNames[] = { "OK", "warning", "critical", "offline", "no data" };
static_assert(std::size(stateNames) == stateCount, "a name for every state");

struct FlagName
{
    uint8_t flag;
    const char *name;
};
const FlagName flagNames[] = { { throttledFlag, "throttled" }, { eccFlag, "ECC" }, { xidFlag, "XID" } };
} // namespace

QString describe(uint8_t byte)
{
    const uint8_t state = stateOf(byte);
    QString text = state < stateCount ? QLatin1String(stateNames[state]) : QStringLiteral("unknown (%1)").arg(state);
    QStringList flags;
    for (const auto &[flag, name] : flagNames) {
        if ((byte & flag) != 0) {
            flags << QLatin1String(name);
        }
    }
    if (!flags.isEmpty()) {
        text += QStringLiteral(" (") + flags.join(QStringLiteral(", ")) + QLatin1Char(')');
    }
    return text;
}

} // namespace fleetscope::health
