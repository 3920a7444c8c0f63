// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fleetscope::backend {

// A fleet's floor plan as an operator writes it, in JSON or YAML with the same schema (docs/topology-example.json
// and .yaml): halls of rows of racks, in floor order, and the hostnames in each rack, top to bottom. A host has
// gpusPerNode GPUs unless it says otherwise.
struct TopologyFile
{
    struct Host
    {
        std::string hostname;
        uint32_t gpus = 0;
    };
    struct Rack
    {
        std::string name;
        std::vector<Host> hosts;
    };
    struct Row
    {
        std::string name;
        std::string hall;
        std::vector<Rack> racks;
    };

    std::string site;
    std::vector<Row> rows; // halls flattened: every row names its hall

    static constexpr uint32_t defaultGpusPerNode = 8;
    static constexpr uint32_t maxGpusPerNode = 64;

    // Reads and checks the file, YAML when its name ends in .yaml or .yml, else JSON: names present, keys and
    // hostnames unique, GPU counts from 1 to maxGpusPerNode, at least one GPU and at most FleetShape::maxGpus. False
    // with an error naming the file and the place (for YAML with the line, which simdjson cannot give for JSON).
    static bool load(const std::string &path, TopologyFile *out, std::string *error);
    static bool parse(const std::string &json, TopologyFile *out, std::string *error);
    static bool parseYaml(const std::string &yaml, TopologyFile *out, std::string *error);
};

} // namespace fleetscope::backend
