// SPDX-License-Identifier: Apache-2.0
#include "formats/topologyfile.h"

#include "common/domains.h"
#include "core/fleetshape.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <simdjson.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {

// One schema, two syntaxes: the checks below see a document through one of these two views.
struct JsonView
{
    using Node = simdjson::dom::element;
    static bool isObject(const Node &n) { return n.is_object(); }
    static std::optional<Node> member(const Node &n, const char *key)
    {
        Node value;
        if (n[key].get(value)) {
            return std::nullopt;
        }
        return value;
    }
    static bool items(const Node &n, std::vector<Node> *out)
    {
        simdjson::dom::array array;
        if (n.get_array().get(array)) {
            return false;
        }
        out->clear();
        for (const auto item : array) {
            out->push_back(item);
        }
        return true;
    }
    static bool text(const Node &n, std::string *out)
    {
        std::string_view view;
        if (n.get_string().get(view)) {
            return false;
        }
        out->assign(view);
        return true;
    }
    static bool count(const Node &n, uint64_t *out) { return !n.get_uint64().get(*out); }
    static bool boolean(const Node &n, bool *out) { return !n.get_bool().get(*out); }
    static int line(const Node & /*n*/) { return 0; } // simdjson's DOM keeps no positions
    static std::optional<std::string> duplicateKey(const Node &n)
    {
        std::unordered_set<std::string_view> keys;
        simdjson::dom::object object;
        if (n.get_object().get(object)) {
            return std::nullopt;
        }
        for (const auto field : object) {
            if (!keys.insert(field.key).second) {
                return std::string(field.key);
            }
        }
        return std::nullopt;
    }
};

// Every scalar is text (a row named 07 stays "07"); a count is a plain (unquoted) scalar of digits, as a JSON
// number is unquoted.
struct YamlView
{
    using Node = YAML::Node;
    static bool isObject(const Node &n) { return n.IsMap(); }
    static std::optional<Node> member(const Node &n, const char *key)
    {
        const Node value = n[key]; // n is const: looks up, never inserts
        if (!value.IsDefined()) {
            return std::nullopt;
        }
        return value;
    }
    static bool items(const Node &n, std::vector<Node> *out)
    {
        if (!n.IsSequence()) {
            return false;
        }
        out->clear();
        for (const auto &item : n) {
            out->push_back(item);
        }
        return true;
    }
    static bool text(const Node &n, std::string *out)
    {
        if (!n.IsScalar()) {
            return false;
        }
        *out = n.Scalar();
        return true;
    }
    static bool count(const Node &n, uint64_t *out)
    {
        if (!n.IsScalar() || n.Tag() != "?") {
            return false;
        }
        const std::string &s = n.Scalar();
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
        return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
    }
    // A plain true or false, as YAML 1.2's core schema spells them; "yes", "on" and a quoted 'true' are not.
    static bool boolean(const Node &n, bool *out)
    {
        if (!n.IsScalar() || n.Tag() != "?") {
            return false;
        }
        const std::string &s = n.Scalar();
        const bool yes = s == "true" || s == "True" || s == "TRUE";
        const bool no = s == "false" || s == "False" || s == "FALSE";
        *out = yes;
        return yes || no;
    }
    static int line(const Node &n) { return n.Mark().line + 1; } // Mark: 0-based, -1 when unknown
    static std::optional<std::string> duplicateKey(const Node &n)
    {
        std::unordered_set<std::string> keys;
        for (const auto &pair : n) {
            const std::string key = pair.first.IsScalar() ? pair.first.Scalar() : std::string();
            if (!keys.insert(key).second) {
                return key;
            }
        }
        return std::nullopt;
    }
};

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

// Takes a document's events and keeps none: the documents are counted with it before one is loaded.
class IgnoreEvents final : public YAML::EventHandler
{
public:
    using Style = YAML::EmitterStyle::value;
    void OnDocumentStart(const YAML::Mark &) override { }
    void OnDocumentEnd() override { }
    void OnNull(const YAML::Mark &, YAML::anchor_t) override { }
    void OnAlias(const YAML::Mark &, YAML::anchor_t) override { }
    void OnScalar(const YAML::Mark &, const std::string &, YAML::anchor_t, const std::string &) override { }
    void OnSequenceStart(const YAML::Mark &, const std::string &, YAML::anchor_t, Style) override { }
    void OnSequenceEnd() override { }
    void OnMapStart(const YAML::Mark &, const std::string &, YAML::anchor_t, Style) override { }
    void OnMapEnd() override { }
};

// The domains' second pass, once the floor plan is read: what the fabric and the NVL72 racks imply is added, every
// reference is resolved and the domains are put parents first.
bool resolveDomains(TopologyFile *file, std::string *error)
{
    auto &domains = file->domains;
    std::unordered_map<std::string, size_t> byName;
    auto add = [&](TopologyFile::Domain d) -> bool {
        if (domains.size() >= TopologyFile::maxDomains) {
            *error = fmt::format("more than {} domains", TopologyFile::maxDomains);
            return false;
        }
        byName.emplace(d.name, domains.size());
        domains.push_back(std::move(d));
        return true;
    };
    for (size_t i = 0; i < domains.size(); ++i) {
        if (!byName.emplace(domains[i].name, i).second) {
            *error = fmt::format("domains[{}]: the name '{}' appears twice", i, domains[i].name);
            return false;
        }
    }
    auto kindOf = [&](size_t i) {
        DomainKind kind {};
        domainKindFromKey(domains[i].kind, &kind); // checked when read
        return kind;
    };
    // The reference `name` from `where` is a domain of one of these kinds.
    auto resolve = [&](const std::string &name, std::initializer_list<DomainKind> kinds, const std::string &where) {
        const auto it = byName.find(name);
        if (it == byName.end()) {
            *error = fmt::format("{}: no domain named '{}'", where, name);
            return false;
        }
        const DomainKind kind = kindOf(it->second);
        if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
            std::string wanted;
            for (const auto k : kinds) {
                wanted += (wanted.empty() ? "" : " or ") + std::string(domainKindKey(k));
            }
            *error = fmt::format("{}: '{}' is a {}, not a {}", where, name, domainKindKey(kind), wanted);
            return false;
        }
        return true;
    };

    std::unordered_map<std::string, TopologyFile::Host *> hosts;
    for (auto &row : file->rows) {
        for (auto &rack : row.racks) {
            for (auto &host : rack.hosts) {
                hosts.emplace(host.hostname, &host);
            }
            const std::string nvl = rack.name + "-nvl";
            if (rack.nvlinkDomain && byName.count(nvl) == 0
                && !add({ domainKindKey(DomainKind::NvlinkDomain), nvl, {}, -1 })) {
                return false;
            }
        }
    }
    // The rail-optimised fabric: a leaf per rail of each scalable unit, GPU k of its n-th host on leaf k, port n.
    std::unordered_set<std::string> inUnit;
    for (size_t u = 0; u < file->scalableUnits.size(); ++u) {
        const auto &unit = file->scalableUnits[u];
        const std::string where = fmt::format("fabric.scalableUnits[{}] ({})", u, unit.name);
        if (byName.count(unit.name) == 0 && !add({ domainKindKey(DomainKind::ScalableUnit), unit.name, {}, -1 })) {
            return false;
        }
        if (!resolve(unit.name, { DomainKind::ScalableUnit }, where)) {
            return false;
        }
        uint32_t rails = 0;
        for (size_t n = 0; n < unit.hosts.size(); ++n) {
            const auto it = hosts.find(unit.hosts[n]);
            if (it == hosts.end()) {
                *error = fmt::format("{}: no host named '{}' in the floor plan", where, unit.hosts[n]);
                return false;
            }
            if (!inUnit.insert(unit.hosts[n]).second) {
                *error = fmt::format("{}: host '{}' is in a scalable unit already", where, unit.hosts[n]);
                return false;
            }
            auto &host = *it->second;
            if (!host.scalableUnit.empty() && host.scalableUnit != unit.name) {
                *error = fmt::format("{}: host '{}' says scalableUnit '{}'", where, host.hostname, host.scalableUnit);
                return false;
            }
            host.scalableUnit = unit.name;
            rails = std::max(rails, host.gpus);
            if (host.links.empty()) {
                for (uint32_t k = 0; k < host.gpus; ++k) {
                    host.links.push_back({ unit.leafPrefix + std::to_string(k), static_cast<uint32_t>(n + 1) });
                }
            }
        }
        for (uint32_t rail = 0; rail < rails; ++rail) {
            const std::string leaf = unit.leafPrefix + std::to_string(rail);
            if (byName.count(leaf) != 0) {
                continue;
            }
            std::string spine;
            for (const auto &d : domains) {
                if (d.rail == static_cast<int32_t>(rail) && d.kind == domainKindKey(DomainKind::SpinePlane)) {
                    spine = d.name;
                    break;
                }
            }
            if (!add({ domainKindKey(DomainKind::LeafSwitch), leaf, spine, static_cast<int32_t>(rail) })) {
                return false;
            }
        }
    }

    // Parents exist, and no chain of them goes round: each domain's depth, each walked once (a chain's domains are
    // given theirs on the way back), so that a crafted chain of every domain costs a pass, not a pass per domain.
    constexpr uint32_t unknown = std::numeric_limits<uint32_t>::max();
    constexpr uint32_t walking = unknown - 1;
    std::vector<uint32_t> depth(domains.size(), unknown);
    std::vector<size_t> chain;
    for (size_t i = 0; i < domains.size(); ++i) {
        chain.clear();
        size_t at = i;
        while (depth[at] == unknown) {
            depth[at] = walking;
            chain.push_back(at);
            if (domains[at].parent.empty()) {
                break;
            }
            const auto it = byName.find(domains[at].parent);
            if (it == byName.end()) {
                *error = fmt::format("domain '{}': no parent named '{}'", domains[at].name, domains[at].parent);
                return false;
            }
            at = it->second;
        }
        if (depth[at] == walking && !domains[at].parent.empty()) {
            *error = fmt::format("domain '{}': its parents go round in a cycle", domains[at].name);
            return false;
        }
        uint32_t base = depth[at] == walking ? 0 : depth[at] + 1;
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            depth[*it] = base++;
        }
    }
    std::vector<size_t> order(domains.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return depth[a] < depth[b]; });
    std::vector<TopologyFile::Domain> sorted;
    sorted.reserve(domains.size());
    for (const size_t i : order) {
        sorted.push_back(std::move(domains[i]));
    }
    domains = std::move(sorted);
    byName.clear();
    for (size_t i = 0; i < domains.size(); ++i) {
        byName.emplace(domains[i].name, i);
    }

    for (const auto &row : file->rows) {
        for (const auto &rack : row.racks) {
            const std::string where = fmt::format("rack {}", rack.name);
            for (const auto &pdu : rack.power) {
                if (!resolve(pdu, { DomainKind::Pdu }, where + " power")) {
                    return false;
                }
            }
            if (!rack.cooling.empty()
                && !resolve(rack.cooling, { DomainKind::CoolingUnit, DomainKind::Cdu, DomainKind::CoolantLoop },
                    where + " cooling")) {
                return false;
            }
            for (const auto &host : rack.hosts) {
                const std::string hostWhere = fmt::format("host {}", host.hostname);
                if (!host.scalableUnit.empty()
                    && !resolve(host.scalableUnit, { DomainKind::ScalableUnit }, hostWhere + " scalableUnit")) {
                    return false;
                }
                // A host's PDUs are those it is corded to, of its rack's when the rack lists some.
                for (const auto &pdu : host.power) {
                    if (!resolve(pdu, { DomainKind::Pdu }, hostWhere + " power")) {
                        return false;
                    }
                    if (!rack.power.empty()
                        && std::find(rack.power.begin(), rack.power.end(), pdu) == rack.power.end()) {
                        *error = fmt::format("{} power: '{}' is not one of rack {}'s PDUs", hostWhere, pdu, rack.name);
                        return false;
                    }
                }
                for (const auto &link : host.links) {
                    if (!resolve(link.leaf, { DomainKind::LeafSwitch }, hostWhere + " links")) {
                        return false;
                    }
                }
            }
        }
    }
    return true;
}

bool endsWith(const std::string &text, const char *suffix)
{
    const std::string s(suffix);
    return text.size() >= s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0;
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
    const bool yaml = endsWith(path, ".yaml") || endsWith(path, ".yml");
    if (!(yaml ? parseYaml(text.str(), out, error) : parse(text.str(), out, error))) {
        *error = fmt::format("{}: {}", path, *error);
        return false;
    }
    return true;
}

bool TopologyFile::parse(const std::string &json, TopologyFile *out, std::string *error)
{
    *out = {};
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (auto e = parser.parse(json).get(root); e || !root.is_object()) {
        *error = fmt::format("not a JSON object ({})", e ? simdjson::error_message(e) : "another JSON value");
        return false;
    }
    if (!Checker<JsonView>(error).document(root, out) || !resolveDomains(out, error)) {
        *out = {};
        return false;
    }
    return true;
}

bool TopologyFile::parseYaml(const std::string &yaml, TopologyFile *out, std::string *error)
{
    *out = {};
    try {
        // Not YAML::LoadAll: in yaml-cpp 0.7 it never returns when a token is left after a document ("{a: 1},"),
        // since its parser then yields an empty document every time it is asked (fixed upstream after 0.8).
        // Found by fuzz_topologyfile. So at most two documents are counted, then the first one is loaded.
        std::istringstream text(yaml);
        YAML::Parser parser(text);
        IgnoreEvents ignore;
        size_t documents = 0;
        while (documents < 2 && parser.HandleNextDocument(ignore)) {
            ++documents;
        }
        if (documents != 1) {
            *error = documents == 0 ? std::string("holds 0 YAML documents; a topology is exactly one")
                                    : std::string("holds more than one YAML document (or text after its end, such as a "
                                                  "stray ','); a topology is exactly one");
            return false;
        }
        if (!Checker<YamlView>(error).document(YAML::Load(yaml), out) || !resolveDomains(out, error)) {
            *out = {};
            return false;
        }
        return true;
    } catch (const YAML::Exception &e) {
        // ParserException and DeepRecursion carry where the document went wrong.
        *error = e.mark.is_null()
            ? fmt::format("not valid YAML: {}", e.msg)
            : fmt::format("not valid YAML: line {}, column {}: {}", e.mark.line + 1, e.mark.column + 1, e.msg);
        *out = {};
        return false;
    }
}

} // namespace fleetscope::backend
