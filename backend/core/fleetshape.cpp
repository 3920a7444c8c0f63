// SPDX-License-Identifier: Apache-2.0
#include "core/fleetshape.h"

#include "core/determinism.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
const HardwareSpec hardwareSpecs[] = {
    { Hardware::HgxH100, "hgx-h100", "NVIDIA H100 80GB HBM3", "550.54.15", "96.00.99.00.01", "550.127.08",
        "96.00.A5.00.01", "535.183.01", FleetShape::gpusPerNode, FleetShape::nodesPerRack, 'n', false, 0 },
    { Hardware::Gb200Nvl72, "gb200-nvl72", "NVIDIA GB200", "570.124.06", "97.00.9B.00.01", "570.133.20",
        "97.00.B9.00.01", "565.57.01", 4, 18, 't', true, 1300 },
};
} // namespace

const HardwareSpec &HardwareSpec::of(Hardware hardware)
{
    for (const auto &spec : hardwareSpecs) {
        if (spec.kind == hardware) {
            return spec;
        }
    }
    return hardwareSpecs[0];
}

std::optional<Hardware> HardwareSpec::fromName(std::string_view name)
{
    for (const auto &spec : hardwareSpecs) {
        if (name == spec.name) {
            return spec.kind;
        }
    }
    return std::nullopt;
}

std::string HardwareSpec::names()
{
    std::string out;
    for (const auto &spec : hardwareSpecs) {
        out += (out.empty() ? "" : ", ") + std::string(spec.name);
    }
    return out;
}

std::string FleetShape::gpuUuid(uint32_t gpu) const
{
    if (!simulated) {
        return gpu < uuids.size() ? uuids[gpu] : std::string();
    }
    const uint64_t a = determinism::hash(seed, 0x55554944, gpu);
    const uint64_t b = determinism::mix(a);
    // Version-4 layout, as NVIDIA's UUIDs are random too.
    return fmt::format("GPU-{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32U, (a >> 16U) & 0xffffU, a & 0xfffU,
        0x8000U | ((b >> 48U) & 0x3fffU), b & 0xffffffffffffULL);
}

std::string FleetShape::gpuSerial(uint32_t gpu) const
{
    if (!simulated) {
        return {};
    }
    return fmt::format("1654{:09}", determinism::hash(seed, 0x5345524c, gpu) % 1000000000ULL);
}

std::string FleetShape::simulatedPciBusId(uint32_t gpuInNode)
{
    static constexpr std::array<unsigned, 8> buses = { 0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB };
    return fmt::format("00000000:{:02X}:00.0", buses[gpuInNode % buses.size()]);
}

FleetShape FleetShape::forGpuCount(uint32_t gpuCount, uint64_t seed, Hardware hardware)
{
    if (gpuCount < minGpus || gpuCount > maxGpus) {
        throw std::invalid_argument(fmt::format("GPU count {} is outside {}..{}", gpuCount, minGpus, maxGpus));
    }
    FleetShape shape;
    shape.gpuCount = gpuCount;
    shape.seed = seed;
    shape.hardware = hardware;
    const HardwareSpec &spec = HardwareSpec::of(hardware);
    const uint32_t perNode = spec.gpusPerNode;
    const uint32_t perRack = spec.nodesPerRack;
    const uint32_t nodeCount = (gpuCount + perNode - 1) / perNode;
    const uint32_t rackCount = (nodeCount + perRack - 1) / perRack;
    // On the console's floor plan a rack is a block of nodes (lines) x GPUs (cells), with a one-cell aisle beside it
    // and three above (model/heatmaplayout.h). HGX's 8 x 8 block has always been taken as square; NVL72's 4 x 18 is
    // 5 x 21 with its aisles, so its rows hold about twice as many racks.
    const double rackAspect = perNode == perRack ? 1.0 : (perRack + 3.0) / (perNode + 1.0);
    const auto racksPerRow
        = std::max<uint32_t>(1, static_cast<uint32_t>(std::ceil(std::sqrt(rackCount * 1.6 * rackAspect))));
    const uint32_t rowCount = (rackCount + racksPerRow - 1) / racksPerRow;
    // Halls of at most 16 rows, as on a real floor.
    constexpr uint32_t rowsPerHall = 16;

    shape.rows.reserve(rowCount);
    shape.racks.reserve(rackCount);
    shape.nodes.reserve(nodeCount);
    shape.nodeOfGpu.resize(gpuCount);
    uint32_t gpu = 0;
    for (uint32_t r = 0; r < rowCount; ++r) {
        Row row;
        row.name = fmt::format("r{:02}", r + 1);
        row.hall = fmt::format("hall-{}", static_cast<char>('a' + std::min<uint32_t>(r / rowsPerHall, 25)));
        row.firstRack = static_cast<uint32_t>(shape.racks.size());
        for (uint32_t p = 0; p < racksPerRow && shape.racks.size() < rackCount; ++p) {
            Rack rack;
            rack.name = fmt::format("{}-k{:02}", row.name, p + 1);
            rack.row = r;
            rack.position = p;
            rack.firstNode = static_cast<uint32_t>(shape.nodes.size());
            rack.nvlinkDomain = spec.rackIsNvlinkDomain;
            for (uint32_t n = 0; n < perRack && gpu < gpuCount; ++n) {
                Node node;
                node.hostname = fmt::format("{}-{}{:02}", rack.name, spec.nodeLetter, n + 1);
                node.rack = static_cast<uint32_t>(shape.racks.size());
                node.firstGpu = gpu;
                node.gpuCount = std::min(perNode, gpuCount - gpu);
                const auto nodeIndex = static_cast<uint32_t>(shape.nodes.size());
                std::fill_n(shape.nodeOfGpu.begin() + gpu, node.gpuCount, nodeIndex);
                gpu += node.gpuCount;
                shape.nodes.push_back(std::move(node));
            }
            rack.nodeCount = static_cast<uint32_t>(shape.nodes.size()) - rack.firstNode;
            shape.racks.push_back(std::move(rack));
        }
        row.rackCount = static_cast<uint32_t>(shape.racks.size()) - row.firstRack;
        shape.rows.push_back(std::move(row));
    }
    shape.simulateRollout();
    shape.simulateDomains();
    return shape;
}

void FleetShape::simulateRollout()
{
    const HardwareSpec &spec = HardwareSpec::of(hardware);
    const auto rackCount = static_cast<uint32_t>(racks.size());
    std::vector<bool> rolling(rackCount, false);
    if (rackCount >= 4) {
        const uint32_t count = std::max<uint32_t>(1, rackCount / 50);
        for (uint32_t i = 0; i < count; ++i) {
            // Spread over the floor: one pick per equal stretch of racks.
            const uint32_t stretch = rackCount / count;
            const uint32_t r = i * stretch + static_cast<uint32_t>(determinism::hash(seed, 0x524f4c4c, i) % stretch);
            rolling[r] = true;
        }
    }
    for (uint32_t r = 0; r < rackCount; ++r) {
        const Rack &rack = racks[r];
        for (uint32_t k = rack.firstNode; k < rack.firstNode + rack.nodeCount; ++k) {
            Node &node = nodes[k];
            if (rolling[r] && k - rack.firstNode < (rack.nodeCount + 1) / 2) {
                node.driverVersion = spec.nextDriverVersion;
                node.firmwareVersion = spec.nextFirmwareVersion;
            } else if (!rolling[r] && determinism::hash(seed, 0x4d495353, k) % 400 == 0) {
                node.driverVersion = spec.previousDriverVersion;
            }
        }
    }
}

std::string_view FleetShape::driverVersionOf(uint32_t node) const
{
    const std::string &own = nodes[node].driverVersion;
    return own.empty() && simulated ? std::string_view(HardwareSpec::of(hardware).driverVersion) : own;
}

std::string_view FleetShape::firmwareVersionOf(uint32_t node) const
{
    const std::string &own = nodes[node].firmwareVersion;
    return own.empty() && simulated ? std::string_view(HardwareSpec::of(hardware).firmwareVersion) : own;
}

} // namespace fleetscope::backend
