// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "core/incident.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fleetscope::backend {

// The fleet's names a job's account speaks of, copied from the shape (the source's shape may not outlive its judge).
struct FleetNames
{
    explicit FleetNames(const FleetShape &shape);
    int64_t nodeOf(uint32_t gpu) const;
    // "r01-k02-n03 GPU 5"; "GPU 123456" for a GPU the shape does not place.
    std::string gpuName(uint32_t gpu) const;
    std::string nodeName(int64_t node) const;

    uint32_t gpuCount = 0;
    std::vector<uint32_t> nodeOfGpu;
    std::vector<uint32_t> nodeFirstGpu;
    std::vector<std::string> hostnames;
};

// An open incident as its newest event said it.
struct HeldIncident
{
    std::shared_ptr<const Incident> incident;
    std::string headline;
};
using HeldIncidents = std::map<uint64_t, HeldIncident>; // by id

// The oldest open incident that names the job or covers any of its GPUs (ascending), null when none.
const HeldIncident *incidentCovering(const HeldIncidents &incidents, uint64_t jobId, const std::vector<uint32_t> &gpus);

} // namespace fleetscope::backend
