// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

// How the benchmarks time things: the median of repeated runs, which one slow run (a page fault storm, a context
// switch) does not move.
namespace fleetscope::bench {

// Samples sorted once and read at any quantile: the value at rank round(q * (n - 1)), 0 when there are none.
class Distribution
{
public:
    explicit Distribution(std::vector<double> values)
        : m_sorted(std::move(values))
    {
        std::sort(m_sorted.begin(), m_sorted.end());
    }

    double quantile(double q) const
    {
        if (m_sorted.empty()) {
            return 0;
        }
        const auto rank = static_cast<size_t>(q * static_cast<double>(m_sorted.size() - 1) + 0.5);
        return m_sorted[std::min(m_sorted.size() - 1, rank)];
    }
    double max() const { return m_sorted.empty() ? 0 : m_sorted.back(); }

private:
    std::vector<double> m_sorted;
};

// The middle value (the upper of the two middle ones for an even count).
inline double median(std::vector<double> values)
{
    return Distribution(std::move(values)).quantile(0.5);
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
