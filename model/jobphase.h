// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

namespace fleetscope {

// What a job is doing, from its GPUs' telemetry (the contract's JobPhase, docs/JOBS.md).
enum class JobPhase : uint8_t {
    Unwatched, // the backend has not said (before it saw the job, or an older backend)
    Compute, // busy together, all-reduce dips included
    Checkpoint, // every GPU idle together, briefly
    Stall, // idle past a checkpoint's length, or held by GPUs offline, impaired or cut off
    Restart, // starting again after a stall that lost GPUs
    Ended,
};

} // namespace fleetscope
