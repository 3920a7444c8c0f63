// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace fleetscope {

// Firmware and driver drift: which driver and VBIOS each GPU runs (its node's, as the topology reports them), and the
// GPUs whose versions differ from most of their running job's GPUs (a job on mixed drivers fails in ways nobody can
// explain) or from most of their rack's (a node a rollout missed, or a rollout half done). Computed from the
// topology and the jobs, both the backend's: every index is checked against the topology.
struct VersionDrift
{
    // The console's own layer: a categorical map of the versions, served beside the backend's metrics.
    static constexpr const char *metricId = "versions";
    // Categories the layer colours apart (Okabe-Ito has eight colours); the rarer versions share the last one.
    static constexpr int maxCategories = 8;

    struct Version
    {
        QString driver; // empty where the source does not report it
        QString firmware;
        uint32_t gpus = 0;
        QString label() const; // "driver 550.54.15 · VBIOS 96.00.99.00.01", "unknown" where neither is known
    };
    struct Group
    {
        uint64_t jobId = 0; // the job whose GPUs disagree, or 0 for a rack
        int64_t rack = -1; // the rack whose GPUs disagree (jobId 0)
        QString name; // the job's or rack's
        uint32_t gpus = 0; // the job's or rack's GPUs
        std::vector<uint32_t> offGpus; // of them, those not on the majority's versions (ascending)
        int majority = -1; // index into versions
        std::vector<int> others; // the other versions present, most GPUs first
        int64_t sinceMs = 0; // the job's start; 0 for a rack
    };

    uint64_t topologyGeneration = 0;
    std::vector<Version> versions; // most GPUs first
    std::vector<uint16_t> versionOfNode; // per node, index into versions
    std::vector<uint32_t> flaggedGpus; // ascending: off their job's or their rack's majority
    std::vector<Group> groups; // jobs first (most GPUs off first), then racks

    bool isUniform() const { return versions.size() <= 1; }
    // The layer's category of each version (its index, or the last category for the rarer ones) and their names.
    int categoryOf(int version) const { return std::min(version, maxCategories - 1); }
    QStringList categoryNames() const;
    // The layer's plane: per GPU its versions' category (NaN for a GPU outside every node).
    std::vector<float> plane(const Topology &topology) const;
    // The layer as a metric (MetricInfo.categories set): shown in the metric list only when the fleet reports
    // versions.
    MetricInfo metric() const;
};

// Jobs: the running ones of the topology's generation (others are ignored, as is a GPU index past the fleet).
VersionDrift computeVersionDrift(const Topology &topology, const JobList *jobs);

} // namespace fleetscope
