// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "core/frame.h"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace fleetscope::backend {

// Faults: every GPU has a fixed, heavy-tailed propensity (about 1% of GPUs are bad actors that cause about half of
// all XID and ECC errors, as in real fleets), scaled up when it runs hot. Per step each online GPU may log an XID,
// an ECC single- or double-bit error, an NVLink CRC error or a PCIe replay; error-rate metrics are counts within a
// sliding window. The interrupting faults come at the rates of Meta's Llama 3 run (docs/FAULTS.md): a faulty GPU
// (XID 79, 74), HBM3 (a double-bit error), SRAM (XID 95), the GPU system processor (XID 119), a host's own failure
// (its node goes down). A double-bit error remaps its row (uncorrectable remapped rows), one single-bit error in ten a
// row too (correctable), so bad actors accumulate remapped rows. Serious XIDs and double-bit errors take the GPU out
// of service for a few minutes (it throttles and stalls its job); XID 79 (fallen off the bus) takes its node down
// until it reboots.
class FaultModel
{
public:
    using Counter = ErrorCounter;
    static constexpr size_t CounterKinds = ErrorCounterKinds;
    static constexpr double windowSeconds = 300.0;

    FaultModel(const FleetShape &shape, uint64_t seed);

    // The fleet's mean rate of double-bit ECC errors per GPU and day, below 80 °C (Llama 3's HBM3 share).
    static double doubleBitPerGpuDay();
    // Interruptions per GPU and day, below 80 °C: a GPU's (XIDs 74, 79, 95, 119 and double-bit errors) and its node's
    // own failures (a node's share per GPU).
    static double interruptionsPerGpuDay();

    // One step ending at time now. temp is each GPU's temperature; nodeHeldDown lets a scenario force nodes down.
    // extraGpu (or -1) also logs soft XIDs (92, 63) at extraXidPerSecond: the bad-gpu scenario's degrading GPU.
    void step(uint64_t stepIndex, double now, double dt, const std::vector<float> &temp, int64_t extraGpu,
        double extraXidPerSecond, const std::function<bool(uint32_t node)> &nodeHeldDown);

    bool nodeDown(uint32_t node) const { return m_nodeDownUntil[node] > m_now; }
    bool gpuOffline(uint32_t gpu) const { return nodeDown(m_shape.nodeOfGpu[gpu]); }
    // A GPU recovering from a serious error: throttled, and its job stalled.
    bool gpuImpaired(uint32_t gpu) const { return m_impairedUntil[gpu] > m_now; }
    float windowCount(Counter c, uint32_t gpu) const { return m_window[c][gpu]; }
    const std::vector<float> &windowPlane(Counter c) const { return m_window[c]; }
    float propensity(uint32_t gpu) const { return m_propensity[gpu]; }
    // XID + ECC errors per GPU since the start, for the failure Pareto.
    const std::vector<uint32_t> &lifetimeFailures() const { return m_lifetime; }
    // Per GPU since the start, as a real GPU's DCGM fields hold them: each counter's total (they never fall), and the
    // last XID logged (0 while none).
    const std::vector<uint32_t> &totalPlane(Counter c) const { return m_total[c]; }
    const std::vector<uint32_t> &lastXid() const { return m_lastXid; }
    // Grows whenever a total or the last XID changes.
    uint64_t totalsVersion() const { return m_totalsVersion; }

    // Events produced by the last step (moved out by the caller).
    std::vector<FleetEvent> takeEvents() { return std::move(m_newEvents); }

private:
    void count(Counter c, uint32_t gpu, double now);
    void logXid(uint32_t gpu, uint32_t xid, double now);
    void emit(FleetEvent event) { m_newEvents.push_back(std::move(event)); }

    const FleetShape &m_shape;
    uint64_t m_seed;
    double m_now = 0;
    std::vector<float> m_propensity;
    std::vector<double> m_nodeDownUntil;
    std::vector<double> m_impairedUntil;
    std::array<std::vector<float>, CounterKinds> m_window;
    struct Increment
    {
        double time;
        uint32_t gpu;
        Counter counter;
    };
    std::deque<Increment> m_increments; // within the window, oldest first
    std::vector<uint32_t> m_lifetime;
    std::array<std::vector<uint32_t>, CounterKinds> m_total;
    std::vector<uint32_t> m_lastXid;
    uint64_t m_totalsVersion = 0;
    std::vector<FleetEvent> m_newEvents;
};

} // namespace fleetscope::backend
