// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "framesource.h"

#include <optional>
#include <string>
#include <vector>

namespace fleetscope::backend {

struct BackendOptions
{
    std::string listen = "127.0.0.1:50051";
    FrameSource::Options source;
    bool showHelp = false;
    bool showVersion = false;
    bool listScenarios = false;
};

struct ParseResult
{
    BackendOptions options;
    std::string error; // empty when the command line was valid
};

// "90s", "30m", "6h", "2d" -> seconds.
std::optional<int64_t> parseDuration(const std::string &text);

ParseResult parseBackendOptions(const std::vector<std::string> &args);
std::string backendUsage();
std::string scenarioList();

} // namespace fleetscope::backend
