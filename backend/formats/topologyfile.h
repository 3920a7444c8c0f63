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
//
// The shared domains (optional; common/domains.h's kinds, docs/topology-example.json has a site's): a `domains` list
// of {kind, name, parent, rail} (kind one of feed, busway, pdu, cooling-unit, cdu, loop, nvlink, scalable-unit,
// spine, leaf; parent a domain's name; rail a spine's or leaf's, from 0); a rack's `power: [PDU names]` and
// `cooling: NAME` (a cooling unit, CDU or loop); a host's `power: [PDU names]` when it is not corded to every PDU of
// its rack (a single-corded host lists one, of its rack's when the rack lists some), `scalableUnit: NAME` and `links:
// [{leaf, port}]`, one per GPU in order. A rail-optimised fabric need not be written out link by link: `fabric:
// {scalableUnits: [{name, leafPrefix, hosts}]}` makes the scalable unit (unless listed), a leaf <leafPrefix><rail> per
// rail (parent: the spine of that rail, when one is listed) and cables GPU k of the n-th host listed to leaf k, port n
// (from 1), unless the host says its own links. `fabric: {nics: [mlx5_0, ...]}` names the rail NIC of each GPU position
// (node-exporter's device label; default mlx5_<k> for GPU k). A rack with nvlinkDomain true gets an NVLink domain
// <rack>-nvl unless one is listed under that name.
struct TopologyFile
{
    struct Link
    {
        std::string leaf;
        uint32_t port = 0;
    };
    struct Host
    {
        std::string hostname;
        uint32_t gpus = 0;
        std::string scalableUnit;
        std::vector<Link> links; // empty: from the fabric's scalable units, or none
        std::vector<std::string> power; // the PDUs it is corded to; empty: every one of its rack's
    };
    struct Rack
    {
        std::string name;
        std::vector<Host> hosts;
        bool nvlinkDomain = false;
        std::vector<std::string> power; // PDU names
        std::string cooling;
    };
    struct Domain
    {
        std::string kind; // common/domains.h's key
        std::string name;
        std::string parent; // empty: none
        int32_t rail = -1;
    };
    struct ScalableUnit
    {
        std::string name;
        std::string leafPrefix;
        std::vector<std::string> hosts;
    };
    struct Row
    {
        std::string name;
        std::string hall;
        std::vector<Rack> racks;
    };

    std::string site;
    std::vector<Row> rows; // halls flattened: every row names its hall
    // After load: every domain the file names or implies (scalable units and leaves of the fabric, NVLink domains),
    // parents before children; every reference in it resolves.
    std::vector<Domain> domains;
    std::vector<ScalableUnit> scalableUnits;
    std::vector<std::string> nics; // per GPU position; empty: mlx5_<k>

    static constexpr uint32_t maxDomains = 1U << 18U;
    static constexpr uint32_t maxPort = 65535;

    static constexpr uint32_t defaultGpusPerNode = 8;
    static constexpr uint32_t maxGpusPerNode = 64;
    // The most GPUs one NVLink domain spans (NVLink Switch's limit, 576).
    static constexpr uint32_t maxNvlinkDomainGpus = 576;

    // Reads and checks the file, YAML when its name ends in .yaml or .yml, else JSON: names present, keys and
    // hostnames unique, GPU counts from 1 to maxGpusPerNode, nvlinkDomain true or false and such a rack at most
    // maxNvlinkDomainGpus, at least one GPU and at most FleetShape::maxGpus; domains of known kinds with unique
    // names, parents that exist and make no cycle, references to domains of the right kind, at most maxDomains, at
    // most one link per GPU, ports 1 to maxPort, a host in at most one scalable unit. False
    // with an error naming the file and the place (for YAML with the line, which simdjson cannot give for JSON).
    static bool load(const std::string &path, TopologyFile *out, std::string *error);
    static bool parse(const std::string &json, TopologyFile *out, std::string *error);
    static bool parseYaml(const std::string &yaml, TopologyFile *out, std::string *error);

private:
    // The second pass, once a document is read (topologychecker.h): topologydomains.cpp.
    static bool resolveDomains(TopologyFile *file, std::string *error);
};

} // namespace fleetscope::backend
