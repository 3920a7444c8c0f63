// SPDX-License-Identifier: Apache-2.0
#include "model/hottestrow.h"

#include "model/rollup.h"

#include <cmath>

namespace fleetscope {

HottestRow hottestRow(const Topology &topology, const Frame *frame, const QString &metricId)
{
    HottestRow best;
    if (frame == nullptr) {
        return best;
    }
    const auto rows = computeRollups(topology, Place::fleet(), frame, metricId);
    for (size_t i = 0; i < rows.size(); ++i) {
        if (!std::isnan(rows[i].p99) && (best.row < 0 || rows[i].p99 > best.p99)) {
            best.row = static_cast<int>(i);
            best.p99 = rows[i].p99;
        }
    }
    return best;
}

} // namespace fleetscope
