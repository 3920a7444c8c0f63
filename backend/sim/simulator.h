// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "common/health.h"

#include "core/fleetshape.h"
#include "core/metriccatalog.h"
#include "sim/domainfaultmodel.h"
#include "sim/faultmodel.h"
#include "sim/injectedfaults.h"
#include "sim/jobtruth.h"
#include "sim/railcounters.h"
#include "sim/scenario.h"
#include "sim/stragglermodel.h"

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
//
// A job's GPUs move at the pace of its slowest (synchronous training): a straggler (StragglerModel: a GPU whose SM
// clock dropped, at random or from the straggler scenario) or a flapping link slows the whole job. A job whose stall
// lost GPUs (a node down) restarts: it loads its last checkpoint for a few minutes and redoes the work since. Where
// every job's GPU-time went is kept as ground truth (JobTruth).
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
        // Checkpoints and restarts. Checkpoints come every checkpointEverySeconds from cadenceFromSeconds (the start,
        // or the end of the last restart); a fresh job's first 45 s load like one.
        double cadenceFromSeconds = 0;
        double lastCheckpointSeconds = std::numeric_limits<double>::quiet_NaN(); // the last completed one's start
        double restartUntilSeconds = 0; // while restarting: when it computes again
        double runningSinceSeconds = 0; // when it last resumed (a checkpoint begun before does not complete)
        uint32_t restarts = 0;
        bool restarting = false;
        bool fromRestart = false; // its cadence runs from a restart (no loading window at its origin)
        bool stalled = false; // as of the last step
        bool lostGpus = false; // a GPU of it went offline during the current stall
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
    // Stragglers at random, per GPU and day (0 by default; StragglerModel::documentedRatePerGpuDay is
    // docs/FAULTS.md's).
    void setStragglerRate(double perGpuPerDay) { m_stragglers.setRate(perGpuPerDay); }
    const StragglerModel &stragglers() const { return m_stragglers; }
    // A straggler of one's choosing from now until untilSeconds (benchmarks: stragglers placed in jobs of a size).
    void addStraggler(uint32_t gpu, float drop, double untilSeconds)
    {
        m_stragglers.begin({ gpu, drop, m_time, untilSeconds });
    }
    // The straggler scenario's GPU once it slowed (-1 before, or in another scenario).
    int64_t stagedStraggler() const { return m_stagedStraggler; }
    // Ground truth for job accounting (tests and benchmarks only; never served): each job's productive GPU-time and
    // losses by cause, and the straggler episodes.
    const JobTruth &jobTruth() const { return m_truth; }
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
        SaltRestart,
        SaltStragglerPick,
    };
    static constexpr float nan = std::numeric_limits<float>::quiet_NaN();

    void schedule();
    bool placeJob(uint32_t nodeCount, uint64_t salt);
    // A job computing: its GPUs' utilisation at full pace (all-reduce dips included).
    float computeUtilisation(const Job &job, double t) const;
    bool inCheckpoint(const Job &job, double t) const;
    void stageStraggler(double t);
    // Each job's state this step (stall and its cause, restart, checkpoint, pace), its checkpoints and restarts, and
    // the ground truth; jobDrag and slowGpu: per job, the pace its slowest GPU allows and which GPU.
    void accountJobs(const std::vector<float> &jobDrag, const std::vector<int64_t> &slowGpu);
    JobTruth::StallLoss stallCause(const Job &job) const;
    int64_t domainFaultOf(uint32_t gpu, bool link) const;
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
    std::vector<JobTruth::State> m_jobState; // per job, this step

    Scenario m_scenario;
    FaultModel m_faults;
    InjectedFaults m_injected;
    DomainFaultModel m_domainFaults;
    RailCounters m_rail;
    StragglerModel m_stragglers;
    int64_t m_stagedStraggler = -1;
    JobTruth m_truth;
    std::vector<float> m_jobCongestion; // per job, this step: transmit wait (%) of its GPUs from a link fault
    std::vector<FleetEvent> m_events;
    // The raw error fields of the last snapshot, and the fault model's totalsVersion() they are of.
    mutable std::shared_ptr<const RawErrorFields> m_rawErrors;
    mutable uint64_t m_rawErrorsVersion = 0;
};

} // namespace fleetscope::backend
