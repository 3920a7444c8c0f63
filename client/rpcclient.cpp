// SPDX-License-Identifier: Apache-2.0
#include "client/rpcclient.h"

#include "client/rpcjobs.h"

#include <grpcpp/grpcpp.h>

#include <QThread>

namespace fleetscope {

RpcClient::RpcClient(const QString &address, QObject *parent)
    : RpcClient(address, ChannelSecurity(), parent)
{ }

RpcClient::RpcClient(const QString &address, const ChannelSecurity &security, QObject *parent)
    : QObject(parent)
    , m_address(address)
    , m_jobs(std::make_unique<RpcJobs>())
{
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(maxReceiveMessageBytes);
    m_channel = createChannel(address.toStdString(), security, args, &m_channelError);
    if (!m_channel) {
        // A credentials file could not be read (the live stream says which): no call may go out without them, so every
        // call goes to a socket that is not there and fails as unavailable.
        m_channel = grpc::CreateChannel(
            "unix:/nonexistent/fleetscope-credentials-unreadable", grpc::InsecureChannelCredentials());
    }
}

RpcClient::~RpcClient()
{
    stopCalls();
}

void RpcClient::stopCalls()
{
    m_jobs.reset(); // cancels and waits, while the channel is still here
}

void RpcClient::cancel(quint64 requestId)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_jobs->cancel(requestId);
}

void RpcClient::cancelAll()
{
    m_jobs->cancelAll();
}

int RpcClient::pendingRequests() const
{
    return m_jobs->pending();
}

} // namespace fleetscope
