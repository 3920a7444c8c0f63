// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QString>

#include <limits>

namespace fleetscope {

// The row whose metric has the highest 99th percentile: a row with a few hot GPUs outranks one evenly warm, which is
// what an operator walking to the floor wants to see (the wall's "hottest row" page).
struct HottestRow
{
    int row = -1; // index into Topology::rows; -1: none (no frame of this fleet, or no value of the metric)
    float p99 = std::numeric_limits<float>::quiet_NaN();
};

// Over the rows' rollups (model/rollup.h: the percentile sampled past a size); the first row wins a tie.
HottestRow hottestRow(const Topology &topology, const Frame *frame, const QString &metricId);

} // namespace fleetscope
