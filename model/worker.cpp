// SPDX-License-Identifier: Apache-2.0
#include "model/worker.h"

#include <QCoreApplication>

namespace fleetscope {

namespace {
QEvent::Type resultsReady()
{
    static const auto type = static_cast<QEvent::Type>(QEvent::registerEventType());
    return type;
}
} // namespace

Worker::Worker(QObject *parent)
    : QObject(parent)
    , m_wakeOwner(new QEvent(resultsReady()))
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
    // Not posted, ours to delete; a posted one is deleted by Qt with this object's events, undelivered.
    delete m_wakeOwner;
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

void Worker::loop()
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [this] { return m_stopping || !m_jobs.empty(); });
        if (m_stopping) {
            return;
        }
        Job job = std::move(m_jobs.front());
        m_jobs.pop_front();
        lock.unlock();
        Result result = job();
        job = nullptr; // its captures go here, not on the owner's thread
        lock.lock();
        if (!result || m_stopping) {
            continue;
        }
        m_results.push_back(std::move(result));
        if (m_results.size() == 1) { // else the owner has been woken already and takes this one too
            QEvent *wake = std::exchange(m_wakeOwner, nullptr);
            Q_ASSERT(wake);
            lock.unlock();
            QCoreApplication::postEvent(this, wake);
            lock.lock();
        }
    }
}

void Worker::customEvent(QEvent *event)
{
    if (event->type() != resultsReady()) {
        QObject::customEvent(event);
        return;
    }
    std::vector<Result> results;
    {
        std::lock_guard lock(m_mutex);
        results.swap(m_results);
        m_wakeOwner = new QEvent(resultsReady()); // Qt deletes the one being delivered
    }
    for (auto &result : results) {
        result();
    }
}

} // namespace fleetscope
