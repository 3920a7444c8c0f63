// SPDX-License-Identifier: Apache-2.0
#include "model/heatmaplayout.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetscope {

namespace {
// Racks named the same in every row (r01-k01 ... r40-k16 on most floors): each column's short name once, over the
// top row, instead of the same sixteen names above every row. A row may have fewer racks (a floor's last row often
// does) as long as the top row has every column. Empty when a column's racks are named differently or the top row
// lacks one.
std::vector<HeatmapLayout::Label> sharedRackColumns(
    const std::vector<HeatmapLayout::Label> &rackLabels, const Topology &topology, int columns, int blockWidth)
{
    const size_t rows = topology.rows.size();
    if (rows < 2 || columns < 1 || topology.racks.size() > rows * static_cast<size_t>(columns)) {
        return {};
    }
    std::vector<HeatmapLayout::Label> shared(static_cast<size_t>(columns));
    std::vector<size_t> seen(static_cast<size_t>(columns), 0);
    int topRow = std::numeric_limits<int>::max(); // the top row's aisle, in cells
    for (size_t i = 0; i < topology.racks.size(); ++i) {
        const auto &rack = topology.racks[i];
        const QString &name = rackLabels[i].shortText;
        if (rack.position >= static_cast<uint32_t>(columns)) {
            return {};
        }
        auto &column = shared[rack.position];
        if (name.isEmpty() || (seen[rack.position] > 0 && column.text != name)) {
            return {};
        }
        if (seen[rack.position]++ == 0 || rackLabels[i].cells.top() < column.cells.top()) {
            column.text = name;
            column.shortText = name;
            column.cells = rackLabels[i].cells;
        }
        topRow = std::min(topRow, rackLabels[i].cells.top());
    }
    for (size_t c = 0; c < shared.size(); ++c) {
        if (seen[c] == 0 || shared[c].cells.top() != topRow) {
            return {};
        }
    }
    for (auto &column : shared) {
        column.cells.setWidth(blockWidth);
    }
    return shared;
}
} // namespace

std::pair<uint64_t, uint64_t> HeatmapLayout::floorPlanSize(const Topology &topology)
{
    uint64_t blockWidth = 1;
    uint64_t blockHeight = 1;
    uint64_t maxRacks = 1;
    for (const auto &node : topology.nodes) {
        blockWidth = std::max<uint64_t>(blockWidth, node.gpuCount);
    }
    for (const auto &rack : topology.racks) {
        blockHeight = std::max<uint64_t>(blockHeight, rack.nodeCount);
        maxRacks = std::max<uint64_t>(maxRacks, uint64_t { rack.position } + 1);
    }
    const uint64_t rows = topology.rows.size();
    const uint64_t width = maxRacks * (blockWidth + rackGap) - rackGap;
    const uint64_t height = rows == 0 ? 1 : rows * (blockHeight + rowGap) - rowGap;
    return { width, height };
}

HeatmapLayout HeatmapLayout::floorPlan(const Topology &topology)
{
    // The topology decoder (client/topologydecode) has bounded floorPlanSize(), so every size below fits an int.
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
    for (const auto &rack : topology.racks) {
        // "r07-k12" is "k12" within row r07's band.
        const QString &row = topology.rows[rack.row].name;
        const bool prefixed = rack.name.size() > row.size() + 1 && rack.name.startsWith(row)
            && !rack.name.at(row.size()).isLetterOrNumber();
        layout.rackLabels.push_back({ rack.name,
            QRect(static_cast<int>(rack.position) * (bw + rackGap), static_cast<int>(rack.row) * (bh + rowGap), bw,
                static_cast<int>(rack.nodeCount)),
            prefixed ? rack.name.mid(row.size() + 1) : QString() });
    }
    layout.rackColumnLabels = sharedRackColumns(layout.rackLabels, topology, static_cast<int>(maxRacks), bw);
    layout.labelNodes(topology);
    return layout;
}

namespace {

// GPUs per node when every node has the same number (0 otherwise).
int uniformNodeWidth(const Topology &topology)
{
    if (topology.nodes.empty()) {
        return 0;
    }
    const uint32_t first = topology.nodes.front().gpuCount;
    const bool uniform = std::all_of(
        topology.nodes.begin(), topology.nodes.end(), [first](const auto &n) { return n.gpuCount == first; });
    return uniform ? static_cast<int>(first) : 0;
}

// A width near sqrt(count * aspect), rounded up to a whole number of nodes.
int lineWidthFor(double count, double aspect, int nodeWidth)
{
    int width = std::max(1, static_cast<int>(std::ceil(std::sqrt(count * std::max(0.05, aspect)))));
    if (nodeWidth > 1) {
        width = (width + nodeWidth - 1) / nodeWidth * nodeWidth;
    }
    return width;
}

} // namespace

int HeatmapLayout::shelfPack(const std::vector<QSize> &blocks, int lineWidth, std::vector<QPoint> *origins)
{
    int x = 0;
    int y = labelAisle;
    int shelf = 0;
    for (const QSize &b : blocks) {
        if (x > 0 && x + b.width() > lineWidth) {
            x = 0;
            y += shelf + labelAisle;
            shelf = 0;
        }
        if (origins != nullptr) {
            origins->emplace_back(x, y);
        }
        x += b.width() + 1;
        shelf = std::max(shelf, b.height());
    }
    return blocks.empty() ? labelAisle : y + shelf + labelAisle;
}

int HeatmapLayout::lineWidthFor(double count, double aspect, int nodeWidth)
{
    return fleetscope::lineWidthFor(count, aspect, nodeWidth);
}

void HeatmapLayout::labelNodes(const Topology &topology)
{
    nodeLabels.clear();
    for (const auto &node : topology.nodes) {
        if (node.gpuCount == 0) {
            continue;
        }
        const QPoint first = gpuCells[node.firstGpu];
        const QPoint last = gpuCells[node.firstGpu + node.gpuCount - 1];
        if (first.y() == last.y() && last.x() - first.x() + 1 == static_cast<int>(node.gpuCount)) {
            nodeLabels.push_back({ node.hostname, QRect(first, last) });
        }
    }
}

HeatmapLayout HeatmapLayout::compact(const Topology &topology, double aspect)
{
    HeatmapLayout layout;
    const int n = static_cast<int>(topology.gpuCount);
    layout.width = lineWidthFor(std::max(1, n), aspect, uniformNodeWidth(topology));
    layout.height = std::max(1, (n + layout.width - 1) / layout.width);
    layout.cells.assign(static_cast<size_t>(layout.width) * layout.height, gap);
    layout.gpuCells.resize(topology.gpuCount);
    for (int gpu = 0; gpu < n; ++gpu) {
        layout.cells[static_cast<size_t>(gpu)] = gpu;
        layout.gpuCells[static_cast<size_t>(gpu)] = QPoint(gpu % layout.width, gpu / layout.width);
    }
    layout.labelNodes(topology);
    return layout;
}

HeatmapLayout HeatmapLayout::byJob(const Topology &topology, const JobList *jobs, double aspect)
{
    const int nodeWidth = std::max(1, uniformNodeWidth(topology));
    struct Group
    {
        QString name;
        const std::vector<uint32_t> *gpus = nullptr;
        int width = 0;
        int height = 0;
    };
    std::vector<Group> groups;
    std::vector<uint32_t> idle;
    std::vector<char> busy(topology.gpuCount, 0);
    const bool sameFleet = jobs != nullptr && jobs->topologyGeneration == topology.generation;
    if (sameFleet) {
        for (const auto &job : jobs->jobs) {
            if (!job.isRunning() || job.gpus.empty()) {
                continue;
            }
            // A block about square, a whole number of nodes wide.
            const int size = static_cast<int>(job.gpus.size());
            const int width = std::min(size, lineWidthFor(size, 1.0, nodeWidth));
            groups.push_back(
                { QStringLiteral("%1 #%2").arg(job.name).arg(job.id), &job.gpus, width, (size + width - 1) / width });
            for (uint32_t gpu : job.gpus) {
                if (gpu < busy.size()) {
                    busy[gpu] = 1;
                }
            }
        }
    }
    for (uint32_t gpu = 0; gpu < topology.gpuCount; ++gpu) {
        if (busy[gpu] == 0) {
            idle.push_back(gpu);
        }
    }
    // Tallest blocks first, so each shelf wastes little height; ties by size, then name, for a stable picture.
    std::stable_sort(groups.begin(), groups.end(), [](const Group &a, const Group &b) {
        return a.height != b.height ? a.height > b.height : a.gpus->size() > b.gpus->size();
    });

    double area = static_cast<double>(idle.size());
    int widest = 1;
    for (const auto &g : groups) {
        area += static_cast<double>(g.width + 1) * (g.height + 2);
        widest = std::max(widest, g.width);
    }
    std::vector<QSize> sizes;
    sizes.reserve(groups.size());
    for (const auto &g : groups) {
        sizes.emplace_back(g.width, g.height);
    }
    const auto pack
        = [&sizes](int lineWidth, std::vector<QPoint> *origins) { return shelfPack(sizes, lineWidth, origins); };
    int lineWidth = std::max(widest, lineWidthFor(std::max(1.0, area), aspect, nodeWidth));
    // One correction towards the wanted shape: shelves waste some height, so size the line for the area packed.
    const int packedHeight = pack(lineWidth, nullptr) + static_cast<int>((idle.size() + lineWidth - 1) / lineWidth);
    lineWidth = std::max(widest, lineWidthFor(static_cast<double>(lineWidth) * packedHeight, aspect, nodeWidth));
    std::vector<QPoint> origins;
    const int idleTop = pack(lineWidth, &origins);
    const int idleLines = static_cast<int>((idle.size() + lineWidth - 1) / lineWidth);

    HeatmapLayout layout;
    layout.width = lineWidth;
    layout.height = std::max(1, idleTop + idleLines);
    layout.cells.assign(static_cast<size_t>(layout.width) * layout.height, gap);
    layout.gpuCells.resize(topology.gpuCount);
    const auto place = [&layout](uint32_t gpu, int x, int y) {
        layout.cells[static_cast<size_t>(y) * layout.width + x] = static_cast<int32_t>(gpu);
        layout.gpuCells[gpu] = QPoint(x, y);
    };
    for (size_t i = 0; i < groups.size(); ++i) {
        const auto &g = groups[i];
        const QPoint o = origins[i];
        for (size_t k = 0; k < g.gpus->size(); ++k) {
            const int k32 = static_cast<int>(k);
            place((*g.gpus)[k], o.x() + k32 % g.width, o.y() + k32 / g.width);
        }
        layout.groupLabels.push_back({ g.name, QRect(o.x(), o.y(), g.width, g.height) });
    }
    for (size_t k = 0; k < idle.size(); ++k) {
        const int k32 = static_cast<int>(k);
        place(idle[k], k32 % lineWidth, idleTop + k32 / lineWidth);
    }
    if (!idle.empty()) {
        layout.groupLabels.push_back(
            { QStringLiteral("idle (%L1 GPUs)").arg(idle.size()), QRect(0, idleTop, lineWidth, idleLines) });
    }
    layout.labelNodes(topology);
    return layout;
}

} // namespace fleetscope
