// SPDX-License-Identifier: Apache-2.0
#include "model/alerts.h"

namespace fleetscope {

namespace {

QString valueOf(const std::vector<AlertLabel> &labels, const QString &name)
{
    for (const auto &l : labels) {
        if (l.name == name) {
            return l.value;
        }
    }
    return {};
}

} // namespace

QString FleetAlert::label(const QString &name) const
{
    return valueOf(labels, name);
}

QString FleetAlert::annotation(const QString &name) const
{
    return valueOf(annotations, name);
}

const FleetSilence *AlertBoard::silence(const QString &id) const
{
    for (const auto &s : silences) {
        if (s.id == id) {
            return &s;
        }
    }
    return nullptr;
}

} // namespace fleetscope
