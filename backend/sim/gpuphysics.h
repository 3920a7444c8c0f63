// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace fleetscope::backend {

// One kind of GPU and how it is cooled.
struct GpuPhysics
{
    float idlePower;
    float maxPower;
    float busyClock; // MHz
    float idleClock;
    double resistance; // °C per W, the least of the fleet's
    double resistanceSpread; // ... and above it, the manufacturing spread
    float preheatPerWatt; // °C the chassis air warms per watt of the GPUs upstream; 0 on cold plates
    bool liquidCooled;
};

} // namespace fleetscope::backend
