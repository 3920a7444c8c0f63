// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "common/events.h"
#include "model/fleetmodel.h"

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <vector>

// The fleet's past in plain types: series of values over time (QueryRange) and events (StreamEvents).
namespace fleetscope {

// One metric's history for some GPUs: rows are output times, columns are GPUs.
struct RangeSeries
{
    QString metricId;
    std::vector<uint32_t> gpus; // the columns, in the order requested
    std::vector<int64_t> times; // output time of each row (from + k x step), ascending
    std::vector<int64_t> sampleTimes; // the held frame's own time of each row
    std::vector<float> values; // rows x columns, row-major; NaN = no value

    size_t rows() const { return times.size(); }
    size_t columns() const { return gpus.size(); }
    float at(size_t row, size_t column) const { return values[row * gpus.size() + column]; }
};

struct RangeRequest
{
    QStringList metricIds; // empty: the backend's default set
    std::vector<uint32_t> gpus; // dense indices; must not be empty
    int64_t fromMs = 0;
    int64_t toMs = 0;
    int64_t stepMs = 0;
};

struct RangeResult
{
    quint64 requestId = 0;
    RangeRequest request;
    std::vector<RangeSeries> series; // one per metric that decoded cleanly
    QStringList problems; // parts dropped as malformed, for people

    const RangeSeries *find(const QString &metricId) const { return findMetric(series, metricId); }
};

// An incident as of one of its events (IncidentOpen, IncidentUpdate, IncidentClose): symptoms that began together,
// folded by the backend into one that names the smallest shared domain explaining them (docs/INCIDENTS.md).
struct Incident
{
    uint64_t id = 0;
    int64_t startMs = 0; // its first symptom
    int64_t domain = -1; // index into the topology's domains; -1 for a single GPU's or node's fault
    QString cause; // "power", "cooling", "network", "gpu" or "node"
    QString evidence;
    uint32_t gpuCount = 0; // GPUs it hits (gpuRuns may list fewer: the backend cuts them at 4,096 runs)
    std::vector<std::pair<uint32_t, uint32_t>> gpuRuns; // [first, count), ascending, within the topology
    std::vector<uint64_t> jobs; // running jobs it hits, most GPUs first (at most 256)
    uint32_t jobCount = 0;
};

struct FleetEvent
{
    using Kind = EventKind;
    using Severity = EventSeverity;

    int64_t timeMs = 0;
    uint64_t sequence = 0;
    Kind kind = Kind::Xid;
    Severity severity = Severity::Info;
    int64_t gpu = -1; // dense index, -1 for node and job events
    int64_t node = -1; // -1 when none
    uint64_t jobId = 0;
    uint32_t xid = 0; // for XID and ECC events
    QString metric; // for anomaly events: the metric that departs (a catalogue id); empty otherwise
    QString text;
    std::shared_ptr<const Incident> incident; // incident events: the incident as of this event; null otherwise
};

// Which events a subscription keeps: those of the GPU, and those of the node without a GPU (node down/up). With gpu
// -1, every event of the node.
struct EventFilter
{
    int64_t gpu = -1;
    int64_t node = -1;
    bool everything = false; // the whole fleet's events (the timeline's markers)
    bool matches(const FleetEvent &e) const
    {
        if (everything) {
            return true;
        }
        if (gpu >= 0 && e.gpu == gpu) {
            return true;
        }
        return node >= 0 && e.node == node && (gpu < 0 || e.gpu < 0);
    }
};

struct EventBatch
{
    quint64 requestId = 0;
    std::vector<FleetEvent> events; // oldest first
};

using RangeResultPtr = std::shared_ptr<const RangeResult>;
using EventBatchPtr = std::shared_ptr<const EventBatch>;

// The meaning of an NVIDIA XID code (common/xid.h); empty for codes not in the catalogue.
QString xidMeaningText(uint32_t xid);
QString describe(FleetEvent::Kind kind);
// "info", "warning" or "critical".
QString describe(FleetEvent::Severity severity);

} // namespace fleetscope

Q_DECLARE_METATYPE(fleetscope::RangeResultPtr)
Q_DECLARE_METATYPE(fleetscope::EventBatchPtr)
