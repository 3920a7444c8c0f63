// SPDX-License-Identifier: Apache-2.0
#include "jobs/worker.h"

#include "jobs/background.h"

namespace fleetscope {

Worker::Worker(QObject *parent)
    : QObject(parent)
    , m_results(this)
{ }

Worker::~Worker()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_jobs.clear();
    }
    m_wake.notify_one();
    if (m_thread.joinable()) {
        m_thread.join();
    }
    // The results not yet delivered are dropped with m_results.
}

void Worker::run(Job job)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping) {
            return;
        }
        m_jobs.push_back(std::move(job));
        if (!m_thread.joinable()) {
            m_thread = std::thread([this] { loop(); });
        }
    }
    m_wake.notify_one();
}

void Worker::finishJobs()
{
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [this] { return m_jobs.empty() && !m_busy; });
}

void Worker::loop()
{
    runThisThreadInBackground();
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [this] { return m_stopping || !m_jobs.empty(); });
        if (m_stopping) {
            return;
        }
        Job job = std::move(m_jobs.front());
        m_jobs.pop_front();
        m_busy = true;
        lock.unlock();
        Result result = job();
        job = nullptr; // its captures go here, not on the owner's thread
        lock.lock();
        m_busy = false;
        if (m_jobs.empty()) {
            m_idle.notify_all();
        }
        if (!result || m_stopping) {
            continue;
        }
        m_results.post(std::move(result));
    }
}

} // namespace fleetscope
