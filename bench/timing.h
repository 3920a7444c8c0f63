// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

// How the benchmarks time things: the median of repeated runs, which one slow run (a page fault storm, a context
// switch) does not move.
namespace fleetscope::bench {

inline double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
}

// Median wall time of fn over reps runs, in milliseconds, after untimedRuns runs that are not timed.
inline double medianMs(int reps, const std::function<void()> &fn, int untimedRuns = 0)
{
    for (int i = 0; i < untimedRuns; ++i) {
        fn();
    }
    std::vector<double> times;
    for (int i = 0; i < reps; ++i) {
        const auto start = std::chrono::steady_clock::now();
        fn();
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return median(std::move(times));
}

} // namespace fleetscope::bench
