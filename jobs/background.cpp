// SPDX-License-Identifier: Apache-2.0
#include "jobs/background.h"

#if defined(__linux__)
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#endif

namespace fleetscope {

namespace {
thread_local bool lowered = false;
} // namespace

void runThisThreadInBackground()
{
    if (lowered) {
        return;
    }
    lowered = true;
#if defined(__linux__)
    // On Linux a thread's nice value is its own: PRIO_PROCESS with a thread id sets that thread's alone. Over the
    // main thread's, not this one's: a thread started by a lowered one starts lowered already.
    const auto self = static_cast<id_t>(gettid());
    errno = 0;
    const int base = getpriority(PRIO_PROCESS, static_cast<id_t>(getpid()));
    const int now = getpriority(PRIO_PROCESS, self);
    const int wanted = std::min(19, base + backgroundNice);
    if (errno == 0 && now < wanted) {
        setpriority(PRIO_PROCESS, self, wanted);
    }
#endif
}

bool runsInBackground()
{
    return lowered;
}

} // namespace fleetscope
