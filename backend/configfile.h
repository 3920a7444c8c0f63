// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

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

} // namespace fleetscope::backend
