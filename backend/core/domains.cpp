// SPDX-License-Identifier: Apache-2.0
#include "core/domains.h"

#include <array>

namespace fleetscope::backend {

namespace {
struct KindNames
{
    const char *name;
    const char *key;
    const char *cause;
};
constexpr std::array<KindNames, domainKindCount> kindNames = { {
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
} };

const KindNames *namesOf(DomainKind kind)
{
    const auto i = static_cast<size_t>(kind);
    return i < kindNames.size() ? &kindNames[i] : nullptr;
}
} // namespace

const char *domainKindName(DomainKind kind)
{
    const auto *n = namesOf(kind);
    return n != nullptr ? n->name : "domain";
}

const char *domainKindKey(DomainKind kind)
{
    const auto *n = namesOf(kind);
    return n != nullptr ? n->key : "";
}

const char *domainCause(DomainKind kind)
{
    const auto *n = namesOf(kind);
    return n != nullptr ? n->cause : "";
}

bool domainKindFromKey(std::string_view key, DomainKind *out)
{
    for (size_t i = 0; i < kindNames.size(); ++i) {
        if (key == kindNames[i].key) {
            *out = static_cast<DomainKind>(i);
            return true;
        }
    }
    return false;
}

} // namespace fleetscope::backend
