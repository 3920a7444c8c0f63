// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string_view>

// The kinds of the fleet's shared power, cooling and network domains, as both sides know them: the backend lays them
// out or reads them from a topology file, the wire carries them (DomainKind in the .proto, whose numbers are these
// plus one), the console names them. docs/INCIDENTS.md has the pictures.
namespace fleetscope {

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

namespace detail {
struct DomainKindText
{
    const char *name; // for people: "PDU", "leaf"
    const char *key; // as topology files spell it: "pdu", "leaf"
    const char *cause; // what a fault of it is about: "power", "cooling", "network"
};
inline constexpr DomainKindText domainKindTexts[domainKindCount] = {
    { "power feed", "feed", "power" },
    { "busway", "busway", "power" },
    { "PDU", "pdu", "power" },
    { "cooling unit", "cooling-unit", "cooling" },
    { "CDU", "cdu", "cooling" },
    { "coolant loop", "loop", "cooling" },
    { "NVLink domain", "nvlink", "network" },
    { "scalable unit", "scalable-unit", "network" },
    { "spine plane", "spine", "network" },
    { "leaf", "leaf", "network" },
};
constexpr const DomainKindText *domainKindText(DomainKind kind)
{
    const auto i = static_cast<int>(kind);
    return i >= 0 && i < domainKindCount ? &domainKindTexts[i] : nullptr;
}
} // namespace detail

// "PDU", "CDU", "leaf": as a line of text names a domain ("leaf su03-l5").
constexpr const char *domainKindName(DomainKind kind)
{
    const auto *t = detail::domainKindText(kind);
    return t != nullptr ? t->name : "domain";
}
// As topology files spell it ("pdu", "cdu", "leaf").
constexpr const char *domainKindKey(DomainKind kind)
{
    const auto *t = detail::domainKindText(kind);
    return t != nullptr ? t->key : "";
}
// What a fault of this kind is about: "power", "cooling" or "network".
constexpr const char *domainCause(DomainKind kind)
{
    const auto *t = detail::domainKindText(kind);
    return t != nullptr ? t->cause : "";
}
inline bool domainKindFromKey(std::string_view key, DomainKind *out)
{
    for (int i = 0; i < domainKindCount; ++i) {
        if (key == detail::domainKindTexts[i].key) {
            *out = static_cast<DomainKind>(i);
            return true;
        }
    }
    return false;
}

} // namespace fleetscope
