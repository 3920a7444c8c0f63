// SPDX-License-Identifier: Apache-2.0
#pragma once

// The topology file's first pass (TopologyFile::parse and parseYaml): a document read through a view of its syntax
// (topologyfile.cpp's JsonView, YamlView), section by section: the halls of rows of racks of hosts, their links, then
// the domains and the fabric. What the domains refer to is checked afterwards (topologydomains.cpp).
#include "formats/topologyfile.h"

#include "common/domains.h"
#include "core/fleetshape.h"

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

namespace fleetscope::backend::topologyfile {

template <typename View> class Checker
{
public:
    using Node = typename View::Node;

    explicit Checker(std::string *error)
        : m_error(error)
    { }

    bool document(const Node &root, TopologyFile *out)
    {
        if (!View::isObject(root)) {
            *m_error = "the top level must be an object (a mapping in YAML)";
            return false;
        }
        if (!object(root, "top level")) {
            return false;
        }
        if (const auto g = View::member(root, "gpusPerNode"); g && !gpuCount(*g, "gpusPerNode", &m_perNode)) {
            return false;
        }
        if (!stringMember(root, "site", false, "top level", &out->site)) {
            return false;
        }
        std::vector<Node> halls;
        const auto hallsNode = View::member(root, "halls");
        if (!hallsNode || !View::items(*hallsNode, &halls) || halls.empty()) {
            *m_error = fmt::format("\"halls\" must be a non-empty array{}", lineOf(hallsNode ? *hallsNode : root));
            return false;
        }
        for (size_t h = 0; h < halls.size(); ++h) {
            if (!hall(halls[h], fmt::format("halls[{}]", h), &out->rows)) {
                return false;
            }
        }
        if (m_gpus < 1) {
            *m_error = fmt::format("the file describes no GPUs; Fleetscope serves 1 to {}", FleetShape::maxGpus);
            return false;
        }
        if (const auto d = View::member(root, "domains"); d && !domains(*d, &out->domains)) {
            return false;
        }
        if (const auto f = View::member(root, "fabric"); f && !fabric(*f, out)) {
            return false;
        }
        return true;
    }

private:
    bool hall(const Node &node, const std::string &path, std::vector<TopologyFile::Row> *rows)
    {
        if (!View::isObject(node)) {
            *m_error = fmt::format("{}: must be an object", at(path, node));
            return false;
        }
        std::string name;
        if (!object(node, path) || !stringMember(node, "name", true, path, &name)) {
            return false;
        }
        std::vector<Node> items;
        const auto rowsNode = View::member(node, "rows");
        if (!rowsNode || !View::items(*rowsNode, &items)) {
            *m_error = fmt::format("{} ({}): \"rows\" must be an array", at(path, node), name);
            return false;
        }
        for (size_t r = 0; r < items.size(); ++r) {
            TopologyFile::Row row;
            row.hall = name;
            if (!this->row(items[r], fmt::format("{}.rows[{}]", path, r), &row)) {
                return false;
            }
            rows->push_back(std::move(row));
        }
        return true;
    }

    bool row(const Node &node, const std::string &path, TopologyFile::Row *out)
    {
        return group(node, path, { "row", "racks", "rack" }, &out->name, &out->racks, &Checker::rack);
    }

    bool rack(const Node &node, const std::string &path, TopologyFile::Rack *out)
    {
        // The rack's own GPUs per host (an NVL72 rack's trays have 4) stand for the file's while its hosts are read.
        const uint32_t filePerNode = m_perNode;
        if (View::isObject(node)) {
            if (const auto g = View::member(node, "gpusPerNode");
                g && !gpuCount(*g, at(path + ".gpusPerNode", *g), &m_perNode)) {
                return false;
            }
            if (const auto d = View::member(node, "nvlinkDomain"); d && !View::boolean(*d, &out->nvlinkDomain)) {
                *m_error = fmt::format("{}: \"nvlinkDomain\" must be true or false", at(path, *d));
                return false;
            }
            if (!stringList(node, "power", path, &out->power)
                || !stringMember(node, "cooling", false, path, &out->cooling)) {
                return false;
            }
        }
        const bool read = group(node, path, { "rack", "hosts", "host" }, &out->name, &out->hosts, &Checker::host);
        m_perNode = filePerNode;
        if (!read) {
            return false;
        }
        uint64_t gpus = 0;
        for (const auto &host : out->hosts) {
            gpus += host.gpus;
        }
        if (out->nvlinkDomain && gpus > TopologyFile::maxNvlinkDomainGpus) {
            *m_error = fmt::format("{} ({}): an NVLink domain spans at most {} GPUs; this rack has {}", at(path, node),
                out->name, TopologyFile::maxNvlinkDomainGpus, gpus);
            return false;
        }
        return true;
    }

    // A row of racks or a rack of hosts: an object with a name and an array `key` of at least one part.
    struct Level
    {
        const char *kind;
        const char *key;
        const char *part;
    };
    template <typename Part>
    bool group(const Node &node, const std::string &path, const Level &level, std::string *name,
        std::vector<Part> *parts, bool (Checker::*readPart)(const Node &, const std::string &, Part *))
    {
        std::vector<Node> items;
        if (!View::isObject(node)) {
            *m_error = fmt::format("{}: needs \"name\" and a \"{}\" array", at(path, node), level.key);
            return false;
        }
        if (!object(node, path) || !stringMember(node, "name", true, path, name)
            || !membersOf(node, level.key, path, &items)) {
            return false;
        }
        for (size_t i = 0; i < items.size(); ++i) {
            Part part;
            if (!(this->*readPart)(items[i], fmt::format("{}.{}[{}]", path, level.key, i), &part)) {
                return false;
            }
            parts->push_back(std::move(part));
        }
        if (parts->empty()) {
            *m_error
                = fmt::format("{} ({}): a {} needs at least one {}", at(path, node), *name, level.kind, level.part);
            return false;
        }
        return true;
    }

    bool host(const Node &node, const std::string &path, TopologyFile::Host *out)
    {
        out->gpus = m_perNode;
        if (View::isObject(node)) {
            if (!object(node, path) || !stringMember(node, "hostname", true, path, &out->hostname)) {
                return false;
            }
            if (const auto g = View::member(node, "gpus"); g && !gpuCount(*g, at(path, *g), &out->gpus)) {
                return false;
            }
            if (!stringMember(node, "scalableUnit", false, path, &out->scalableUnit)
                || !stringList(node, "power", path, &out->power)) {
                return false;
            }
            if (const auto l = View::member(node, "links"); l && !links(*l, path + ".links", out)) {
                return false;
            }
        } else {
            View::text(node, &out->hostname);
        }
        if (out->hostname.empty()) {
            *m_error = fmt::format("{}: a host is a hostname or {{\"hostname\": ..., \"gpus\": N}}", at(path, node));
            return false;
        }
        if (!m_hostnames.insert(out->hostname).second) {
            *m_error = fmt::format("{}: hostname '{}' appears twice", at(path, node), out->hostname);
            return false;
        }
        // Checked as it grows, so that no file (YAML aliases included) makes the walk long.
        m_gpus += out->gpus;
        if (m_gpus > FleetShape::maxGpus) {
            *m_error
                = fmt::format("the file describes more than {} GPUs, the most Fleetscope serves", FleetShape::maxGpus);
            return false;
        }
        return true;
    }

    // A host's links: {leaf, port} objects, at most one per GPU.
    bool links(const Node &node, const std::string &path, TopologyFile::Host *out)
    {
        std::vector<Node> items;
        if (!View::items(node, &items) || items.size() > out->gpus) {
            *m_error = fmt::format(
                "{}: must be an array of at most one {{\"leaf\", \"port\"}} per GPU ({})", at(path, node), out->gpus);
            return false;
        }
        for (size_t i = 0; i < items.size(); ++i) {
            const std::string where = fmt::format("{}[{}]", path, i);
            TopologyFile::Link link;
            uint64_t port = 0;
            if (!View::isObject(items[i])) {
                *m_error = fmt::format("{}: a link is {{\"leaf\": NAME, \"port\": N}}", at(where, items[i]));
                return false;
            }
            const auto p = View::member(items[i], "port");
            if (!object(items[i], where) || !stringMember(items[i], "leaf", true, where, &link.leaf)) {
                return false;
            }
            if (!p || !View::count(*p, &port) || port < 1 || port > TopologyFile::maxPort) {
                *m_error = fmt::format(
                    "{}: \"port\" must be a whole number from 1 to {}", at(where, items[i]), TopologyFile::maxPort);
                return false;
            }
            link.port = static_cast<uint32_t>(port);
            out->links.push_back(std::move(link));
        }
        return true;
    }

    bool domains(const Node &node, std::vector<TopologyFile::Domain> *out)
    {
        std::vector<Node> items;
        if (!View::items(node, &items) || items.size() > TopologyFile::maxDomains) {
            *m_error = fmt::format(
                "{}: must be an array of at most {} domains", at("domains", node), TopologyFile::maxDomains);
            return false;
        }
        for (size_t i = 0; i < items.size(); ++i) {
            const std::string where = fmt::format("domains[{}]", i);
            TopologyFile::Domain d;
            if (!View::isObject(items[i])) {
                *m_error = fmt::format("{}: a domain is {{\"kind\", \"name\", \"parent\"}}", at(where, items[i]));
                return false;
            }
            if (!object(items[i], where) || !stringMember(items[i], "kind", true, where, &d.kind)
                || !stringMember(items[i], "name", true, where, &d.name)
                || !stringMember(items[i], "parent", false, where, &d.parent)) {
                return false;
            }
            if (const auto r = View::member(items[i], "rail"); r) {
                uint64_t rail = 0;
                if (!View::count(*r, &rail) || rail >= TopologyFile::maxGpusPerNode) {
                    *m_error = fmt::format("{}: \"rail\" must be a whole number from 0 to {}", at(where, *r),
                        TopologyFile::maxGpusPerNode - 1);
                    return false;
                }
                d.rail = static_cast<int32_t>(rail);
            }
            DomainKind kind {};
            if (!domainKindFromKey(d.kind, &kind)) {
                std::string keys;
                for (int k = 0; k < domainKindCount; ++k) {
                    keys += (k == 0 ? "" : ", ") + std::string(domainKindKey(static_cast<DomainKind>(k)));
                }
                *m_error = fmt::format("{}: no domain kind '{}'; one of {}", at(where, items[i]), d.kind, keys);
                return false;
            }
            out->push_back(std::move(d));
        }
        return true;
    }

    bool fabric(const Node &node, TopologyFile *out)
    {
        if (!View::isObject(node)) {
            *m_error = fmt::format("{}: must be an object", at("fabric", node));
            return false;
        }
        if (!object(node, "fabric")) {
            return false;
        }
        if (!stringList(node, "nics", "fabric", &out->nics)) {
            return false;
        }
        if (out->nics.size() > TopologyFile::maxGpusPerNode) {
            *m_error = fmt::format("fabric.nics: at most {} (one per GPU position)", TopologyFile::maxGpusPerNode);
            return false;
        }
        const auto units = View::member(node, "scalableUnits");
        if (!units) {
            return true;
        }
        std::vector<Node> items;
        if (!View::items(*units, &items) || items.size() > TopologyFile::maxDomains) {
            *m_error = fmt::format("{}: must be an array", at("fabric.scalableUnits", *units));
            return false;
        }
        for (size_t i = 0; i < items.size(); ++i) {
            const std::string where = fmt::format("fabric.scalableUnits[{}]", i);
            TopologyFile::ScalableUnit unit;
            if (!View::isObject(items[i])) {
                *m_error = fmt::format("{}: is {{\"name\", \"leafPrefix\", \"hosts\"}}", at(where, items[i]));
                return false;
            }
            if (!object(items[i], where) || !stringMember(items[i], "name", true, where, &unit.name)
                || !stringMember(items[i], "leafPrefix", true, where, &unit.leafPrefix)
                || !stringList(items[i], "hosts", where, &unit.hosts)) {
                return false;
            }
            if (unit.hosts.empty() || unit.hosts.size() > TopologyFile::maxPort) {
                *m_error
                    = fmt::format("{}: \"hosts\" lists 1 to {} hostnames", at(where, items[i]), TopologyFile::maxPort);
                return false;
            }
            out->scalableUnits.push_back(std::move(unit));
        }
        return true;
    }

    // An optional array of non-empty strings.
    bool stringList(const Node &object, const char *key, const std::string &path, std::vector<std::string> *out)
    {
        const auto member = View::member(object, key);
        if (!member) {
            return true;
        }
        std::vector<Node> items;
        bool ok = View::items(*member, &items) && items.size() <= FleetShape::maxGpus;
        for (size_t i = 0; ok && i < items.size(); ++i) {
            std::string text;
            ok = View::text(items[i], &text) && !text.empty();
            out->push_back(std::move(text));
        }
        if (!ok) {
            *m_error = fmt::format("{}: \"{}\" must be an array of non-empty strings", at(path, *member), key);
        }
        return ok;
    }

    // A row's racks or a rack's hosts: an object of which the array `key` is a member.
    bool membersOf(const Node &node, const char *key, const std::string &path, std::vector<Node> *items)
    {
        const auto member = View::member(node, key);
        if (!member || !View::items(*member, items)) {
            *m_error = fmt::format("{}: needs \"name\" and a \"{}\" array", at(path, node), key);
            return false;
        }
        return true;
    }

    static std::string lineOf(const Node &n)
    {
        const int line = View::line(n);
        return line > 0 ? fmt::format(" (line {})", line) : std::string();
    }
    static std::string at(const std::string &path, const Node &n) { return path + lineOf(n); }

    // An object's keys are unique: a second "name" would otherwise be silently ignored.
    bool object(const Node &n, const std::string &path)
    {
        if (const auto key = View::duplicateKey(n)) {
            *m_error = fmt::format("{}: \"{}\" appears twice", at(path, n), *key);
            return false;
        }
        return true;
    }

    // Reads an optional string member; false (with an error) when present but not a string, or required and
    // missing or empty.
    bool stringMember(const Node &object, const char *key, bool required, const std::string &path, std::string *out)
    {
        const auto member = View::member(object, key);
        if (!member && !required) {
            return true;
        }
        std::string text;
        if (!member || !View::text(*member, &text) || (required && text.empty())) {
            *m_error = fmt::format("{}: \"{}\" must be a non-empty string", at(path, member ? *member : object), key);
            return false;
        }
        *out = std::move(text);
        return true;
    }

    bool gpuCount(const Node &n, const std::string &where, uint32_t *out)
    {
        uint64_t count = 0;
        if (!View::count(n, &count) || count < 1 || count > TopologyFile::maxGpusPerNode) {
            *m_error = fmt::format(
                "{}: a GPU count must be a whole number from 1 to {}", where, TopologyFile::maxGpusPerNode);
            return false;
        }
        *out = static_cast<uint32_t>(count);
        return true;
    }

    std::string *m_error;
    uint32_t m_perNode = TopologyFile::defaultGpusPerNode;
    std::unordered_set<std::string> m_hostnames;
    uint64_t m_gpus = 0;
};

} // namespace fleetscope::backend::topologyfile
