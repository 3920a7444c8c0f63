// SPDX-License-Identifier: Apache-2.0
#include "fleetshape.h"

#include "determinism.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace fleetscope::backend {

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

FleetShape FleetShape::forGpuCount(uint32_t gpuCount, uint64_t seed)
{
    if (gpuCount < minGpus || gpuCount > maxGpus) {
        throw std::invalid_argument(fmt::format("GPU count {} is outside {}..{}", gpuCount, minGpus, maxGpus));
    }
    FleetShape shape;
    shape.gpuCount = gpuCount;
    shape.seed = seed;
    const uint32_t nodeCount = (gpuCount + gpusPerNode - 1) / gpusPerNode;
    const uint32_t rackCount = (nodeCount + nodesPerRack - 1) / nodesPerRack;
    const auto racksPerRow = std::max<uint32_t>(1, static_cast<uint32_t>(std::ceil(std::sqrt(rackCount * 1.6))));
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
            for (uint32_t n = 0; n < nodesPerRack && gpu < gpuCount; ++n) {
                Node node;
                node.hostname = fmt::format("{}-n{:02}", rack.name, n + 1);
                node.rack = static_cast<uint32_t>(shape.racks.size());
                node.firstGpu = gpu;
                node.gpuCount = std::min(gpusPerNode, gpuCount - gpu);
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
    return shape;
}

} // namespace fleetscope::backend
