// SPDX-License-Identifier: Apache-2.0
#include "client/rpcjobs.h"

#include <QThread>

#include <vector>

namespace fleetscope {

RpcJobs::Call::Call(RpcJobs &jobs, QObject *receiver, std::optional<std::chrono::milliseconds> deadline)
    : m_jobs(jobs)
    , m_receiver(receiver)
    , m_context(std::make_shared<grpc::ClientContext>())
{
    Q_ASSERT(!receiver || receiver->thread() == jobs.m_mailbox.thread());
    if (deadline) {
        m_context->set_deadline(std::chrono::system_clock::now() + *deadline);
    }
}

RpcJobs::RpcJobs() = default;

RpcJobs::~RpcJobs()
{
    cancelAll();
    std::unique_lock lock(m_mutex);
    m_released.wait(lock, [this] { return m_running == 0; });
}

quint64 RpcJobs::add(Call *call)
{
    Q_ASSERT(QThread::currentThread() == m_mailbox.thread());
    call->m_id = ++m_nextId;
    m_pending[call->m_id] = false;
    std::lock_guard lock(m_mutex);
    m_live[call->m_id] = call->m_context;
    ++m_running;
    return call->m_id;
}

void RpcJobs::cancel(quint64 id)
{
    Q_ASSERT(QThread::currentThread() == m_mailbox.thread());
    const auto it = m_pending.find(id);
    if (it == m_pending.end() || it->second) {
        return;
    }
    it->second = true;
    std::shared_ptr<grpc::ClientContext> context;
    {
        std::lock_guard lock(m_mutex);
        if (const auto live = m_live.find(id); live != m_live.end()) {
            context = live->second;
        }
    }
    // Outside the lock: gRPC may run the call's reactions, OnDone included, inline in TryCancel.
    if (context) {
        context->TryCancel();
    }
}

void RpcJobs::cancelAll()
{
    std::vector<quint64> ids;
    for (const auto &[id, cancelled] : m_pending) {
        ids.push_back(id);
    }
    for (const quint64 id : ids) {
        cancel(id);
    }
}

int RpcJobs::running() const
{
    std::lock_guard lock(m_mutex);
    return m_running;
}

bool RpcJobs::arrive(quint64 id, bool last)
{
    const auto it = m_pending.find(id);
    if (it == m_pending.end()) {
        return false;
    }
    const bool wanted = !it->second;
    if (last) {
        m_pending.erase(it);
    }
    return wanted;
}

void RpcJobs::release(quint64 id, Handover::Task last)
{
    std::lock_guard lock(m_mutex);
    m_live.erase(id);
    --m_running;
    // Under the lock: the destructor cannot destroy m_mailbox before it is posted, and the owner thread sees the call
    // as not running by the time last has run.
    m_mailbox.post(std::move(last));
    // Under the lock: the destructor cannot return, and destroy m_released, before this has been notified.
    m_released.notify_all();
}

} // namespace fleetscope
