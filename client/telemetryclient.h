// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/channelsecurity.h"
#include "client/errorcoalescer.h"
#include "common/keepalive.h"
#include "jobs/handover.h"
#include "model/fleetmodel.h"

#include <QObject>
#include <QStringList>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace grpc {
class ClientContext;
}

namespace fleetscope {

// Connects to a Fleetscope backend, fetches the topology and metric catalogue, subscribes to frames and hands the
// newest decoded frame to the thread it lives on (the GUI thread), latest-wins: a burst of frames while that thread
// is busy is delivered as one. When the backend goes away it says so and reconnects with exponential backoff.
//
// Threads: the public API and all signals belong to the object's thread. Each connection attempt ("session") runs
// on one worker std::thread with blocking gRPC calls; results come back through a Handover, tagged with the session
// id, and results of a superseded session are dropped.
class TelemetryClient : public QObject
{
    Q_OBJECT
public:
    enum class State { Idle, Connecting, Live, Reconnecting };
    Q_ENUM(State)

    // How long a connection may go without a word from the backend before it is probed with an HTTP/2 ping, and how
    // long the answer may take: a backend gone without closing the connection (a pulled cable, a frozen VM, a
    // blackholing firewall) is noticed within their sum.
    struct Keepalive
    {
        int timeMs = 10000;
        int timeoutMs = 5000;
    };

    explicit TelemetryClient(QObject *parent = nullptr);
    ~TelemetryClient() override;

    // Starts (or restarts) talking to HOST:PORT, over TLS with a token or client certificate as security says.
    void start(const QString &address, const ChannelSecurity &security = ChannelSecurity());
    const ChannelSecurity &security() const { return m_security; }
    void stop();
    // Metric ids to subscribe to; empty means the backend's default set. Takes effect by resubscribing.
    void setMetrics(const QStringList &metricIds);

    State state() const { return m_state; }
    QString address() const { return m_address; }
    // Why the last session ended, or what is happening now, for people.
    QString stateDetail() const { return m_stateDetail; }
    TopologyPtr topology() const { return m_topology; }
    const std::vector<MetricInfo> &metrics() const { return m_metrics; }
    FramePtr latestFrame() const { return m_latest; }
    // Jobs, as last listed (ListJobs is polled while connected); null before the first answer.
    JobsPtr jobs() const { return m_jobs; }
    // How often jobs are listed again (default 10 s); takes effect with the next session.
    void setJobsPollInterval(int ms) { m_jobsPollMs = std::max(100, ms); }
    // Takes effect with the next session; the defaults suit a console, tests shorten them. The time is at least what
    // the backend accepts (common/keepalive.h).
    void setKeepalive(const Keepalive &wanted)
    {
        m_keepalive = { std::max(fleetscope::keepalive::minTimeMs, wanted.timeMs), std::max(1, wanted.timeoutMs) };
    }
    const Keepalive &keepalive() const { return m_keepalive; }
    // Frames decoded since start, including those coalesced away for display.
    quint64 framesReceived() const { return m_framesReceived.load(); }
    // Frames dropped as malformed since start.
    quint64 framesRejected() const { return m_framesRejected.load(); }
    int nextRetryDelayMs() const { return m_backoffMs; }

Q_SIGNALS:
    void stateChanged(fleetscope::TelemetryClient::State state, const QString &detail);
    void topologyChanged(const fleetscope::TopologyPtr &topology);
    void metricsChanged();
    void frameReady(const fleetscope::FramePtr &frame);
    void jobsChanged(const fleetscope::JobsPtr &jobs);
    // A bad input that was dropped (a malformed frame, an inconsistent topology), for the log and status bar; at most
    // one per kind (frames, topology, catalogue, jobs) a second, the others of that second counted in the next.
    void errorOccurred(const QString &message);

private:
    void startSession();
    void stopSession();
    void runSession(quint64 session, std::string address, ChannelSecurity security, Keepalive keepalive,
        std::vector<std::string> metrics, uint64_t lastGeneration, uint64_t resumeAfter);
    void setState(State state, const QString &detail);
    void onSessionEnded(quint64 session, const QString &why, bool wasLive);
    void deliverPendingFrame(quint64 session);
    void runJobsPoll(quint64 session, std::string address, ChannelSecurity security, int intervalMs);
    // Worker -> owner thread.
    void postFrame(quint64 session, FramePtr frame);
    template <typename F> void post(F &&f);

    QString m_address;
    ChannelSecurity m_security;
    QStringList m_metricIds;
    State m_state = State::Idle;
    QString m_stateDetail;
    TopologyPtr m_topology;
    std::vector<MetricInfo> m_metrics;
    FramePtr m_latest;
    QTimer m_retryTimer;
    int m_backoffMs = 0;

    std::atomic<quint64> m_framesReceived { 0 };
    std::atomic<quint64> m_framesRejected { 0 };

    // Session bookkeeping. m_session and m_worker are touched only by the owner thread. m_cancelMutex guards
    // m_context and m_cancelled, shared with the worker so that stop() can cancel a blocking call.
    quint64 m_session = 0;
    std::thread m_worker;
    std::thread m_jobsWorker; // lists jobs every m_jobsPollMs while the session lasts
    std::mutex m_cancelMutex;
    std::condition_variable m_sessionChanged; // wakes the jobs worker: cancelled, or the topology has been posted
    bool m_topologyPosted = false; // this session's topology is on its way to the owner thread
    TopologyPtr m_sessionTopology; // that topology, for the jobs worker to decode against
    std::shared_ptr<grpc::ClientContext> m_context;
    std::shared_ptr<grpc::ClientContext> m_jobsContext;
    bool m_cancelled = false;
    JobsPtr m_jobs;
    int m_jobsPollMs = 10000;
    Keepalive m_keepalive;

    ErrorCoalescer m_errors; // the workers' errors, to this object's thread; a child, as m_handover
    Handover m_handover; // the workers' results, to this object's thread (a child: it moves with it)

    // Latest-wins hand-over: the worker replaces m_pending and queues one delivery if none is queued.
    std::mutex m_pendingMutex;
    FramePtr m_pending;
    bool m_deliveryQueued = false;
};

} // namespace fleetscope
