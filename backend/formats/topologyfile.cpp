// SPDX-License-Identifier: Apache-2.0
#include "formats/topologyfile.h"

#include "core/fleetshape.h"

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
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
    if (!Checker<JsonView>(error).document(root, out)) {
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
        if (!Checker<YamlView>(error).document(YAML::Load(yaml), out)) {
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
