// SPDX-License-Identifier: Apache-2.0
#include "formats/topologyfile.h"

#include "formats/topologychecker.h"

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

using topologyfile::Checker;

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
