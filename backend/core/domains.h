// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "common/domains.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::backend {

// What a fault of one thing hits together: the fleet's shared power, cooling and network domains, each with its
// parent (a PDU's busway, a busway's feed; a coolant loop's CDU; a leaf switch's spine plane). A rack belongs to its
// power and cooling domains and, in an NVL72 rack, its NVLink domain; a node to its scalable unit; a GPU to the leaf
// switch its rail NIC is cabled to, at a port. The kinds are common/domains.h's.
using fleetscope::domainCause;
using fleetscope::DomainKind;
using fleetscope::domainKindCount;
using fleetscope::domainKindFromKey;
using fleetscope::domainKindKey;
using fleetscope::domainKindName;

struct Domain
{
    DomainKind kind = DomainKind::Pdu;
    std::string name;
    int32_t parent = -1; // index into the fleet's domains, or -1
    int32_t rail = -1; // a leaf switch's or spine plane's rail; -1 otherwise
};

// A GPU's place in the fabric: the leaf switch its rail NIC is cabled to (an index into the domains) and the port.
struct GpuLink
{
    static constexpr uint32_t none = std::numeric_limits<uint32_t>::max();
    uint32_t leaf = none;
    uint32_t port = 0;
};

} // namespace fleetscope::backend
