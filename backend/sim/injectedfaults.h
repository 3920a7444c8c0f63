// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/metriccatalog.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace fleetscope::backend {

// Ground truth for anomaly detection: every fault the simulator injects, for tests and benchmarks only (never served
// to consoles). It injects degradations itself, at a rate per GPU and day (0 unless asked, so a plain simulation is
// unchanged): a cooling fault (the GPU runs hotter by `size` °C), a stuck clock (`size` MHz lower, power following)
// or a power-delivery fault (`size` W less). It also records the faults the fault model causes on its own: a GPU
// impaired by a serious error, a node down; and every fault of a shared domain (DomainFault).
class InjectedFaults
{
public:
    enum class Kind : uint8_t { Cooling, ClockDrop, PowerDrop, Impaired, Offline, Count };
    static const char *kindName(Kind kind);

    struct Fault
    {
        uint32_t gpu = 0;
        Kind kind = Kind::Cooling;
        double onsetSeconds = 0; // simulated seconds since the start
        double endSeconds = std::numeric_limits<double>::infinity(); // infinity while it lasts
        float size = 0; // in the metric's unit; 0 where the fault model's own (its effect depends on the job)
        MetricId metric = MetricId::GpuTemp;
    };

    // A fault of a shared domain (a scenario's or one at random): what failed, and when. domain indexes the fleet's
    // FleetShape::domains: the cooling unit or CDU, the PDU, the leaf switch (a flapping link's leaf; its GPU in
    // gpu), the NVLink domain of a leaking rack (gpu: the first GPU of the tray whose sensor tripped).
    struct DomainFault
    {
        enum class Kind : uint8_t { CoolingUnit, Cdu, PduTrip, LeafDown, LinkFlap, Leak };
        Kind kind;
        uint32_t domain; // index into FleetShape::domains (LinkFlap: the GPU's leaf)
        int64_t gpu = -1; // LinkFlap: the GPU whose port flaps; Leak: first GPU of the tray whose sensor tripped
        double onsetSeconds = 0;
        double endSeconds = std::numeric_limits<double>::infinity();
    };
    static const char *domainFaultName(DomainFault::Kind kind);

    InjectedFaults(uint32_t gpuCount, uint64_t seed);

    void setRate(double perGpuPerDay) { m_rate = perGpuPerDay; }
    double rate() const { return m_rate; }
    // Starts and ends the degradations of a step ending at now.
    void step(uint64_t stepIndex, double now, double dt);
    // The fault model's own state of a GPU this step (called for every GPU, every step).
    void note(uint32_t gpu, Kind kind, bool on, double now);

    // Every fault so far, in onset order within a step.
    const std::vector<Fault> &faults() const { return m_faults; }
    // Every domain fault so far, in onset order, each with its end as planned when it began (a leak's tray stays off:
    // infinity). recordDomainFault returns its index.
    const std::vector<DomainFault> &domainFaults() const { return m_domainFaults; }
    size_t recordDomainFault(const DomainFault &fault);
    bool degrading() const { return !m_active.empty(); }
    // The degradations in force on a GPU (0 when none).
    float tempOffset(uint32_t gpu) const { return m_tempOffset.empty() ? 0.0F : m_tempOffset[gpu]; }
    float clockDrop(uint32_t gpu) const { return m_clockDrop.empty() ? 0.0F : m_clockDrop[gpu]; }
    float powerDrop(uint32_t gpu) const { return m_powerDrop.empty() ? 0.0F : m_powerDrop[gpu]; }

private:
    void apply(const Fault &f, float sign);

    uint32_t m_gpus;
    uint64_t m_seed;
    double m_rate = 0;
    std::vector<Fault> m_faults;
    std::vector<DomainFault> m_domainFaults;
    std::vector<size_t> m_active; // indices of degradations in force
    std::vector<float> m_tempOffset, m_clockDrop, m_powerDrop; // allocated at the first degradation
    std::vector<int32_t> m_openImpaired, m_openOffline; // per GPU: index of its open fault, or -1
};

} // namespace fleetscope::backend
