// SPDX-License-Identifier: Apache-2.0
#include "analytics/jobnames.h"

#include <fmt/format.h>

#include <algorithm>

namespace fleetscope::backend {

FleetNames::FleetNames(const FleetShape &shape)
    : gpuCount(shape.gpuCount)
    , nodeOfGpu(shape.nodeOfGpu)
{
    nodeFirstGpu.reserve(shape.nodes.size());
    hostnames.reserve(shape.nodes.size());
    for (const auto &node : shape.nodes) {
        nodeFirstGpu.push_back(node.firstGpu);
        hostnames.push_back(node.hostname);
    }
}

int64_t FleetNames::nodeOf(uint32_t gpu) const
{
    return gpu < nodeOfGpu.size() && nodeOfGpu[gpu] < hostnames.size() ? static_cast<int64_t>(nodeOfGpu[gpu]) : -1;
}

std::string FleetNames::gpuName(uint32_t gpu) const
{
    const int64_t node = nodeOf(gpu);
    if (node < 0) {
        return fmt::format("GPU {}", gpu);
    }
    return fmt::format(
        "{} GPU {}", hostnames[static_cast<size_t>(node)], gpu - nodeFirstGpu[static_cast<size_t>(node)]);
}

std::string FleetNames::nodeName(int64_t node) const
{
    return node >= 0 && static_cast<size_t>(node) < hostnames.size() ? hostnames[static_cast<size_t>(node)]
                                                                     : fmt::format("node {}", node);
}

const HeldIncident *incidentCovering(const HeldIncidents &incidents, uint64_t jobId, const std::vector<uint32_t> &gpus)
{
    for (const auto &[id, held] : incidents) {
        const Incident &incident = *held.incident;
        if (std::find(incident.jobs.begin(), incident.jobs.end(), jobId) != incident.jobs.end()) {
            return &held;
        }
        // Both ascending: one pass over the runs and the GPUs together.
        auto gpu = gpus.begin();
        for (const auto &[first, count] : incident.gpuRuns) {
            gpu = std::lower_bound(gpu, gpus.end(), first);
            if (gpu == gpus.end()) {
                break;
            }
            if (static_cast<uint64_t>(*gpu) < static_cast<uint64_t>(first) + count) {
                return &held;
            }
        }
    }
    return nullptr;
}

} // namespace fleetscope::backend
