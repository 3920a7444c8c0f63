// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::backend {

// What a fault of one thing hits together: the fleet's shared power, cooling and network domains, each with its
// parent (a PDU's busway, a busway's feed; a coolant loop's CDU; a leaf switch's spine plane). A rack belongs to its
// power and cooling domains and, in an NVL72 rack, its NVLink domain; a node to its scalable unit; a GPU to the leaf
// switch its rail NIC is cabled to, at a port. docs/INCIDENTS.md has the pictures.
enum class DomainKind : uint8_t {
    PowerFeed, // a utility / UPS feed of a hall (A or B side)
    Busway, // a row's overhead busway on one side, from a feed
    Pdu, // one side of a rack, from a busway; a dual-corded node draws from both sides
    CoolingUnit, // air: the CRAH / in-row unit serving a segment of a row
    Cdu, // liquid: a coolant distribution unit
    CoolantLoop, // liquid: a secondary loop of a CDU, through the cold plates of its racks
    NvlinkDomain, // an NVL72 rack's GPUs on its NVLink switch trays
    ScalableUnit, // a block of nodes cabled to one set of leaf switches (NVIDIA's reference: 32 HGX nodes)
    SpinePlane, // the spine switches of one rail
    LeafSwitch, // one rail's leaf of a scalable unit: port k goes to node k's rail NIC
    Count
};
constexpr int domainKindCount = static_cast<int>(DomainKind::Count);

// "PDU", "CDU", "leaf": for people, as a line of text names a domain ("leaf su03-l5").
const char *domainKindName(DomainKind kind);
// The same, as topology files spell it ("pdu", "cdu", "leaf"), and back.
const char *domainKindKey(DomainKind kind);
bool domainKindFromKey(std::string_view key, DomainKind *out);
// What a fault of this kind is about: "power", "cooling" or "network".
const char *domainCause(DomainKind kind);

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
