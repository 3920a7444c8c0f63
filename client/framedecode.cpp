// SPDX-License-Identifier: Apache-2.0
#include "client/framedecode.h"

#include "client/answerdecode.h" // maxCatalogueMetrics: a default set is no bigger than a catalogue
#include "client/wiretext.h"

#include "model/viewstate.h"

#include <QString>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace fleetscope {

namespace {
QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}
} // namespace

FrameAssembler::FrameAssembler(TopologyPtr topology, std::vector<std::string> subscribed)
    : m_topology(std::move(topology))
{
    // The backend answers a metric named twice once (TelemetryService::resolveMetrics).
    for (auto &id : subscribed) {
        if (std::find(m_subscribed.begin(), m_subscribed.end(), id) == m_subscribed.end()) {
            m_subscribed.push_back(std::move(id));
        }
    }
}

void FrameAssembler::reset()
{
    m_building.reset();
    m_planeIds.clear();
    m_nextPart = 0;
    m_partCount = 0;
    m_covered = 0;
}

QString FrameAssembler::checkPlanes(const pb::FramePart &part) const
{
    const int planes = part.planes_size();
    if (m_building) {
        // The frame's other parts: the planes of its first, in the same order.
        if (static_cast<size_t>(planes) != m_planeIds.size()) {
            return QStringLiteral("frame %1: a part of %2 planes in a frame of %3")
                .arg(part.sequence())
                .arg(planes)
                .arg(m_planeIds.size());
        }
        for (int i = 0; i < planes; ++i) {
            if (part.planes(i).metric_id() != m_planeIds[static_cast<size_t>(i)]) {
                return QStringLiteral("frame %1: plane %2 changed between parts").arg(part.sequence()).arg(i);
            }
        }
        return {};
    }
    if (!m_subscribed.empty()) {
        // Exactly the subscription: as many planes, each one of it (so each once).
        if (static_cast<size_t>(planes) != m_subscribed.size()) {
            return QStringLiteral("frame %1 carries %2 planes, the subscription %3")
                .arg(part.sequence())
                .arg(planes)
                .arg(m_subscribed.size());
        }
        std::vector<bool> seen(m_subscribed.size(), false);
        for (int i = 0; i < planes; ++i) {
            const std::string &id = part.planes(i).metric_id();
            const auto at = std::find(m_subscribed.begin(), m_subscribed.end(), id);
            const auto k = static_cast<size_t>(at - m_subscribed.begin());
            if (at == m_subscribed.end() || seen[k]) {
                return QStringLiteral("frame %1: plane %2 (%3) was not subscribed to, or comes twice")
                    .arg(part.sequence())
                    .arg(i)
                    .arg(quotedWireText(id));
            }
            seen[k] = true;
        }
        return {};
    }
    // The default set: metric ids a view can carry, each once, no more than a catalogue lists.
    if (planes > maxCatalogueMetrics) {
        return QStringLiteral("frame %1 carries %2 planes, more than the %3 a catalogue may list")
            .arg(part.sequence())
            .arg(planes)
            .arg(maxCatalogueMetrics);
    }
    for (int i = 0; i < planes; ++i) {
        const std::string &id = part.planes(i).metric_id();
        const bool identifier = id.size() <= static_cast<size_t>(ViewState::maxIdLength)
            && ViewState::isIdentifier(QString::fromStdString(id));
        bool repeated = false;
        for (int k = 0; k < i && !repeated; ++k) {
            repeated = part.planes(k).metric_id() == id;
        }
        if (!identifier || repeated) {
            return QStringLiteral("frame %1: plane %2 (%3) is no metric id, or comes twice")
                .arg(part.sequence())
                .arg(i)
                .arg(quotedWireText(id));
        }
    }
    return {};
}

QString FrameAssembler::check(const pb::FramePart &part) const
{
    const uint32_t n = m_topology->gpuCount;
    if (part.fleet_gpu_count() != n) {
        return QStringLiteral("frame %1 is for %2 GPUs, the topology has %3")
            .arg(part.sequence())
            .arg(part.fleet_gpu_count())
            .arg(n);
    }
    if (part.topology_generation() != m_topology->generation) {
        return QStringLiteral("frame %1 is for topology generation %2, ours is %3")
            .arg(part.sequence())
            .arg(part.topology_generation())
            .arg(m_topology->generation);
    }
    // Each part covers at least one GPU, so a frame has at most n parts; all of them say the same count.
    if (part.part_index() != m_nextPart || part.part_index() >= part.part_count() || part.part_count() > n
        || (m_building && part.part_count() != m_partCount) || part.first_gpu() != m_covered || part.gpu_count() == 0
        || part.gpu_count() > n - m_covered) {
        return QStringLiteral("frame %1: part %2 of %3 (GPUs %4+%5) is out of order or covers no GPU")
            .arg(part.sequence())
            .arg(part.part_index())
            .arg(part.part_count())
            .arg(part.first_gpu())
            .arg(part.gpu_count());
    }
    if (m_building && part.sequence() != m_building->sequence) {
        return QStringLiteral("frame %1: a part of frame %2 is mixed in")
            .arg(m_building->sequence)
            .arg(part.sequence());
    }
    if (QString planes = checkPlanes(part); !planes.isEmpty()) {
        return planes;
    }
    if (part.health().size() != part.gpu_count()) {
        return QStringLiteral("frame %1: %2 health bytes for %3 GPUs")
            .arg(part.sequence())
            .arg(part.health().size())
            .arg(part.gpu_count());
    }
    for (int i = 0; i < part.planes_size(); ++i) {
        const auto &plane = part.planes(i);
        size_t width = 0;
        switch (plane.encoding()) {
        case pb::PLANE_ENCODING_FLOAT32:
            width = 4;
            break;
        case pb::PLANE_ENCODING_UINT16:
            width = 2;
            break;
        default:
            return QStringLiteral("frame %1: plane %2 has unknown encoding %3")
                .arg(part.sequence())
                .arg(quotedWireText(plane.metric_id()))
                .arg(plane.encoding());
        }
        if (plane.values().size() != width * part.gpu_count()) {
            return QStringLiteral("frame %1: plane %2 has %3 values, expected %4")
                .arg(part.sequence())
                .arg(quotedWireText(plane.metric_id()))
                .arg(plane.values().size() / width)
                .arg(part.gpu_count());
        }
    }
    return {};
}

namespace {
// Room for `size` elements, allocated as they arrive: at least twice what was there (a frame of k parts reallocates
// about log2(k) times), never more than the fleet.
template <typename T> void growTo(std::vector<T> &v, size_t size, size_t fleet)
{
    if (size > v.capacity()) {
        v.reserve(std::min(fleet, std::max(size, 2 * v.capacity())));
    }
    v.resize(size);
}
} // namespace

FrameAssembler::Result FrameAssembler::add(const pb::FramePart &part)
{
    if (part.part_index() == 0) {
        // A new frame starts; whatever was half built is abandoned (the server moved on).
        reset();
    }
    Result result;
    result.error = check(part);
    if (!result.error.isEmpty()) {
        reset();
        return result;
    }
    const uint32_t n = m_topology->gpuCount;
    const uint32_t first = part.first_gpu();
    const uint32_t count = part.gpu_count();
    if (!m_building) {
        m_building = std::make_shared<Frame>();
        m_building->sequence = part.sequence();
        m_building->sampleTimeMs = part.sample_time_ms();
        m_building->topologyGeneration = part.topology_generation();
        m_partCount = part.part_count();
        // The planes, checked above, are few: the whole fleet's room at once, unless that is more than
        // maxPlaneValuesUpFront (a default set of many metrics at a large fleet), which grows as values come.
        const bool upFront = uint64_t { n } * static_cast<uint64_t>(part.planes_size()) <= maxPlaneValuesUpFront;
        m_building->health.reserve(n);
        m_building->planes.resize(static_cast<size_t>(part.planes_size()));
        m_planeIds.reserve(static_cast<size_t>(part.planes_size()));
        for (int i = 0; i < part.planes_size(); ++i) {
            m_planeIds.push_back(part.planes(i).metric_id());
            m_building->planes[i].metricId = qs(part.planes(i).metric_id());
            m_building->planes[i].values.reserve(upFront ? n : count);
        }
    }
    for (int i = 0; i < part.planes_size(); ++i) {
        const auto &plane = part.planes(i);
        auto &values = m_building->planes[i].values;
        growTo(values, size_t { first } + count, n);
        float *out = values.data() + first;
        const char *bytes = plane.values().data();
        if (plane.encoding() == pb::PLANE_ENCODING_FLOAT32) {
            std::memcpy(out, bytes, count * sizeof(float));
        } else {
            const float scale = plane.scale();
            const float offset = plane.offset();
            for (uint32_t g = 0; g < count; ++g) {
                uint16_t raw = 0;
                std::memcpy(&raw, bytes + 2 * g, 2);
                out[g] = raw == 0xFFFF ? std::numeric_limits<float>::quiet_NaN() : raw * scale + offset;
            }
        }
    }
    growTo(m_building->health, size_t { first } + count, n);
    std::memcpy(m_building->health.data() + first, part.health().data(), count);
    m_covered += count;
    ++m_nextPart;
    if (m_nextPart == m_partCount) {
        if (m_covered != n) {
            result.error
                = QStringLiteral("frame %1 ended after %2 of %3 GPUs").arg(part.sequence()).arg(m_covered).arg(n);
        } else {
            result.frame = std::move(m_building);
        }
        reset();
    }
    return result;
}

} // namespace fleetscope
