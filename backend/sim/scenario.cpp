// SPDX-License-Identifier: Apache-2.0
#include "sim/scenario.h"

#include <algorithm>
#include <cmath>

namespace fleetscope::backend {

namespace {
constexpr float coolingRise = 28.0F; // °C the supply air gains when the row's unit is down
constexpr double rampSeconds = 60.0; // how fast the heat front builds at one rack
constexpr double outageSeconds = 900.0; // the cooling unit is back after this long
constexpr double powerCapSeconds = 900.0;
constexpr float powerCapWatts = 400.0F;
constexpr double badGpuRampSeconds = 600.0;
constexpr double flapPeriod = 180.0;
constexpr double flapDown = 60.0;

float ramp(double x)
{
    return static_cast<float>(std::clamp(x, 0.0, 1.0));
}
} // namespace

const std::vector<Scenario::Info> &Scenario::all()
{
    static const std::vector<Info> list = {
        { Kind::None, "none", "a normal day" },
        { Kind::CoolingFailure, "cooling-failure",
            "a row's cooling unit fails: a heat wave spreads rack by rack along the row, GPUs throttle, then it "
            "recovers" },
        { Kind::PowerCap, "power-cap",
            "the first hall is capped at 400 W per GPU for 15 minutes: power and clocks drop" },
        { Kind::BadGpu, "bad-gpu",
            "one GPU degrades over 10 minutes: it runs hot, throttles, logs XIDs, drags its job" },
        { Kind::NodeFlap, "node-flap", "one node goes down for a minute every three minutes" },
    };
    return list;
}

std::optional<Scenario::Kind> Scenario::byName(const std::string &name)
{
    for (const auto &s : all()) {
        if (s.name == name) {
            return s.kind;
        }
    }
    return std::nullopt;
}

Scenario::Scenario(Kind kind, const FleetShape &shape, uint64_t seed)
    : m_kind(kind)
{
    const auto rows = static_cast<uint32_t>(shape.rows.size());
    m_row = rows / 2;
    const uint32_t racksInRow = shape.rows[m_row].rackCount;
    m_recoveryAt = onsetSeconds + racksInRow * m_secondsPerRack + outageSeconds;
    m_cappedHall = shape.rows.front().hall;
    // The bad GPU and the flapping node sit in the middle of the fleet, moved by the seed.
    m_badGpu = static_cast<int64_t>((shape.gpuCount / 2 + seed * 8 + 3) % shape.gpuCount);
    m_flapNode = static_cast<int64_t>((shape.nodes.size() / 3 + seed) % shape.nodes.size());
}

float Scenario::supplyOffset(const FleetShape::Rack &rack, double t) const
{
    if (m_kind != Kind::CoolingFailure || rack.row != m_row) {
        return 0.0F;
    }
    const float rising = ramp((t - coolingOnsetAt(rack.position)) / rampSeconds);
    const float recovering = ramp((t - m_recoveryAt) / (2 * rampSeconds));
    return coolingRise * rising * (1.0F - recovering);
}

float Scenario::powerCap(const FleetShape &shape, const FleetShape::Rack &rack, double t) const
{
    if (m_kind != Kind::PowerCap || shape.rows[rack.row].hall != m_cappedHall || t < onsetSeconds
        || t >= onsetSeconds + powerCapSeconds) {
        return std::numeric_limits<float>::infinity();
    }
    return powerCapWatts;
}

float Scenario::badGpuSeverity(double t) const
{
    if (m_kind != Kind::BadGpu) {
        return 0.0F;
    }
    return ramp((t - onsetSeconds) / badGpuRampSeconds);
}

bool Scenario::nodeHeldDown(uint32_t node, double t) const
{
    if (m_kind != Kind::NodeFlap || static_cast<int64_t>(node) != m_flapNode || t < onsetSeconds) {
        return false;
    }
    return std::fmod(t - onsetSeconds, flapPeriod) < flapDown;
}

} // namespace fleetscope::backend
