// SPDX-License-Identifier: Apache-2.0
#pragma once
// Fleets to search: a grid of rows, racks, nodes and GPUs named as the simulator names them, a small one with jobs.
#include "model/fleetmodel.h"

#include <cstdio>
#include <memory>
#include <random>

namespace fleetscope::testing {

// rows × racks per row × nodes per rack × GPUs per node, named as the simulator names them (r01-k02-n03); serials
// and UUIDs from a fixed seed.
inline std::shared_ptr<Topology> gridTopology(
    uint32_t rows, uint32_t racksPerRow, uint32_t nodesPerRack, uint32_t gpusPerNode)
{
    auto t = std::make_shared<Topology>();
    t->generation = 7;
    std::mt19937_64 random(42);
    char name[40]; // "r%02u-k%02u-n%02u" of any uint32_t fits
    for (uint32_t r = 0; r < rows; ++r) {
        std::snprintf(name, sizeof name, "r%02u", r + 1);
        t->rows.push_back({ QString::fromLatin1(name), QStringLiteral("hall-a") });
        for (uint32_t k = 0; k < racksPerRow; ++k) {
            Topology::Rack rack;
            std::snprintf(name, sizeof name, "r%02u-k%02u", r + 1, k + 1);
            rack.name = QString::fromLatin1(name);
            rack.row = r;
            rack.position = k;
            rack.firstNode = static_cast<uint32_t>(t->nodes.size());
            rack.nodeCount = nodesPerRack;
            for (uint32_t n = 0; n < nodesPerRack; ++n) {
                Topology::Node node;
                std::snprintf(name, sizeof name, "r%02u-k%02u-n%02u", r + 1, k + 1, n + 1);
                node.hostname = QString::fromLatin1(name);
                node.rack = static_cast<uint32_t>(t->racks.size());
                node.firstGpu = t->gpuCount;
                node.gpuCount = gpusPerNode;
                for (uint32_t g = 0; g < gpusPerNode; ++g) {
                    t->nodeOfGpu.push_back(static_cast<uint32_t>(t->nodes.size()));
                    // Unique: multiplying by a number coprime to 10^9 permutes 0 .. 10^9 - 1.
                    const uint64_t serial = (uint64_t { t->gpuCount + g } * 2654435761ULL + 12345U) % 1000000000U;
                    std::snprintf(name, sizeof name, "1654%09u", static_cast<unsigned>(serial));
                    t->gpuSerials.emplace_back(name);
                    const uint64_t a = random();
                    const uint64_t b = random();
                    t->gpuUuids.emplace_back(static_cast<uint32_t>(a >> 32U), static_cast<uint16_t>(a >> 16U),
                        static_cast<uint16_t>(0x4000U | (a & 0xfffU)),
                        static_cast<uint8_t>(0x80U | ((b >> 56U) & 0x3fU)), static_cast<uint8_t>(b >> 48U),
                        static_cast<uint8_t>(b >> 40U), static_cast<uint8_t>(b >> 32U), static_cast<uint8_t>(b >> 24U),
                        static_cast<uint8_t>(b >> 16U), static_cast<uint8_t>(b >> 8U), static_cast<uint8_t>(b));
                }
                t->gpuCount += gpusPerNode;
                t->nodes.push_back(std::move(node));
            }
            t->racks.push_back(std::move(rack));
        }
    }
    return t;
}

// 2 rows × 2 racks × 2 nodes × 4 GPUs; the last rack's nodes renamed to exercise names found inside.
inline TopologyPtr smallTopology()
{
    auto t = gridTopology(2, 2, 2, 4);
    t->nodes[6].hostname = QStringLiteral("alpha-1");
    t->nodes[7].hostname = QStringLiteral("GPU-Box-Alpha");
    return t;
}

inline JobsPtr smallJobs(uint64_t generation = 7)
{
    auto jobs = std::make_shared<JobList>();
    jobs->topologyGeneration = generation;
    Job llama;
    llama.id = 4711;
    llama.name = QStringLiteral("llama-train");
    llama.owner = QStringLiteral("alice");
    llama.gpus = { 0, 1, 2, 3, 4, 5, 6, 7 };
    Job repro;
    repro.id = 47;
    repro.name = QStringLiteral("4711-repro");
    repro.owner = QStringLiteral("bob");
    repro.gpus = { 8, 9 };
    Job bert;
    bert.id = 815;
    bert.name = QStringLiteral("bert-eval");
    bert.gpus = { 20 };
    bert.endTimeMs = 1000;
    jobs->jobs = { llama, repro, bert };
    jobs->runningJobOfGpu.assign(32, -1);
    return jobs;
}

} // namespace fleetscope::testing
