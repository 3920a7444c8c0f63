// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "framesource.h"

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

ParseResult parseBackendOptions(const std::vector<std::string> &args);
std::string backendUsage();
std::string scenarioList();

} // namespace fleetscope::backend
