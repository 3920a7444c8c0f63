// SPDX-License-Identifier: Apache-2.0
#include "model/fleetmodel.h"

#include <QStringList>

#include <iterator>

namespace fleetscope {

QString Topology::uuidText(uint32_t gpu) const
{
    if (gpu >= gpuUuids.size() || gpuUuids[gpu].isNull()) {
        return {};
    }
    return QStringLiteral("GPU-") + gpuUuids[gpu].toString(QUuid::WithoutBraces);
}

} // namespace fleetscope

namespace fleetscope::health {

namespace {
// By state (common/health.h).
const char *const stateNames[] = { "OK", "warning", "critical", "offline", "no data" };
static_assert(std::size(stateNames) == stateCount, "a name for every state");

struct FlagName
{
    uint8_t flag;
    const char *name;
};
const FlagName flagNames[] = { { throttledFlag, "throttled" }, { eccFlag, "ECC" }, { xidFlag, "XID" } };
} // namespace

QString describe(uint8_t byte)
{
    const uint8_t state = stateOf(byte);
    QString text = state < stateCount ? QLatin1String(stateNames[state]) : QStringLiteral("unknown (%1)").arg(state);
    QStringList flags;
    for (const auto &[flag, name] : flagNames) {
        if ((byte & flag) != 0) {
            flags << QLatin1String(name);
        }
    }
    if (!flags.isEmpty()) {
        text += QStringLiteral(" (") + flags.join(QStringLiteral(", ")) + QLatin1Char(')');
    }
    return text;
}

} // namespace fleetscope::health
