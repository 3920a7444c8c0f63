// SPDX-License-Identifier: Apache-2.0
#include "model/history.h"

#include "common/xid.h"

#include <array>

namespace fleetscope {

QString xidMeaningText(uint32_t xid)
{
    const char *meaning = fleetscope::xidMeaning(xid);
    return meaning != nullptr ? QString::fromLatin1(meaning) : QString();
}

QString describe(FleetEvent::Kind kind)
{
    return QString::fromLatin1(eventKindName(kind));
}

QString describe(FleetEvent::Severity severity)
{
    // In EventSeverity's order.
    static constexpr std::array<const char *, 3> names { "info", "warning", "critical" };
    const auto index = static_cast<size_t>(severity);
    return index < names.size() ? QString::fromLatin1(names[index]) : QString();
}

} // namespace fleetscope
