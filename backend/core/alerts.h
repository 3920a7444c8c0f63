// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/events.h"

// The NOC's alerts and silences as the backend holds them (read from Prometheus Alertmanager by backend/alerting/,
// served by the service's StreamAlerts), and the door through which a console's silence goes back: AlertDesk. Plain
// types, so that the service knows nothing of HTTP or Alertmanager's JSON.
namespace fleetscope::backend {

struct AlertLabel
{
    std::string name;
    std::string value;
};

struct AlertmanagerAlert
{
    enum class State : uint8_t { Active, Suppressed };

    std::string fingerprint;
    std::vector<AlertLabel> labels; // by name
    std::vector<AlertLabel> annotations; // by name
    State state = State::Active;
    std::vector<std::string> silencedBy; // silence ids
    std::vector<std::string> inhibitedBy; // fingerprints
    int64_t startsAtMs = 0;
    int64_t endsAtMs = 0;
    int64_t updatedAtMs = 0;
    std::string generatorUrl;
    EventSeverity severity = EventSeverity::Info; // from the `severity` label

    // Where it is on the fleet (AlertPlacement); none: fleet-wide.
    uint32_t gpuCount = 0;
    std::vector<std::pair<uint32_t, uint32_t>> gpuRuns; // [first, count), ascending
    int64_t node = -1;
    int64_t domain = -1;
    std::string placedBy; // "Hostname=r01-k01-n01, gpu=3"

    // The value of a label, empty when it has none.
    const std::string &label(const std::string &name) const;
};

struct SilenceMatcher
{
    std::string name;
    std::string value;
    bool isRegex = false;
    bool isEqual = true;
};

struct AlertmanagerSilence
{
    enum class State : uint8_t { Active, Pending, Expired };

    std::string id;
    std::vector<SilenceMatcher> matchers;
    int64_t startsAtMs = 0;
    int64_t endsAtMs = 0;
    int64_t updatedAtMs = 0;
    std::string createdBy;
    std::string comment;
    State state = State::Active;
};

struct AlertmanagerStatus
{
    std::string url; // without credentials
    bool reachable = false;
    int64_t lastSuccessMs = 0; // 0: never
    std::string error; // why the last poll failed; empty when it did not
    int64_t pollIntervalMs = 0;
    uint32_t alertsLeftOut = 0;
    uint32_t silencesLeftOut = 0;
    bool sending = false;
};

// One state as served: immutable once published, shared by every stream that sends it.
struct AlertsState
{
    uint64_t generation = 0; // increases with each state published
    AlertmanagerStatus status;
    std::vector<AlertmanagerAlert> alerts; // severity first, then newest first
    std::vector<AlertmanagerSilence> silences; // active and pending
};

// A silence asked for by a console.
struct SilenceRequest
{
    std::vector<SilenceMatcher> matchers;
    std::chrono::milliseconds duration { 0 };
    std::string comment;
    std::string createdBy; // the caller's name (AccessGate), never the caller's own words
};

// What the service needs of whatever reads Alertmanager.
class AlertDesk
{
public:
    virtual ~AlertDesk() = default;

    // The latest state (never null once constructed).
    virtual std::shared_ptr<const AlertsState> latest() const = 0;
    // Waits until a state newer than `generation` is published or the deadline passes; the latest either way.
    virtual std::shared_ptr<const AlertsState> waitNewer(
        uint64_t generation, std::chrono::steady_clock::time_point deadline) const = 0;

    enum class Failure : uint8_t { None, InvalidArgument, NotFound, Unavailable };
    // Creates the silence in Alertmanager; its id in *id. The state that shows it is published before this returns
    // (the desk polls again at once), so that every console sees it within a poll.
    virtual Failure createSilence(const SilenceRequest &request, std::string *id, std::string *error) = 0;
    virtual Failure expireSilence(const std::string &id, std::string *error) = 0;
};

inline const std::string &AlertmanagerAlert::label(const std::string &name) const
{
    static const std::string none;
    for (const auto &l : labels) {
        if (l.name == name) {
            return l.value;
        }
    }
    return none;
}

} // namespace fleetscope::backend
