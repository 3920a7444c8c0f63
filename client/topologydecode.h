// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to client/ (and its tests): a fleet's topology from its GetTopology stream, checked against bounds that
// its header fixes.

#include "model/fleetmodel.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <cstdint>
#include <vector>

namespace fleetscope {

namespace pb = fleetscope::telemetry::v1;

// The most GPUs a topology may claim (the contract's limit), so a garbage count cannot make us allocate gigabytes.
constexpr uint32_t maxGpus = 1U << 20U;
// A floor plan's bounds: a side of at most 2^20 cells, and at most this many cells per GPU (plus 2^20 for small
// fleets). A real floor needs about 1.5 (aisles included).
constexpr uint64_t maxFloorPlanSide = 1U << 20U;
constexpr uint64_t maxFloorPlanCellsPerGpu = 16;

// The shared domains' bounds (docs/INCIDENTS.md). A simulated fleet has about 2.3 domains a node (two PDUs a rack,
// a cooling unit or loop a segment, a leaf per rail of each scalable unit); a site's own file may have a rack for each
// node and more kinds: 4 a node, plus 65,536 for halls, rows, switches and small fleets. A rack or node lists at most
// 64 (the simulator's list 3 to 4), and a leaf's port and a rail are at most 4,096 (a switch has 64 to 144 ports).
constexpr uint64_t maxDomainsPerNode = 4;
constexpr uint64_t minDomainsLimit = 65536;
constexpr uint64_t maxDomains(uint64_t nodeCount)
{
    return minDomainsLimit + maxDomainsPerNode * nodeCount;
}
constexpr int maxMemberships = 64;
constexpr uint32_t maxLeafPort = 4096;
constexpr uint32_t maxRail = 4096;

// Builds a Topology from all the parts of one GetTopology stream. Returns null and sets error when the parts do not
// form a consistent fleet (ranges not contiguous, indices out of range, parts missing).
TopologyPtr decodeTopology(const std::vector<pb::TopologyPart> &parts, QString *error);

// What one GetTopology stream may bring, from what its header's gpu_count can need: the stream is read for up to 20 s,
// and without these a backend could send parts until memory ran out before decodeTopology saw any of them. Nodes hold
// at least one GPU each, and every part after the first holds a node (the backend's encoder puts 4,096 in each), so
// a stream of N GPUs has at most N nodes and N + 1 parts. Racks and rows stand on a floor plan of bounded cells and
// sides (each rack in a cell of its own). Bytes: a simulated fleet's node with its GPUs' UUIDs and serials is about
// 500 bytes for 8 GPUs, about 70 a GPU, and names past their cut (wiretext.h) are legal but useless: 256 bytes a GPU,
// and 16 MiB for any fleet, leave room for long names on small fleets and are about 260 MB at a million GPUs.
constexpr uint64_t maxTopologyBytesPerGpu = 256;
constexpr uint64_t minTopologyBytesLimit = 16U << 20U;
constexpr uint64_t maxTopologyBytes(uint32_t gpuCount)
{
    return minTopologyBytesLimit + maxTopologyBytesPerGpu * gpuCount;
}

// Gathers the parts of one GetTopology stream as they are read, checking each against the bounds above as it comes
// (the first part's gpu_count fixes them), so that a stream past them is cut at once; finish() then decodes them.
class TopologyCollector
{
public:
    // Takes the next part as read. False, with *error set, when it passes what the header allows (or comes out of
    // order, or the first part is no header): the stream is to be cut, and finish() refuses the topology.
    bool add(pb::TopologyPart &&part, QString *error);
    // decodeTopology over the parts taken; null with *error set when a part was refused or they do not form a fleet.
    // The parts stay until the collector goes: freeing a million GPUs' worth of them (two million strings, about
    // 150 ms) can wait until the topology has been handed on.
    TopologyPtr finish(QString *error);

    size_t parts() const { return m_parts.size(); }
    uint64_t bytes() const { return m_bytes; }

private:
    std::vector<pb::TopologyPart> m_parts;
    QString m_refused; // why a part was refused; nothing is taken after one
    uint32_t m_gpuCount = 0; // the header's
    uint32_t m_partCount = 0; // the header's
    uint64_t m_generation = 0; // the header's
    uint64_t m_bytes = 0;
    uint64_t m_nodes = 0;
    uint64_t m_nodeGpus = 0; // the GPUs the nodes so far hold
    uint64_t m_racks = 0;
    uint64_t m_rows = 0;
    uint32_t m_domainCount = 0; // the header's
    uint64_t m_domains = 0; // the domains the parts so far hold
};

} // namespace fleetscope
