// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fleetscope::backend {

// An incident as of one of its events (IncidentOpen, IncidentUpdate, IncidentClose): symptoms that began together,
// folded into one that names the smallest shared domain explaining them (analytics/incidentfolder.h,
// docs/INCIDENTS.md). Shared by the event and every copy of it.
struct Incident
{
    uint64_t id = 0;
    double startSeconds = 0; // the first symptom, on the producer's clock
    int64_t domain = -1; // index into the fleet's domains; -1 for a single GPU's or node's fault
    std::string cause; // "power", "cooling", "network", "gpu" or "node"
    std::string evidence;
    uint32_t gpuCount = 0;
    std::vector<std::pair<uint32_t, uint32_t>> gpuRuns; // [first, count), ascending
    std::vector<uint64_t> jobs; // running jobs it hits, most GPUs first
};

} // namespace fleetscope::backend
