// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "dcgm/promsample.h"
#include "formats/topologyfile.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fleetscope::backend {

// A real fleet's layout and the way from a series' labels (its node and gpu) to its GPU's dense index.
class PrometheusTopology
{
public:
    // The file's floor plan; GPU k of a host is the series with gpu="k".
    static PrometheusTopology fromFile(const TopologyFile &file);
    // From the GPUs the server knows (one series per GPU). With row and rack labels, rows and racks in natural
    // order of their names (hosts without them go to a row and rack named "unlabelled"); without, hosts in natural
    // order of their names, packed into racks of 8 nodes and rows of about 16:10 (named auto-rNN / auto-rNN-kNN).
    // A host's GPUs are its distinct gpu labels, in numeric order. False when no series names a node and gpu.
    static bool fromLabels(const std::vector<PromSample> &series, PrometheusTopology *out, std::string *error);

    const FleetShape &shape() const { return m_shape; }
    // Stable for the same layout, so a restarted backend serves the same generation and consoles keep theirs.
    uint64_t generation() const { return m_generation; }

    // Dense index of the series' GPU, or -1 when the topology has no such GPU.
    int64_t indexOf(std::string_view hostname, std::string_view gpu) const;
    // The same in two steps, for a reader that sees a host's series one after another: the node of a hostname (-1:
    // none), then the dense index of a gpu label on it (-1: none).
    int64_t nodeOf(std::string_view hostname) const;
    int64_t indexOn(uint32_t node, std::string_view gpu) const;
    // Fills the GPUs' UUIDs and the nodes' model and driver from the series' labels; returns how many series named
    // no GPU of the topology.
    size_t applyIdentity(const std::vector<PromSample> &series);

    // "node2" < "node10".
    static bool naturalLess(std::string_view a, std::string_view b);

private:
    void addNode(std::string hostname, uint32_t rack, std::vector<std::string> gpuLabels);
    void finish();

    FleetShape m_shape;
    uint64_t m_generation = 0;
    std::unordered_map<std::string, uint32_t> m_nodeByHost;
    std::vector<std::vector<std::string>> m_gpuLabels; // per node, in dense order
};

} // namespace fleetscope::backend
