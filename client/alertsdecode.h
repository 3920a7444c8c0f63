// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to client/ (and its tests): the NOC's alerts and silences from a StreamAlerts stream, one state's parts
// joined into an AlertBoard and checked against bounds that do not grow with what a backend claims (docs/ALERTS.md).

#include "common/incidentlimits.h"
#include "model/alerts.h"
#include "model/fleetmodel.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace fleetscope {

namespace pb = fleetscope::telemetry::v1;

// A state's bounds. Alertmanager holds a few hundred alerts on a bad day; the backend keeps at most 10,000 (the rest
// counted in status.alerts_left_out), and twice that is room.
constexpr uint32_t maxAlerts = 20000;
constexpr uint32_t maxSilences = 5000;
constexpr int maxAlertLabels = 64; // labels, and annotations, per alert
constexpr int maxAlertLinks = 64; // silenced_by, inhibited_by: ids kept per alert (the rest are left out)
constexpr int maxSilenceMatchers = 32; // as CreateSilence's own bound
constexpr int maxAlertRuns = static_cast<int>(maxIncidentRuns); // as the contract's cut (the backend's encoder)
// The wire bytes of one state's parts: 20,000 alerts of 3 KiB each. Past it the state is dropped whole: each alert is
// bounded, but 20,000 of the largest would be gigabytes once decoded.
constexpr size_t maxAlertsStateBytes = size_t { 64 } << 20;
// Problems listed on a board; the rest counted in the last line.
constexpr int maxBoardProblems = 20;

// Text bounds, in characters (wiretext.h).
constexpr int maxLabelNameText = 128;
constexpr int maxLabelValueText = 1024; // label values, annotations (a description is a paragraph), matchers
constexpr int maxUrlText = 2048;

// Times from the wire: 0 (not said, where a field may be), or from 2000 on and at most this far past now.
constexpr int64_t earliestAlertTimeMs = 946684800000; // 2000-01-01T00:00:00Z
constexpr int64_t maxAlertTimeAheadMs = int64_t { 100 } * 366 * 24 * 3600 * 1000;

// One alert, checked and placed within the topology (null: no placement is kept). Empty, with *problem set, when the
// alert is dropped: a count past its bound, a time out of range, GPUs outside the fleet or runs out of order. A node
// or domain outside the topology is not the alert's fault alone (another generation's): it becomes -1.
std::optional<FleetAlert> decodeAlert(
    const pb::Alert &alert, const Topology *topology, int64_t nowMs, QString *problem);
std::optional<FleetSilence> decodeSilence(const pb::Silence &silence, int64_t nowMs, QString *problem);
AlertSourceStatus decodeAlertSourceStatus(const pb::AlertmanagerStatus &status, int64_t nowMs);
BackendAccess decodeAccess(const pb::Access &access);
// What CreateSilence sends for a draft (the backend checks it: the console says what it asked).
pb::CreateSilenceRequest encodeSilenceDraft(const SilenceDraft &draft);

// Joins the parts of each state as they come, in order: parts until last_part, then the state whole. A part of another
// generation before the last one drops the partial state (and starts the next with it); so does a state whose counts
// lie (more alerts or silences than its first part said, fewer by its last), one past the bounds above, or a part past
// the first that brings nothing. A bad alert or silence drops only itself, with its reason in the board's problems.
//
// Threads: one at a time (the thread that reads the stream).
class AlertsAssembler
{
public:
    // topology: what alerts are placed within; null keeps no placement (runs, node and domain dropped).
    explicit AlertsAssembler(TopologyPtr topology);

    struct Result
    {
        std::shared_ptr<const AlertBoard> board; // set when this part completed a state
        QString error; // set when this part dropped the state being joined
    };
    // nowMs: this machine's clock, for the times' bound.
    Result add(const pb::AlertsPart &part, int64_t nowMs);

    // Parts of a state under way (for tests).
    bool assembling() const { return m_building != nullptr; }

private:
    QString take(const pb::AlertsPart &part, int64_t nowMs);
    void problem(const QString &text);

    TopologyPtr m_topology;
    std::shared_ptr<AlertBoard> m_building; // null between states
    uint32_t m_alertCount = 0; // claimed by the state's first part
    uint32_t m_silenceCount = 0;
    uint32_t m_alertsSeen = 0; // on the wire, dropped ones included
    uint32_t m_silencesSeen = 0;
    size_t m_bytes = 0;
    int m_problemsLeftOut = 0;
};

} // namespace fleetscope
