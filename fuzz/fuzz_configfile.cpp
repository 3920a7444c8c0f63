// SPDX-License-Identifier: Apache-2.0
// The backend's YAML configuration file (--config, /etc/fleetscope/backend.yaml). The first byte's bit 0 picks the
// call: parseConfigText on the text (what readConfigFile reads the file with), or the whole command line's
// parseBackendOptions with --config naming a file holding the text (written once per input to a file of this
// process's), so that the file's options meet CLI11 and the options' own checks as at start-up. Each argument made
// must be --KEY=VALUE of a key with a line; a refusal must say why.
#include "backendoptions.h"
#include "configfile.h"

#include "fuzz/fuzzinput.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace {

using namespace fleetscope::backend;

const std::string &scratchFile()
{
    static const std::string path = [] {
        std::string name = "/tmp/fuzz_configfile.XXXXXX";
        const int fd = mkstemp(name.data());
        if (fd < 0) {
            __builtin_trap();
        }
        close(fd);
        std::atexit([] { std::remove(scratchFile().c_str()); });
        return name;
    }();
    return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const std::string_view text(reinterpret_cast<const char *>(data) + 1, size - 1);
    if ((data[0] & 1U) == 0) {
        std::vector<ConfigArgument> arguments;
        std::string error;
        const bool parsed = parseConfigText(text, "backend.yaml", &arguments, &error);
        if (parsed != error.empty() || (!parsed && error.rfind("backend.yaml", 0) != 0)) {
            __builtin_trap(); // refused without a reason naming the file, or accepted with one
        }
        for (const auto &a : arguments) {
            if (a.line < 1 || a.argument.rfind("--" + a.key + "=", 0) != 0) {
                __builtin_trap();
            }
        }
        fleetscope::fuzz::sink = arguments.size();
        return 0;
    }
    const std::string &path = scratchFile();
    std::FILE *file = std::fopen(path.c_str(), "wb");
    if (!file) {
        __builtin_trap();
    }
    std::fwrite(text.data(), 1, text.size(), file);
    std::fclose(file);
    const ParseResult result = parseBackendOptions({ "--config", path });
    if (result.error.empty() && result.options.configFile != path) {
        __builtin_trap();
    }
    fleetscope::fuzz::sink = result.error.size() + result.warnings.size();
    return 0;
}
