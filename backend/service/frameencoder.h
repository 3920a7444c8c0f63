// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "core/frame.h"
#include "core/metriccatalog.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <vector>

namespace fleetscope::backend {

namespace pb = fleetscope::telemetry::v1;

// At most this many GPUs per FramePart: 65,536 x (8 metrics x 4 bytes + 1 health byte) stays near 2 MiB, well under
// gRPC's 4 MiB message limit.
constexpr uint32_t maxGpusPerFramePart = 65536;
// Nodes per TopologyPart; a node with its GPUs' UUIDs and serials is about 500 bytes on the wire, so a part stays
// near 2 MiB.
constexpr uint32_t maxNodesPerTopologyPart = 4096;

std::vector<pb::FramePart> encodeFrame(const Frame &frame, const std::vector<MetricId> &metrics,
    uint64_t topologyGeneration, uint32_t maxGpusPerPart = maxGpusPerFramePart);

std::vector<pb::TopologyPart> encodeTopology(
    const FleetShape &shape, uint64_t generation, uint32_t maxNodesPerPart = maxNodesPerTopologyPart);

// The catalogue; a simulated fleet of GPUs that draw more than the catalogue's range suggests (GB200, 1,200 W)
// widens its power range.
void fillMetricCatalog(pb::ListMetricsResponse *response, const FleetShape *shape = nullptr);

} // namespace fleetscope::backend
