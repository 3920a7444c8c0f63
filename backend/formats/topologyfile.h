// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fleetscope::backend {

// A fleet's floor plan as an operator writes it, in JSON or YAML with the same schema (docs/topology-example.json
// and .yaml): halls of rows of racks, in floor order, and the hostnames in each rack, top to bottom. A host has
// gpusPerNode GPUs (the rack's, else the file's) unless it says otherwise. A rack whose GPUs are one NVLink domain
// (a GB200 / GB300 NVL72 rack) says `nvlinkDomain: true`.
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
        bool nvlinkDomain = false;
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
    // The most GPUs one NVLink domain spans (NVLink Switch's limit, 576).
    static constexpr uint32_t maxNvlinkDomainGpus = 576;

    // Reads and checks the file, YAML when its name ends in .yaml or .yml, else JSON: names present, keys and
    // hostnames unique, GPU counts from 1 to maxGpusPerNode, nvlinkDomain true or false and such a rack at most
    // maxNvlinkDomainGpus, at least one GPU and at most FleetShape::maxGpus. False
    // with an error naming the file and the place (for YAML with the line, which simdjson cannot give for JSON).
    static bool load(const std::string &path, TopologyFile *out, std::string *error);
    static bool parse(const std::string &json, TopologyFile *out, std::string *error);
    static bool parseYaml(const std::string &yaml, TopologyFile *out, std::string *error);
};

} // namespace fleetscope::backend
