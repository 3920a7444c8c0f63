// SPDX-License-Identifier: Apache-2.0
#include "analytics/domainindex.h"

namespace fleetscope::backend {

DomainIndex::DomainIndex(const FleetShape &shape)
    : m_shape(shape)
    , m_gpus(shape.domains.size(), 0)
{
    for (uint32_t g = 0; g < shape.gpuCount && !shape.domains.empty(); ++g) {
        forEachDomainOf(g, [&](uint32_t d) { ++m_gpus[d]; });
    }
}

} // namespace fleetscope::backend
