// SPDX-License-Identifier: Apache-2.0
#include "service/heaptrim.h"

#include "common/heap.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>

namespace fleetscope::backend {

namespace {
void trimHeap()
{
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

// After a storm of calls ended (at least leastDrop since the last trim) and the heap was trimmed: what the program
// still uses against what malloc holds free, so that the journal tells a leak (in use grows from storm to storm) from
// memory the allocator keeps (free grows).
void reportHeap(uint64_t callsEnded, uint64_t underWay)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    const struct mallinfo2 info = mallinfo2();
    constexpr double mib = 1024.0 * 1024.0;
    fmt::print(stderr,
        "fleetscope-backend: {} calls ended ({} under way), heap trimmed: {:.1f} MiB in use, {:.1f} MiB free in "
        "malloc's arenas\n",
        callsEnded, underWay, static_cast<double>(info.uordblks + info.hblkhd) / mib,
        static_cast<double>(info.fordblks) / mib);
#else
    (void)callsEnded;
    (void)underWay;
#endif
}
} // namespace

void HeapTrim::keepFreedMemoryUntilTrimmed()
{
    heap::keepFreedMemory();
#if defined(__GLIBC__)
    mallopt(M_ARENA_MAX, maxArenas);
#endif
}

HeapTrim::HeapTrim(std::chrono::milliseconds interval, uint64_t leastDrop, std::chrono::milliseconds quiet, Trim trim)
    : m_interval(interval)
    , m_leastDrop(leastDrop)
    , m_quiet(quiet)
    , m_reports(!trim)
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
        const bool first = m_ended++ == 0;
        wake = dueLocked() || first; // a storm ending, or the first end the quiet rule waits on
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
        // Reported when a storm's worth of calls ended since the last trim, and again when the storm is over (none
        // under way, or none started for the quiet time): a storm is trimmed half way as its calls end, and what the
        // heap holds after it is the figure that tells a leak.
        const bool over = m_calls == 0 || !dueLocked();
        const uint64_t underWay = m_calls;
        bool report = false;
        if (m_reports && m_reportedPart) {
            m_endedSinceReport += m_ended;
            report = over;
        } else if (m_reports && m_ended >= m_leastDrop) {
            m_endedSinceReport = m_ended;
            report = true;
        }
        const uint64_t ended = m_endedSinceReport;
        if (report) {
            m_reportedPart = !over;
        }
        m_most = m_calls;
        m_ended = 0;
        lock.unlock();
        m_trim();
        if (report) {
            reportHeap(ended, underWay);
        }
        lock.lock();
        ++m_trims;
        // At most one trim an interval: calls ending meanwhile wait for the next (from the most since this one).
        if (m_changed.wait_for(lock, m_interval, [this] { return m_stopping; })) {
            return;
        }
    }
}

} // namespace fleetscope::backend
