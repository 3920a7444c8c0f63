// SPDX-License-Identifier: Apache-2.0
#include "jobs/parallelrows.h"

#include "jobs/background.h"

#include <algorithm>

namespace fleetscope {

ParallelRows::ParallelRows(int helpers, Priority priority)
    : m_helpers(std::max(0, helpers))
    , m_priority(priority)
{ }

ParallelRows::~ParallelRows()
{
    {
        const std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    for (std::thread &thread : m_threads) {
        thread.join();
    }
}

int ParallelRows::defaultHelpers()
{
    return std::max(0, static_cast<int>(std::thread::hardware_concurrency()) - 1);
}

void ParallelRows::work(const std::function<void(int)> &fn, int count)
{
    for (int i = m_next.fetch_add(1, std::memory_order_relaxed); i < count;
         i = m_next.fetch_add(1, std::memory_order_relaxed)) {
        fn(i);
    }
}

void ParallelRows::run(int count, const std::function<void(int)> &fn)
{
    if (count <= 0) {
        return;
    }
    if (m_helpers == 0 || count == 1) {
        for (int i = 0; i < count; ++i) {
            fn(i);
        }
        return;
    }
    const std::lock_guard caller(m_caller);
    {
        const std::lock_guard lock(m_mutex);
        if (m_threads.empty()) {
            m_threads.reserve(static_cast<size_t>(m_helpers));
            for (int i = 0; i < m_helpers; ++i) {
                m_threads.emplace_back([this] { loop(); });
            }
        }
        m_fn = &fn;
        m_count = count;
        m_next.store(0, std::memory_order_relaxed);
        ++m_run;
    }
    m_wake.notify_all();
    work(fn, count);
    // Every index is taken once this thread finds none left; the helpers still inside finish theirs. A helper that
    // wakes after this finds no run (m_fn null) and waits for the next.
    std::unique_lock lock(m_mutex);
    m_finished.wait(lock, [this] { return m_inside == 0; });
    m_fn = nullptr;
}

void ParallelRows::loop()
{
    if (m_priority == Priority::Background) {
        runThisThreadInBackground();
    }
    unsigned long long seen = 0;
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [&] { return m_stopping || (m_fn != nullptr && m_run != seen); });
        if (m_stopping) {
            return;
        }
        seen = m_run;
        const std::function<void(int)> &fn = *m_fn;
        const int count = m_count;
        ++m_inside;
        lock.unlock();
        work(fn, count);
        lock.lock();
        if (--m_inside == 0) {
            m_finished.notify_one();
        }
    }
}

} // namespace fleetscope
