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
constexpr double domainOutageSeconds = 900.0; // cdu-failure, pdu-trip, leaf-down, link-flap

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
        { Kind::CduFailure, "cdu-failure",
            "a CDU loses flow for 15 minutes: its loops' coolant warms, its racks throttle together (on an air-cooled "
            "fleet a cooling unit fails: its row segment warms)" },
        { Kind::PduTrip, "pdu-trip",
            "a rack side's PDU trips for 15 minutes: its nodes run capped on the other feed, single-corded ones go "
            "down" },
        { Kind::LeafDown, "leaf-down",
            "a leaf switch loses its links for 15 minutes: its GPUs' rail links go down, their jobs stall" },
        { Kind::LinkFlap, "link-flap",
            "one GPU's rail link flaps for 15 minutes: link downs and symbol errors climb, its job slows" },
        { Kind::Leak, "leak",
            "an NVL72 tray's leak sensor trips: the tray and its neighbours are powered off (GB200 NVL72 fleets; an "
            "air-cooled fleet has no coolant to leak)" },
        { Kind::Straggler, "straggler",
            "one GPU of the largest running job loses 20 % of its SM clock and stays slow: the whole job runs at its "
            "pace" },
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
    planFaults(shape, seed);
}

void Scenario::planFaults(const FleetShape &shape, uint64_t seed)
{
    using DomainFault = InjectedFaults::DomainFault;
    // A domain of a kind in the middle of the fleet, moved by the seed; -1 when the fleet has none.
    const auto pick = [&](DomainKind kind) -> int64_t {
        std::vector<uint32_t> of;
        for (uint32_t d = 0; d < shape.domains.size(); ++d) {
            if (shape.domains[d].kind == kind) {
                of.push_back(d);
            }
        }
        return of.empty() ? -1 : of[(of.size() / 2 + seed) % of.size()];
    };
    const double end = onsetSeconds + domainOutageSeconds;
    const auto plan = [&](DomainFault::Kind kind, int64_t domain, int64_t gpu, double onset, double until,
                          bool staged) {
        if (domain >= 0) {
            m_planned.push_back({ DomainFault { kind, static_cast<uint32_t>(domain), gpu, onset, until }, staged });
        }
    };
    const bool liquid = shape.hardware == Hardware::Gb200Nvl72;
    switch (m_kind) {
    case Kind::CoolingFailure: {
        // The row's units, each when the heat front reaches its first rack.
        const auto &row = shape.rows[m_row];
        int64_t last = -1;
        for (uint32_t k = row.firstRack; k < row.firstRack + row.rackCount; ++k) {
            for (const uint32_t d : shape.racks[k].domains) {
                const auto &domain = shape.domains[d];
                const bool unit = domain.kind == DomainKind::CoolingUnit || domain.kind == DomainKind::CoolantLoop;
                const int64_t which = domain.kind == DomainKind::CoolantLoop ? domain.parent : int64_t(d);
                if (unit && which != last) {
                    last = which;
                    plan(liquid ? DomainFault::Kind::Cdu : DomainFault::Kind::CoolingUnit, which, -1,
                        coolingOnsetAt(shape.racks[k].position), m_recoveryAt, false);
                }
            }
        }
        break;
    }
    case Kind::CduFailure:
        plan(liquid ? DomainFault::Kind::Cdu : DomainFault::Kind::CoolingUnit,
            pick(liquid ? DomainKind::Cdu : DomainKind::CoolingUnit), -1, onsetSeconds, end, true);
        break;
    case Kind::PduTrip:
        plan(DomainFault::Kind::PduTrip, pick(DomainKind::Pdu), -1, onsetSeconds, end, true);
        break;
    case Kind::LeafDown:
        plan(DomainFault::Kind::LeafDown, pick(DomainKind::LeafSwitch), -1, onsetSeconds, end, true);
        break;
    case Kind::LinkFlap: {
        const auto gpu = static_cast<uint32_t>((shape.gpuCount / 2 + seed * 8 + 5) % shape.gpuCount);
        if (gpu < shape.gpuLinks.size() && shape.gpuLinks[gpu].leaf != GpuLink::none) {
            plan(DomainFault::Kind::LinkFlap, shape.gpuLinks[gpu].leaf, gpu, onsetSeconds, end, true);
        }
        break;
    }
    case Kind::Leak: {
        if (!liquid) {
            break; // air-cooled: no coolant
        }
        const auto &rack = shape.racks[(shape.racks.size() / 2 + seed) % shape.racks.size()];
        const auto &tray = shape.nodes[rack.firstNode + rack.nodeCount / 2];
        for (const uint32_t d : rack.domains) {
            if (shape.domains[d].kind == DomainKind::NvlinkDomain) {
                plan(DomainFault::Kind::Leak, d, tray.firstGpu, onsetSeconds, std::numeric_limits<double>::infinity(),
                    true);
            }
        }
        break;
    }
    default:
        break;
    }
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
