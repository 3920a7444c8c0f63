// SPDX-License-Identifier: Apache-2.0
#pragma once
// What tst_navigation and tst_rollups share: a synthetic, irregular topology (and one of NVL72 racks), a frame over it,
// the places of a topology and what a place's rollup must be, derived by the tests on their own.
#include "model/navigation.h"
#include "model/place.h"
#include "model/rollup.h"

#include <QAbstractItemModel>
#include <QStringList>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <vector>

namespace fleetscope {
// QCOMPARE prints places as their text.
inline char *toString(const Place &place)
{
    return qstrdup(qPrintable(place.toText()));
}

namespace testing {

inline constexpr float nan = std::numeric_limits<float>::quiet_NaN();

// rows x racksPerRow racks, named as the simulator names them (r02, r02-k03, r02-k03-n01). Not regular, so that
// ranges computed from the wrong rack or node show up: rack k has 1 + k % 3 nodes, and every third node has 4 GPUs
// instead of 8. Rows 0 and 1 are in hall-a, the rest in hall-b.
inline std::shared_ptr<Topology> fleet(uint32_t rowCount, uint32_t racksPerRow, uint32_t gpusPerNode = 8)
{
    auto t = std::make_shared<Topology>();
    t->generation = 1;
    uint32_t gpu = 0;
    for (uint32_t r = 0; r < rowCount; ++r) {
        const QString row = QStringLiteral("r%1").arg(r + 1, 2, 10, QLatin1Char('0'));
        t->rows.push_back({ row, r < 2 ? QStringLiteral("hall-a") : QStringLiteral("hall-b") });
        for (uint32_t p = 0; p < racksPerRow; ++p) {
            const auto k = static_cast<uint32_t>(t->racks.size());
            const QString rack = row % QStringLiteral("-k") % QStringLiteral("%1").arg(p + 1, 2, 10, QLatin1Char('0'));
            const uint32_t nodeCount = 1 + k % 3;
            t->racks.push_back({ rack, r, p, static_cast<uint32_t>(t->nodes.size()), nodeCount });
            for (uint32_t n = 0; n < nodeCount; ++n) {
                const auto nodeIndex = static_cast<uint32_t>(t->nodes.size());
                const uint32_t gpus = nodeIndex % 3 == 2 ? gpusPerNode / 2 : gpusPerNode;
                t->nodes.push_back(
                    { rack % QStringLiteral("-n") % QStringLiteral("%1").arg(n + 1, 2, 10, QLatin1Char('0')),
                        QStringLiteral("H100"), QStringLiteral("550"), QStringLiteral("96.00"), k, gpu, gpus });
                for (uint32_t g = 0; g < gpus; ++g) {
                    t->nodeOfGpu.push_back(nodeIndex);
                }
                gpu += gpus;
            }
        }
    }
    t->gpuCount = gpu;
    return t;
}

// The next generation of t: a row r00 with one rack of one 8-GPU node in front, so every index moves by one (GPUs
// by 8) while every name stays.
inline std::shared_ptr<Topology> withRowInFront(const Topology &t)
{
    auto n = std::make_shared<Topology>();
    n->generation = t.generation + 1;
    n->gpuCount = t.gpuCount + 8;
    n->rows.push_back({ QStringLiteral("r00"), QStringLiteral("hall-a") });
    n->racks.push_back({ QStringLiteral("r00-k01"), 0, 0, 0, 1 });
    n->nodes.push_back({ QStringLiteral("r00-k01-n01"), QStringLiteral("H100"), QString(), QString(), 0, 0, 8 });
    n->nodeOfGpu.assign(8, 0);
    n->rows.insert(n->rows.end(), t.rows.begin(), t.rows.end());
    for (Topology::Rack rack : t.racks) {
        ++rack.row;
        ++rack.firstNode;
        n->racks.push_back(rack);
    }
    for (Topology::Node node : t.nodes) {
        ++node.rack;
        node.firstGpu += 8;
        n->nodes.push_back(node);
    }
    for (uint32_t node : t.nodeOfGpu) {
        n->nodeOfGpu.push_back(node + 1);
    }
    return n;
}

// Straight from the arrays, not through Place: which row, rack and node a GPU is in.
inline uint32_t nodeOf(const Topology &t, uint32_t gpu)
{
    return t.nodeOfGpu[gpu];
}
inline uint32_t rackOf(const Topology &t, uint32_t gpu)
{
    return t.nodes[nodeOf(t, gpu)].rack;
}
inline uint32_t rowOf(const Topology &t, uint32_t gpu)
{
    return t.racks[rackOf(t, gpu)].row;
}

// Every place in the topology, each level in index order.
inline std::vector<Place> allPlaces(const Topology &t)
{
    std::vector<Place> all { Place::fleet() };
    for (uint32_t i = 0; i < t.rows.size(); ++i) {
        all.push_back(Place::row(i));
    }
    for (uint32_t i = 0; i < t.racks.size(); ++i) {
        all.push_back(Place::rack(i));
    }
    for (uint32_t i = 0; i < t.nodes.size(); ++i) {
        all.push_back(Place::node(i));
    }
    for (uint32_t i = 0; i < t.gpuCount; ++i) {
        all.push_back(Place::gpu(i));
    }
    return all;
}

// Whether the GPU belongs to the place, by the raw arrays.
inline bool holds(const Topology &t, Place p, uint32_t gpu)
{
    switch (p.level) {
    case Place::Level::Fleet:
        return true;
    case Place::Level::Row:
        return rowOf(t, gpu) == p.index;
    case Place::Level::Rack:
        return rackOf(t, gpu) == p.index;
    case Place::Level::Node:
        return nodeOf(t, gpu) == p.index;
    case Place::Level::Gpu:
        return gpu == p.index;
    }
    return false;
}

// A frame with a value per GPU that has nothing to do with the layout, a NaN every 7th GPU and a health state that
// cycles through all five.
inline std::shared_ptr<Frame> frameFor(const Topology &t)
{
    auto f = std::make_shared<Frame>();
    f->topologyGeneration = t.generation;
    MetricPlane plane;
    plane.metricId = QStringLiteral("gpu_temp");
    plane.values.resize(t.gpuCount);
    f->health.resize(t.gpuCount);
    for (uint32_t g = 0; g < t.gpuCount; ++g) {
        plane.values[g] = g % 7 == 3 ? nan : static_cast<float>((g * 37U) % 101) + 0.25F;
        f->health[g] = static_cast<uint8_t>((g % 5) | (g % 11 == 0 ? health::throttledFlag : 0));
    }
    f->planes.push_back(std::move(plane));
    return f;
}

struct Expected
{
    uint32_t gpus = 0;
    uint32_t values = 0;
    uint32_t unhealthy = 0;
    double mean = 0;
    float max = nan;
    float p99 = nan;
};

// The rollup of one place, derived by walking every GPU of the fleet and sorting.
inline Expected expectedRollup(const Topology &t, const Frame &f, Place p)
{
    Expected e;
    std::vector<float> values;
    double sum = 0;
    for (uint32_t g = 0; g < t.gpuCount; ++g) {
        if (!holds(t, p, g)) {
            continue;
        }
        ++e.gpus;
        const uint8_t state = f.health[g] & 7;
        e.unhealthy += state >= 1 && state <= 3 ? 1 : 0;
        const float v = f.planes[0].values[g];
        if (!std::isnan(v)) {
            values.push_back(v);
            sum += v;
        }
    }
    e.values = static_cast<uint32_t>(values.size());
    if (!values.empty()) {
        std::sort(values.begin(), values.end());
        e.mean = sum / static_cast<double>(values.size());
        e.max = values.back();
        e.p99 = values[static_cast<std::size_t>(std::lround(0.99 * static_cast<double>(values.size() - 1)))];
    }
    return e;
}

inline MetricInfo temperature()
{
    MetricInfo m;
    m.id = QStringLiteral("gpu_temp");
    m.name = QStringLiteral("GPU temperature");
    m.unit = QStringLiteral("°C");
    return m;
}

inline QStringList crumbTexts(const QAbstractItemModel &model)
{
    QStringList texts;
    for (int row = 0; row < model.rowCount(); ++row) {
        texts << model.index(row, 0).data().toString();
    }
    return texts;
}

// One row: two NVL72 racks (18 trays of 4 GPUs, each rack an NVLink domain) and an HGX rack of two 8-GPU nodes,
// named as the simulator names them.
inline std::shared_ptr<Topology> nvl72Fleet()
{
    auto t = std::make_shared<Topology>();
    t->generation = 1;
    t->rows.push_back({ QStringLiteral("r01"), QStringLiteral("hall-a") });
    const auto addRack = [&t](const QString &name, uint32_t nodes, uint32_t gpusPerNode, bool nvlinkDomain) {
        const auto k = static_cast<uint32_t>(t->racks.size());
        t->racks.push_back({ name, 0, k, static_cast<uint32_t>(t->nodes.size()), nodes, nvlinkDomain });
        for (uint32_t n = 0; n < nodes; ++n) {
            const auto nodeIndex = static_cast<uint32_t>(t->nodes.size());
            t->nodes.push_back({ name % (nvlinkDomain ? QStringLiteral("-t") : QStringLiteral("-n"))
                    % QStringLiteral("%1").arg(n + 1, 2, 10, QLatin1Char('0')),
                QStringLiteral("NVIDIA GB200"), QString(), QString(), k, t->gpuCount, gpusPerNode });
            t->nodeOfGpu.insert(t->nodeOfGpu.end(), gpusPerNode, nodeIndex);
            t->gpuCount += gpusPerNode;
        }
    };
    addRack(QStringLiteral("r01-k01"), 18, 4, true);
    addRack(QStringLiteral("r01-k02"), 18, 4, true);
    addRack(QStringLiteral("r01-k03"), 2, 8, false);
    return t;
}
} // namespace testing
} // namespace fleetscope
