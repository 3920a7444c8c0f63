// SPDX-License-Identifier: Apache-2.0
#include "model/place.h"

#include <QCoreApplication>

#include <algorithm>
#include <array>
#include <utility>

namespace fleetscope {

namespace {

// The racks of a row, [first, end): racks are in row order, so two binary searches.
std::pair<uint32_t, uint32_t> racksOfRow(const Topology &t, uint32_t row)
{
    const auto lo
        = std::partition_point(t.racks.begin(), t.racks.end(), [row](const Topology::Rack &r) { return r.row < row; });
    const auto hi = std::partition_point(lo, t.racks.end(), [row](const Topology::Rack &r) { return r.row <= row; });
    return { static_cast<uint32_t>(lo - t.racks.begin()), static_cast<uint32_t>(hi - t.racks.begin()) };
}

// The GPUs of nodes [first, end): from the first node's first GPU to the last node's last.
GpuRange gpusOfNodes(const Topology &t, uint32_t first, uint32_t end)
{
    const auto size = static_cast<uint32_t>(t.nodes.size());
    end = std::min(end, size);
    if (first >= end) {
        return { first < size ? t.nodes[first].firstGpu : t.gpuCount, 0 };
    }
    const Topology::Node &last = t.nodes[end - 1];
    const uint32_t firstGpu = t.nodes[first].firstGpu;
    return { firstGpu, last.firstGpu + last.gpuCount - firstGpu };
}

// Nodes [first, end) of the racks [firstRack, endRack).
std::pair<uint32_t, uint32_t> nodesOfRacks(const Topology &t, uint32_t firstRack, uint32_t endRack)
{
    if (firstRack >= endRack) {
        return { 0, 0 };
    }
    const Topology::Rack &last = t.racks[endRack - 1];
    return { t.racks[firstRack].firstNode, last.firstNode + last.nodeCount };
}

QString translate(const char *text)
{
    return QCoreApplication::translate("fleetscope::Place", text);
}

constexpr std::array<Place::Level, 5> allLevels { Place::Level::Fleet, Place::Level::Row, Place::Level::Rack,
    Place::Level::Node, Place::Level::Gpu };

} // namespace

QString levelName(Place::Level level)
{
    switch (level) {
    case Place::Level::Fleet:
        return QStringLiteral("fleet");
    case Place::Level::Row:
        return QStringLiteral("row");
    case Place::Level::Rack:
        return QStringLiteral("rack");
    case Place::Level::Node:
        return QStringLiteral("node");
    case Place::Level::Gpu:
        return QStringLiteral("gpu");
    }
    return {};
}

bool Place::isValid(const Topology &t) const
{
    switch (level) {
    case Level::Fleet:
        return index == 0;
    case Level::Row:
        return index < t.rows.size();
    case Level::Rack:
        return index < t.racks.size();
    case Level::Node:
        return index < t.nodes.size();
    case Level::Gpu:
        return index < t.gpuCount && index < t.nodeOfGpu.size();
    }
    return false;
}

Place Place::parent(const Topology &t) const
{
    switch (level) {
    case Level::Fleet:
    case Level::Row:
        return fleet();
    case Level::Rack:
        return row(t.racks[index].row);
    case Level::Node:
        return rack(t.nodes[index].rack);
    case Level::Gpu:
        return node(t.nodeOfGpu[index]);
    }
    return fleet();
}

std::vector<Place> Place::children(const Topology &t) const
{
    std::vector<Place> out;
    const auto fill = [&out](Level childLevel, uint32_t first, uint32_t end) {
        out.reserve(end > first ? end - first : 0);
        for (uint32_t i = first; i < end; ++i) {
            out.push_back({ childLevel, i });
        }
    };
    switch (level) {
    case Level::Fleet:
        fill(Level::Row, 0, static_cast<uint32_t>(t.rows.size()));
        break;
    case Level::Row: {
        const auto racks = racksOfRow(t, index);
        fill(Level::Rack, racks.first, racks.second);
        break;
    }
    case Level::Rack: {
        const Topology::Rack &r = t.racks[index];
        fill(Level::Node, r.firstNode, r.firstNode + r.nodeCount);
        break;
    }
    case Level::Node: {
        const Topology::Node &n = t.nodes[index];
        fill(Level::Gpu, n.firstGpu, n.firstGpu + n.gpuCount);
        break;
    }
    case Level::Gpu:
        break;
    }
    return out;
}

GpuRange Place::gpuRange(const Topology &t) const
{
    switch (level) {
    case Level::Fleet:
        return { 0, t.gpuCount };
    case Level::Row: {
        const auto racks = racksOfRow(t, index);
        const auto nodes = nodesOfRacks(t, racks.first, racks.second);
        return gpusOfNodes(t, nodes.first, nodes.second);
    }
    case Level::Rack: {
        const Topology::Rack &r = t.racks[index];
        return gpusOfNodes(t, r.firstNode, r.firstNode + r.nodeCount);
    }
    case Level::Node:
        return { t.nodes[index].firstGpu, t.nodes[index].gpuCount };
    case Level::Gpu:
        return { index, 1 };
    }
    return {};
}

QString Place::name(const Topology &t) const
{
    switch (level) {
    case Level::Fleet:
        return QStringLiteral("fleet");
    case Level::Row:
        return t.rows[index].name;
    case Level::Rack:
        return t.racks[index].name;
    case Level::Node:
        return t.nodes[index].hostname;
    case Level::Gpu: {
        const Topology::Node &n = t.nodeOf(index);
        return n.hostname % QStringLiteral(" GPU ") % QString::number(index - n.firstGpu);
    }
    }
    return {};
}

bool Place::isNvlinkDomain(const Topology &t) const
{
    return level == Level::Rack && t.racks[index].nvlinkDomain;
}

QString Place::listText(const Topology &t) const
{
    if (!isNvlinkDomain(t)) {
        return name(t);
    }
    return QStringLiteral("NVLink domain %1 (%L2 GPUs)").arg(name(t)).arg(gpuRange(t).count);
}

QString Place::crumbText(const Topology &t) const
{
    switch (level) {
    case Level::Row: {
        const Topology::Row &r = t.rows[index];
        return r.hall.isEmpty() ? r.name : r.hall % QStringLiteral(" › ") % r.name;
    }
    case Level::Gpu:
        return QStringLiteral("GPU ") % QString::number(index - t.nodeOf(index).firstGpu);
    default:
        return name(t);
    }
}

std::optional<Place> Place::childTowards(const Topology &t, uint32_t gpu) const
{
    if (level == Level::Gpu || !gpuRange(t).contains(gpu)) {
        return std::nullopt;
    }
    return placeOfGpu(t, gpu, static_cast<Level>(static_cast<int>(level) + 1));
}

std::optional<Place> Place::remapped(const Topology &from, const Topology &to) const
{
    const auto find = [](const auto &items, auto &&same) -> std::optional<uint32_t> {
        const auto it = std::find_if(items.begin(), items.end(), same);
        if (it == items.end()) {
            return std::nullopt;
        }
        return static_cast<uint32_t>(it - items.begin());
    };
    switch (level) {
    case Level::Fleet:
        return fleet();
    case Level::Row: {
        const Topology::Row &r = from.rows[index];
        const auto i = find(to.rows, [&r](const Topology::Row &o) { return o.name == r.name && o.hall == r.hall; });
        return i ? std::optional<Place>(row(*i)) : std::nullopt;
    }
    case Level::Rack: {
        const QString &name = from.racks[index].name;
        const auto i = find(to.racks, [&name](const Topology::Rack &o) { return o.name == name; });
        return i ? std::optional<Place>(rack(*i)) : std::nullopt;
    }
    case Level::Node: {
        const QString &name = from.nodes[index].hostname;
        const auto i = find(to.nodes, [&name](const Topology::Node &o) { return o.hostname == name; });
        return i ? std::optional<Place>(node(*i)) : std::nullopt;
    }
    case Level::Gpu: {
        const uint32_t offset = index - from.nodeOf(index).firstGpu;
        const auto n = parent(from).remapped(from, to);
        if (!n || offset >= to.nodes[n->index].gpuCount) {
            return std::nullopt;
        }
        const Place p = gpu(to.nodes[n->index].firstGpu + offset);
        return p.isValid(to) ? std::optional<Place>(p) : std::nullopt;
    }
    }
    return std::nullopt;
}

QString Place::toText() const
{
    if (level == Level::Fleet) {
        return levelName(level);
    }
    return levelName(level) % QLatin1Char(':') % QString::number(index);
}

std::optional<Place> Place::fromText(const QString &text, const Topology &topology, QString *error)
{
    const auto fail = [error](const QString &why) {
        if (error) {
            *error = why;
        }
        return std::nullopt;
    };
    const QString trimmed = text.trimmed();
    if (trimmed == levelName(Level::Fleet)) {
        return fleet();
    }
    const auto colon = trimmed.indexOf(QLatin1Char(':'));
    if (colon < 0) {
        return fail(
            translate("'%1' is not a place: expected fleet, or a level and an index such as rack:37").arg(text));
    }
    const QString levelText = trimmed.left(colon);
    const QString indexText = trimmed.mid(colon + 1);
    const auto level = std::find_if(
        allLevels.begin() + 1, allLevels.end(), [&levelText](Level l) { return levelName(l) == levelText; });
    if (level == allLevels.end()) {
        return fail(translate("'%1' is not a place: unknown level '%2' (expected row, rack, node or gpu)")
                        .arg(text, levelText));
    }
    // Digits only: toUInt alone would take signs and surrounding spaces.
    const bool digitsOnly = !indexText.isEmpty() && indexText.size() <= 10
        && std::all_of(indexText.begin(), indexText.end(), [](QChar c) { return c >= u'0' && c <= u'9'; });
    bool ok = false;
    const uint32_t index = digitsOnly ? indexText.toUInt(&ok) : 0;
    if (!ok) {
        return fail(translate("'%1' is not a place: '%2' is not an index").arg(text, indexText));
    }
    const Place place { *level, index };
    if (!place.isValid(topology)) {
        uint64_t count = 0;
        switch (*level) {
        case Level::Row:
            count = topology.rows.size();
            break;
        case Level::Rack:
            count = topology.racks.size();
            break;
        case Level::Node:
            count = topology.nodes.size();
            break;
        default:
            count = std::min<uint64_t>(topology.gpuCount, topology.nodeOfGpu.size());
            break;
        }
        if (count == 0) {
            return fail(translate("'%1' is not a place: the fleet has no %2 at all").arg(text, levelName(*level)));
        }
        return fail(translate("%1 %2 is out of range: the fleet's %1 indices run from 0 to %3")
                        .arg(levelName(*level), indexText, QString::number(count - 1)));
    }
    return place;
}

Place placeOfGpu(const Topology &t, uint32_t gpu, Place::Level level)
{
    if (gpu >= t.gpuCount || gpu >= t.nodeOfGpu.size()) {
        return Place::fleet();
    }
    const uint32_t node = t.nodeOfGpu[gpu];
    const uint32_t rack = t.nodes[node].rack;
    switch (level) {
    case Place::Level::Fleet:
        return Place::fleet();
    case Place::Level::Row:
        return Place::row(t.racks[rack].row);
    case Place::Level::Rack:
        return Place::rack(rack);
    case Place::Level::Node:
        return Place::node(node);
    case Place::Level::Gpu:
        return Place::gpu(gpu);
    }
    return Place::fleet();
}

std::optional<Place> nvlinkDomainOf(const Topology &t, uint32_t gpu)
{
    if (gpu >= t.gpuCount || gpu >= t.nodeOfGpu.size()) {
        return std::nullopt;
    }
    const Place rack = placeOfGpu(t, gpu, Place::Level::Rack);
    return rack.isNvlinkDomain(t) ? std::optional(rack) : std::nullopt;
}

std::vector<Place> pathTo(const Topology &topology, Place place)
{
    std::vector<Place> path { place };
    while (path.back().level != Place::Level::Fleet) {
        path.push_back(path.back().parent(topology));
    }
    std::reverse(path.begin(), path.end());
    return path;
}

} // namespace fleetscope
