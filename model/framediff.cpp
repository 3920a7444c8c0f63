// SPDX-License-Identifier: Apache-2.0
#include "model/framediff.h"

#include <cmath>
#include <limits>

namespace fleetscope {

QString differenceId(const QString &metricId)
{
    return metricId + QStringLiteral(":diff");
}

FramePtr difference(const Frame &newer, const Frame &older, const QString &metricId, QString *error)
{
    const auto fail = [error](const QString &why) {
        if (error) {
            *error = why;
        }
        return FramePtr();
    };
    if (newer.topologyGeneration != older.topologyGeneration) {
        return fail(QStringLiteral("the frames belong to different topology generations (%1 and %2)")
                        .arg(newer.topologyGeneration)
                        .arg(older.topologyGeneration));
    }
    if (newer.health.size() != older.health.size()) {
        return fail(QStringLiteral("the frames have different GPU counts (%1 and %2)")
                        .arg(newer.health.size())
                        .arg(older.health.size()));
    }
    const MetricPlane *a = newer.plane(metricId);
    const MetricPlane *b = older.plane(metricId);
    if (!a || !b) {
        return fail(QStringLiteral("%1 is not in both frames").arg(metricId));
    }
    // The recorder only holds planes of health.size() values, but a frame may come from elsewhere.
    if (a->values.size() != newer.health.size() || b->values.size() != older.health.size()) {
        return fail(QStringLiteral("the %1 planes are not one value per GPU").arg(metricId));
    }

    auto out = std::make_shared<Frame>();
    out->sequence = newer.sequence;
    out->sampleTimeMs = newer.sampleTimeMs;
    out->topologyGeneration = newer.topologyGeneration;
    out->health = newer.health;
    MetricPlane plane;
    plane.metricId = differenceId(metricId);
    plane.values.resize(a->values.size());
    constexpr float nan = std::numeric_limits<float>::quiet_NaN();
    for (size_t i = 0; i < a->values.size(); ++i) {
        const float x = a->values[i];
        const float y = b->values[i];
        // Explicit, not left to IEEE arithmetic: inf - inf would also give NaN, but a NaN payload must not leak.
        plane.values[i] = (std::isnan(x) || std::isnan(y)) ? nan : x - y;
    }
    out->planes.push_back(std::move(plane));
    if (error) {
        error->clear();
    }
    return out;
}

MetricInfo differenceMetric(const MetricInfo &base, float span)
{
    MetricInfo info;
    info.id = differenceId(base.id);
    info.name = base.name + QStringLiteral(" change A→B");
    info.unit = base.unit;
    info.dcgmField = base.dcgmField; // where the values it derives from come from
    info.colourMap = QStringLiteral("coolwarm");
    const float reach = span > 0 && std::isfinite(span) ? span : std::abs(base.rangeMax - base.rangeMin) / 16.0F;
    info.rangeMin = -reach;
    info.rangeMax = reach;
    info.isRate = false; // a change between two moments, not per unit of time
    return info;
}

} // namespace fleetscope
