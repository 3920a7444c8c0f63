// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "fleetmodel.h"

#include <QObject>
#include <QStringList>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace grpc {
class Channel;
}

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

    const RangeSeries *find(const QString &metricId) const
    {
        for (const auto &s : series) {
            if (s.metricId == metricId) {
                return &s;
            }
        }
        return nullptr;
    }
};

struct FleetEvent
{
    enum class Kind {
        Xid,
        EccDoubleBit,
        ThermalThrottleStart,
        ThermalThrottleEnd,
        PowerThrottleStart,
        PowerThrottleEnd,
        NodeDown,
        NodeUp,
        JobStart,
        JobEnd
    };
    enum class Severity { Info, Warning, Critical };

    int64_t timeMs = 0;
    uint64_t sequence = 0;
    Kind kind = Kind::Xid;
    Severity severity = Severity::Info;
    int64_t gpu = -1; // dense index, -1 for node and job events
    int64_t node = -1; // -1 when none
    uint64_t jobId = 0;
    uint32_t xid = 0; // for XID and ECC events
    QString text;
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
// parts, and metrics among those requested. A metric with a bad part is dropped whole and described in *problems.
std::vector<RangeSeries> assembleRange(
    const std::vector<RawRangePart> &parts, const RangeRequest &request, uint32_t gpuCount, QStringList *problems);

// The meaning of an NVIDIA XID code, from NVIDIA's XID catalogue; empty for codes not in the table.
QString xidMeaning(uint32_t xid);
QString describe(FleetEvent::Kind kind);

// History and events for the detail views: QueryRange and StreamEvents on a channel of its own to HOST:PORT.
//
// Threads: the public API and all signals belong to the object's thread (the GUI thread). Each request runs on a
// worker std::thread with blocking gRPC calls; results come back as queued calls carrying immutable structs, and the
// result of a request cancelled in the meantime is dropped. cancel() cancels the request's gRPC context at once; the
// worker is joined when it has finished, or in the destructor.
class HistoryClient : public QObject
{
    Q_OBJECT
public:
    explicit HistoryClient(const QString &address, QObject *parent = nullptr);
    ~HistoryClient() override;

    QString address() const { return m_address; }
    // The fleet the answers are checked against (GPU and node indices); null: columns are checked against the
    // request only.
    void setTopology(TopologyPtr topology);

    // Starts a QueryRange; answers with rangeReady or requestFailed, tagged with the returned id (never 0).
    quint64 queryRange(const RangeRequest &request);
    // Starts a StreamEvents from sinceMs, keeping the events that match the filter: eventsReady with each batch (a
    // burst is delivered as one). With untilMs 0 it follows new events until cancelled; otherwise it finishes
    // (requestFinished) once the events up to untilMs have all been seen.
    quint64 streamEvents(const EventFilter &filter, int64_t sinceMs, int64_t untilMs = 0);
    // Cancels a request; nothing more is delivered for it. Unknown or finished ids are ignored.
    void cancel(quint64 requestId);
    void cancelAll();
    // Requests whose worker has not finished yet, cancelled ones included.
    int pendingRequests() const;

Q_SIGNALS:
    void rangeReady(const fleetscope::RangeResultPtr &result);
    void eventsReady(const fleetscope::EventBatchPtr &batch);
    void requestFinished(quint64 requestId);
    void requestFailed(quint64 requestId, const QString &message);
    // Bad input that was dropped (a malformed part or event), for the log and status bar.
    void errorOccurred(const QString &message);

private:
    struct Job;
    void runRange(std::shared_ptr<Job> job, RangeRequest request, TopologyPtr topology);
    void runEvents(
        std::shared_ptr<Job> job, EventFilter filter, int64_t sinceMs, int64_t untilMs, TopologyPtr topology);
    void finishJob(quint64 id);
    void deliverEvents(quint64 id);
    std::shared_ptr<Job> startJob();
    template <typename F> void post(F &&f);

    QString m_address;
    std::shared_ptr<grpc::Channel> m_channel;
    TopologyPtr m_topology;
    quint64 m_nextId = 0;
    // Touched by the owner thread only; each Job's own mutex guards what its worker shares with it.
    std::map<quint64, std::shared_ptr<Job>> m_jobs;
};

} // namespace fleetscope

Q_DECLARE_METATYPE(fleetscope::RangeResultPtr)
Q_DECLARE_METATYPE(fleetscope::EventBatchPtr)
