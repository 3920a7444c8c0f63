// SPDX-License-Identifier: Apache-2.0
#pragma once
// A small hand-made topology for widget tests that need hostnames and racks but no backend.
#include "model/fleetmodel.h"

#include <memory>

namespace fleetscope::testing {

// One row of three racks of two 8-GPU nodes: 48 GPUs, hostnames r01-kNN-nMM.
inline TopologyPtr makeTopology()
{
    auto t = std::make_shared<Topology>();
    t->generation = 5;
    t->rows.push_back({ QStringLiteral("r01"), QStringLiteral("hall-a") });
    for (uint32_t r = 0; r < 3; ++r) {
        Topology::Rack rack;
        rack.name = QStringLiteral("r01-k%1").arg(r + 1, 2, 10, QLatin1Char('0'));
        rack.position = r;
        rack.firstNode = 2 * r;
        rack.nodeCount = 2;
        t->racks.push_back(rack);
        for (uint32_t n = 0; n < 2; ++n) {
            Topology::Node node;
            node.hostname = rack.name + QStringLiteral("-n%1").arg(n + 1, 2, 10, QLatin1Char('0'));
            node.rack = r;
            node.firstGpu = t->gpuCount;
            node.gpuCount = 8;
            t->nodes.push_back(node);
            for (int g = 0; g < 8; ++g) {
                t->nodeOfGpu.push_back(static_cast<uint32_t>(t->nodes.size() - 1));
            }
            t->gpuCount += 8;
        }
    }
    return t;
}

} // namespace fleetscope::testing
