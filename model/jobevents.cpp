// SPDX-License-Identifier: Apache-2.0
#include "model/jobevents.h"

#include <algorithm>
#include <limits>

namespace fleetscope {

namespace {

std::vector<uint32_t> sortedGpus(const Job &job)
{
    std::vector<uint32_t> gpus = job.gpus;
    if (!std::is_sorted(gpus.begin(), gpus.end())) {
        std::sort(gpus.begin(), gpus.end());
    }
    return gpus;
}

// The first of gpus (ascending) within [first, first + count), or -1.
int64_t firstWithin(const std::vector<uint32_t> &gpus, uint64_t first, uint64_t count)
{
    const uint64_t end = first + count; // both from 32-bit values: no overflow in 64
    const auto it = std::lower_bound(gpus.begin(), gpus.end(), first, [](uint32_t g, uint64_t f) { return g < f; });
    return it != gpus.end() && *it < end ? static_cast<int64_t>(*it) : -1;
}

int64_t firstWithinRuns(const std::vector<uint32_t> &gpus, const std::vector<std::pair<uint32_t, uint32_t>> &runs)
{
    for (const auto &[first, count] : runs) {
        const int64_t g = firstWithin(gpus, first, count);
        if (g >= 0) {
            return g;
        }
    }
    return -1;
}

} // namespace

std::vector<FleetEvent> jobEvents(
    const Job &job, const std::vector<FleetEvent> &events, const Topology *topology, size_t limit)
{
    const std::vector<uint32_t> gpus = sortedGpus(job);
    // The nodes holding its GPUs, for a node's own events (node down carries no GPU).
    std::vector<uint32_t> nodes;
    if (topology) {
        for (const uint32_t g : gpus) {
            if (g < topology->nodeOfGpu.size()) {
                nodes.push_back(topology->nodeOfGpu[g]);
            }
        }
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    }
    const int64_t from = job.startTimeMs;
    const int64_t to = job.isRunning() ? std::numeric_limits<int64_t>::max() : job.endTimeMs;
    auto hits = [&](const FleetEvent &e) {
        if (e.timeMs < from || e.timeMs > to) {
            return false;
        }
        if (job.id != 0 && e.jobId == job.id) {
            return true;
        }
        if (e.gpu >= 0 && e.gpu <= std::numeric_limits<uint32_t>::max()
            && std::binary_search(gpus.begin(), gpus.end(), static_cast<uint32_t>(e.gpu))) {
            return true;
        }
        if (e.incident && firstWithinRuns(gpus, e.incident->gpuRuns) >= 0) {
            return true;
        }
        return e.gpu < 0 && e.node >= 0 && e.node <= std::numeric_limits<uint32_t>::max()
            && std::binary_search(nodes.begin(), nodes.end(), static_cast<uint32_t>(e.node));
    };
    std::vector<FleetEvent> kept;
    for (const FleetEvent &e : events) {
        if (hits(e)) {
            kept.push_back(e);
        }
    }
    std::stable_sort(kept.begin(), kept.end(), [](const FleetEvent &a, const FleetEvent &b) {
        return a.timeMs != b.timeMs ? a.timeMs < b.timeMs : a.sequence < b.sequence;
    });
    if (kept.size() > limit) {
        kept.erase(kept.begin(), kept.end() - static_cast<std::ptrdiff_t>(limit));
    }
    return kept;
}

std::vector<JobAlert> jobAlerts(const Job &job, const AlertBoard &board, size_t limit)
{
    const std::vector<uint32_t> gpus = sortedGpus(job);
    std::vector<JobAlert> kept;
    for (size_t i = 0; i < board.alerts.size() && kept.size() < limit; ++i) {
        const int64_t g = firstWithinRuns(gpus, board.alerts[i].gpuRuns);
        if (g >= 0) {
            kept.push_back({ i, static_cast<uint32_t>(g) });
        }
    }
    return kept;
}

} // namespace fleetscope
