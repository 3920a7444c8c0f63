// SPDX-License-Identifier: Apache-2.0
// The backend's bearer-token file (--token-file), as TokenFile::load reads it: TokenFile::parse on the file's text
// (at most 1 MiB, which load checks before). An accepted file holds at least one token and no more than it has lines;
// a refused one says why.
#include "service/accessgate.h"

#include "fuzz/fuzzinput.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using fleetscope::backend::TokenFile;
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    std::vector<TokenFile::Digest> digests;
    std::string error;
    const bool parsed = TokenFile::parse(text, "/etc/fleetscope/tokens", &digests, &error);
    if (parsed != error.empty()) {
        __builtin_trap(); // refused without a reason, or accepted with one
    }
    const auto lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    if (parsed && (digests.empty() || digests.size() > lines)) {
        __builtin_trap();
    }
    if (!parsed && !digests.empty() && error.find("holds no token") != std::string::npos) {
        __builtin_trap();
    }
    fleetscope::fuzz::sink = digests.empty() ? 0 : digests.front()[0];
    return 0;
}
