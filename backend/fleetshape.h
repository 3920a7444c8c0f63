// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fleetscope::backend {

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
    };
    struct Node
    {
        std::string hostname;
        uint32_t rack = 0;
        uint32_t firstGpu = 0;
        uint32_t gpuCount = 0;
        // As a real fleet reports them (dcgm-exporter's modelName and DCGM_FI_DRIVER_VERSION labels); empty in a
        // simulated fleet, which reports fixed ones.
        std::string model;
        std::string driverVersion;
    };

    static constexpr uint32_t gpusPerNode = 8;
    static constexpr uint32_t nodesPerRack = 8;
    static constexpr uint32_t minGpus = 8;
    static constexpr uint32_t maxGpus = 1U << 20U;

    uint32_t gpuCount = 0;
    std::vector<Row> rows;
    std::vector<Rack> racks;
    std::vector<Node> nodes;
    std::vector<uint32_t> nodeOfGpu;

    // Racks per row are chosen so that the floor plan is about 16:10, the shape of a screen: 10,240 GPUs give 10
    // rows of 16 racks of 8 nodes of 8 GPUs. The last node, rack and row may be partly filled.
    static FleetShape forGpuCount(uint32_t gpuCount, uint64_t seed = 1);

    // Identity of a GPU, derived from the seed (not stored: at a million GPUs the strings alone are 50 MB).
    // A real fleet's identity comes from its telemetry instead: the UUIDs stored (empty for a GPU not seen), no
    // serials.
    std::string gpuUuid(uint32_t gpu) const;
    std::string gpuSerial(uint32_t gpu) const;
    uint64_t seed = 1;
    bool simulated = true;
    std::string site = "sim";
    std::vector<std::string> uuids; // per GPU, when not simulated
};

} // namespace fleetscope::backend
