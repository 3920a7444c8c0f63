// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace fleetscope::backend {

// A configuration file's options as command-line arguments: the file is one YAML mapping whose keys are long option
// names without their dashes and whose values are a scalar (`gpus: 10240`), true/false for a flag (`insecure-listen:
// true`; false leaves it out), or a list for an option given more than once. Each key becomes "--KEY=VALUE" (or
// "--KEY" for a true flag); which keys are options is checked by the parser the arguments go to. False with an error
// that names the file and line when the file cannot be read or is not such a mapping.
struct ConfigArgument
{
    std::string key;
    std::string argument;
    int line = 0; // 1-based, for messages
};
bool readConfigFile(const std::string &path, std::vector<ConfigArgument> *out, std::string *error);
// The same from the file's text (at most 1 MiB, as readConfigFile has read it); path names it in errors.
bool parseConfigText(
    std::string_view text, const std::string &path, std::vector<ConfigArgument> *out, std::string *error);

// The configuration file named by the last --config in args, else defaultConfig if it exists and --no-config is not
// given; empty: none.
std::string configFileOf(const std::vector<std::string> &args, const std::string &defaultConfig);
// The file's options as arguments (to go before the command line's), each checked to be an option of app that a file
// may set; a flag's true/false becomes the flag or nothing. False with an error naming the file and line.
bool configArguments(
    const CLI::App &app, const std::string &path, std::vector<std::string> *arguments, std::string *error);

} // namespace fleetscope::backend
