// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/channelsecurity.h"

#include <QObject>
#include <QString>

#include <chrono>
#include <memory>

namespace grpc {
class Channel;
}

namespace fleetscope {

class RpcJobs;

// What the request/answer clients (HistoryClient, SummaryClient) share: a channel of their own to HOST:PORT and the
// gRPC calls in flight on it (RpcJobs), each tagged with an id (never 0) that cancel() takes.
//
// Threads: the public API belongs to the object's thread (the GUI thread). The destructor cancels what is in flight
// and waits for it to end while the channel is still here. It runs after a derived class's members are gone: a call
// may use the channel and post to the client (its results run on this thread, so never during the destructor), but a
// derived class whose calls read its own members on the completion-queue thread must call stopCalls() in its own
// destructor.
class RpcClient : public QObject
{
    Q_OBJECT
public:
    ~RpcClient() override;

    QString address() const { return m_address; }
    // Why no channel could be made (a credentials file unreadable): every call then fails as unavailable.
    QString channelError() const { return m_channelError; }
    // Cancels a request; nothing more is delivered for it. Unknown or finished ids are ignored.
    void cancel(quint64 requestId);
    void cancelAll();
    // Requests whose end has not yet been seen on this thread, cancelled ones included.
    int pendingRequests() const;
    // How long a request under a deadline may take before it fails (default 30 s); applies to requests started
    // afterwards.
    void setDeadline(std::chrono::milliseconds deadline) { m_deadline = deadline; }

protected:
    explicit RpcClient(const QString &address, QObject *parent = nullptr);
    // The same over TLS, with a client certificate or a token as security says (client/channelsecurity.h).
    RpcClient(const QString &address, const ChannelSecurity &security, QObject *parent = nullptr);

    const std::shared_ptr<grpc::Channel> &channel() const { return m_channel; }
    RpcJobs &jobs() const { return *m_jobs; }
    std::chrono::milliseconds deadline() const { return m_deadline; }
    // Cancels what is in flight and waits for it to end; no request may be started afterwards.
    void stopCalls();

private:
    QString m_address;
    QString m_channelError;
    std::shared_ptr<grpc::Channel> m_channel;
    std::chrono::milliseconds m_deadline = std::chrono::seconds(30);
    // Last member: destroyed first, waiting for the calls that use the channel and post to this object.
    std::unique_ptr<RpcJobs> m_jobs;
};

} // namespace fleetscope
