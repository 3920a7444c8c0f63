// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "sim/injectedfaults.h"

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace fleetscope::backend {

// Faults of the fleet's shared domains (docs/FAULTS.md): a cooling unit or a CDU that fails, a PDU that trips, a leaf
// switch that loses its links, one rail link that flaps, an NVL72 tray that leaks. They come at random, at per-domain
// rates, and from a scenario (staged). Each is recorded as ground truth when it begins and ends; while it lasts it
// has effects the simulator applies: a rack's supply air or facility water warms, its CDU's flow drops, a node is
// capped or powered off, a GPU's rail link is down or flapping.
//
// The effects are kept per rack, node and GPU but only the entities of the faults in force are touched each step, so
// a step costs what the faults hit, not what the fleet holds.
class DomainFaultModel
{
public:
    using DomainFault = InjectedFaults::DomainFault;

    // capWatts: a GPU's power on one feed (a PDU trip's power brake).
    DomainFaultModel(const FleetShape &shape, uint64_t seed, float capWatts);

    // Multiplies every random rate (1: the documented ones; 0: none at random).
    void setRateScale(double scale) { m_rateScale = scale; }
    double rateScale() const { return m_rateScale; }
    // A fault to stage: begins at its onset. staged false: recorded only (the scenario has its own physics).
    void plan(const DomainFault &fault, bool staged);

    // One step ending at now: begins and ends faults (recorded in truth) and sets the effects.
    void step(uint64_t stepIndex, double now, double dt, InjectedFaults *truth);

    // Effects as of the last step.
    float supplyOffset(uint32_t rack) const { return m_rackOffset[rack]; } // °C on the air or facility water
    float flowFactor(uint32_t rack) const { return m_rackFlow[rack]; } // multiplies the CDU's flow
    float powerCap(uint32_t node) const { return m_nodeCap[node]; } // W per GPU; infinity when none
    bool nodeDown(uint32_t node) const { return m_nodeDown[node] != 0; }
    bool linkDown(uint32_t gpu) const { return (m_gpuState[gpu] & LinkDown) != 0; }
    bool linkFlapping(uint32_t gpu) const { return (m_gpuState[gpu] & Flapping) != 0; }
    bool leakDetected(uint32_t gpu) const { return (m_gpuState[gpu] & Leaking) != 0; }
    // The GPUs a fault touches now (link down or flapping, leak sensor tripped): the rest are as if none were.
    const std::vector<uint32_t> &affectedGpus() const { return m_touchedGpus; }

    // What the rail ports counted this step: a link that went down, or symbol and receive errors of a flapping one.
    struct PortCount
    {
        uint32_t gpu;
        uint32_t linkDowns;
        uint32_t symbolErrors;
        uint32_t receiveErrors;
    };
    const std::vector<PortCount> &portCounts() const { return m_portCounts; }
    // GPUs whose link state changed this step.
    const std::vector<uint32_t> &linkChanges() const { return m_linkChanges; }

private:
    enum GpuState : uint8_t { LinkDown = 1, Flapping = 2, Leaking = 4 };
    struct Active
    {
        DomainFault fault;
        size_t record = 0; // index in the ground truth
        bool staged = true;
        bool begun = false;
    };

    void startRandom(uint64_t stepIndex, double now, double dt, InjectedFaults *truth);
    void apply(const Active &a, double now, double dt);
    void touchGpu(uint32_t gpu, uint8_t state);
    void touchNode(uint32_t node, float cap, bool down);
    void touchRack(uint32_t rack, float offset, float flow);
    bool busy(DomainFault::Kind kind, uint32_t domain) const;

    const FleetShape &m_shape;
    uint64_t m_seed;
    float m_capWatts;
    double m_rateScale = 1.0;
    std::vector<Active> m_active; // planned, in force, or recovering
    std::array<std::vector<uint32_t>, 6> m_candidates; // per DomainFault::Kind: the domains (LinkFlap: GPUs)
    std::vector<std::vector<uint32_t>> m_racksOf; // per domain: the racks it serves (power, cooling, NVLink)
    std::vector<std::vector<std::pair<uint32_t, bool>>>
        m_corded; // per PDU: its nodes, and whether it is their only one
    std::vector<uint32_t> m_leafFirst, m_leafGpus; // the GPUs of each leaf: m_leafGpus[m_leafFirst[d]..[d + 1])

    std::vector<float> m_rackOffset, m_rackFlow, m_nodeCap;
    std::vector<uint8_t> m_nodeDown, m_gpuState;
    std::vector<uint32_t> m_touchedRacks, m_touchedNodes, m_touchedGpus;
    std::vector<uint8_t> m_wasDown; // per GPU: its link was down after the last step
    std::vector<PortCount> m_portCounts;
    std::vector<uint32_t> m_linkChanges;
};

} // namespace fleetscope::backend
