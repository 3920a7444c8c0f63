// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace fleetscope::backend {

// A dcgm-exporter value as data: NaN for DCGM's sentinels (int64, int32 and fp64 blanks, 0x...F0 to F3) and for
// non-finite values (a Prometheus staleness marker among them), the value itself otherwise; counts which.
double cleanDcgmValue(double value, size_t *sentinels, size_t *nans);

} // namespace fleetscope::backend
