// SPDX-License-Identifier: Apache-2.0
// TopologyFile's second pass: the domains, resolved.
#include "formats/topologyfile.h"

#include "common/domains.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace fleetscope::backend {

// The domains' second pass, once the floor plan is read: what the fabric and the NVL72 racks imply is added, every
// reference is resolved and the domains are put parents first.
bool TopologyFile::resolveDomains(TopologyFile *file, std::string *error)
{
    auto &domains = file->domains;
    std::unordered_map<std::string, size_t> byName;
    auto add = [&](TopologyFile::Domain d) -> bool {
        if (domains.size() >= TopologyFile::maxDomains) {
            *error = fmt::format("more than {} domains", TopologyFile::maxDomains);
            return false;
        }
        byName.emplace(d.name, domains.size());
        domains.push_back(std::move(d));
        return true;
    };
    for (size_t i = 0; i < domains.size(); ++i) {
        if (!byName.emplace(domains[i].name, i).second) {
            *error = fmt::format("domains[{}]: the name '{}' appears twice", i, domains[i].name);
            return false;
        }
    }
    auto kindOf = [&](size_t i) {
        DomainKind kind {};
        domainKindFromKey(domains[i].kind, &kind); // checked when read
        return kind;
    };
    // The reference `name` from `where` is a domain of one of these kinds.
    auto resolve = [&](const std::string &name, std::initializer_list<DomainKind> kinds, const std::string &where) {
        const auto it = byName.find(name);
        if (it == byName.end()) {
            *error = fmt::format("{}: no domain named '{}'", where, name);
            return false;
        }
        const DomainKind kind = kindOf(it->second);
        if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
            std::string wanted;
            for (const auto k : kinds) {
                wanted += (wanted.empty() ? "" : " or ") + std::string(domainKindKey(k));
            }
            *error = fmt::format("{}: '{}' is a {}, not a {}", where, name, domainKindKey(kind), wanted);
            return false;
        }
        return true;
    };

    std::unordered_map<std::string, TopologyFile::Host *> hosts;
    for (auto &row : file->rows) {
        for (auto &rack : row.racks) {
            for (auto &host : rack.hosts) {
                hosts.emplace(host.hostname, &host);
            }
            const std::string nvl = rack.name + "-nvl";
            if (rack.nvlinkDomain && byName.count(nvl) == 0
                && !add({ domainKindKey(DomainKind::NvlinkDomain), nvl, {}, -1 })) {
                return false;
            }
        }
    }
    // The rail-optimised fabric: a leaf per rail of each scalable unit, GPU k of its n-th host on leaf k, port n.
    std::unordered_set<std::string> inUnit;
    for (size_t u = 0; u < file->scalableUnits.size(); ++u) {
        const auto &unit = file->scalableUnits[u];
        const std::string where = fmt::format("fabric.scalableUnits[{}] ({})", u, unit.name);
        if (byName.count(unit.name) == 0 && !add({ domainKindKey(DomainKind::ScalableUnit), unit.name, {}, -1 })) {
            return false;
        }
        if (!resolve(unit.name, { DomainKind::ScalableUnit }, where)) {
            return false;
        }
        uint32_t rails = 0;
        for (size_t n = 0; n < unit.hosts.size(); ++n) {
            const auto it = hosts.find(unit.hosts[n]);
            if (it == hosts.end()) {
                *error = fmt::format("{}: no host named '{}' in the floor plan", where, unit.hosts[n]);
                return false;
            }
            if (!inUnit.insert(unit.hosts[n]).second) {
                *error = fmt::format("{}: host '{}' is in a scalable unit already", where, unit.hosts[n]);
                return false;
            }
            auto &host = *it->second;
            if (!host.scalableUnit.empty() && host.scalableUnit != unit.name) {
                *error = fmt::format("{}: host '{}' says scalableUnit '{}'", where, host.hostname, host.scalableUnit);
                return false;
            }
            host.scalableUnit = unit.name;
            rails = std::max(rails, host.gpus);
            if (host.links.empty()) {
                for (uint32_t k = 0; k < host.gpus; ++k) {
                    host.links.push_back({ unit.leafPrefix + std::to_string(k), static_cast<uint32_t>(n + 1) });
                }
            }
        }
        for (uint32_t rail = 0; rail < rails; ++rail) {
            const std::string leaf = unit.leafPrefix + std::to_string(rail);
            if (byName.count(leaf) != 0) {
                continue;
            }
            std::string spine;
            for (const auto &d : domains) {
                if (d.rail == static_cast<int32_t>(rail) && d.kind == domainKindKey(DomainKind::SpinePlane)) {
                    spine = d.name;
                    break;
                }
            }
            if (!add({ domainKindKey(DomainKind::LeafSwitch), leaf, spine, static_cast<int32_t>(rail) })) {
                return false;
            }
        }
    }

    // Parents exist, and no chain of them goes round: each domain's depth, each walked once (a chain's domains are
    // given theirs on the way back), so that a crafted chain of every domain costs a pass, not a pass per domain.
    constexpr uint32_t unknown = std::numeric_limits<uint32_t>::max();
    constexpr uint32_t walking = unknown - 1;
    std::vector<uint32_t> depth(domains.size(), unknown);
    std::vector<size_t> chain;
    for (size_t i = 0; i < domains.size(); ++i) {
        chain.clear();
        size_t at = i;
        while (depth[at] == unknown) {
            depth[at] = walking;
            chain.push_back(at);
            if (domains[at].parent.empty()) {
                break;
            }
            const auto it = byName.find(domains[at].parent);
            if (it == byName.end()) {
                *error = fmt::format("domain '{}': no parent named '{}'", domains[at].name, domains[at].parent);
                return false;
            }
            at = it->second;
        }
        if (depth[at] == walking && !domains[at].parent.empty()) {
            *error = fmt::format("domain '{}': its parents go round in a cycle", domains[at].name);
            return false;
        }
        uint32_t base = depth[at] == walking ? 0 : depth[at] + 1;
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            depth[*it] = base++;
        }
    }
    std::vector<size_t> order(domains.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return depth[a] < depth[b]; });
    std::vector<TopologyFile::Domain> sorted;
    sorted.reserve(domains.size());
    for (const size_t i : order) {
        sorted.push_back(std::move(domains[i]));
    }
    domains = std::move(sorted);
    byName.clear();
    for (size_t i = 0; i < domains.size(); ++i) {
        byName.emplace(domains[i].name, i);
    }

    for (const auto &row : file->rows) {
        for (const auto &rack : row.racks) {
            const std::string where = fmt::format("rack {}", rack.name);
            for (const auto &pdu : rack.power) {
                if (!resolve(pdu, { DomainKind::Pdu }, where + " power")) {
                    return false;
                }
            }
            if (!rack.cooling.empty()
                && !resolve(rack.cooling, { DomainKind::CoolingUnit, DomainKind::Cdu, DomainKind::CoolantLoop },
                    where + " cooling")) {
                return false;
            }
            for (const auto &host : rack.hosts) {
                const std::string hostWhere = fmt::format("host {}", host.hostname);
                if (!host.scalableUnit.empty()
                    && !resolve(host.scalableUnit, { DomainKind::ScalableUnit }, hostWhere + " scalableUnit")) {
                    return false;
                }
                // A host's PDUs are those it is corded to, of its rack's when the rack lists some.
                for (const auto &pdu : host.power) {
                    if (!resolve(pdu, { DomainKind::Pdu }, hostWhere + " power")) {
                        return false;
                    }
                    if (!rack.power.empty()
                        && std::find(rack.power.begin(), rack.power.end(), pdu) == rack.power.end()) {
                        *error = fmt::format("{} power: '{}' is not one of rack {}'s PDUs", hostWhere, pdu, rack.name);
                        return false;
                    }
                }
                for (const auto &link : host.links) {
                    if (!resolve(link.leaf, { DomainKind::LeafSwitch }, hostWhere + " links")) {
                        return false;
                    }
                }
            }
        }
    }
    return true;
}

} // namespace fleetscope::backend
