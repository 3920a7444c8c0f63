// SPDX-License-Identifier: Apache-2.0
#pragma once

// Happens-before edges that ThreadSanitizer cannot see for itself, made visible at hand-overs whose synchronization
// sits inside libraries not built with it (Debian's gRPC: a reactor handed to StartCall / StartRead on our thread is
// run by its callbacks on gRPC's threads, ordered by its completion queue). tsanRelease(p) on the thread handing over,
// tsanAcquire(p) on the thread taking over, both on the same address. Nothing outside a ThreadSanitizer build.
// Never around a real race: only where the library itself orders the two sides.

#if defined(__SANITIZE_THREAD__)
#define FLEETSCOPE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FLEETSCOPE_TSAN 1
#endif
#endif

#ifdef FLEETSCOPE_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace fleetscope {

#ifdef FLEETSCOPE_TSAN
inline void tsanRelease(const void *address)
{
    __tsan_release(const_cast<void *>(address));
}
inline void tsanAcquire(const void *address)
{
    __tsan_acquire(const_cast<void *>(address));
}
#else
inline void tsanRelease(const void *) { }
inline void tsanAcquire(const void *) { }
#endif

} // namespace fleetscope
