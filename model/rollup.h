// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/place.h"

#include <cstddef>
#include <limits>
#include <vector>

namespace fleetscope {

// Above this many values in one child, its p99 comes from an evenly strided sample of at most this many (the stride
// odd, as in robustRange, so that the sample does not keep hitting the same GPU of every 8-GPU node).
inline constexpr std::size_t rollupExactQuantileLimit = 65536;

// One child of a place summed up: "which rack in this row" without hovering every pixel.
struct Rollup
{
    Place place;
    uint32_t gpuCount = 0;
    uint32_t valueCount = 0; // GPUs with a finite value; NaN (and infinities) are left out of mean, max and p99
    uint32_t unhealthy = 0; // health state warning, critical or offline (not "no data")
    float mean = std::numeric_limits<float>::quiet_NaN(); // NaN when valueCount is 0
    float max = std::numeric_limits<float>::quiet_NaN();
    float p99 = std::numeric_limits<float>::quiet_NaN(); // value at rank round(0.99 * (n - 1)) of the sorted values
    bool p99Sampled = false; // from the strided sample
};

// Rollups of the place's children, in the children's order. values and health are a frame's dense per-GPU arrays;
// either may be null, and an array whose size is not topology.gpuCount is treated as absent (a frame of another
// generation) rather than read out of bounds.
//
// Cost: one pass over each child's contiguous GPU range, plus an nth_element over a reused copy of its finite
// values, so linear in the place's GPU count: the fleet's 100 rows of 1,024,000 GPUs took 16 ms (dev preset,
// tst_navigation's rollupsOfAMillionGpus prints the figure).
std::vector<Rollup> computeRollups(const Topology &topology, Place place, const float *values, std::size_t valuesSize,
    const uint8_t *health, std::size_t healthSize);

// The same for one metric of a frame; a frame of another generation or without the metric gives counts only.
std::vector<Rollup> computeRollups(const Topology &topology, Place place, const Frame *frame, const QString &metricId);

} // namespace fleetscope
