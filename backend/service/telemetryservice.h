// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/alerts.h"
#include "core/framesource.h"
#include "service/accessgate.h"
#include "service/auditlog.h"
#include "service/heaptrim.h"
#include "service/sharedencodings.h"
#include "service/stallwatch.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>

#include <future>
#include <memory>
#include <mutex>
#include <vector>

namespace fleetscope::backend {

// The gRPC Telemetry service over a FrameSource. Synchronous API: each streaming call runs on a thread of gRPC's
// pool and blocks on the source, waking at least every 200 ms to notice a cancelled call or a server shutdown. No
// stream queues frames: a subscriber still writing one frame when the next ones are published gets the newest after
// it (latest wins), and one that takes no message for stallLimit is cut (StallWatch).
class TelemetryService final : public fleetscope::telemetry::v1::Telemetry::Service
{
public:
    // How long a stream's client may take no message before its stream is cut with RESOURCE_EXHAUSTED: a part is at
    // most 4 MiB, so a client that reads at all takes one within this on any link faster than about 4 Mbit/s.
    static constexpr std::chrono::milliseconds defaultStallLimit { 10000 };

    // Every call passes the gate first (credentials, per-client limits); the default gate admits everyone.
    explicit TelemetryService(
        const FrameSource &source, AccessGate *gate = nullptr, std::chrono::milliseconds stallLimit = defaultStallLimit)
        : m_source(source)
        , m_gate(gate ? gate : &m_openGate)
        , m_stalls(stallLimit)
    { }

    grpc::Status GetTopology(grpc::ServerContext *context, const fleetscope::telemetry::v1::GetTopologyRequest *request,
        grpc::ServerWriter<fleetscope::telemetry::v1::TopologyPart> *writer) override;
    grpc::Status ListMetrics(grpc::ServerContext *context, const fleetscope::telemetry::v1::ListMetricsRequest *request,
        fleetscope::telemetry::v1::ListMetricsResponse *response) override;
    grpc::Status Subscribe(grpc::ServerContext *context, const fleetscope::telemetry::v1::SubscribeRequest *request,
        grpc::ServerWriter<fleetscope::telemetry::v1::FramePart> *writer) override;

    grpc::Status StreamEvents(grpc::ServerContext *context,
        const fleetscope::telemetry::v1::StreamEventsRequest *request,
        grpc::ServerWriter<fleetscope::telemetry::v1::Event> *writer) override;
    grpc::Status ListJobs(grpc::ServerContext *context, const fleetscope::telemetry::v1::ListJobsRequest *request,
        fleetscope::telemetry::v1::ListJobsResponse *response) override;
    // One job's account (telemetryjobs.cpp); FAILED_PRECONDITION when the source keeps none (FrameSource::jobAccounts).
    grpc::Status GetJob(grpc::ServerContext *context, const fleetscope::telemetry::v1::GetJobRequest *request,
        fleetscope::telemetry::v1::JobReport *response) override;

    grpc::Status QueryRange(grpc::ServerContext *context, const fleetscope::telemetry::v1::QueryRangeRequest *request,
        grpc::ServerWriter<fleetscope::telemetry::v1::QueryRangePart> *writer) override;
    grpc::Status GetSummary(grpc::ServerContext *context, const fleetscope::telemetry::v1::GetSummaryRequest *request,
        fleetscope::telemetry::v1::Summary *response) override;

    // The NOC's alerts (alerting/AlertmanagerWatch), served and silenced through; null: StreamAlerts and the silence
    // calls answer FAILED_PRECONDITION. Every write is logged to audit. Set before the server starts; both outlive it.
    void setAlertDesk(AlertDesk *desk, AuditLog *audit)
    {
        m_alerts = desk;
        m_audit = audit;
    }
    grpc::Status StreamAlerts(grpc::ServerContext *context,
        const fleetscope::telemetry::v1::StreamAlertsRequest *request,
        grpc::ServerWriter<fleetscope::telemetry::v1::AlertsPart> *writer) override;
    grpc::Status GetAccess(grpc::ServerContext *context, const fleetscope::telemetry::v1::GetAccessRequest *request,
        fleetscope::telemetry::v1::Access *response) override;
    grpc::Status CreateSilence(grpc::ServerContext *context,
        const fleetscope::telemetry::v1::CreateSilenceRequest *request,
        fleetscope::telemetry::v1::Silence *response) override;
    grpc::Status ExpireSilence(grpc::ServerContext *context,
        const fleetscope::telemetry::v1::ExpireSilenceRequest *request,
        fleetscope::telemetry::v1::ExpireSilenceResponse *response) override;

    // Streams cut because their client took nothing for the stall limit.
    uint64_t stalledStreamsCut() const { return m_stalls.cut(); }
    // What the calls sending frames and topologies share (how often each was encoded against how often asked for).
    const SharedEncodings &encodings() const { return m_encodings; }
    // A topology being encoded elsewhere before any call asked for it (a simulated fleet's, beside the simulator's
    // start): the first GetTopology of that generation waits for it rather than encoding the source's shape itself.
    void setTopologyAhead(uint64_t generation, std::future<SharedEncodings::TopologyParts> parts);

    // QueryRange answers at most this many values (times x GPUs x metrics) per call,
    static constexpr uint64_t maxRangeValues = 20'000'000;
    // and names at most this many GPUs: a part holds whole rows, and one row of one metric with the part's list of
    // GPUs must fit the contract's 4 MiB.
    static constexpr uint32_t maxRangeGpus = 262'144;
    // How far ahead of this host's clock (or of the newest frame held, if later) a request's time may be: the clocks
    // of consoles and telemetry senders are close to this one's, not the same.
    static constexpr int64_t clockAllowanceMs = 60'000;

private:
    // The checks of a request's fields: each returns OK, or the status to send, naming the field and its limit.
    // Metric ids, each once in the order first named (empty: the default set).
    static grpc::Status resolveMetrics(
        const google::protobuf::RepeatedPtrField<std::string> &ids, std::vector<MetricId> *out);
    // A QueryRange's GPUs, each once in the order first named.
    grpc::Status resolveGpus(
        const fleetscope::telemetry::v1::QueryRangeRequest &request, std::vector<uint32_t> *out) const;
    // A QueryRange's times against each other, the epoch and the clock; sets the range's end (to_ms, or the latest
    // allowed time when that is earlier) and the number of output times.
    grpc::Status checkRangeTimes(
        const fleetscope::telemetry::v1::QueryRangeRequest &request, int64_t *toMs, uint64_t *rows) const;
    // The latest time a request may name (see clockAllowanceMs).
    int64_t latestAllowedMs() const;

    // QueryRange from the frames held, once the request is checked: rows output times from `from`, step apart.
    grpc::Status queryHeld(grpc::ServerContext *context, const std::vector<MetricId> &metrics,
        const std::vector<uint32_t> &gpus, int64_t from, int64_t step, uint64_t rows,
        grpc::ServerWriter<fleetscope::telemetry::v1::QueryRangePart> *writer) const;
    // The topology encoded ahead for this generation, once: invalid when there is none (or it was taken).
    std::future<SharedEncodings::TopologyParts> takeTopologyAhead(uint64_t generation);
    // QueryRange from a polled source's upstream, once the request is checked.
    grpc::Status queryUpstream(const HistoryProvider &history, grpc::ServerContext *context,
        const std::vector<MetricId> &metrics, std::vector<uint32_t> gpus, int64_t from, int64_t to, int64_t step,
        grpc::ServerWriter<fleetscope::telemetry::v1::QueryRangePart> *writer) const;

    // The latest alerts state's parts, encoded once for every stream (alertsEncoded).
    using AlertParts = std::shared_ptr<const std::vector<fleetscope::telemetry::v1::AlertsPart>>;
    AlertParts encodedAlerts(const std::shared_ptr<const AlertsState> &state);

    const FrameSource &m_source;
    AlertDesk *m_alerts = nullptr;
    AuditLog *m_audit = nullptr;
    std::mutex m_alertsMutex; // guards the two below
    uint64_t m_alertsGeneration = 0;
    AlertParts m_alertParts;
    AccessGate m_openGate;
    AccessGate *m_gate;
    mutable StallWatch m_stalls;
    SharedEncodings m_encodings;
    std::mutex m_aheadMutex; // guards the two below: set at start, taken by the first GetTopology of the generation
    uint64_t m_aheadGeneration = 0;
    std::future<SharedEncodings::TopologyParts> m_ahead;
    HeapTrim m_trim; // each call says when it ends, so that what it freed goes back to the system
};

} // namespace fleetscope::backend
