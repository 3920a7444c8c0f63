// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/errorcoalescer.h"
#include "client/rpcclient.h"
#include "model/history.h"

#include <QStringList>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fleetscope {

// What a QueryRange part says, before checking: the wire message in plain types, so the checks can be tested alone.
struct RawRangePart
{
    std::string metricId;
    std::vector<uint32_t> gpus;
    std::vector<int64_t> sampleTimes;
    std::vector<int64_t> times;
    std::string values; // float32 little-endian, rows x columns
};

// Joins the parts of one QueryRange answer into one series per metric, checking each part: columns equal to the
// requested GPUs and inside the fleet (gpuCount 0: unknown), values rows x columns, times ascending within and across
// parts, and metrics among those requested (for the default set, no more than a catalogue lists). A metric with a bad
// part is dropped whole and described in *problems.
std::vector<RangeSeries> assembleRange(
    const std::vector<RawRangePart> &parts, const RangeRequest &request, uint32_t gpuCount, QStringList *problems);

// History and events for the detail views: QueryRange and StreamEvents on a channel of its own to HOST:PORT (cancel,
// pending requests and the deadline, which QueryRange runs under: RpcClient).
//
// Threads: the public API and all signals belong to the object's thread (the GUI thread). Requests are gRPC calls
// on the client's completion-queue thread (RpcJobs), read and checked there; results come back through a Handover
// carrying immutable structs, and the result of a request cancelled in the meantime is dropped. cancel() has the
// request's gRPC context cancelled on that thread.
class HistoryClient : public RpcClient
{
    Q_OBJECT
public:
    explicit HistoryClient(const QString &address, QObject *parent = nullptr);
    HistoryClient(const QString &address, const ChannelSecurity &security, QObject *parent = nullptr);
    ~HistoryClient() override;
    // The fleet the answers are checked against (GPU and node indices); null: columns are checked against the
    // request only.
    void setTopology(TopologyPtr topology);

    // Starts a QueryRange; answers with rangeReady or requestFailed, tagged with the returned id (never 0).
    quint64 queryRange(const RangeRequest &request);
    // Starts a StreamEvents from sinceMs, keeping the events that match the filter: eventsReady with each batch (a
    // burst is delivered as one). With untilMs 0 it follows new events until cancelled; otherwise it finishes
    // (requestFinished) once the events up to untilMs have all been seen. When maxPendingEvents wait for this thread
    // to take them, they are delivered and the stream fails (requestFailed).
    quint64 streamEvents(const EventFilter &filter, int64_t sinceMs, int64_t untilMs = 0);
    // A fleet's hour of events replayed at once is thousands; this many decoded events are 100 MB or so at most.
    static constexpr size_t maxPendingEvents = 200000;

Q_SIGNALS:
    void rangeReady(const fleetscope::RangeResultPtr &result);
    void eventsReady(const fleetscope::EventBatchPtr &batch);
    void requestFinished(quint64 requestId);
    void requestFailed(quint64 requestId, const QString &message);
    // Bad input that was dropped (a malformed part or event), for the log and status bar; at most one per kind (events,
    // ranges) a second, the others of that second counted in the next (ErrorCoalescer).
    void errorOccurred(const QString &message);

private:
    class RangeCall;
    class EventsCall;
    template <typename F> quint64 refuse(F message);

    TopologyPtr m_topology; // owner thread; each call holds the topology it was started with
    ErrorCoalescer m_errors { this }; // reported to from the completion-queue thread too
};

} // namespace fleetscope
