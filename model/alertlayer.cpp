// SPDX-License-Identifier: Apache-2.0
#include "model/alertlayer.h"

#include <algorithm>
#include <limits>

namespace fleetscope {

QStringList AlertLayer::categoryNames()
{
    return { QStringLiteral("no alert"), QStringLiteral("silenced / inhibited"), QStringLiteral("info"),
        QStringLiteral("warning"), QStringLiteral("critical") };
}

AlertLayer::Category AlertLayer::categoryOf(const FleetAlert &alert)
{
    if (alert.suppressed) {
        return Quiet;
    }
    switch (alert.severity) {
    case EventSeverity::Critical:
        return Critical;
    case EventSeverity::Warning:
        return Warning;
    case EventSeverity::Info:
        break;
    }
    return Info;
}

std::vector<float> AlertLayer::plane(const Topology &topology) const
{
    std::vector<float> values(topology.gpuCount, std::numeric_limits<float>::quiet_NaN());
    if (topology.generation != topologyGeneration || categoryOfGpu.size() != topology.gpuCount) {
        return values;
    }
    for (const auto &node : topology.nodes) {
        const uint64_t end = std::min<uint64_t>(uint64_t { node.firstGpu } + node.gpuCount, values.size());
        for (uint64_t g = node.firstGpu; g < end; ++g) {
            values[g] = static_cast<float>(categoryOfGpu[g]);
        }
    }
    return values;
}

MetricInfo AlertLayer::metric()
{
    MetricInfo m;
    m.id = QString::fromLatin1(metricId);
    m.name = QStringLiteral("Alerts (Alertmanager)");
    m.colourMap = QStringLiteral("alerts");
    m.categories = categoryNames();
    m.rangeMin = 0;
    m.rangeMax = static_cast<float>(categoryCount - 1);
    return m;
}

AlertRuns alertRunsOf(const AlertBoard &board)
{
    AlertRuns runs;
    runs.boardGeneration = board.generation;
    for (const auto &alert : board.alerts) {
        auto &into = runs.ofCategory[static_cast<size_t>(AlertLayer::categoryOf(alert) - 1)];
        into.insert(into.end(), alert.gpuRuns.begin(), alert.gpuRuns.end());
    }
    return runs;
}

AlertLayer computeAlertLayer(const AlertBoard &board, const Topology &topology)
{
    return computeAlertLayer(alertRunsOf(board), topology);
}

AlertLayer computeAlertLayer(const AlertRuns &runs, const Topology &topology)
{
    AlertLayer layer;
    layer.topologyGeneration = topology.generation;
    layer.boardGeneration = runs.boardGeneration;
    const uint32_t gpus = topology.gpuCount;
    layer.categoryOfGpu.assign(gpus, AlertLayer::NoAlert);
    uint8_t *const category = layer.categoryOfGpu.data();
    // Category by category from the least severe up, each painted over the ones below. A category whose runs cover
    // the fleet twice at most is painted run by run (a memset each); one whose runs overlap more (a thousand alerts
    // on the same rows) goes through a difference array swept once, so that no board costs more than O(runs + GPUs).
    std::vector<int32_t> open;
    for (size_t level = 0; level < runs.ofCategory.size(); ++level) {
        const auto &ofLevel = runs.ofCategory[level];
        uint64_t covered = 0;
        for (const auto &[first, count] : ofLevel) {
            if (first < gpus) { // the backend's placement is checked, never trusted
                covered += std::min<uint64_t>(count, gpus - first);
            }
        }
        if (covered == 0) {
            continue;
        }
        const auto value = static_cast<uint8_t>(level + 1);
        const bool direct = covered <= 2 * uint64_t { gpus };
        if (!direct) {
            open.assign(size_t { gpus } + 1, 0);
        }
        for (const auto &[first, count] : ofLevel) {
            if (first >= gpus || count == 0) {
                continue;
            }
            const uint64_t end = std::min<uint64_t>(uint64_t { first } + count, gpus);
            if (direct) {
                std::fill(category + first, category + end, value);
            } else {
                ++open[first];
                --open[end];
            }
        }
        if (!direct) {
            int32_t running = 0;
            for (uint32_t g = 0; g < gpus; ++g) {
                running += open[g];
                if (running > 0) {
                    category[g] = value;
                }
            }
        }
    }
    for (uint32_t g = 0; g < gpus; ++g) {
        ++layer.gpusIn[category[g]];
    }
    layer.firingGpus.reserve(gpus - layer.gpusIn[AlertLayer::NoAlert] - layer.gpusIn[AlertLayer::Quiet]);
    for (uint32_t g = 0; g < gpus; ++g) {
        if (category[g] >= AlertLayer::Info) {
            layer.firingGpus.push_back(g);
        }
    }
    return layer;
}

} // namespace fleetscope
