// SPDX-License-Identifier: Apache-2.0
#include "model/capacityrisk.h"

#include "model/place.h"

#include <algorithm>

namespace fleetscope {

CapacityAtRisk computeCapacityAtRisk(const Topology &topology, const Frame &frame, const JobList *jobs)
{
    CapacityAtRisk result;
    result.fleetGpus = topology.gpuCount;
    if (frame.topologyGeneration != topology.generation || frame.health.size() != topology.gpuCount) {
        return result;
    }
    std::vector<bool> rackAtRisk(topology.racks.size(), false);
    auto healthy
        = [](uint8_t h) { return health::stateOf(h) == health::Ok && (h & (health::eccFlag | health::xidFlag)) == 0; };
    auto unit = [&](GpuRange range, uint32_t *units, uint32_t *healthyUnits) {
        if (range.count == 0 || uint64_t { range.first } + range.count > frame.health.size()) {
            return; // (the decoder keeps ranges inside the fleet; never read past the frame whatever it sends)
        }
        uint32_t ok = 0;
        for (uint32_t g = range.first; g < range.end(); ++g) {
            ok += healthy(frame.health[g]) ? 1 : 0;
        }
        ++*units;
        if (ok == range.count) {
            ++*healthyUnits;
            result.units.gpusInHealthy += ok;
        } else {
            result.units.strandedGpus += ok;
        }
    };
    for (uint32_t r = 0; r < topology.racks.size(); ++r) {
        const GpuRange range = Place::rack(r).gpuRange(topology);
        if (topology.racks[r].nvlinkDomain) {
            unit(range, &result.units.racks, &result.units.healthyRacks);
        } else {
            const auto &rackInfo = topology.racks[r];
            for (uint32_t k = rackInfo.firstNode; k < rackInfo.firstNode + rackInfo.nodeCount; ++k) {
                unit(Place::node(k).gpuRange(topology), &result.units.nodes, &result.units.healthyNodes);
            }
        }
        CapacityAtRisk::Rack rack;
        rack.rack = r;
        rack.gpus = range.count;
        for (uint32_t g = range.first; g < range.end(); ++g) {
            const uint8_t h = frame.health[g];
            const auto state = health::stateOf(h);
            const bool flagged = (h & (health::eccFlag | health::xidFlag)) != 0;
            const bool throttlingWarm
                = state >= health::Warning && state <= health::Critical && (h & health::throttledFlag) != 0;
            // Critical without an ECC/XID flag is heat (or an impaired board, which shows up hot); with one, the board.
            if (state == health::Offline || flagged) {
                ++rack.hardware;
            } else if (state == health::Critical || throttlingWarm) {
                ++rack.thermal;
            }
        }
        if (rack.thermal + rack.hardware > 0) {
            rackAtRisk[r] = true;
            result.gpusAtRisk += rack.gpus;
            result.racks.push_back(rack);
        }
    }
    std::stable_sort(result.racks.begin(), result.racks.end(),
        [](const auto &a, const auto &b) { return a.thermal + a.hardware > b.thermal + b.hardware; });

    if (jobs == nullptr || jobs->topologyGeneration != topology.generation) {
        return result;
    }
    for (const Job &job : jobs->jobs) {
        if (!job.isRunning()) {
            continue;
        }
        CapacityAtRisk::JobAtRisk j;
        j.id = job.id;
        j.name = job.name;
        j.owner = job.owner;
        j.gpus = static_cast<uint32_t>(job.gpus.size());
        for (const uint32_t g : job.gpus) {
            if (g < topology.gpuCount && rackAtRisk[topology.nodeOf(g).rack]) {
                ++j.gpusAtRisk;
            }
        }
        if (j.gpusAtRisk > 0) {
            result.jobs.push_back(j);
        }
    }
    std::stable_sort(result.jobs.begin(), result.jobs.end(),
        [](const auto &a, const auto &b) { return a.gpusAtRisk > b.gpusAtRisk; });
    return result;
}

} // namespace fleetscope
