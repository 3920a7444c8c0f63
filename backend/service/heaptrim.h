// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace fleetscope::backend {

// Gives the memory that ended calls freed back to the system. glibc's malloc keeps what is freed in its arenas (up to
// eight per core, spread over the threads that allocated) and returns to the system only what lies at the top of one:
// after 2,000 subscribes were cancelled, the backend held 2.7x its resting memory for minutes with nothing running.
// Calls say when they start and end; malloc_trim gives back the free pages of every arena, at most once per `interval`,
// when the calls under way have fallen to half of the most there were since the last trim (and by at least
// `leastDrop`: a storm of streams ending), or when calls have ended since the last trim and none has started for
// `quiet` (a burst of short calls, then nothing). Calls starting and ending at a steady rate (100 consoles streaming,
// each polling its jobs) trim nothing, so their buffers are reused rather than faulted in afresh. Elsewhere than glibc
// it does nothing.
//
// Locking: m_mutex guards the counts and m_stopping.
class HeapTrim
{
public:
    using Trim = std::function<void()>;
    static constexpr std::chrono::milliseconds defaultInterval { 1000 };
    static constexpr uint64_t defaultLeastDrop = 16;
    static constexpr std::chrono::milliseconds defaultQuiet { 2000 };

    // `trim` is what runs (malloc_trim(0) by default, which also logs what the heap holds once at least leastDrop calls
    // ended since the last trim: "N calls ended (M under way), heap trimmed: X MiB in use, Y MiB free in malloc's
    // arenas", and again once that storm is over (none under way, or none started for `quiet`); tests count
    // instead).
    explicit HeapTrim(std::chrono::milliseconds interval = defaultInterval, uint64_t leastDrop = defaultLeastDrop,
        std::chrono::milliseconds quiet = defaultQuiet, Trim trim = {});
    ~HeapTrim();
    HeapTrim(const HeapTrim &) = delete;
    HeapTrim &operator=(const HeapTrim &) = delete;

    // A guard for a call: while it lives, the call is under way.
    class Call
    {
    public:
        explicit Call(HeapTrim *trim)
            : m_trim(trim)
        {
            m_trim->started();
        }
        Call(const Call &) = delete;
        Call &operator=(const Call &) = delete;
        ~Call() { m_trim->ended(); }

    private:
        HeapTrim *m_trim;
    };
    [[nodiscard]] Call call() { return Call(this); }

    void started();
    void ended();
    // Makes the trims the main way freed memory goes back (call once, before other threads start): glibc otherwise
    // maps each buffer over its mmap threshold on its own and gives back the top of an arena whenever a free leaves
    // more than its trim threshold there, both of which it moves as buffers are freed. With 100 streams at 102,400
    // GPUs the streams' 0.2-4 MiB buffers were then mapped or faulted in afresh every frame (about 15,000 page faults
    // a second, most of the backend's CPU time). Buffers up to 32 MiB now come from the arenas and stay there until
    // calls end and a trim gives them back. The trim threshold stays finite (32 MiB; 2 GiB when polling Prometheus,
    // common/heap.h): malloc_trim gives back the free pages inside every arena but the top of the threads' arenas
    // only through a free that leaves more than the threshold there; with none, those tops kept up to 200 MB resident
    // after a storm of calls for good.
    // It also caps glibc's arenas at maxArenas (8 per core otherwise): a thread's arena keeps up to the trim threshold
    // at its top after a storm of calls (32 MiB, common/heap.h), which malloc_trim does not give back, so that what a
    // storm can leave held is maxArenas x 32 MiB, not 16 x 32 MiB on two cores and more on larger machines. The
    // handlers' allocations are few and large (a frame part each), so the threads sharing 4 arenas wait on none.
    static constexpr int maxArenas = 4;
    static void keepFreedMemoryUntilTrimmed();
    // Trims run so far.
    uint64_t trims() const;

private:
    void run();

    bool dueLocked() const { return m_calls * 2 <= m_most && m_most - m_calls >= m_leastDrop; }

    const std::chrono::milliseconds m_interval;
    const uint64_t m_leastDrop;
    const std::chrono::milliseconds m_quiet;
    const bool m_reports; // the default trim logs the heap after a storm's end (stderr: the journal under systemd)
    const Trim m_trim;
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    uint64_t m_calls = 0; // under way
    uint64_t m_most = 0; // the most under way at once since the last trim
    uint64_t m_ended = 0; // since the last trim
    uint64_t m_endedSinceReport = 0; // in the storm last reported
    bool m_reportedPart = false; // a storm reported before it was over
    std::chrono::steady_clock::time_point m_lastStart;
    uint64_t m_trims = 0;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace fleetscope::backend
