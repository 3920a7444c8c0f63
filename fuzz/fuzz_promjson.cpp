// SPDX-License-Identifier: Apache-2.0
// The Prometheus source's reading of an HTTP API answer, as prometheussource.cpp and prometheusrange.cpp call it.
// The first byte picks the call: bit 0 and 1 an instant query's vector (with the placement labels, with the job
// labels) or, when both are set, a range query's matrix; the rest is the answer's body.
#include "prometheus/promjson.h"

#include <cmath>
#include <string>

namespace {

using namespace fleetscope::backend;

// Small enough that the fuzzer reaches them.
constexpr size_t maxSeries = 64;
constexpr size_t maxPoints = 512;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    // One parser for every input, as a poller keeps one across its polls (simdjson's buffers are reused).
    static PromJson json;
    std::string body(reinterpret_cast<const char *>(data) + 1, size - 1);
    std::string error;
    const unsigned mode = data[0] & 3U;
    if (mode == 3) {
        size_t series = 0;
        size_t points = 0;
        const bool parsed = json.parseMatrix(
            &body, maxSeries, maxPoints,
            [&series](const PromSample &labels) -> int64_t {
                // Every other series skipped, as a range query skips the GPUs outside the topology.
                const size_t sum = labels.hostname.size() + labels.gpu.size() + labels.name.size();
                return (series++ % 2 == 0) ? static_cast<int64_t>(sum) : -1;
            },
            [&points](int64_t, int64_t, double) { ++points; }, &error);
        if (parsed && (series > maxSeries || points > maxPoints)) {
            __builtin_trap(); // over a limit and accepted
        }
        if (!parsed && error.empty()) {
            __builtin_trap(); // refused without a reason
        }
        return 0;
    }
    std::vector<PromSample> out;
    const bool parsed = json.parseVector(&body, maxSeries, (mode & 1U) != 0, &out, &error, (mode & 2U) != 0);
    if (parsed && out.size() > maxSeries) {
        __builtin_trap();
    }
    if (!parsed && error.empty()) {
        __builtin_trap();
    }
    return 0;
}
