// SPDX-License-Identifier: Apache-2.0
#include "topologyfile.h"

#include "fleetshape.h"

#include <fstream>
#include <sstream>
#include <unordered_set>

#include <simdjson.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

// Reads an optional string member; false (with an error) when present but not a string, or required and missing.
bool stringMember(simdjson::dom::object object, const char *key, bool required, const std::string &where,
    std::string *out, std::string *error)
{
    auto member = object[key];
    if (member.error() == simdjson::NO_SUCH_FIELD && !required) {
        return true;
    }
    std::string_view text;
    if (member.get_string().get(text) || (required && text.empty())) {
        *error = fmt::format("{}: \"{}\" must be a non-empty string", where, key);
        return false;
    }
    out->assign(text);
    return true;
}

bool gpuCount(simdjson::dom::element element, const std::string &where, uint32_t *out, std::string *error)
{
    uint64_t n = 0;
    if (element.get_uint64().get(n) || n < 1 || n > TopologyFile::maxGpusPerNode) {
        *error
            = fmt::format("{}: a GPU count must be a whole number from 1 to {}", where, TopologyFile::maxGpusPerNode);
        return false;
    }
    *out = static_cast<uint32_t>(n);
    return true;
}

} // namespace

bool TopologyFile::load(const std::string &path, TopologyFile *out, std::string *error)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *error = fmt::format("{}: cannot open the topology file", path);
        return false;
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (!parse(text.str(), out, error)) {
        *error = fmt::format("{}: {}", path, *error);
        return false;
    }
    return true;
}

bool TopologyFile::parse(const std::string &json, TopologyFile *out, std::string *error)
{
    *out = {};
    simdjson::dom::parser parser;
    simdjson::dom::object root;
    if (auto e = parser.parse(json).get_object().get(root)) {
        *error = fmt::format("not a JSON object ({})", simdjson::error_message(e));
        return false;
    }
    uint32_t perNode = defaultGpusPerNode;
    if (auto g = root["gpusPerNode"]; g.error() != simdjson::NO_SUCH_FIELD) {
        if (!gpuCount(g.value_unsafe(), "gpusPerNode", &perNode, error)) {
            return false;
        }
    }
    if (!stringMember(root, "site", false, "top level", &out->site, error)) {
        return false;
    }
    simdjson::dom::array halls;
    if (root["halls"].get_array().get(halls) || halls.size() == 0) {
        *error = "\"halls\" must be a non-empty array";
        return false;
    }
    std::unordered_set<std::string> hostnames;
    uint64_t gpus = 0;
    size_t hallIndex = 0;
    for (auto hallElement : halls) {
        const std::string hallWhere = fmt::format("halls[{}]", hallIndex++);
        simdjson::dom::object hall;
        std::string hallName;
        simdjson::dom::array rows;
        if (hallElement.get_object().get(hall)) {
            *error = fmt::format("{}: must be an object", hallWhere);
            return false;
        }
        if (!stringMember(hall, "name", true, hallWhere, &hallName, error)) {
            return false;
        }
        if (hall["rows"].get_array().get(rows)) {
            *error = fmt::format("{} ({}): \"rows\" must be an array", hallWhere, hallName);
            return false;
        }
        size_t rowIndex = 0;
        for (auto rowElement : rows) {
            const std::string rowWhere = fmt::format("{}.rows[{}]", hallWhere, rowIndex++);
            Row row;
            row.hall = hallName;
            simdjson::dom::object rowObject;
            simdjson::dom::array racks;
            if (rowElement.get_object().get(rowObject)
                || !stringMember(rowObject, "name", true, rowWhere, &row.name, error)
                || rowObject["racks"].get_array().get(racks)) {
                if (error->empty()) {
                    *error = fmt::format("{}: needs \"name\" and a \"racks\" array", rowWhere);
                }
                return false;
            }
            size_t rackIndex = 0;
            for (auto rackElement : racks) {
                const std::string rackWhere = fmt::format("{}.racks[{}]", rowWhere, rackIndex++);
                Rack rack;
                simdjson::dom::object rackObject;
                simdjson::dom::array hosts;
                if (rackElement.get_object().get(rackObject)
                    || !stringMember(rackObject, "name", true, rackWhere, &rack.name, error)
                    || rackObject["hosts"].get_array().get(hosts)) {
                    if (error->empty()) {
                        *error = fmt::format("{}: needs \"name\" and a \"hosts\" array", rackWhere);
                    }
                    return false;
                }
                size_t hostIndex = 0;
                for (auto hostElement : hosts) {
                    const std::string hostWhere = fmt::format("{}.hosts[{}]", rackWhere, hostIndex++);
                    Host host;
                    host.gpus = perNode;
                    std::string_view name;
                    simdjson::dom::object hostObject;
                    if (!hostElement.get_string().get(name)) {
                        host.hostname.assign(name);
                    } else if (!hostElement.get_object().get(hostObject)) {
                        if (!stringMember(hostObject, "hostname", true, hostWhere, &host.hostname, error)) {
                            return false;
                        }
                        if (auto g = hostObject["gpus"]; g.error() != simdjson::NO_SUCH_FIELD
                            && !gpuCount(g.value_unsafe(), hostWhere, &host.gpus, error)) {
                            return false;
                        }
                    }
                    if (host.hostname.empty()) {
                        *error
                            = fmt::format("{}: a host is a hostname or {{\"hostname\": ..., \"gpus\": N}}", hostWhere);
                        return false;
                    }
                    if (!hostnames.insert(host.hostname).second) {
                        *error = fmt::format("{}: hostname '{}' appears twice", hostWhere, host.hostname);
                        return false;
                    }
                    gpus += host.gpus;
                    rack.hosts.push_back(std::move(host));
                }
                if (rack.hosts.empty()) {
                    *error = fmt::format("{} ({}): a rack needs at least one host", rackWhere, rack.name);
                    return false;
                }
                row.racks.push_back(std::move(rack));
            }
            if (row.racks.empty()) {
                *error = fmt::format("{} ({}): a row needs at least one rack", rowWhere, row.name);
                return false;
            }
            out->rows.push_back(std::move(row));
        }
    }
    if (gpus < 1 || gpus > FleetShape::maxGpus) {
        *error = fmt::format("the file describes {} GPUs; Fleetscope serves 1 to {}", gpus, FleetShape::maxGpus);
        return false;
    }
    return true;
}

} // namespace fleetscope::backend
