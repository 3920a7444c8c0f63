// SPDX-License-Identifier: Apache-2.0
#include "heatmaplayout.h"

#include <algorithm>

namespace fleetscope {

HeatmapLayout HeatmapLayout::floorPlan(const Topology &topology)
{
    constexpr int rackGap = 1;
    constexpr int rowGap = 3;
    uint32_t blockWidth = 1; // GPUs per node, the widest node
    uint32_t blockHeight = 1; // nodes per rack, the tallest rack
    for (const auto &node : topology.nodes) {
        blockWidth = std::max(blockWidth, node.gpuCount);
    }
    std::vector<uint32_t> racksInRow(topology.rows.size(), 0);
    for (const auto &rack : topology.racks) {
        blockHeight = std::max(blockHeight, rack.nodeCount);
        racksInRow[rack.row] = std::max(racksInRow[rack.row], rack.position + 1);
    }
    const uint32_t maxRacks = racksInRow.empty() ? 1 : *std::max_element(racksInRow.begin(), racksInRow.end());
    const int bw = static_cast<int>(blockWidth);
    const int bh = static_cast<int>(blockHeight);
    const int rows = static_cast<int>(topology.rows.size());

    HeatmapLayout layout;
    layout.width = static_cast<int>(maxRacks) * (bw + rackGap) - rackGap;
    layout.height = std::max(1, rows * (bh + rowGap) - rowGap);
    layout.cells.assign(static_cast<size_t>(layout.width) * layout.height, gap);
    layout.gpuCells.resize(topology.gpuCount);
    for (const auto &rack : topology.racks) {
        const int x0 = static_cast<int>(rack.position) * (bw + rackGap);
        const int y0 = static_cast<int>(rack.row) * (bh + rowGap);
        for (uint32_t n = 0; n < rack.nodeCount; ++n) {
            const auto &node = topology.nodes[rack.firstNode + n];
            for (uint32_t g = 0; g < node.gpuCount; ++g) {
                const int x = x0 + static_cast<int>(g);
                const int y = y0 + static_cast<int>(n);
                const uint32_t gpu = node.firstGpu + g;
                layout.cells[static_cast<size_t>(y) * layout.width + x] = static_cast<int32_t>(gpu);
                layout.gpuCells[gpu] = QPoint(x, y);
            }
        }
    }
    for (int r = 0; r < rows; ++r) {
        layout.rowLabels.push_back(
            { topology.rows[static_cast<size_t>(r)].name, QRect(0, r * (bh + rowGap), layout.width, bh) });
    }
    return layout;
}

} // namespace fleetscope
