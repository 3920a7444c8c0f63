// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QMetaType>
#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

namespace fleetscope {

struct GpuRange
{
    uint32_t first = 0;
    uint32_t count = 0;

    uint32_t end() const { return first + count; }
    bool contains(uint32_t gpu) const { return gpu >= first && gpu < end(); }
};

// A place in the fleet to drill down to: the fleet, a row, a rack, a node or one GPU, by its index in a topology.
// A plain value: it means something only together with the topology it came from, and every helper that takes a
// topology expects the place to be valid in it (isValid). Halls are not a level of their own: a row names its hall.
//
// Rows, racks and nodes are contiguous dense GPU ranges in hierarchical order (DESIGN.md), so the racks of a row are
// found by binary search and every range is computed from the first and last child, never by walking GPUs.
struct Place
{
    enum class Level : uint8_t { Fleet, Row, Rack, Node, Gpu };

    Level level = Level::Fleet;
    uint32_t index = 0; // into rows, racks, nodes or dense GPU indices; 0 for the fleet

    static Place fleet() { return {}; }
    static Place row(uint32_t i) { return { Level::Row, i }; }
    static Place rack(uint32_t i) { return { Level::Rack, i }; }
    static Place node(uint32_t i) { return { Level::Node, i }; }
    static Place gpu(uint32_t i) { return { Level::Gpu, i }; }

    bool isValid(const Topology &topology) const;
    // The place one level up; the fleet is its own parent.
    Place parent(const Topology &topology) const;
    // fleet -> rows, row -> its racks, rack -> its nodes, node -> its GPUs, GPU -> none.
    std::vector<Place> children(const Topology &topology) const;
    GpuRange gpuRange(const Topology &topology) const;
    // "fleet", "r07", "r07-k12", the hostname, "r07-k12-n03 GPU 5".
    QString name(const Topology &topology) const;
    // What a list of places shows (the rollup table, a dock's title): the name, and for a rack whose GPUs are one
    // NVLink domain (an NVL72 rack) that it is one: "NVLink domain r03-k05 (72 GPUs)".
    QString listText(const Topology &topology) const;
    // A rack whose GPUs are one NVLink domain.
    bool isNvlinkDomain(const Topology &topology) const;
    // What a breadcrumb shows: like name, but a row also names its hall ("hall-a › r07") and a GPU only its number
    // on the node ("GPU 5"), since the node's crumb stands before it.
    QString crumbText(const Topology &topology) const;
    // The child of this place whose range holds the GPU: where a click on the map goes one level down. Empty for a
    // GPU place or a GPU outside this place.
    std::optional<Place> childTowards(const Topology &topology, uint32_t gpu) const;
    // The same row (by name and hall), rack (name), node (hostname) or GPU (hostname and number on the node) in
    // another generation of the topology, or empty when it is gone. The fleet always maps.
    std::optional<Place> remapped(const Topology &from, const Topology &to) const;

    // Compact text for view strings: "fleet", "row:7", "rack:37", "node:120", "gpu:1234". Indices, so a view string
    // names the same place only within one topology generation.
    QString toText() const;
    // Parses toText's form and checks it against the topology; on failure returns empty and says why in *error.
    static std::optional<Place> fromText(const QString &text, const Topology &topology, QString *error = nullptr);

    friend bool operator==(const Place &a, const Place &b) { return a.level == b.level && a.index == b.index; }
    friend bool operator!=(const Place &a, const Place &b) { return !(a == b); }
};

QString levelName(Place::Level level);

// The row, rack, node or GPU (or the fleet) that holds a GPU. The GPU must be below topology.gpuCount; an index out
// of range gives the fleet.
Place placeOfGpu(const Topology &topology, uint32_t gpu, Place::Level level);

// The NVLink domain a GPU belongs to, where its rack is one; empty where NVLink ends at the node (HGX) or the GPU is
// out of range.
std::optional<Place> nvlinkDomainOf(const Topology &topology, uint32_t gpu);

// The fleet, then each place down to and including this one: the breadcrumb path.
std::vector<Place> pathTo(const Topology &topology, Place place);

} // namespace fleetscope

Q_DECLARE_METATYPE(fleetscope::Place)
