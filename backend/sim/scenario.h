// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "sim/injectedfaults.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace fleetscope::backend {

// Incidents the simulator can stage, for demos and tests. Each starts two simulated minutes after the start, so a
// fresh console sees it soon, and is a pure function of time: the same scenario and seed give the same incident.
class Scenario
{
public:
    enum class Kind {
        None,
        CoolingFailure,
        PowerCap,
        BadGpu,
        NodeFlap,
        CduFailure,
        PduTrip,
        LeafDown,
        LinkFlap,
        Leak,
        Straggler
    };
    struct Info
    {
        Kind kind;
        std::string name;
        std::string description;
    };
    static const std::vector<Info> &all();
    static std::optional<Kind> byName(const std::string &name);

    static constexpr double onsetSeconds = 120.0;
    // straggler: the share of its SM clock the slowed GPU loses (the simulator picks it: one of the largest running
    // job's GPUs at the onset, which depends on its jobs, not on time alone).
    static constexpr float stragglerDrop = 0.20F;

    Scenario() = default;
    Scenario(Kind kind, const FleetShape &shape, uint64_t seed);

    Kind kind() const { return m_kind; }
    // cooling-failure: the row whose cooling unit fails, and when the heat reaches a rack's position in it.
    uint32_t affectedRow() const { return m_row; }
    double coolingOnsetAt(uint32_t position) const { return onsetSeconds + position * m_secondsPerRack; }
    double coolingRecoveryAt() const { return m_recoveryAt; }

    // Extra supply-air temperature at a rack (°C): the failed unit's heat front travels along the row rack by rack.
    float supplyOffset(const FleetShape::Rack &rack, double t) const;
    // Per-GPU power cap in watts at a rack (infinity when none): power-cap caps one hall.
    float powerCap(const FleetShape &shape, const FleetShape::Rack &rack, double t) const;
    // bad-gpu: the GPU that degrades, and how far (0 = healthy .. 1 = failing) at time t; -1 when none.
    int64_t badGpu() const { return m_badGpu; }
    float badGpuSeverity(double t) const;
    // node-flap: whether a node is held down at time t.
    bool nodeHeldDown(uint32_t node, double t) const;
    int64_t flappingNode() const { return m_flapNode; }

    // The faults of shared domains this scenario stages, with their onsets and ends (docs/FAULTS.md): the domain
    // fault model applies those marked staged, and records all of them as ground truth when they begin.
    // cooling-failure's physics is supplyOffset's (a unit per segment of the row, each recorded when the heat front
    // reaches its first rack); cdu-failure, pdu-trip, leaf-down, link-flap and leak are the domain fault model's.
    struct PlannedFault
    {
        InjectedFaults::DomainFault fault;
        bool staged = true; // applied by the domain fault model (false: the scenario's own physics)
    };
    const std::vector<PlannedFault> &plannedFaults() const { return m_planned; }

private:
    void planFaults(const FleetShape &shape, uint64_t seed);

    Kind m_kind = Kind::None;
    uint32_t m_row = 0;
    double m_secondsPerRack = 30.0;
    double m_recoveryAt = 0;
    std::string m_cappedHall;
    int64_t m_badGpu = -1;
    int64_t m_flapNode = -1;
    std::vector<PlannedFault> m_planned;
};

} // namespace fleetscope::backend
