// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/channelsecurity.h"
#include "client/errorcoalescer.h"
#include "model/alerts.h"
#include "model/fleetmodel.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <chrono>
#include <memory>
#include <set>

namespace grpc {
class Channel;
}

namespace fleetscope {

class RpcJobs;

using AlertBoardPtr = std::shared_ptr<const AlertBoard>;

// The NOC's alerts as a backend serves them: follows StreamAlerts and hands each state, decoded and checked against
// the topology (client/alertsdecode.h), to the thread it lives on, latest-wins; asks who this console is (GetAccess)
// once per connection; makes and ends silences (CreateSilence, ExpireSilence) under a deadline. While the backend is
// unreachable the stream is followed again with backoff (0.5 s doubling to 10 s); a backend that reads no Alertmanager
// (FAILED_PRECONDITION, or one that does not know the call) is asked again every 30 s.
//
// Threads: the public API and all signals belong to the object's thread (the GUI thread). The calls run on the
// completion-queue thread of its RpcJobs, where the parts are joined and decoded; what they deliver comes back through
// RpcJobs' Handover, and what a superseded stream still delivers is dropped.
class AlertsClient : public QObject
{
    Q_OBJECT
public:
    enum class State : uint8_t {
        Idle,
        Connecting, // the stream is asked for; nothing read yet
        Open, // a state has been read on the stream that is open now
        NotConfigured, // the backend reads no Alertmanager
        Reconnecting, // the stream ended or could not be opened; asked again after nextRetryDelayMs
    };
    Q_ENUM(State)

    explicit AlertsClient(QObject *parent = nullptr);
    ~AlertsClient() override;

    // Starts (or restarts) following HOST:PORT's alerts over a channel of its own, with security's credentials.
    void start(const QString &address, const ChannelSecurity &security = ChannelSecurity());
    void stop();
    // What alerts are placed within (their runs, node and domain checked against it; null: none kept). Another
    // generation follows the stream again, so that the next state comes decoded against it.
    void setTopology(TopologyPtr topology);

    QString address() const { return m_address; }
    State state() const { return m_state; }
    // Why the stream ended, or what is happening now, for people.
    QString stateDetail() const { return m_stateDetail; }
    // Why the stream last ended, for people (empty before it ever did).
    QString lastError() const { return m_lastError; }
    // The newest state decoded (null before the first): kept when the stream ends.
    AlertBoardPtr board() const { return m_board; }
    const BackendAccess &access() const { return m_access; }
    bool accessKnown() const { return m_accessKnown; }
    int nextRetryDelayMs() const { return m_nextRetryMs; }
    // States dropped whole since start (counts that lie, a part of another state, bounds passed).
    quint64 statesRejected() const { return m_statesRejected; }
    // Why the last state was refused (the decoder's words); empty before any was.
    QString lastRejection() const { return m_lastRejection; }

    // Asks the backend for a silence; silenceDone(requestId, ...) says how it went. The id is never 0.
    quint64 createSilence(const SilenceDraft &draft);
    quint64 expireSilence(const QString &silenceId);
    // How long a silence call may take (default 60 s): the backend makes the silence in Alertmanager and reads it back
    // before it answers, up to a few of Alertmanager's timeouts (10 s each by default) when it is slow; a call cut
    // short of that would say "not known whether it was done" of a silence made, and invite a second one.
    void setCallDeadline(std::chrono::milliseconds deadline) { m_callDeadline = deadline; }

    // The retry waits (0.5 s doubling to 10 s while unreachable, 30 s without an Alertmanager); tests shorten them.
    struct Backoff
    {
        int initialMs = 500;
        int maxMs = 10000;
        int notConfiguredMs = 30000;
    };
    void setBackoff(const Backoff &backoff) { m_backoff = backoff; }

Q_SIGNALS:
    void boardReady(const fleetscope::AlertBoardPtr &board);
    void stateChanged(fleetscope::AlertsClient::State state, const QString &detail);
    void accessChanged(const fleetscope::BackendAccess &access);
    // ok: created (message: the silence's id) or expired; else the backend's or gRPC's words for people.
    void silenceDone(quint64 requestId, bool ok, const QString &message);
    // A state dropped as bad, for the log and the status bar; at most one a second (ErrorCoalescer).
    void errorOccurred(const QString &message);

private:
    class StreamCall;
    void follow();
    void fetchAccess();
    void setState(State state, const QString &detail);
    void onStreamOpened(quint64 call);
    void onStreamEnded(quint64 call, int code, const QString &why, bool opened);
    quint64 refuseCall(const QString &message);
    void onSilenceAnswered(quint64 call, bool ok, bool denied, const QString &message);

    QString m_address;
    ChannelSecurity m_security;
    TopologyPtr m_topology;
    State m_state = State::Idle;
    QString m_stateDetail;
    QString m_lastError;
    AlertBoardPtr m_board;
    BackendAccess m_access;
    bool m_accessKnown = false; // for this connection: asked again after the stream ends
    quint64 m_accessCall = 0;
    quint64 m_stream = 0; // the StreamAlerts followed, 0 for none
    quint64 m_statesRejected = 0;
    QString m_lastRejection;
    Backoff m_backoff;
    int m_backoffMs = 500; // the next wait while unreachable
    int m_nextRetryMs = 0;
    std::chrono::milliseconds m_callDeadline = std::chrono::seconds(60);
    QTimer m_retryTimer;
    QString m_channelError;

    std::set<quint64> m_silenceCalls; // under way: said failed when the connection is replaced

    ErrorCoalescer m_errors { this }; // reported to from the completion-queue thread
    std::shared_ptr<grpc::Channel> m_channel;
    // Last member: destroyed first, cancelling the calls and waiting for them while the channel is still here.
    std::unique_ptr<RpcJobs> m_jobs;
};

} // namespace fleetscope

Q_DECLARE_METATYPE(fleetscope::AlertBoardPtr)
Q_DECLARE_METATYPE(fleetscope::BackendAccess)
