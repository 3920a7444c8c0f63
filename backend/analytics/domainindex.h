// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fleetscope::backend {

// The shared domains each GPU of a shape belongs to, as the incident folder walks them on every frame and fold: a
// GPU's own (its leaf, its rack's, its node's) and their parents, each once and without allocating; and each domain's
// GPU count, counted once per shape. The shape must outlive it.
class DomainIndex
{
public:
    explicit DomainIndex(const FleetShape &shape);

    // Calls f(domain) for each domain that serves the GPU, once; the GPU's own before their parents.
    template <typename F> void forEachDomainOf(uint32_t gpu, F &&f) const;
    // The GPUs a domain serves (its children's included).
    uint32_t gpus(uint32_t domain) const { return m_gpus[domain]; }

private:
    const FleetShape &m_shape;
    std::vector<uint32_t> m_gpus; // per domain
};

// Each domain that serves the GPU once, its own (leaf, rack's, node's) and their parents; no allocation.
template <typename F> void DomainIndex::forEachDomainOf(uint32_t gpu, F &&f) const
{
    const auto &domains = m_shape.domains;
    if (domains.empty() || gpu >= m_shape.gpuCount) {
        return;
    }
    std::array<uint32_t, 24> seen {};
    size_t n = 0;
    const auto visit = [&](uint32_t d) {
        for (int depth = 0; d < domains.size() && depth < 8; ++depth) {
            if (std::find(seen.begin(), seen.begin() + static_cast<ptrdiff_t>(n), d)
                != seen.begin() + static_cast<ptrdiff_t>(n)) {
                return;
            }
            if (n < seen.size()) {
                seen[n++] = d;
            }
            f(d);
            const int32_t parent = domains[d].parent;
            if (parent < 0) {
                return;
            }
            d = static_cast<uint32_t>(parent);
        }
    };
    if (gpu < m_shape.gpuLinks.size() && m_shape.gpuLinks[gpu].leaf != GpuLink::none) {
        visit(m_shape.gpuLinks[gpu].leaf);
    }
    const auto &node = m_shape.nodes[m_shape.nodeOfGpu[gpu]];
    for (const uint32_t d : m_shape.racks[node.rack].domains) {
        visit(d);
    }
    for (const uint32_t d : node.domains) {
        visit(d);
    }
}

} // namespace fleetscope::backend
