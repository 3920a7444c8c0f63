// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

// Fleet events as both sides know them: the backend derives them, the wire carries them (EventKind and Severity in
// the .proto, whose numbers are these plus one for the kind), the console shows them. Defined once for both sides.
namespace fleetscope {

enum class EventKind : uint8_t {
    Xid,
    EccDoubleBit,
    ThermalThrottleStart,
    ThermalThrottleEnd,
    PowerThrottleStart,
    PowerThrottleEnd,
    NodeDown,
    NodeUp,
    JobStart,
    JobEnd,
    AnomalyStart,
    AnomalyEnd,
    // An incident: symptoms that began together, folded into one that names what they share (docs/INCIDENTS.md).
    IncidentOpen,
    IncidentUpdate,
    IncidentClose
};
constexpr int eventKindCount = 15;

enum class EventSeverity : uint8_t { Info, Warning, Critical };

// A short name for people ("ECC double-bit"), in EventKind's order.
inline constexpr const char *eventKindNames[eventKindCount] = { "XID", "ECC double-bit", "Thermal throttle start",
    "Thermal throttle end", "Power throttle start", "Power throttle end", "Node down", "Node up", "Job start",
    "Job end", "Anomaly start", "Anomaly end", "Incident", "Incident update", "Incident closed" };

constexpr const char *eventKindName(EventKind kind)
{
    const auto index = static_cast<int>(kind);
    return index >= 0 && index < eventKindCount ? eventKindNames[index] : "";
}

} // namespace fleetscope
