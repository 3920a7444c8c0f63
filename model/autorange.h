// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <vector>

namespace fleetscope {

inline constexpr std::size_t robustRangeSampleSize = 65536;

struct ValueRange
{
    float min = 0;
    float max = 1;
    bool valid = false;
};

// A colour range that a few outliers cannot stretch: from the lowQuantile to the highQuantile of the finite values
// (NaN and infinities are skipped). Invalid when there is no finite value. A zero-width range (all values equal) is
// widened to a drawable one around the value. With symmetricAroundZero the range is [-m, m], m = max(|lo|, |hi|),
// so that zero falls on a diverging map's centre.
//
// Cost: above robustRangeSampleSize values the quantiles come from an evenly strided sample of at most that many (the
// stride odd, see robustRange), so a frame of a million GPUs costs a strided pass and an nth_element over fewer than
// 65,536 floats: well under 10 ms, about 1 ms.
ValueRange robustRange(const float *values, std::size_t count, double lowQuantile = 0.01, double highQuantile = 0.99,
    bool symmetricAroundZero = false);

// The project is C++17, so no std::span: a plane's values come as a vector.
inline ValueRange robustRange(const std::vector<float> &values, double lowQuantile = 0.01, double highQuantile = 0.99,
    bool symmetricAroundZero = false)
{
    return robustRange(values.data(), values.size(), lowQuantile, highQuantile, symmetricAroundZero);
}

} // namespace fleetscope
