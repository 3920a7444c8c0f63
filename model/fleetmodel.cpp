// SPDX-License-Identifier: Apache-2.0
#include "model/fleetmodel.h"

#include <QStringList>

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

QString describe(uint8_t byte)
{
    QString text;
    switch (stateOf(byte)) {
    case Ok:
        text = QStringLiteral("OK");
        break;
    case Warning:
        text = QStringLiteral("warning");
        break;
    case Critical:
        text = QStringLiteral("critical");
        break;
    case Offline:
        text = QStringLiteral("offline");
        break;
    case NoData:
        text = QStringLiteral("no data");
        break;
    default:
        text = QStringLiteral("unknown (%1)").arg(byte & stateMask);
        break;
    }
    QStringList flags;
    if ((byte & throttledFlag) != 0) {
        flags << QStringLiteral("throttled");
    }
    if ((byte & eccFlag) != 0) {
        flags << QStringLiteral("ECC");
    }
    if ((byte & xidFlag) != 0) {
        flags << QStringLiteral("XID");
    }
    if (!flags.isEmpty()) {
        text += QStringLiteral(" (") + flags.join(QStringLiteral(", ")) + QLatin1Char(')');
    }
    return text;
}

} // namespace fleetscope::health
