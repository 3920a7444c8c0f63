// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

// Counter-based randomness for the simulator: every draw is a pure function of (seed, what, when, where), so the
// simulation is deterministic without a shared generator and its order of evaluation does not matter.
namespace fleetscope::backend::determinism {

inline uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31U);
}

inline uint64_t hash(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0)
{
    return mix(mix(mix(seed ^ mix(a)) ^ b) ^ c);
}

// Uniform in [0, 1).
inline double unit(uint64_t h)
{
    return static_cast<double>(h >> 11U) * (1.0 / 9007199254740992.0);
}

// Standard normal, from two uniforms (Box-Muller).
double normal(uint64_t h);
// A Poisson count of mean lambda (by its CDF up to a mean of 50, normal beyond; at most 1,000 by the CDF).
uint32_t poisson(uint64_t h, double lambda);

} // namespace fleetscope::backend::determinism
