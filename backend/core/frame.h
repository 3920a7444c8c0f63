// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "common/events.h"
#include "common/health.h"
#include "common/xid.h"

#include "core/incident.h"
#include "core/metriccatalog.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fleetscope::backend {

// What happened to a GPU, a node or a job: derived by whichever producer made the frame it belongs to (the
// simulator's fault model, or changes seen in a real fleet's dcgm-exporter fields).
struct FleetEvent
{
    using Kind = EventKind;
    using Severity = EventSeverity;

    double timeSeconds = 0; // on the producer's clock (simulated seconds since a simulation's start)
    Kind kind = Kind::Xid;
    Severity severity = Severity::Info;
    int64_t gpu = -1; // dense index, or -1 for node and job events
    int64_t node = -1; // node index
    uint64_t jobId = 0;
    uint32_t xid = 0;
    std::string text;
    std::optional<MetricId> metric; // an anomaly's: the metric that departs
    std::shared_ptr<const Incident> incident; // an incident event's: the incident as of this event

    FleetEvent() = default;
    // An event about one GPU, or about a node (gpu -1); a job's and an XID's number are set apart.
    FleetEvent(double timeSeconds, Kind kind, Severity severity, int64_t gpu, int64_t node, std::string text)
        : timeSeconds(timeSeconds)
        , kind(kind)
        , severity(severity)
        , gpu(gpu)
        , node(node)
        , text(std::move(text))
    { }
};

// What an XID number means (common/xid.h), or "unknown XID".
inline const char *xidDescription(uint32_t xid)
{
    const char *meaning = fleetscope::xidMeaning(xid);
    return meaning != nullptr ? meaning : "unknown XID";
}

// dcgm-exporter's error counters (DCGM_FI_DEV_XID_ERRORS is a last-value gauge, the others count since the driver
// loaded; the remapped rows' since the GPU was made).
enum ErrorCounter : uint8_t {
    XidCount,
    EccSbeCount,
    EccDbeCount,
    NvlinkCount,
    PcieReplayCount,
    RemappedUncorrectableCount,
    RemappedCorrectableCount,
    ErrorCounterKinds
};

// The error fields as a GPU's DCGM holds them, for an exporter page: each counter's total since the start (indexed by
// ErrorCounter; the XID one unused) and the last XID. A frame's planes carry 5-minute window counts instead, which a
// counter must not be.
struct RawErrorFields
{
    std::array<std::vector<uint32_t>, ErrorCounterKinds> totals;
    std::vector<uint32_t> lastXid;
};

// Per GPU, its rail NIC port's counters since the start, as node-exporter's InfiniBand collector serves them
// (node_infiniband_link_downed_total, _symbol_error_total, _port_errors_received_total, and _port_transmit_wait_total
// as the microseconds the port had data and no credit to send it), for an exporter page.
struct RailCounterTotals
{
    std::vector<uint32_t> linkDowns, symbolErrors, receiveErrors;
    std::vector<uint64_t> transmitWaitMicroseconds;
};

// The GPUs with the highest repeat-offender scores as of a frame (analytics/offenderscore.h), most first, each with
// what its score is made of: decayed counts (an event counts 1 when it happens, half of that 7 days later).
struct RepeatOffenders
{
    struct Entry
    {
        uint32_t gpu = 0;
        float score = 0;
        float xids = 0; // every XID, the serious ones too
        float seriousXids = 0;
        float eccDoubleBit = 0;
        float remappedRows = 0; // uncorrectable
        float remappedRowsCorrectable = 0;
        float pcieReplays = 0;
        float throttleHours = 0; // thermal, hardware slowdown and power brake; not the power cap
    };
    std::vector<Entry> top; // at most OffenderScore::Options::keep
    // Of all failures (XIDs and double-bit ECC errors, decayed), the share the 1% of GPUs with the most carry; 0
    // while there are none.
    double topPercentFailureShare = 0;
    double failures = 0;
};

// One sample of the whole fleet, whatever produced it: a plane of gpuCount values per metric (in MetricId order, NaN
// where a GPU has no value) and a health byte per GPU (common/health.h). Immutable once published; shared between
// subscribers as shared_ptr<const Frame>.
struct Frame
{
    uint64_t sequence = 0;
    int64_t sampleTimeMs = 0;
    // When it became the source's latest (Unix ms of the backend's clock; set by FrameSource as it publishes it): the
    // producer's and the judge's work lie between the sample time and this. 0 until published.
    int64_t publishedMs = 0;
    std::array<std::vector<float>, static_cast<size_t>(MetricId::Count)> planes;
    std::vector<uint8_t> health;
    // Where the producer holds the raw counters (a simulated fleet; null otherwise); shared by the frames between two
    // changes. Not sent to consoles.
    std::shared_ptr<const RawErrorFields> rawErrors;
    // The rail ports' counters since the start (a simulated fleet's; null where the source has none). Not sent.
    std::shared_ptr<const RailCounterTotals> railTotals;
    // The repeat offenders as of this frame, for GetSummary (set by FrameSource; null before it scores). Not sent
    // with frames.
    std::shared_ptr<const RepeatOffenders> offenders;

    const std::vector<float> &plane(MetricId id) const { return planes[static_cast<size_t>(id)]; }
};

} // namespace fleetscope::backend
