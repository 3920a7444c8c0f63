// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the decoders' suites (tst_protodecode, tst_answerdecode) share: a simulated fleet's topology, encoded by the
// backend and decoded by the console as the wire carries it.

#include "client/topologydecode.h"
#include "service/frameencoder.h"
#include "sim/simulator.h"

#include <QtGlobal>

namespace fleetscope::decodetesting {

inline constexpr uint64_t generation = 77;

inline TopologyPtr topologyFor(const backend::Simulator &sim, uint32_t nodesPerPart = 20000)
{
    QString error;
    auto t = decodeTopology(backend::encodeTopology(sim.shape(), generation, nodesPerPart), &error);
    if (!t) {
        qWarning("%s", qPrintable(error));
    }
    return t;
}

} // namespace fleetscope::decodetesting
