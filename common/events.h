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
    JobEnd
};
constexpr int eventKindCount = 10;

enum class EventSeverity : uint8_t { Info, Warning, Critical };

// A short name for people ("ECC double-bit").
constexpr const char *eventKindName(EventKind kind)
{
    switch (kind) {
    case EventKind::Xid:
        return "XID";
    case EventKind::EccDoubleBit:
        return "ECC double-bit";
    case EventKind::ThermalThrottleStart:
        return "Thermal throttle start";
    case EventKind::ThermalThrottleEnd:
        return "Thermal throttle end";
    case EventKind::PowerThrottleStart:
        return "Power throttle start";
    case EventKind::PowerThrottleEnd:
        return "Power throttle end";
    case EventKind::NodeDown:
        return "Node down";
    case EventKind::NodeUp:
        return "Node up";
    case EventKind::JobStart:
        return "Job start";
    case EventKind::JobEnd:
        return "Job end";
    }
    return "";
}

} // namespace fleetscope
