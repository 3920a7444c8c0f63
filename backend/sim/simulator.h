// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "common/health.h"

#include "core/fleetshape.h"
#include "core/metriccatalog.h"
#include "sim/domainfaultmodel.h"
#include "sim/faultmodel.h"
#include "sim/injectedfaults.h"
#include "sim/railcounters.h"
#include "sim/scenario.h"

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <vector>

namespace fleetscope::backend {

struct GpuPhysics; // sim/gpuphysics.h: one kind of GPU and how it is cooled

// A deterministic fleet: the same (gpuCount, seed, step length) gives the same frames, bit for bit.
//
// Physics, per step of dt seconds: each row's cooling unit supplies air at a slowly varying temperature; a rack's
// inlet is that plus recirculated exhaust of itself and its neighbours (so a busy rack warms the racks beside it);
// inside a node air flows past the GPUs in order, so each GPU breathes air preheated by the ones before it. A GPU's
// temperature relaxes towards inlet + power x thermal resistance with a time constant of tens of seconds; memory
// follows the GPU. Power and clocks follow utilisation, which follows the job the GPU belongs to: a scheduler
// places jobs of 8 to 4,096 GPUs whose GPUs move together through compute phases, synchronisation dips and
// checkpoint pauses. Hot GPUs throttle (clock and power drop). Faults come from FaultModel; staged incidents from
// Scenario.
//
// A GB200 NVL72 fleet is liquid-cooled instead: each rack's CDU pumps the row's facility water through the cold
// plates of all its trays, so the rack's GPUs share one coolant temperature, which rises with the rack's power
// (GPUs, Grace CPUs, NVSwitch trays) and falls with the CDU's flow; a GPU sits at coolant + power x cold-plate
// resistance, with no air warmed upstream. A CDU's coolant loops are the racks' in its segment of the row.
//
// Shared domains fail too (DomainFaultModel, at random and from scenarios): a cooling unit's racks breathe hot air,
// a CDU's loops lose flow, a PDU trip power-brakes the nodes corded to both sides (and powers off those corded to it
// alone), a leaf switch's GPUs lose their rail links and their jobs stall, a flapping link slows its job, a leaking
// tray powers off. Each GPU's rail port (RailCounters) and each liquid-cooled rack's coolant loop and leak sensor are
// planes of the frame.
class Simulator
{
public:
    Simulator(uint32_t gpuCount, uint64_t seed, double stepSeconds = 1.0,
        Scenario::Kind scenario = Scenario::Kind::None, Hardware hardware = Hardware::HgxH100);
    // The fault model refers to the shape: a simulator stays where it was built.
    Simulator(const Simulator &) = delete;
    Simulator &operator=(const Simulator &) = delete;

    // The fleet a simulator of these arguments simulates, without simulating it.
    static FleetShape shapeFor(uint32_t gpuCount, uint64_t seed, Hardware hardware);
    const FleetShape &shape() const { return m_shape; }
    uint64_t seed() const { return m_seed; }
    double stepSeconds() const { return m_dt; }
    // Number of steps taken; the frame after step k has sequence k.
    uint64_t steps() const { return m_step; }

    void step() { step(m_dt); }
    // A step of another length: the past before a live start is simulated in coarse steps.
    void step(double seconds);
    // The current state as a frame; sampleTimeMs is left for the caller (the simulator has no wall clock).
    std::shared_ptr<Frame> snapshot() const;

    // Jobs currently placed, for tests and, later, ListJobs.
    struct Job
    {
        uint64_t id = 0;
        uint32_t firstNode = 0;
        uint32_t nodeCount = 0;
        double startSeconds = 0;
        double endSeconds = 0;
        double iterationSeconds = 30;
        double checkpointEverySeconds = 1800;
        double phase = 0;
        float memoryMiB = 0;
    };
    const std::vector<Job> &jobs() const { return m_jobs; }
    // Jobs that ended within the last simulated hour, oldest first.
    const std::deque<Job> &endedJobs() const { return m_endedJobs; }
    const Scenario &scenario() const { return m_scenario; }
    const FaultModel &faults() const { return m_faults; }
    // Ground truth for anomaly detection (tests and benchmarks only; never served). Degradations are injected at
    // perGpuPerDay (0 by default: a plain simulation is unchanged by them).
    const InjectedFaults &injectedFaults() const { return m_injected; }
    void setDegradationRate(double perGpuPerDay) { m_injected.setRate(perGpuPerDay); }
    // Multiplies the rates of domain faults at random (1: docs/FAULTS.md's; 0: none, only a scenario's).
    void setDomainFaultScale(double scale) { m_domainFaults.setRateScale(scale); }
    const DomainFaultModel &domainFaults() const { return m_domainFaults; }
    double nowSeconds() const { return m_time; }
    // Per rack: the power it draws (kW; an air-cooled rack's counts its GPUs only) and what its GPUs' heat goes into
    // (°C: an air-cooled rack's inlet air, a liquid-cooled one's coolant at the cold plates), as of the last step.
    const std::vector<float> &rackPowerKw() const { return m_rackPowerKw; }
    const std::vector<float> &rackSinkTemps() const { return m_rackSink; }
    // Events of the last step (moved out by the caller, who keeps the log).
    std::vector<FleetEvent> takeEvents() { return std::move(m_events); }

private:
    // What each of the simulator's draws is salted with (determinism::hash).
    enum Salt : uint64_t {
        SaltGpuResistance = 1,
        SaltGpuEfficiency,
        SaltJobSize,
        SaltJobPlace,
        SaltJobDuration,
        SaltJobShape,
        SaltSchedule,
        SaltUtilJitter,
        SaltRowDrift,
        SaltJobAge,
        SaltCduFlow,
    };
    static constexpr float nan = std::numeric_limits<float>::quiet_NaN();

    void schedule();
    bool placeJob(uint32_t nodeCount, uint64_t salt);
    float jobUtilisation(const Job &job, double t) const;
    // settle: the liquid loops jump to their equilibrium (at the start) instead of following it.
    void updateCooling(bool settle = false);
    void updateLiquidLoops(const std::vector<float> &gpuKw, bool settle);
    void updateGpus();

    FleetShape m_shape;
    const GpuPhysics *m_physics; // of the shape's hardware
    uint64_t m_seed;
    double m_dt;
    uint64_t m_step = 0;
    double m_time = 0; // simulated seconds since the start
    double m_lastDt = 0; // length of the current step
    uint64_t m_nextJobId = 1;

    // Per GPU, fixed at construction: manufacturing spread.
    std::vector<float> m_thermalResistance; // °C per W
    std::vector<float> m_powerEfficiency; // multiplies dynamic power

    // Per GPU state.
    std::vector<float> m_temp;
    std::vector<float> m_memTemp;
    std::vector<float> m_power;
    std::vector<float> m_util;
    std::vector<float> m_memCopyUtil;
    std::vector<float> m_smClock;
    std::vector<float> m_fbUsed;
    std::vector<uint8_t> m_health;
    std::vector<float> m_throttleReasons;
    std::vector<uint8_t> m_thermalThrottled; // with hysteresis: on at 87 °C, off below 84 °C

    // Per rack / row state.
    std::vector<float> m_rackSink; // inlet air or coolant, see rackSinkTemps
    std::vector<float> m_rackPowerKw;
    std::vector<float> m_cduFlow; // litres per second, liquid-cooled racks only
    // Liquid-cooled racks' loop at the manifold, as of the last step: supply and return °C, flow in L/min.
    std::vector<float> m_coolantSupply, m_coolantReturn, m_coolantFlow;
    std::vector<float> m_rowSupply;
    std::vector<float> m_rowSupplyDrift;

    std::vector<Job> m_jobs;
    std::deque<Job> m_endedJobs;
    std::vector<int32_t> m_jobOfNode; // index into m_jobs, -1 when idle
    std::vector<uint8_t> m_jobStalled; // per job, this step: one of its GPUs is impaired or its node is down

    Scenario m_scenario;
    FaultModel m_faults;
    InjectedFaults m_injected;
    DomainFaultModel m_domainFaults;
    RailCounters m_rail;
    std::vector<float> m_jobCongestion; // per job, this step: transmit wait (%) of its GPUs from a link fault
    std::vector<FleetEvent> m_events;
    // The raw error fields of the last snapshot, and the fault model's totalsVersion() they are of.
    mutable std::shared_ptr<const RawErrorFields> m_rawErrors;
    mutable uint64_t m_rawErrorsVersion = 0;
};

} // namespace fleetscope::backend
