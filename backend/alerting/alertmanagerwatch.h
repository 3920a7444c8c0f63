// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "alerting/alertmanagerapi.h"
#include "alerting/alertmanagerjson.h"
#include "core/alerts.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace fleetscope::backend {

// The AlertDesk over a real Alertmanager: a thread polls its alerts and silences every pollInterval and publishes a
// new AlertsState (the generation one higher) only when what it read or the status changed (status.lastSuccessMs is
// then that of the publishing poll: a poll that reads the same is no news to consoles). A failed poll keeps the
// alerts last read and says in the status that Alertmanager is unreachable, and why, with the time of the last poll
// read whole. Each alert goes through the placement hook (AlertPlacement, wired by main) before it is compared and
// published; the alerts are then sorted by severity, then newest first. A silence made or expired here is checked
// first (InvalidArgument with the reason), sent, and followed at once by a poll on the caller's thread, so that the
// state that shows it is published before the call returns. The destructor stops the thread without waiting out a
// poll interval or a slow server's deadline (within about a second).
//
// Locking: m_pollMutex serializes polls (the thread's and the writers') and guards what a poll keeps between polls
// (the decoder, m_lastSuccessMs); m_stateMutex guards m_state, m_cost and m_stopping, and m_published is signalled
// under it. A poll takes m_stateMutex only to read and to publish, never while it waits on the network.
class AlertmanagerWatch final : public AlertDesk
{
public:
    struct Options
    {
        std::chrono::milliseconds pollInterval { 5000 }; // at least 100 ms (less is taken as 100 ms)
        AlertmanagerLimits limits;
        bool sending = false; // the backend also sends its findings (shown in the status only)
    };
    // Called on the polling thread (or a writer's) for each alert read, before it is compared and published.
    using Placement = std::function<void(AlertmanagerAlert *)>;

    // Starts polling at once; api has its base URL set.
    AlertmanagerWatch(AlertmanagerApi api, const Options &options, Placement placement = {});
    ~AlertmanagerWatch() override;
    AlertmanagerWatch(const AlertmanagerWatch &) = delete;
    AlertmanagerWatch &operator=(const AlertmanagerWatch &) = delete;

    std::shared_ptr<const AlertsState> latest() const override;
    std::shared_ptr<const AlertsState> waitNewer(
        uint64_t generation, std::chrono::steady_clock::time_point deadline) const override;
    Failure createSilence(const SilenceRequest &request, std::string *id, std::string *error) override;
    Failure expireSilence(const std::string &id, std::string *error) override;

    // Whether a console's silence may be made, and if not why (for INVALID_ARGUMENT): at least one and at most 32
    // matchers, label names as Prometheus', values of at most 1 KiB, not every matcher one that matches every alert
    // (name="", or a regex such as .* or .+), 1 minute .. 30 days, a comment of 1 .. 1,024 bytes, a creator's name.
    static bool check(const SilenceRequest &request, std::string *error);
    // Whether a matcher matches every alert, or every alert that has the label at all.
    static bool matchesEverything(const SilenceMatcher &matcher);

    // Ends the requests under way within about a second, and every later one at once (Unavailable): the backend is
    // stopping, and a silence's caller must not hold the server's shutdown up for Alertmanager's timeouts.
    void cancel() { m_cancel = true; }

    // Polls now, on the caller's thread, and publishes what changed (what the thread does every pollInterval).
    void pollNow();

    // What the last poll cost, for the measurements (docs/PERFORMANCE.md).
    struct PollCost
    {
        std::chrono::microseconds fetch { 0 }; // both GETs, Alertmanager's time and the transfer
        std::chrono::microseconds decode { 0 }; // both answers read
        std::chrono::microseconds publish { 0 }; // placement, sorting, comparing, publishing
        size_t answerBytes = 0;
        bool published = false; // the poll made a new state
    };
    PollCost lastPollCost() const;

private:
    void run();
    // A new state from the poll's outcome; null when it would be the same as the one published.
    std::shared_ptr<AlertsState> next(const AlertsState &previous, bool ok, AlertmanagerJson::Alerts *alerts,
        AlertmanagerJson::Silences *silences, const std::string &error);

    AlertmanagerApi m_api;
    const Options m_options;
    const Placement m_placement;
    std::atomic<bool> m_cancel { false }; // set by the destructor: ends a request under way

    std::mutex m_pollMutex;
    AlertmanagerJson m_json;
    int64_t m_lastSuccessMs = 0;

    mutable std::mutex m_stateMutex;
    mutable std::condition_variable m_published;
    std::shared_ptr<const AlertsState> m_state;
    PollCost m_cost;
    bool m_stopping = false;

    std::thread m_thread; // last: started once everything above is
};

} // namespace fleetscope::backend
