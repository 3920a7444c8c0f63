// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "dcgm/promsample.h"
#include "dcgm/uplinklabels.h"
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
    // The file's floor plan and domains; GPU k of a host is the series with gpu="k".
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
    // The GPU a rail NIC serves: the topology file's fabric.nics names GPU k's NIC; without, mlx5_<k> is GPU k's
    // (a rail-optimised node cables rail k to GPU k's NIC); GPU k is the one labelled gpu="k". -1 when the node has
    // no such GPU, or the NIC is another (a storage NIC).
    int64_t indexOfNic(uint32_t node, std::string_view device) const;
    // The GPU position (rail) a NIC serves, as indexOfNic reads it; -1 for another NIC.
    int64_t railOfNic(std::string_view device) const;
    // The rack of this name, -1 when none.
    int64_t rackOf(std::string_view name) const;
    // The GPUs a series of this scope stands for (first, count; count 0: none of the topology's): a GPU's by its node
    // and gpu labels, a NIC's by its node (node label, else instance without the port) and device, a rack's every
    // GPU by its rack label.
    struct Span
    {
        uint32_t first = 0;
        uint32_t count = 0;
    };
    Span gpusOf(MetricMap::Scope scope, std::string_view hostname, std::string_view instance, std::string_view gpu,
        std::string_view nic, std::string_view rack) const;
    Span gpusOf(MetricMap::Scope scope, const PromSample &s) const
    {
        return gpusOf(scope, s.hostname, s.instance, s.gpu, s.nic, s.rack);
    }

    // Each GPU's leaf switch and port from infiniband_exporter's uplink series (UplinkLabels): the node from the
    // first word of hca, the GPU from its NIC as indexOfNic, the leaf a LeafSwitch domain of the uplink's name (added
    // when the topology has none of that name: rail the NIC's, parent the file's spine plane of that rail when it
    // lists exactly one), the port uplink_port. A link the topology file gives wins; a NIC with several uplinks
    // keeps the one of its lowest HCA port; at most one domain per node (or per rail, when there are more) is added.
    // Every series is checked before it counts; what was ignored is said once per reason. The generation changes with
    // the links. Returns the lines to log.
    std::vector<std::string> applyUplinks(const std::vector<UplinkLabels::Series> &series);
    std::vector<std::string> applyUplinks(const std::vector<PromSample> &series);

    // Fills the GPUs' UUIDs and the nodes' model and driver from the series' labels; returns how many series named
    // no GPU of the topology.
    size_t applyIdentity(const std::vector<PromSample> &series);

    // "node2" < "node10".
    static bool naturalLess(std::string_view a, std::string_view b);

private:
    void addNode(std::string hostname, uint32_t rack, std::vector<std::string> gpuLabels);
    void finish();
    void applyDomains(const TopologyFile &file);
    void hashDomains();

    FleetShape m_shape;
    uint64_t m_generation = 0;
    uint64_t m_layoutGeneration = 0; // of the floor plan alone, before domains and links
    std::unordered_map<std::string, uint32_t> m_nodeByHost;
    std::unordered_map<std::string, uint32_t> m_rackByName;
    std::vector<std::string> m_nics; // the file's fabric.nics; empty: mlx5_<k>
    std::vector<std::vector<std::string>> m_gpuLabels; // per node, in dense order
};

} // namespace fleetscope::backend
