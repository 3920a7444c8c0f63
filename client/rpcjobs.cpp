// SPDX-License-Identifier: Apache-2.0
#include "client/rpcjobs.h"

#include "jobs/background.h"

#include <QThread>

namespace fleetscope {

RpcJobs::Call::Call(RpcJobs &jobs, QObject *receiver, std::optional<std::chrono::milliseconds> deadline)
    : m_jobs(jobs)
    , m_receiver(receiver)
    , m_tags { { this, 0 }, { this, 1 }, { this, 2 } }
{
    Q_ASSERT(!receiver || receiver->thread() == jobs.m_mailbox.thread());
    if (deadline) {
        m_context.set_deadline(std::chrono::system_clock::now() + *deadline);
    }
}

RpcJobs::RpcJobs()
    : m_thread([this] { run(); })
{ }

RpcJobs::~RpcJobs()
{
    cancelAll();
    {
        std::unique_lock lock(m_mutex);
        m_released.wait(lock, [this] { return m_running == 0; });
    }
    // No call is left to add an operation to the queue: what is still on it (a wake for the cancels) drains, then
    // Next() returns false.
    m_cq.Shutdown();
    m_thread.join();
}

quint64 RpcJobs::start(Call *call)
{
    Q_ASSERT(QThread::currentThread() == m_mailbox.thread());
    const quint64 id = ++m_nextId;
    call->m_id = id;
    m_pending[id] = false;
    {
        std::lock_guard lock(m_mutex);
        ++m_running;
    }
    toQueueThread([this, call] {
        m_calls[call->m_id] = call;
        call->start(&m_cq);
    });
    return id;
}

void RpcJobs::cancel(quint64 id)
{
    Q_ASSERT(QThread::currentThread() == m_mailbox.thread());
    const auto it = m_pending.find(id);
    if (it == m_pending.end() || it->second) {
        return;
    }
    it->second = true;
    // Queued behind the call's start: the call has been issued by then, or has already ended.
    toQueueThread([this, id] {
        if (const auto call = m_calls.find(id); call != m_calls.end()) {
            call->second->context()->TryCancel();
        }
    });
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
    m_calls.erase(id);
    std::lock_guard lock(m_mutex);
    --m_running;
    // Under the lock: the destructor cannot destroy m_mailbox before it is posted, and the owner thread sees the call
    // as not running by the time last has run.
    m_mailbox.post(std::move(last));
    // Under the lock: the destructor cannot return, and destroy m_released, before this has been notified.
    m_released.notify_all();
}

void RpcJobs::toQueueThread(std::function<void()> task)
{
    std::lock_guard lock(m_mutex);
    m_tasks.push_back(std::move(task));
    if (!m_wake) {
        // An alarm due now is the way to put an event of our own on the queue; one at a time (an alarm is set once).
        m_wake = std::make_unique<grpc::Alarm>();
        m_wake->Set(&m_cq, std::chrono::system_clock::now(), this);
    }
}

void RpcJobs::run()
{
    runThisThreadInBackground(); // decodes answers (at a million GPUs, tens of ms each)
    void *tag = nullptr;
    bool ok = false;
    while (m_cq.Next(&tag, &ok)) {
        if (tag != this) {
            const auto *step = static_cast<Call::Tag *>(tag);
            step->call->proceed(step->step, ok);
            continue;
        }
        std::vector<std::function<void()>> tasks;
        std::unique_ptr<grpc::Alarm> fired;
        {
            std::lock_guard lock(m_mutex);
            tasks.swap(m_tasks);
            fired = std::move(m_wake);
        }
        for (auto &task : tasks) {
            task();
        }
    }
}

} // namespace fleetscope
