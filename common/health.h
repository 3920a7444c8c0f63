// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

// The health byte of a GPU, as the backend computes it, the wire carries it (see the .proto) and the console draws
// it: the low three bits a state, the upper bits flags. Defined once for both sides.
namespace fleetscope::health {

enum State : uint8_t { Ok = 0, Warning = 1, Critical = 2, Offline = 3, NoData = 4 };
constexpr uint8_t stateCount = 5;
constexpr uint8_t stateMask = 0x07;
constexpr uint8_t throttledFlag = 0x08;
constexpr uint8_t eccFlag = 0x10;
constexpr uint8_t xidFlag = 0x20;

constexpr State stateOf(uint8_t byte)
{
    return static_cast<State>(byte & stateMask);
}

} // namespace fleetscope::health
