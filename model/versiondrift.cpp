// SPDX-License-Identifier: Apache-2.0
#include "model/versiondrift.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

namespace fleetscope {

namespace {

// Distinct versions kept apart; a backend reporting more (it is untrusted) has the rest counted as one.
constexpr size_t maxVersions = 1024;

// The majority of some GPUs' versions and the others present, from version -> GPUs. Ties go to the version with
// more GPUs in the fleet (the lower index), so a rack half way through a rollout flags its updated half.
void majorityOf(const std::unordered_map<uint16_t, uint32_t> &counts, VersionDrift::Group *group)
{
    std::vector<std::pair<uint16_t, uint32_t>> sorted(counts.begin(), counts.end());
    std::sort(sorted.begin(), sorted.end(),
        [](const auto &a, const auto &b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
    group->majority = sorted.front().first;
    for (size_t i = 1; i < sorted.size(); ++i) {
        group->others.push_back(sorted[i].first);
    }
}

} // namespace

QString VersionDrift::Version::label() const
{
    if (driver.isEmpty() && firmware.isEmpty()) {
        return QStringLiteral("unknown");
    }
    QStringList parts;
    if (!driver.isEmpty()) {
        parts << QStringLiteral("driver %1").arg(driver);
    }
    if (!firmware.isEmpty()) {
        parts << QStringLiteral("VBIOS %1").arg(firmware);
    }
    return parts.join(QStringLiteral(" · "));
}

QStringList VersionDrift::categoryNames() const
{
    QStringList names;
    for (size_t v = 0; v < versions.size() && names.size() < maxCategories; ++v) {
        names << versions[v].label();
    }
    if (versions.size() > static_cast<size_t>(maxCategories)) {
        names.back() = QStringLiteral("%1 other versions").arg(versions.size() - maxCategories + 1);
    }
    return names;
}

std::vector<float> VersionDrift::plane(const Topology &topology) const
{
    std::vector<float> values(topology.gpuCount, std::numeric_limits<float>::quiet_NaN());
    if (topology.generation != topologyGeneration || versionOfNode.size() != topology.nodes.size()) {
        return values;
    }
    for (size_t k = 0; k < topology.nodes.size(); ++k) {
        const auto &node = topology.nodes[k];
        const auto value = static_cast<float>(categoryOf(versionOfNode[k]));
        const uint64_t end = std::min<uint64_t>(uint64_t { node.firstGpu } + node.gpuCount, values.size());
        for (uint64_t g = node.firstGpu; g < end; ++g) {
            values[g] = value;
        }
    }
    return values;
}

MetricInfo VersionDrift::metric() const
{
    MetricInfo m;
    m.id = QString::fromLatin1(metricId);
    m.name = QStringLiteral("Driver / VBIOS version");
    m.unit = QString();
    m.colourMap = QStringLiteral("versions");
    m.categories = categoryNames();
    m.rangeMin = 0;
    m.rangeMax = static_cast<float>(std::max<qsizetype>(1, m.categories.size() - 1));
    return m;
}

VersionDrift computeVersionDrift(const Topology &topology, const JobList *jobs)
{
    VersionDrift drift;
    drift.topologyGeneration = topology.generation;
    // The distinct versions, in the order first seen, then sorted by GPUs.
    std::map<std::pair<QString, QString>, uint16_t> index;
    std::vector<VersionDrift::Version> seen;
    std::vector<uint16_t> firstOrder(topology.nodes.size(), 0);
    for (size_t k = 0; k < topology.nodes.size(); ++k) {
        const auto &node = topology.nodes[k];
        const auto key = std::make_pair(node.driverVersion, node.firmwareVersion);
        auto it = index.find(key);
        if (it == index.end()) {
            if (seen.size() < maxVersions) {
                it = index.emplace(key, static_cast<uint16_t>(seen.size())).first;
                seen.push_back({ node.driverVersion, node.firmwareVersion, 0 });
            } else {
                it = index.emplace(key, static_cast<uint16_t>(maxVersions - 1)).first;
                seen.back().driver = QStringLiteral("(more versions)");
                seen.back().firmware.clear();
            }
        }
        firstOrder[k] = it->second;
        seen[it->second].gpus += node.gpuCount;
    }
    std::vector<uint16_t> order(seen.size());
    for (size_t v = 0; v < order.size(); ++v) {
        order[v] = static_cast<uint16_t>(v);
    }
    std::stable_sort(order.begin(), order.end(), [&](uint16_t a, uint16_t b) { return seen[a].gpus > seen[b].gpus; });
    std::vector<uint16_t> rank(seen.size());
    for (size_t r = 0; r < order.size(); ++r) {
        rank[order[r]] = static_cast<uint16_t>(r);
        drift.versions.push_back(seen[order[r]]);
    }
    drift.versionOfNode.resize(topology.nodes.size());
    for (size_t k = 0; k < topology.nodes.size(); ++k) {
        drift.versionOfNode[k] = rank[firstOrder[k]];
    }
    if (drift.isUniform()) {
        return drift;
    }

    auto versionOfGpu = [&](uint32_t gpu) { return drift.versionOfNode[topology.nodeOfGpu[gpu]]; };
    std::vector<bool> flagged(topology.gpuCount, false);
    auto finish = [&](VersionDrift::Group group, const std::vector<uint32_t> &gpus) {
        for (uint32_t gpu : gpus) {
            if (versionOfGpu(gpu) != group.majority) {
                group.offGpus.push_back(gpu);
                flagged[gpu] = true;
            }
        }
        drift.groups.push_back(std::move(group));
    };

    // Jobs: the running ones of this generation, their GPUs checked against the fleet.
    if (jobs != nullptr && jobs->topologyGeneration == topology.generation) {
        for (const Job &job : jobs->jobs) {
            if (!job.isRunning()) {
                continue;
            }
            std::vector<uint32_t> gpus;
            std::unordered_map<uint16_t, uint32_t> counts;
            for (uint32_t gpu : job.gpus) {
                if (gpu < topology.gpuCount && gpu < topology.nodeOfGpu.size()) {
                    gpus.push_back(gpu);
                    ++counts[versionOfGpu(gpu)];
                }
            }
            if (counts.size() < 2) {
                continue;
            }
            VersionDrift::Group group;
            group.jobId = job.id;
            group.name = job.name;
            group.gpus = static_cast<uint32_t>(gpus.size());
            group.sinceMs = job.startTimeMs;
            majorityOf(counts, &group);
            finish(std::move(group), gpus);
        }
    }
    const auto jobGroups = static_cast<std::ptrdiff_t>(drift.groups.size());
    // Racks: a node's GPUs are contiguous, a rack's nodes too.
    for (size_t r = 0; r < topology.racks.size(); ++r) {
        const auto &rack = topology.racks[r];
        std::unordered_map<uint16_t, uint32_t> counts;
        std::vector<uint32_t> gpus;
        const uint64_t lastNode
            = std::min<uint64_t>(uint64_t { rack.firstNode } + rack.nodeCount, topology.nodes.size());
        for (uint64_t k = rack.firstNode; k < lastNode; ++k) {
            const auto &node = topology.nodes[k];
            const uint64_t end = std::min<uint64_t>(uint64_t { node.firstGpu } + node.gpuCount, topology.gpuCount);
            for (uint64_t g = node.firstGpu; g < end; ++g) {
                gpus.push_back(static_cast<uint32_t>(g));
            }
            if (end > node.firstGpu) {
                counts[drift.versionOfNode[k]] += static_cast<uint32_t>(end - node.firstGpu);
            }
        }
        if (counts.size() < 2) {
            continue;
        }
        VersionDrift::Group group;
        group.rack = static_cast<int64_t>(r);
        group.name = rack.name;
        group.gpus = static_cast<uint32_t>(gpus.size());
        majorityOf(counts, &group);
        finish(std::move(group), gpus);
    }
    std::stable_sort(drift.groups.begin(), drift.groups.begin() + jobGroups,
        [](const auto &a, const auto &b) { return a.offGpus.size() > b.offGpus.size(); });
    for (uint32_t g = 0; g < topology.gpuCount; ++g) {
        if (flagged[g]) {
            drift.flaggedGpus.push_back(g);
        }
    }
    return drift;
}

} // namespace fleetscope
