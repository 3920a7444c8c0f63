// SPDX-License-Identifier: Apache-2.0
#include "dcgm/dcgmvalue.h"

#include <cmath>
#include <limits>

namespace fleetscope::backend {

double cleanDcgmValue(double value, size_t *sentinels, size_t *nans)
{
    if (!std::isfinite(value)) {
        ++*nans;
        return std::numeric_limits<double>::quiet_NaN();
    }
    // DCGM's blank / not found / not supported / not permissioned: 0x7FFFFFFFFFFFFFF0..F3 for int64 fields (all
    // 2^63 once a double), 0x7FFFFFF0..F3 for int32 fields, 2^47 + 0..3 for fp64 fields.
    const bool int64Blank = value >= 9.2233720368547e18;
    const bool int32Blank = value >= 2147483632.0 && value <= 2147483635.0;
    const bool fp64Blank = value >= 140737488355328.0 && value <= 140737488355331.0;
    if (int64Blank || int32Blank || fp64Blank) {
        ++*sentinels;
        return std::numeric_limits<double>::quiet_NaN();
    }
    return value;
}

} // namespace fleetscope::backend
