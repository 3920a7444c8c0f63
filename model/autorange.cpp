// SPDX-License-Identifier: Apache-2.0
#include "model/autorange.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fleetscope {

ValueRange robustRange(
    const float *values, std::size_t count, double lowQuantile, double highQuantile, bool symmetricAroundZero)
{
    // A stride of about n / robustRangeSampleSize spreads the sample over the whole fleet, so a hot row or rack
    // contributes in proportion to its size. The stride is odd: fleets repeat in powers of two (8 GPUs a node, 2 or 4
    // nodes a rack), and an even stride would sample the same GPU of every node and miss the others.
    std::size_t stride = (count + robustRangeSampleSize - 1) / robustRangeSampleSize;
    if (stride > 1 && stride % 2 == 0) {
        ++stride;
    }
    stride = std::max<std::size_t>(1, stride);
    std::vector<float> sample;
    sample.reserve(count / stride + 1);
    for (std::size_t i = 0; i < count; i += stride) {
        if (std::isfinite(values[i])) {
            sample.push_back(values[i]);
        }
    }
    if (sample.empty()) {
        return {};
    }

    lowQuantile = std::clamp(lowQuantile, 0.0, 1.0);
    highQuantile = std::clamp(highQuantile, lowQuantile, 1.0);
    const auto rank = [&](double q) {
        return static_cast<std::ptrdiff_t>(std::floor(q * static_cast<double>(sample.size() - 1) + 0.5));
    };
    const auto lowRank = rank(lowQuantile);
    const auto highRank = rank(highQuantile);
    // After the first nth_element everything above lowRank is no smaller, so the second only searches that part.
    std::nth_element(sample.begin(), sample.begin() + lowRank, sample.end());
    const float lo = sample[static_cast<std::size_t>(lowRank)];
    std::nth_element(sample.begin() + lowRank, sample.begin() + highRank, sample.end());
    const float hi = sample[static_cast<std::size_t>(highRank)];

    ValueRange range { lo, hi, true };
    if (symmetricAroundZero) {
        const float m = std::max(std::abs(lo), std::abs(hi));
        range = { -m, m, true };
    }
    if (!(range.max > range.min)) {
        // All values (or all but outliers) equal: a range of ±0.5, or ±1% of a large value, centred on it, so the
        // map draws the value in its middle colour rather than dividing by zero.
        const float centre = range.min;
        const float half = std::max(0.5F, std::abs(centre) * 0.01F);
        range = { centre - half, centre + half, true };
    }
    return range;
}

} // namespace fleetscope
