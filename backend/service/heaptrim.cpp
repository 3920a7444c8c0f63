// SPDX-License-Identifier: Apache-2.0
#include "service/heaptrim.h"

#include "common/heap.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>

namespace fleetscope::backend {

namespace {
void trimHeap()
{
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
} // namespace

void HeapTrim::keepFreedMemoryUntilTrimmed()
{
    heap::keepFreedMemory();
}

HeapTrim::HeapTrim(std::chrono::milliseconds interval, uint64_t leastDrop, std::chrono::milliseconds quiet, Trim trim)
    : m_interval(interval)
    , m_leastDrop(leastDrop)
    , m_quiet(quiet)
    , m_trim(trim ? std::move(trim) : Trim(trimHeap))
    , m_thread([this] { run(); })
{ }

HeapTrim::~HeapTrim()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_changed.notify_all();
    m_thread.join();
}

void HeapTrim::started()
{
    std::lock_guard lock(m_mutex);
    ++m_calls;
    m_most = std::max(m_most, m_calls);
    m_lastStart = std::chrono::steady_clock::now();
}

void HeapTrim::ended()
{
    bool wake = false;
    {
        std::lock_guard lock(m_mutex);
        m_calls -= m_calls > 0 ? 1 : 0;
        wake = dueLocked() || m_ended++ == 0; // a storm ending, or the first end the quiet rule waits on
    }
    if (wake) {
        m_changed.notify_all();
    }
}

uint64_t HeapTrim::trims() const
{
    std::lock_guard lock(m_mutex);
    return m_trims;
}

void HeapTrim::run()
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_changed.wait(lock, [this] { return m_stopping || dueLocked() || m_ended > 0; });
        if (m_stopping) {
            return;
        }
        if (!dueLocked()) {
            // Calls ended: trim once none has started for the quiet time, unless a storm's end comes first.
            const auto quietAt = m_lastStart + m_quiet;
            if (m_changed.wait_until(
                    lock, quietAt, [&] { return m_stopping || dueLocked() || m_lastStart + m_quiet > quietAt; })) {
                if (m_stopping) {
                    return;
                }
                if (!dueLocked()) {
                    continue; // a call started: wait for quiet from then
                }
            }
        }
        m_most = m_calls;
        m_ended = 0;
        lock.unlock();
        m_trim();
        lock.lock();
        ++m_trims;
        // At most one trim an interval: calls ending meanwhile wait for the next (from the most since this one).
        if (m_changed.wait_for(lock, m_interval, [this] { return m_stopping; })) {
            return;
        }
    }
}

} // namespace fleetscope::backend
