// SPDX-License-Identifier: Apache-2.0
// The by-fabric arrangement: the network as it is cabled, so that what a switch does to its GPUs shows as one shape.
#include "model/heatmaplayout.h"

#include <algorithm>

namespace fleetscope {

namespace {
// One scalable unit (or, where a node names none, one leaf switch): its leaves are its lines, their ports its cells.
struct FabricBlock
{
    uint32_t domain = 0;
    std::vector<uint32_t> gpus;
    std::vector<uint32_t> leaves; // by rail, then index
    std::vector<uint32_t> ports; // ascending, distinct
};

// The scalable unit a GPU's node belongs to, or the GPU's leaf where its node names none.
uint32_t blockDomainOf(const Topology &topology, uint32_t gpu, uint32_t leaf)
{
    for (const uint32_t d : topology.nodeOf(gpu).domains) {
        if (d < topology.domains.size() && topology.domains[d].kind == DomainKind::ScalableUnit) {
            return d;
        }
    }
    return leaf;
}
} // namespace

HeatmapLayout HeatmapLayout::byFabric(const Topology &topology, double aspect)
{
    const auto domainCount = topology.domains.size();
    const bool linked = topology.gpuLinks.size() == topology.gpuCount && topology.nodeOfGpu.size() == topology.gpuCount;
    std::vector<FabricBlock> blocks;
    std::vector<int32_t> blockOfDomain(linked ? domainCount : 0, -1);
    std::vector<uint32_t> unlinked;
    for (uint32_t gpu = 0; gpu < topology.gpuCount; ++gpu) {
        const uint32_t leaf = linked ? topology.gpuLinks[gpu].leaf : Topology::GpuLink::none;
        if (leaf >= domainCount || topology.domains[leaf].kind != DomainKind::LeafSwitch) {
            unlinked.push_back(gpu);
            continue;
        }
        const uint32_t domain = blockDomainOf(topology, gpu, leaf);
        if (blockOfDomain[domain] < 0) {
            blockOfDomain[domain] = static_cast<int32_t>(blocks.size());
            blocks.push_back({ domain, {}, {}, {} });
        }
        blocks[static_cast<size_t>(blockOfDomain[domain])].gpus.push_back(gpu);
    }
    std::vector<QSize> sizes;
    sizes.reserve(blocks.size());
    for (auto &b : blocks) {
        for (const uint32_t gpu : b.gpus) {
            const auto &link = topology.gpuLinks[gpu];
            if (std::find(b.leaves.begin(), b.leaves.end(), link.leaf) == b.leaves.end()) {
                b.leaves.push_back(link.leaf);
            }
            b.ports.push_back(link.port);
        }
        std::sort(b.leaves.begin(), b.leaves.end(), [&topology](uint32_t x, uint32_t y) {
            const int32_t rx = topology.domains[x].rail;
            const int32_t ry = topology.domains[y].rail;
            return rx != ry ? rx < ry : x < y;
        });
        std::sort(b.ports.begin(), b.ports.end());
        b.ports.erase(std::unique(b.ports.begin(), b.ports.end()), b.ports.end());
        sizes.emplace_back(static_cast<int>(b.ports.size()), static_cast<int>(b.leaves.size()));
    }

    double area = static_cast<double>(unlinked.size());
    int widest = 1;
    for (const QSize &s : sizes) {
        area += static_cast<double>(s.width() + 1) * (s.height() + labelAisle);
        widest = std::max(widest, s.width());
    }
    int lineWidth = std::max(widest, lineWidthFor(std::max(1.0, area), aspect, 1));
    // One correction towards the wanted shape, as byJob's: shelves waste some height.
    const auto bandLines = [&unlinked](int width) { return static_cast<int>((unlinked.size() + width - 1) / width); };
    const int packedHeight = shelfPack(sizes, lineWidth, nullptr) + bandLines(lineWidth);
    lineWidth = std::max(widest, lineWidthFor(static_cast<double>(lineWidth) * packedHeight, aspect, 1));
    std::vector<QPoint> origins;
    const int bandTop = shelfPack(sizes, lineWidth, &origins);

    HeatmapLayout layout;
    layout.width = lineWidth;
    layout.height = std::max(1, bandTop + bandLines(lineWidth));
    layout.cells.assign(static_cast<size_t>(layout.width) * layout.height, gap);
    layout.gpuCells.resize(topology.gpuCount);
    const auto place = [&layout](uint32_t gpu, int x, int y) {
        layout.cells[static_cast<size_t>(y) * layout.width + x] = static_cast<int32_t>(gpu);
        layout.gpuCells[gpu] = QPoint(x, y);
    };
    for (size_t i = 0; i < blocks.size(); ++i) {
        const auto &b = blocks[i];
        const QPoint o = origins[i];
        for (const uint32_t gpu : b.gpus) {
            const auto &link = topology.gpuLinks[gpu];
            const auto line = std::find(b.leaves.begin(), b.leaves.end(), link.leaf) - b.leaves.begin();
            const auto cell = std::lower_bound(b.ports.begin(), b.ports.end(), link.port) - b.ports.begin();
            const int x = o.x() + static_cast<int>(cell);
            const int y = o.y() + static_cast<int>(line);
            if (layout.gpuAt(x, y) != gap) {
                unlinked.push_back(gpu); // two GPUs on one port: the second goes to the band (the source's error)
                continue;
            }
            place(gpu, x, y);
        }
        for (size_t line = 0; line < b.leaves.size(); ++line) {
            const Topology::Domain &leaf = topology.domains[b.leaves[line]];
            layout.lineLabels.push_back({ leaf.name, QRect(o.x(), o.y() + static_cast<int>(line), sizes[i].width(), 1),
                leaf.rail >= 0 ? QStringLiteral("rail %1").arg(leaf.rail) : QString() });
        }
        const auto &name = topology.domains[b.domain].name;
        layout.groupLabels.push_back({ topology.domains[b.domain].kind == DomainKind::ScalableUnit
                ? QStringLiteral("%1 · %2 leaves").arg(name).arg(b.leaves.size())
                : QStringLiteral("leaf %1").arg(name),
            QRect(o, QSize(sizes[i].width(), sizes[i].height())), name });
    }
    // A port shared by two GPUs may have sent one to the band after the band was sized.
    const int lines = bandLines(lineWidth);
    if (bandTop + lines > layout.height) {
        layout.height = bandTop + lines;
        layout.cells.resize(static_cast<size_t>(layout.width) * layout.height, gap);
    }
    for (size_t k = 0; k < unlinked.size(); ++k) {
        const int k32 = static_cast<int>(k);
        place(unlinked[k], k32 % lineWidth, bandTop + k32 / lineWidth);
    }
    if (!unlinked.empty()) {
        layout.groupLabels.push_back({ QStringLiteral("not on the fabric (%L1 GPUs)").arg(unlinked.size()),
            QRect(0, bandTop, lineWidth, lines) });
    }
    return layout;
}

} // namespace fleetscope
