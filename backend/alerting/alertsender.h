// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "alerting/alertmanagerjson.h"
#include "core/alerts.h"
#include "core/framesource.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace fleetscope::backend {

// --alertmanager-send: the backend's own open findings, incidents and anomalies (docs/INCIDENTS.md, docs/ANOMALY.md),
// sent to Alertmanager as alerts so that they reach the NOC's routes. It follows the frame source's events on a thread
// of its own and keeps the open findings (at most Options::maxFindings, the most severe kept). Each is posted when it
// opens or changes, again every resendInterval with endsAt resendInterval x 4 ahead (so that Alertmanager resolves it
// if this backend dies, and a restarted one that finds it again continues it: its labels carry no id), and once more
// with endsAt its close's time when it closes. A failed post is retried with backoff, nothing due lost meanwhile.
//
// An incident's labels: alertname FleetscopeIncident, severity, cause, domain (its name), hostname and gpu (a node's
// or a GPU's), job (where it hits one), site; an anomaly's: alertname FleetscopeAnomaly, severity, hostname, gpu,
// metric (the catalogue's key), job, site. Annotations: summary (the headline), description (the evidence, the
// reason), gpus. Two findings with the same labels are one alert to Alertmanager: it is resolved when neither is open.
//
// Locking: m_mutex guards m_stats and m_stopping; the findings and what is due are the thread's alone. The thread
// waits on the source's events (FrameSource::eventsAfter, a condition variable) for at most 200 ms at a time, so that
// stop() is seen within that.
class AlertSender
{
public:
    // Posts the alerts (a batch of at most Options::maxAlertsPerPost; AlertmanagerApi::postAlerts); false with a
    // reason when they were not taken.
    using Post = std::function<bool(const std::vector<OutgoingAlert> &alerts, std::string *error)>;

    struct Options
    {
        std::chrono::milliseconds resendInterval { 60000 };
        size_t maxFindings = 10000;
        size_t maxAlertsPerPost = 1000;
        // The wait after a failed post, doubling up to retryMax.
        std::chrono::milliseconds retryFirst { 1000 };
        std::chrono::milliseconds retryMax { 60000 };
        std::string site; // the site label; empty: the shape's
        std::string generatorUrl; // each alert's; empty: none
    };

    struct Stats
    {
        size_t open = 0; // findings held
        uint64_t alertsSent = 0; // alerts taken by Alertmanager, resolved ones included
        uint64_t posts = 0; // posts that succeeded
        uint64_t failures = 0; // posts that failed
        uint64_t dropped = 0; // findings not held past maxFindings
        uint64_t eventsLost = 0; // events that left the source's window before this read them
        std::string lastError; // of the last failed post; empty after a success
        int64_t lastSuccessMs = 0;
    };

    // Starts following the source's held events (those it holds now first). The source must outlive this.
    AlertSender(const FrameSource &source, Post post, Options options);
    AlertSender(const FrameSource &source, Post post);
    ~AlertSender();
    AlertSender(const AlertSender &) = delete;
    AlertSender &operator=(const AlertSender &) = delete;

    // Stops the thread (at the latest after a post under way returns). What is open is not resolved: Alertmanager
    // resolves it resendInterval x 4 after the last post unless a restarted backend sends it again.
    void stop();
    Stats stats() const;

private:
    // An incident by its id; an anomaly by its GPU and metric.
    using Key = std::tuple<uint8_t, uint64_t, uint32_t>;
    struct Finding
    {
        OutgoingAlert alert; // endsAtMs set at each post
        EventSeverity severity = EventSeverity::Info;
        uint64_t rank = 0; // newer findings lower, so that the newest of the least severe goes first
        bool due = true;
    };

    void run();
    void apply(const TimedEvent &timed);
    void open(const Key &key, EventSeverity severity, OutgoingAlert alert);
    void close(const Key &key, int64_t timeMs);
    void resolveLater(OutgoingAlert alert, int64_t timeMs);
    bool postDue(int64_t nowMs, bool resendAll);
    OutgoingAlert incidentAlert(const TimedEvent &timed) const;
    OutgoingAlert anomalyAlert(const TimedEvent &timed) const;
    void addPlace(std::vector<AlertLabel> *labels, int64_t gpu, int64_t node) const;
    void addJob(std::vector<AlertLabel> *labels, uint64_t jobId) const;
    void refreshJobs();

    const FrameSource &m_source;
    Post m_post;
    Options m_options;

    // The thread's own.
    std::map<Key, Finding> m_findings;
    std::set<std::tuple<EventSeverity, uint64_t, Key>> m_bySeverity; // least severe first, then newest first
    std::vector<OutgoingAlert> m_resolving; // to post once with their endsAt; oldest first
    std::unordered_map<uint64_t, std::string> m_jobNames; // as of the last events that named a job
    uint64_t m_nextOrder = 0;
    bool m_droppedLogged = false;

    mutable std::mutex m_mutex;
    Stats m_stats;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace fleetscope::backend
