// SPDX-License-Identifier: Apache-2.0
// A fleet's shared domains: those of a simulated fleet, and a GPU's for people.
#include "core/fleetshape.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
// Racks per air-cooled row segment (one in-row cooling unit) and per CDU (two loops of half as many each).
constexpr uint32_t racksPerCoolingSegment = 8;
// NVIDIA's rail-optimised reference designs: a DGX H100 SuperPOD's scalable unit is 32 nodes, each GPU's NIC on the
// leaf of its rail; a GB200 NVL72 SuperPOD's is 8 racks (144 compute trays), one 144-port leaf per rail.
constexpr uint32_t hgxNodesPerScalableUnit = 32;
constexpr uint32_t nvl72RacksPerScalableUnit = 8;
// Every node draws from both of its rack's PDUs but one in four, which has a single cord: the 4th node of a rack on
// side A, the 8th on side B, the 12th on A again. A trip of one side takes those down and brakes the rest.
constexpr uint32_t singleCordedEvery = 4;

uint32_t add(std::vector<Domain> *domains, DomainKind kind, std::string name, int32_t parent, int32_t rail = -1)
{
    domains->push_back(Domain { kind, std::move(name), parent, rail });
    return static_cast<uint32_t>(domains->size() - 1);
}
} // namespace

void FleetShape::simulateDomains()
{
    const HardwareSpec &spec = HardwareSpec::of(hardware);
    const bool liquid = spec.rackIsNvlinkDomain;
    domains.clear();
    gpuLinks.assign(gpuCount, GpuLink {});

    // Power: two feeds per hall (A and B), a busway per row and side, a PDU per rack and side.
    std::map<std::string, std::pair<uint32_t, uint32_t>> feeds;
    for (const auto &row : rows) {
        if (feeds.count(row.hall) == 0) {
            const uint32_t a = add(&domains, DomainKind::PowerFeed, row.hall + "-feed-a", -1);
            const uint32_t b = add(&domains, DomainKind::PowerFeed, row.hall + "-feed-b", -1);
            feeds[row.hall] = { a, b };
        }
    }
    // Spine planes, one per rail.
    const uint32_t rails = spec.gpusPerNode;
    std::vector<uint32_t> spines(rails);
    for (uint32_t r = 0; r < rails; ++r) {
        spines[r] = add(&domains, DomainKind::SpinePlane, fmt::format("spine-{}", r), -1, static_cast<int32_t>(r));
    }
    for (const auto &row : rows) {
        const auto [feedA, feedB] = feeds[row.hall];
        const uint32_t busA = add(&domains, DomainKind::Busway, row.name + "-bus-a", static_cast<int32_t>(feedA));
        const uint32_t busB = add(&domains, DomainKind::Busway, row.name + "-bus-b", static_cast<int32_t>(feedB));
        uint32_t cooling = 0;
        uint32_t cdu = 0;
        for (uint32_t k = 0; k < row.rackCount; ++k) {
            Rack &rack = racks[row.firstRack + k];
            rack.domains.clear();
            rack.domains.push_back(add(&domains, DomainKind::Pdu, rack.name + "-a", static_cast<int32_t>(busA)));
            rack.domains.push_back(add(&domains, DomainKind::Pdu, rack.name + "-b", static_cast<int32_t>(busB)));
            const uint32_t segment = k / racksPerCoolingSegment;
            const uint32_t inSegment = k % racksPerCoolingSegment;
            if (liquid) {
                if (inSegment == 0) {
                    cdu = add(&domains, DomainKind::Cdu, fmt::format("{}-cdu{}", row.name, segment + 1), -1);
                }
                if (inSegment % (racksPerCoolingSegment / 2) == 0) {
                    cooling = add(&domains, DomainKind::CoolantLoop,
                        fmt::format("{}-cdu{}-{}", row.name, segment + 1, inSegment == 0 ? 'a' : 'b'),
                        static_cast<int32_t>(cdu));
                }
            } else if (inSegment == 0) {
                cooling = add(&domains, DomainKind::CoolingUnit, fmt::format("{}-crah{}", row.name, segment + 1), -1);
            }
            rack.domains.push_back(cooling);
            if (rack.nvlinkDomain) {
                rack.domains.push_back(add(&domains, DomainKind::NvlinkDomain, rack.name + "-nvl", -1));
            }
        }
    }

    // Network: scalable units of consecutive nodes, a leaf per rail in each, port k to the unit's node k.
    const uint32_t nodesPerUnit = liquid ? nvl72RacksPerScalableUnit * spec.nodesPerRack : hgxNodesPerScalableUnit;
    const auto nodeCount = static_cast<uint32_t>(nodes.size());
    for (uint32_t first = 0, unit = 1; first < nodeCount; first += nodesPerUnit, ++unit) {
        const uint32_t su = add(&domains, DomainKind::ScalableUnit, fmt::format("su{:02}", unit), -1);
        std::vector<uint32_t> leaves(rails);
        for (uint32_t r = 0; r < rails; ++r) {
            leaves[r] = add(&domains, DomainKind::LeafSwitch, fmt::format("su{:02}-l{}", unit, r),
                static_cast<int32_t>(spines[r]), static_cast<int32_t>(r));
        }
        for (uint32_t n = first; n < std::min(nodeCount, first + nodesPerUnit); ++n) {
            Node &node = nodes[n];
            node.domains = { su };
            for (uint32_t i = 0; i < node.gpuCount; ++i) {
                gpuLinks[node.firstGpu + i] = GpuLink { leaves[i % rails], n - first + 1 };
            }
        }
    }

    // Power cords: the single-corded nodes name their one PDU (the rack's first two domains are its sides A and B).
    for (const Rack &rack : racks) {
        for (uint32_t i = singleCordedEvery - 1; i < rack.nodeCount; i += singleCordedEvery) {
            const uint32_t side = (i / singleCordedEvery) % 2;
            nodes[rack.firstNode + i].domains.push_back(rack.domains[side]);
        }
    }
}

std::vector<uint32_t> FleetShape::cordsOf(uint32_t node) const
{
    std::vector<uint32_t> cords;
    if (node >= nodes.size()) {
        return cords;
    }
    const auto pdus = [&](const std::vector<uint32_t> &list) {
        for (const uint32_t d : list) {
            if (d < domains.size() && domains[d].kind == DomainKind::Pdu) {
                cords.push_back(d);
            }
        }
    };
    pdus(nodes[node].domains);
    if (cords.empty() && nodes[node].rack < racks.size()) {
        pdus(racks[nodes[node].rack].domains);
    }
    return cords;
}

std::vector<uint32_t> FleetShape::domainsOfGpu(uint32_t gpu) const
{
    std::vector<uint32_t> out;
    if (gpu >= gpuCount || domains.empty()) {
        return out;
    }
    const auto push = [&](uint32_t d) {
        if (d < domains.size() && std::find(out.begin(), out.end(), d) == out.end()) {
            out.push_back(d);
        }
    };
    if (gpu < gpuLinks.size() && gpuLinks[gpu].leaf != GpuLink::none) {
        push(gpuLinks[gpu].leaf);
    }
    const Node &node = nodes[nodeOfGpu[gpu]];
    for (const uint32_t d : racks[node.rack].domains) {
        push(d);
    }
    for (const uint32_t d : node.domains) {
        push(d);
    }
    // Parents after every direct membership: a busway serves more than a PDU, a feed more than a busway.
    for (size_t i = 0; i < out.size(); ++i) {
        const int32_t parent = domains[out[i]].parent;
        if (parent >= 0) {
            push(static_cast<uint32_t>(parent));
        }
    }
    return out;
}

std::string FleetShape::domainLine(uint32_t gpu) const
{
    if (gpu >= gpuCount || domains.empty()) {
        return {};
    }
    std::string line;
    const auto append = [&](const std::string &part) {
        if (!line.empty()) {
            line += " · ";
        }
        line += part;
    };
    const Node &node = nodes[nodeOfGpu[gpu]];
    for (const uint32_t d : racks[node.rack].domains) {
        if (d < domains.size()) {
            append(fmt::format("{} {}", domainKindName(domains[d].kind), domains[d].name));
        }
    }
    if (gpu < gpuLinks.size() && gpuLinks[gpu].leaf < domains.size()) {
        const Domain &leaf = domains[gpuLinks[gpu].leaf];
        append(leaf.rail >= 0 ? fmt::format("leaf {} port {}, rail {}", leaf.name, gpuLinks[gpu].port, leaf.rail)
                              : fmt::format("leaf {} port {}", leaf.name, gpuLinks[gpu].port));
    }
    return line;
}

} // namespace fleetscope::backend
