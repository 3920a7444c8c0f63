// SPDX-License-Identifier: Apache-2.0
// The backend's YAML configuration file (--config, /etc/fleetscope/backend.yaml). Every input's text goes through
// parseConfigText (what readConfigFile reads the file with). When the first byte's bit 0 is set, the whole command
// line follows: parseBackendOptions with --config naming a file holding the text (written once per input to a file of
// this process's, in /dev/shm when there is one), so that the file's options meet CLI11 and the options' own checks as
// at start-up. It runs on a text parseConfigText accepted, or on a refused one when bit 1 is set too (then it must
// refuse the file with the same words): CLI11's options, built anew for every command line, cost about 2 ms under the
// sanitizers (the text alone 0.13 ms), and a refused text never reaches them. Nor does a text whose arguments (with
// their lines), or whose refusal, an earlier input already took through the whole command line: that reads nothing
// else, so it would do again what it did (two thirds of them in a short run: mutations of comments, blanks, quoting).
// Each argument made must be --KEY=VALUE of a key with a line; a refusal must say why.
#include "backendoptions.h"
#include "configfile.h"

#include "fuzz/fuzzinput.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <unistd.h>

namespace {

using namespace fleetscope::backend;

const std::string &scratchFile()
{
    static const std::string path = [] {
        std::string name
            = access("/dev/shm", W_OK) == 0 ? "/dev/shm/fuzz_configfile.XXXXXX" : "/tmp/fuzz_configfile.XXXXXX";
        const int fd = mkstemp(name.data());
        if (fd < 0) {
            __builtin_trap();
        }
        // Unlinked at once and named through its descriptor, so that nothing is left behind: libFuzzer ends without
        // running atexit handlers.
        unlink(name.c_str());
        return "/proc/self/fd/" + std::to_string(fd);
    }();
    return path;
}

// Whether these arguments, or this refusal, went through the whole command line before (64-bit hashes, at most a
// million kept).
bool seenBefore(const std::vector<ConfigArgument> &arguments, const std::string &error)
{
    static std::unordered_set<size_t> seen;
    std::string key = error.empty() ? "+" : "-" + error;
    for (const auto &a : arguments) {
        key += std::to_string(a.line) + ' ' + a.argument + '\n';
    }
    if (seen.size() >= 1000000) {
        seen.clear();
    }
    return !seen.insert(std::hash<std::string> {}(key)).second;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const std::string_view text(reinterpret_cast<const char *>(data) + 1, size - 1);
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
    if ((data[0] & 1U) == 0 || (!parsed && (data[0] & 2U) == 0) || seenBefore(arguments, error)) {
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
    if (!parsed && result.error != path + error.substr(std::string_view("backend.yaml").size())) {
        __builtin_trap(); // the command line refused the file otherwise than its text was
    }
    fleetscope::fuzz::sink = result.error.size() + result.warnings.size();
    return 0;
}
