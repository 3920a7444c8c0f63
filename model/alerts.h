// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <QString>
#include <QStringList>

#include "common/events.h"

// The NOC's alerts and silences as the console holds them: what the backend read from Alertmanager and placed on the
// fleet (StreamAlerts, decoded by client/alertsdecode within bounds), who this console is to the backend (GetAccess),
// and a silence it asks for. Plain types, Qt Core only.
namespace fleetscope {

struct AlertLabel
{
    QString name;
    QString value;
};

struct FleetAlert
{
    QString fingerprint;
    std::vector<AlertLabel> labels; // by name
    std::vector<AlertLabel> annotations; // by name
    bool suppressed = false; // silenced or inhibited
    std::vector<QString> silencedBy; // silence ids
    std::vector<QString> inhibitedBy; // fingerprints
    int64_t startsAtMs = 0;
    int64_t endsAtMs = 0;
    QString generatorUrl;
    EventSeverity severity = EventSeverity::Info;
    // Where it is: the GPUs its labels name, ascending runs [first, count) within the topology; none: fleet-wide.
    uint32_t gpuCount = 0;
    std::vector<std::pair<uint32_t, uint32_t>> gpuRuns;
    int64_t node = -1;
    int64_t domain = -1;
    QString placedBy;

    // A label's or an annotation's value; empty when it has none.
    QString label(const QString &name) const;
    QString annotation(const QString &name) const;
    QString name() const { return label(QStringLiteral("alertname")); }
};

struct SilenceMatcher
{
    QString name;
    QString value;
    bool isRegex = false;
    bool isEqual = true;
};

struct FleetSilence
{
    enum class State : uint8_t { Active, Pending, Expired };
    QString id;
    std::vector<SilenceMatcher> matchers;
    int64_t startsAtMs = 0;
    int64_t endsAtMs = 0;
    QString createdBy;
    QString comment;
    State state = State::Active;
};

struct AlertSourceStatus
{
    QString url;
    bool reachable = false;
    int64_t lastSuccessMs = 0;
    QString error;
    int64_t pollIntervalMs = 0;
    uint32_t alertsLeftOut = 0;
    uint32_t silencesLeftOut = 0;
    bool sending = false;
};

// One state of the backend's alerts, whole.
struct AlertBoard
{
    uint64_t generation = 0;
    AlertSourceStatus status;
    std::vector<FleetAlert> alerts; // severity first, then newest first
    std::vector<FleetSilence> silences; // active and pending
    QStringList problems; // what the decoder dropped, for people

    const FleetSilence *silence(const QString &id) const;
};

// Who this console is to its backend.
struct BackendAccess
{
    enum class Role : uint8_t { Unknown, Viewer, Operator };
    QString name;
    Role role = Role::Unknown;
    bool alertmanager = false;
    bool maySilence = false;
};

struct SilenceDraft
{
    std::vector<SilenceMatcher> matchers;
    int64_t durationMs = 2 * 60 * 60 * 1000;
    QString comment;
};

} // namespace fleetscope
