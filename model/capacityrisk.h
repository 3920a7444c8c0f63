// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace fleetscope {

// Capacity at risk, now: the GPUs in racks with active thermal or hardware trouble, and the jobs running on them.
// A rack is in trouble when one of its GPUs is (a bad fan, a hot aisle or a failing board rarely stays with one GPU,
// and draining is done by rack): critical (too hot, a double-bit ECC error, impaired), offline, throttling while
// warm (state warning or worse with the throttled flag), or with a recent XID or ECC error (the flags).
struct CapacityAtRisk
{
    struct Rack
    {
        uint32_t rack = 0; // index into topology.racks
        uint32_t gpus = 0; // in the rack
        uint32_t thermal = 0; // GPUs too hot or throttling while warm
        uint32_t hardware = 0; // GPUs critical for another reason, offline, or with XID / ECC flags
    };
    struct JobAtRisk
    {
        uint64_t id = 0;
        QString name;
        QString owner;
        uint32_t gpus = 0; // the job's GPUs
        uint32_t gpusAtRisk = 0; // of them, in racks in trouble
    };

    // Schedulable units: what a scheduler hands out whole — an HGX node, or an NVL72 rack (one NVLink domain). A unit
    // is fully healthy when every GPU of it is OK with no ECC or XID error in the window; the healthy GPUs of the other
    // units are stranded for jobs that need whole units.
    struct Units
    {
        uint32_t nodes = 0; // node units (NVLink ends at the node)
        uint32_t healthyNodes = 0;
        uint32_t racks = 0; // rack units (NVLink domains)
        uint32_t healthyRacks = 0;
        uint32_t gpusInHealthy = 0;
        uint32_t strandedGpus = 0; // healthy GPUs in units that are not
    };

    uint32_t fleetGpus = 0;
    Units units;
    uint32_t gpusAtRisk = 0; // every GPU of the racks in trouble
    std::vector<Rack> racks; // in trouble, most troubled first
    std::vector<JobAtRisk> jobs; // running, with GPUs at risk, most GPUs at risk first
};

// From a frame's health bytes (one per GPU, of the topology's generation) and the running jobs; a frame or job list
// of another generation counts nothing.
CapacityAtRisk computeCapacityAtRisk(const Topology &topology, const Frame &frame, const JobList *jobs);

} // namespace fleetscope
