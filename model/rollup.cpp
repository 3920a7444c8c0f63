// SPDX-License-Identifier: Apache-2.0
#include "model/rollup.h"

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {

bool isUnhealthy(uint8_t byte)
{
    const health::State s = health::stateOf(byte);
    return s == health::Warning || s == health::Critical || s == health::Offline;
}

void rollUpValues(Rollup &r, const float *values, GpuRange range, std::vector<float> &scratch)
{
    double sum = 0;
    float max = -std::numeric_limits<float>::infinity();
    uint32_t count = 0;
    const float *begin = values + range.first;
    const float *end = begin + range.count;
    for (const float *v = begin; v != end; ++v) {
        if (std::isfinite(*v)) {
            sum += *v;
            max = std::max(max, *v);
            ++count;
        }
    }
    r.valueCount = count;
    if (count == 0) {
        return;
    }
    r.mean = static_cast<float>(sum / count);
    r.max = max;

    std::size_t stride = (range.count + rollupExactQuantileLimit - 1) / rollupExactQuantileLimit;
    if (stride > 1 && stride % 2 == 0) {
        ++stride;
    }
    stride = std::max<std::size_t>(1, stride);
    r.p99Sampled = stride > 1;
    scratch.clear();
    for (std::size_t i = 0; i < range.count; i += stride) {
        if (std::isfinite(begin[i])) {
            scratch.push_back(begin[i]);
        }
    }
    if (scratch.empty()) {
        // The sample found only gaps; the largest value is the best bound at hand.
        r.p99 = max;
        return;
    }
    const auto rank = static_cast<std::ptrdiff_t>(std::floor(0.99 * static_cast<double>(scratch.size() - 1) + 0.5));
    std::nth_element(scratch.begin(), scratch.begin() + rank, scratch.end());
    r.p99 = scratch[static_cast<std::size_t>(rank)];
}

} // namespace

std::vector<Rollup> computeRollups(const Topology &topology, Place place, const float *values, std::size_t valuesSize,
    const uint8_t *health, std::size_t healthSize)
{
    if (!place.isValid(topology)) {
        return {};
    }
    if (valuesSize != topology.gpuCount) {
        values = nullptr;
    }
    if (healthSize != topology.gpuCount) {
        health = nullptr;
    }
    std::vector<Rollup> out;
    const std::vector<Place> children = place.children(topology);
    out.reserve(children.size());
    std::vector<float> scratch;
    for (const Place &child : children) {
        Rollup r;
        r.place = child;
        const GpuRange range = child.gpuRange(topology);
        if (range.end() > topology.gpuCount || range.end() < range.first) {
            out.push_back(r); // a topology that contradicts itself: nothing to read safely
            continue;
        }
        r.gpuCount = range.count;
        if (values) {
            rollUpValues(r, values, range, scratch);
        }
        if (health) {
            r.unhealthy = static_cast<uint32_t>(
                std::count_if(health + range.first, health + range.end(), [](uint8_t b) { return isUnhealthy(b); }));
        }
        out.push_back(r);
    }
    return out;
}

std::vector<Rollup> computeRollups(const Topology &topology, Place place, const Frame *frame, const QString &metricId)
{
    if (!frame || frame->topologyGeneration != topology.generation) {
        return computeRollups(topology, place, nullptr, 0, nullptr, 0);
    }
    const MetricPlane *plane = frame->plane(metricId);
    return computeRollups(topology, place, plane ? plane->values.data() : nullptr, plane ? plane->values.size() : 0,
        frame->health.data(), frame->health.size());
}

} // namespace fleetscope
