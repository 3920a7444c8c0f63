// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>

namespace fleetscope::backend {

// This host's wall clock in milliseconds since the Unix epoch: the time frames, events and requests are stamped in.
inline int64_t nowUnixMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace fleetscope::backend
