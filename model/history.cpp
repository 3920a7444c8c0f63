// SPDX-License-Identifier: Apache-2.0
#include "model/history.h"

#include "common/xid.h"

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

} // namespace fleetscope
