// SPDX-License-Identifier: Apache-2.0
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

// How both programs ask glibc's malloc to keep the memory they free: call once at the start of main, before other
// threads. Left alone, glibc maps each buffer over its mmap threshold on its own (and unmaps it when freed) and gives
// back the top of an arena whenever a free leaves more than its trim threshold there, both of which it moves as
// buffers are freed. Each buffer of a frame, a map image or a window's worth of pixels was then faulted in afresh page
// by page: on the virtual machines CI and this project's measurements run on, about 10 us a page (20 ms for one 8 MiB
// image, on the console's GUI thread; most of the backend's CPU time with 100 streams). Buffers up to 32 MiB (where
// glibc's moving threshold stops) now come from the arenas and are reused there. The trim threshold stays finite: the
// tops of the threads' arenas shrink only through it (the backend's HeapTrim gives back the rest when calls end).
// Elsewhere than glibc, and under the sanitizers (their own allocator), it does nothing.
namespace fleetscope::heap {

inline constexpr int largestKeptBuffer = 32 << 20;

inline void keepFreedMemory()
{
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, largestKeptBuffer);
    mallopt(M_TRIM_THRESHOLD, largestKeptBuffer);
#endif
}

// The backend polling a Prometheus-compatible server (`--source prometheus`) keeps more, after keepFreedMemory: its
// answers are tens of MB at 100k GPUs, and with a 32 MiB threshold each poll mapped them afresh and faulted them in a
// page at a time (about 1.3 s of a 1.4 s poll at 100k GPUs, docs/PERFORMANCE.md). Buffers up to 1 GiB (the largest
// answer accepted) come from the arenas, and the top of an arena is given back only past 2 GiB, so that a poll's peak
// stays mapped for the next; the backend's HeapTrim still gives back the free pages when calls end. Call once at the
// start of main, before other threads.
inline constexpr int largestKeptAnswer = 1 << 30;

inline void keepLargeAnswers()
{
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, largestKeptAnswer);
    mallopt(M_TRIM_THRESHOLD, 2147483647);
#endif
}

} // namespace fleetscope::heap
