// SPDX-License-Identifier: Apache-2.0
#include "configfile.h"

#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace fleetscope::backend {

namespace {
constexpr size_t maxConfigBytes = 1 << 20;
}

bool readConfigFile(const std::string &path, std::vector<ConfigArgument> *out, std::string *error)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *error = fmt::format("cannot read the configuration file '{}'", path);
        return false;
    }
    // Read as long as the file is, up to one chunk past the limit (not a zeroed 1 MiB buffer for a file of 200 bytes).
    std::string text;
    char chunk[16384];
    while (text.size() <= maxConfigBytes && in.read(chunk, sizeof chunk).gcount() > 0) {
        text.append(chunk, static_cast<size_t>(in.gcount()));
    }
    if (text.size() > maxConfigBytes) {
        *error = fmt::format("the configuration file '{}' is over 1 MiB", path);
        return false;
    }
    return parseConfigText(text, path, out, error);
}

bool parseConfigText(
    std::string_view text, const std::string &path, std::vector<ConfigArgument> *out, std::string *error)
{
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception &e) {
        *error = fmt::format("{}:{}: not YAML: {}", path, e.mark.line + 1, e.msg);
        return false;
    }
    if (root.IsNull()) {
        return true; // empty, or comments only: every option at its default
    }
    if (!root.IsMap()) {
        *error = fmt::format("{}: expected a mapping of option names to values (`listen: 127.0.0.1:50051`)", path);
        return false;
    }
    for (const auto &entry : root) {
        const int line = entry.first.Mark().line + 1;
        if (!entry.first.IsScalar()) {
            *error = fmt::format("{}:{}: an option's name is a plain word", path, line);
            return false;
        }
        const std::string key = entry.first.Scalar();
        const YAML::Node &value = entry.second;
        std::vector<std::string> values;
        if (value.IsScalar()) {
            values.push_back(value.Scalar());
        } else if (value.IsSequence()) {
            for (const auto &item : value) {
                if (!item.IsScalar()) {
                    *error = fmt::format("{}:{}: '{}' lists something that is not a value", path, line, key);
                    return false;
                }
                values.push_back(item.Scalar());
            }
        } else {
            *error = fmt::format("{}:{}: '{}' has no value (a value, true/false, or a list)", path, line, key);
            return false;
        }
        for (const auto &v : values) {
            out->push_back({ key, fmt::format("--{}={}", key, v), line });
        }
    }
    return true;
}

std::string configFileOf(const std::vector<std::string> &args, const std::string &defaultConfig)
{
    std::string named;
    bool none = false;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--config" && i + 1 < args.size()) {
            named = args[++i];
        } else if (args[i].rfind("--config=", 0) == 0) {
            named = args[i].substr(9);
        } else if (args[i] == "--no-config") {
            none = true;
        }
    }
    if (!named.empty() || defaultConfig.empty() || none) {
        return named;
    }
    std::ifstream in(defaultConfig);
    return in ? defaultConfig : std::string();
}

bool configArguments(
    const CLI::App &app, const std::string &path, std::vector<std::string> *arguments, std::string *error)
{
    std::vector<ConfigArgument> items;
    if (!readConfigFile(path, &items, error)) {
        return false;
    }
    for (const auto &item : items) {
        const CLI::Option *option = app.get_option_no_throw("--" + item.key);
        const bool notInFile
            = item.key == "config" || item.key == "help" || item.key == "version" || item.key == "list-scenarios";
        if (!option || notInFile || item.key.size() < 2) {
            *error = fmt::format("{}:{}: '{}' is {}", path, item.line, item.key,
                notInFile ? "not an option for a configuration file" : "no option (see --help)");
            return false;
        }
        if (option->get_expected_max() == 0) { // a flag: true or false
            const std::string value = item.argument.substr(item.key.size() + 3);
            if (value != "true" && value != "false") {
                *error = fmt::format("{}:{}: '{}' is a flag: true or false", path, item.line, item.key);
                return false;
            }
            if (value == "true") {
                arguments->push_back("--" + item.key);
            }
            continue;
        }
        arguments->push_back(item.argument);
    }
    return true;
}

} // namespace fleetscope::backend
