// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/domains.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::backend {

// What a simulated fleet is built of. HGX H100: air-cooled 8-GPU nodes, 8 to a rack, NVLink inside the node.
// GB200 NVL72: liquid-cooled racks of 18 compute trays of 4 GPUs, the whole rack one NVLink domain.
enum class Hardware : uint8_t { HgxH100, Gb200Nvl72 };

struct HardwareSpec
{
    Hardware kind;
    const char *name; // as --hardware spells it
    const char *model; // as dcgm-exporter's modelName label says it
    const char *driverVersion;
    const char *firmwareVersion;
    // A simulated fleet is always mid-rollout, as a real one almost always is: the next driver and VBIOS on a few
    // racks, and the previous driver on the few nodes the last rollout missed.
    const char *nextDriverVersion;
    const char *nextFirmwareVersion;
    const char *previousDriverVersion;
    uint32_t gpusPerNode;
    uint32_t nodesPerRack;
    char nodeLetter; // hostnames r01-k01-n01 (HGX node) or r01-k01-t01 (tray)
    bool rackIsNvlinkDomain;
    float powerRangeMaxW; // the power metric's suggested colour range ends here; 0: the catalogue's own

    static const HardwareSpec &of(Hardware hardware);
    static std::optional<Hardware> fromName(std::string_view name);
    // "hgx-h100, gb200-nvl72", for usage and errors.
    static std::string names();
};

// The simulated fleet's physical layout: rows of racks of nodes of GPUs, in dense hierarchical order, so a row, a
// rack and a node are each a contiguous range of GPU indices.
struct FleetShape
{
    struct Row
    {
        std::string name;
        std::string hall;
        uint32_t firstRack = 0;
        uint32_t rackCount = 0;
    };
    struct Rack
    {
        std::string name;
        uint32_t row = 0;
        uint32_t position = 0;
        uint32_t firstNode = 0;
        uint32_t nodeCount = 0;
        // The rack's GPUs are one NVLink domain (an NVL72 rack); otherwise NVLink ends at the node.
        bool nvlinkDomain = false;
        // Indices into the fleet's domains: the power and cooling domains that serve it (its PDUs, its cooling unit
        // or coolant loop) and its NVLink domain, each once.
        std::vector<uint32_t> domains;
    };
    struct Node
    {
        std::string hostname;
        uint32_t rack = 0;
        uint32_t firstGpu = 0;
        uint32_t gpuCount = 0;
        // As a real fleet reports them (dcgm-exporter's modelName, DCGM_FI_DRIVER_VERSION and DCGM_FI_DEV_VBIOS_VERSION
        // labels). A simulated fleet leaves the model empty (its HardwareSpec says it) and sets the versions of the
        // nodes its rollout has reached or missed (empty: the HardwareSpec's).
        std::string model;
        std::string driverVersion;
        std::string firmwareVersion;
        // Indices into the fleet's domains: its scalable unit, and the PDUs it is corded to when they are not all its
        // rack's (a single-corded node names its one PDU). A node that names no PDU draws from every PDU of its rack.
        std::vector<uint32_t> domains;
    };

    // An HGX fleet's, the default; HardwareSpec says another kind's.
    static constexpr uint32_t gpusPerNode = 8;
    static constexpr uint32_t nodesPerRack = 8;
    static constexpr uint32_t minGpus = 8;
    static constexpr uint32_t maxGpus = 1U << 20U;

    uint32_t gpuCount = 0;
    std::vector<Row> rows;
    std::vector<Rack> racks;
    std::vector<Node> nodes;
    std::vector<uint32_t> nodeOfGpu;
    // The shared power, cooling and network domains (core/domains.h), parents before children; empty when the fleet's
    // file says none. gpuLinks: per GPU, its rail NIC's leaf switch and port; empty when no GPU's is known.
    std::vector<Domain> domains;
    std::vector<GpuLink> gpuLinks;

    // Racks per row are chosen so that the floor plan is about 16:10, the shape of a screen: 10,240 GPUs give 10
    // rows of 16 racks of 8 nodes of 8 GPUs; 10,368 GB200 GPUs give 5 rows of up to 32 racks of 18 trays of 4 (a
    // rack 4 cells wide and 18 tall). The last node, rack and row may be partly filled.
    static FleetShape forGpuCount(uint32_t gpuCount, uint64_t seed = 1, Hardware hardware = Hardware::HgxH100);

    // A simulated fleet's rollout (forGpuCount applies it): about one rack in 50 (at least one of a fleet of 4 racks
    // or more) has its first half of nodes on the next driver and VBIOS, and about one node in 400 elsewhere still
    // runs the previous driver. Chosen from the seed.
    void simulateRollout();
    // A simulated fleet's domains (forGpuCount applies it), as NVIDIA's reference designs lay them out:
    // docs/INCIDENTS.md.
    void simulateDomains();
    // The domains that serve a GPU (its rack's, its node's, its leaf switch), each once, smallest first: a leaf before
    // its scalable unit, a PDU before its busway and feed. Parents included.
    // Both of a rack's PDUs for each of its GPUs, a single-corded node's too (cordsOf says which one feeds it).
    std::vector<uint32_t> domainsOfGpu(uint32_t gpu) const;
    // The PDUs a node is corded to: those its own domains name, else its rack's; what a PDU's trip takes from it.
    std::vector<uint32_t> cordsOf(uint32_t node) const;
    // "PDU r03-k05-a · CDU loop r03-cdu1-b · leaf su03-l5 port 17, rail 5": a GPU's domains for people, parents left
    // out.
    std::string domainLine(uint32_t gpu) const;
    // A node's versions as served: its own, or (simulated) the HardwareSpec's where it has none.
    std::string_view driverVersionOf(uint32_t node) const;
    std::string_view firmwareVersionOf(uint32_t node) const;

    // Identity of a GPU, derived from the seed (not stored: at a million GPUs the strings alone are 50 MB).
    // A real fleet's identity comes from its telemetry instead: the UUIDs stored (empty for a GPU not seen), no
    // serials.
    std::string gpuUuid(uint32_t gpu) const;
    std::string gpuSerial(uint32_t gpu) const;
    // A simulated GPU's PCI bus id as its exporter labels it (pci_bus_id), by its position in its node: an HGX
    // board's eight buses. A real fleet's are not stored.
    static std::string simulatedPciBusId(uint32_t gpuInNode);
    uint64_t seed = 1;
    Hardware hardware = Hardware::HgxH100; // of a simulated fleet
    bool simulated = true;
    std::string site = "sim";
    std::vector<std::string> uuids; // per GPU, when not simulated
};

} // namespace fleetscope::backend
