// SPDX-License-Identifier: Apache-2.0
// The console's reading of a GetTopology stream: TopologyCollector takes the parts as they come, bounded by what the
// header's GPU count can need (a part past that refused, and everything after it), and decodeTopology joins and
// checks them; a topology it accepts is laid out every way the map can show it, and every layout must put every GPU
// in a cell of its own; its shared domains must index inside their table (parents first), and a GPU's domains and a
// domain's GPUs inside the fleet. The first byte: its low 7 bits the map's aspect ratio for the compact and job layouts
// (1/8 to 16 times as wide as tall); its high bit what the rest is:
//   0: TopologyPart messages with length prefixes (fuzzinput.h), parsed as the wire gives them;
//   1: a fleet's shape (rows, racks and their places, nodes and their GPUs, then a few domains, the racks' and nodes'
//      memberships and the GPUs' leaves) read from the bytes and sent as one part,
//      nearly always consistent: random wire bytes rarely make a topology the decoder accepts, so this is what
//      reaches the layouts with many shapes.
#include "client/topologydecode.h"
#include "client/wiretext.h"
#include "fuzz/fuzzinput.h"
#include "model/heatmaplayout.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <string>

namespace {

using namespace fleetscope;

// Mostly an index into a table of size entries; now and then anything (refused, unless it happens to fit).
uint32_t indexInto(FuzzedDataProvider &in, uint32_t size)
{
    if (size == 0 || in.ConsumeIntegral<uint8_t>() < 8) {
        return in.ConsumeIntegral<uint32_t>();
    }
    return in.ConsumeIntegralInRange<uint32_t>(0, size - 1);
}

// A few domains, each mostly with a parent before it; racks and nodes name some, and a node's GPUs their leaves and
// ports (or none, or a count that does not match: refused); now and then a header count that is not the table's.
void addDomains(FuzzedDataProvider &in, pb::TopologyPart *part)
{
    const auto count = in.ConsumeIntegralInRange<uint32_t>(0, 12);
    for (uint32_t d = 0; d < count; ++d) {
        auto *domain = part->add_domains();
        domain->set_kind(static_cast<pb::DomainKind>(in.ConsumeIntegralInRange<int>(0, 12)));
        domain->set_name("d" + std::to_string(d));
        if (in.ConsumeBool()) {
            domain->set_parent(indexInto(in, d));
        }
        if (in.ConsumeBool()) {
            domain->set_rail(in.ConsumeIntegral<uint8_t>() < 8 ? in.ConsumeIntegral<uint32_t>() : d % 8);
        }
    }
    part->set_domain_count(in.ConsumeIntegral<uint8_t>() < 4 ? in.ConsumeIntegral<uint32_t>() : count);
    for (auto &rack : *part->mutable_racks()) {
        for (auto n = in.ConsumeIntegralInRange<int>(0, 3); n > 0; --n) {
            rack.add_domains(indexInto(in, count));
        }
    }
    for (auto &node : *part->mutable_nodes()) {
        if (in.ConsumeBool()) {
            node.add_domains(indexInto(in, count));
        }
        if (!in.ConsumeBool()) {
            continue;
        }
        const uint32_t links
            = in.ConsumeIntegral<uint8_t>() < 8 ? in.ConsumeIntegralInRange<uint32_t>(0, 20) : node.gpu_count();
        for (uint32_t g = 0; g < links; ++g) {
            node.add_gpu_leaves(in.ConsumeBool() ? Topology::GpuLink::none : indexInto(in, count));
            node.add_gpu_ports(in.ConsumeIntegralInRange<uint32_t>(0, maxLeafPort + 4));
        }
    }
}

pb::TopologyPart shapePart(FuzzedDataProvider &in)
{
    pb::TopologyPart part;
    part.set_generation(1);
    part.set_part_index(0);
    part.set_part_count(1);
    const auto rows = in.ConsumeIntegralInRange<uint32_t>(1, 6);
    for (uint32_t r = 0; r < rows; ++r) {
        auto *row = part.add_rows();
        row->set_name("r" + std::to_string(r + 1));
        row->set_hall(in.ConsumeBool() ? "hall-a" : "hall-b");
    }
    std::vector<uint64_t> nextPlace(rows, 0);
    uint32_t nodes = 0;
    uint32_t gpus = 0;
    const auto racks = in.ConsumeIntegralInRange<uint32_t>(1, 24);
    for (uint32_t k = 0; k < racks; ++k) {
        auto *rack = part.add_racks();
        const auto row = in.ConsumeIntegralInRange<uint32_t>(0, rows - 1);
        // Mostly the next place in its row; sometimes a gap, now and then anywhere (two racks in one place, or a
        // plan too wide to draw: both refused).
        const auto how = in.ConsumeIntegral<uint8_t>();
        uint64_t place = nextPlace[row];
        if (how < 8) {
            place = in.ConsumeIntegral<uint32_t>();
        } else if (how < 64) {
            place += in.ConsumeIntegralInRange<uint32_t>(1, 40);
        }
        nextPlace[row] = std::max(nextPlace[row], place + 1);
        rack->set_row(row);
        rack->set_position(static_cast<uint32_t>(place));
        rack->set_name("r" + std::to_string(row + 1) + "-k" + std::to_string(place + 1));
        rack->set_nvlink_domain(in.ConsumeBool());
        const auto count = in.ConsumeIntegralInRange<uint32_t>(0, 18);
        rack->set_first_node(nodes);
        rack->set_node_count(count);
        for (uint32_t n = 0; n < count; ++n) {
            auto *node = part.add_nodes();
            node->set_hostname(rack->name() + "-n" + std::to_string(n + 1));
            node->set_rack(k);
            node->set_first_gpu(gpus);
            node->set_gpu_count(in.ConsumeIntegralInRange<uint32_t>(1, 16));
            gpus += node->gpu_count();
            ++nodes;
        }
    }
    part.set_gpu_count(in.ConsumeIntegral<uint8_t>() < 4 ? in.ConsumeIntegral<uint32_t>() : gpus);
    addDomains(in, &part);
    return part;
}

// Where the domains checked below are: parents before their children, every membership and leaf in the table, links
// for every GPU or none; and what a console asks of them (a GPU's line and list, a domain's GPUs) answered inside the
// fleet.
void checkDomains(const Topology &topology)
{
    const auto size = static_cast<uint32_t>(topology.domains.size());
    for (uint32_t d = 0; d < size; ++d) {
        const auto &domain = topology.domains[d];
        if (domain.parent < -1 || domain.parent >= static_cast<int32_t>(d) || domain.rail < -1
            || domain.rail >= static_cast<int32_t>(maxRail) || domain.name.size() > maxNameText) {
            __builtin_trap();
        }
    }
    const auto inTable = [size](const std::vector<uint32_t> &list) {
        return list.size() <= static_cast<size_t>(maxMemberships)
            && std::all_of(list.begin(), list.end(), [size](uint32_t d) { return d < size; });
    };
    for (const auto &rack : topology.racks) {
        if (!inTable(rack.domains)) {
            __builtin_trap();
        }
    }
    for (const auto &node : topology.nodes) {
        if (!inTable(node.domains)) {
            __builtin_trap();
        }
    }
    if (!topology.gpuLinks.empty() && topology.gpuLinks.size() != topology.gpuCount) {
        __builtin_trap();
    }
    for (const auto &link : topology.gpuLinks) {
        if ((link.leaf != Topology::GpuLink::none && link.leaf >= size) || link.port > maxLeafPort) {
            __builtin_trap();
        }
    }
    size_t sum = 0;
    for (const uint32_t gpu : { 0U, topology.gpuCount / 2, topology.gpuCount - 1 }) {
        sum += static_cast<size_t>(topology.domainLine(gpu).size());
        const auto domains = topology.domainsOfGpu(gpu);
        for (size_t i = 0; i < domains.size(); ++i) {
            if (domains[i] >= size
                || std::find(domains.begin(), domains.begin() + i, domains[i]) != domains.begin() + i) {
                __builtin_trap(); // past the table, or twice
            }
        }
    }
    for (uint32_t d = 0; d < size && d < 16; ++d) {
        uint64_t next = 0;
        bool first = true;
        for (const auto &[from, count] : topology.gpuRunsOfDomain(d)) {
            if (count == 0 || (!first && from <= next) || uint64_t { from } + count > topology.gpuCount) {
                __builtin_trap(); // runs empty, touching, out of order or past the fleet
            }
            first = false;
            next = uint64_t { from } + count;
        }
    }
    fuzz::sink = sum;
}

void checkLayout(const HeatmapLayout &layout, const Topology &topology)
{
    if (layout.width < 1 || layout.height < 1
        || layout.cells.size() != static_cast<size_t>(layout.width) * static_cast<size_t>(layout.height)
        || layout.gpuCells.size() != topology.gpuCount) {
        __builtin_trap();
    }
    for (uint32_t gpu = 0; gpu < topology.gpuCount; ++gpu) {
        const QPoint cell = layout.gpuCells[gpu];
        if (layout.gpuAt(cell.x(), cell.y()) != static_cast<int32_t>(gpu)) {
            __builtin_trap(); // a GPU off the map, or two GPUs in one cell
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const double aspect = (1 + (data[0] & 0x7fU)) / 8.0;
    std::vector<pb::TopologyPart> parts;
    if ((data[0] & 0x80U) != 0) {
        FuzzedDataProvider in(data + 1, size - 1);
        parts.push_back(shapePart(in));
    } else {
        for (const auto bytes : fuzz::splitParts(data + 1, size - 1, 16)) {
            pb::TopologyPart part;
            if (!part.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
                return 0;
            }
            parts.push_back(std::move(part));
        }
    }
    TopologyCollector collector;
    QString error;
    bool refused = false;
    for (auto &part : parts) {
        const uint64_t before = collector.bytes();
        if (!collector.add(std::move(part), &error)) {
            refused = true;
            if (error.isEmpty()) {
                __builtin_trap(); // refused without a reason
            }
            break;
        }
        if (collector.parts() > uint64_t { maxGpus } + 1 || collector.bytes() < before) {
            __builtin_trap();
        }
    }
    const TopologyPtr topology = collector.finish(&error);
    if (refused && topology) {
        __builtin_trap(); // a stream refused part way, decoded all the same
    }
    if (topology && collector.bytes() > maxTopologyBytes(topology->gpuCount)) {
        __builtin_trap(); // more bytes kept than the fleet can need
    }
    if (!topology) {
        if (error.isEmpty()) {
            __builtin_trap(); // refused without a reason
        }
        return 0;
    }
    checkDomains(*topology);
    checkLayout(HeatmapLayout::floorPlan(*topology), *topology);
    checkLayout(HeatmapLayout::compact(*topology, aspect), *topology);
    checkLayout(HeatmapLayout::byJob(*topology, nullptr, aspect), *topology);
    return 0;
}
