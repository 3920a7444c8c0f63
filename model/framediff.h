// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QString>

namespace fleetscope {

// Compare mode: the per-GPU change of one metric between two recorded frames, shown with a diverging colour map.

// "<id>:diff"
QString differenceId(const QString &metricId);

// A frame with one plane, differenceId(metricId), of newer - older per GPU (NaN where either is NaN), and the newer
// frame's sequence, sample time, topology generation and health bytes. Null, with *error saying why when error is
// given, when the frames differ in topology generation or GPU count, or when either lacks the metric's plane.
FramePtr difference(const Frame &newer, const Frame &older, const QString &metricId, QString *error = nullptr);

// The description of such a plane: "<name> change A→B" in the base unit, the coolwarm map, a range of ±span
// (±a sixteenth of the base range, as the rate mode, where span is not a positive number).
MetricInfo differenceMetric(const MetricInfo &base, float span);

} // namespace fleetscope
