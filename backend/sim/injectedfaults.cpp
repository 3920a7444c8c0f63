// SPDX-License-Identifier: Apache-2.0
#include "sim/injectedfaults.h"

#include "core/determinism.h"

#include <algorithm>
#include <cmath>

namespace fleetscope::backend {

using namespace determinism;

namespace {
enum Salt : uint64_t { SaltCount = 301, SaltGpu, SaltKind, SaltSize, SaltDuration };

// Log-uniform between lo and hi: small faults as often as big ones, per factor.
double logUniform(uint64_t h, double lo, double hi)
{
    return lo * std::exp(unit(h) * std::log(hi / lo));
}
} // namespace

const char *InjectedFaults::kindName(Kind kind)
{
    switch (kind) {
    case Kind::Cooling:
        return "cooling";
    case Kind::ClockDrop:
        return "clock drop";
    case Kind::PowerDrop:
        return "power drop";
    case Kind::Impaired:
        return "impaired (serious XID)";
    case Kind::Offline:
        return "node down";
    default:
        return "";
    }
}

const char *InjectedFaults::domainFaultName(DomainFault::Kind kind)
{
    switch (kind) {
    case DomainFault::Kind::CoolingUnit:
        return "cooling unit";
    case DomainFault::Kind::Cdu:
        return "CDU";
    case DomainFault::Kind::PduTrip:
        return "PDU trip";
    case DomainFault::Kind::LeafDown:
        return "leaf down";
    case DomainFault::Kind::LinkFlap:
        return "link flap";
    case DomainFault::Kind::Leak:
        return "leak";
    }
    return "";
}

size_t InjectedFaults::recordDomainFault(const DomainFault &fault)
{
    m_domainFaults.push_back(fault);
    return m_domainFaults.size() - 1;
}

InjectedFaults::InjectedFaults(uint32_t gpuCount, uint64_t seed)
    : m_gpus(gpuCount)
    , m_seed(seed)
    , m_openImpaired(gpuCount, -1)
    , m_openOffline(gpuCount, -1)
{ }

void InjectedFaults::apply(const Fault &f, float sign)
{
    if (m_tempOffset.empty()) {
        m_tempOffset.assign(m_gpus, 0.0F);
        m_clockDrop.assign(m_gpus, 0.0F);
        m_powerDrop.assign(m_gpus, 0.0F);
    }
    auto &target = f.kind == Kind::Cooling ? m_tempOffset : f.kind == Kind::ClockDrop ? m_clockDrop : m_powerDrop;
    target[f.gpu] = std::max(0.0F, target[f.gpu] + sign * f.size);
}

void InjectedFaults::step(uint64_t stepIndex, double now, double dt)
{
    // Ends first, so that a fault of one step still counts.
    for (size_t i = 0; i < m_active.size();) {
        const Fault &f = m_faults[m_active[i]];
        if (f.endSeconds <= now) {
            apply(f, -1.0F);
            m_active[i] = m_active.back();
            m_active.pop_back();
        } else {
            ++i;
        }
    }
    if (m_rate <= 0) {
        return;
    }
    // New ones: a Poisson count for the whole fleet this step.
    const double lambda = m_rate * m_gpus * dt / 86400.0;
    const double u = unit(hash(m_seed, SaltCount, stepIndex));
    uint32_t count = 0;
    double p = std::exp(-lambda);
    double cdf = p;
    while (u > cdf && count < 1000) {
        ++count;
        p *= lambda / count;
        cdf += p;
    }
    for (uint32_t i = 0; i < count; ++i) {
        Fault f;
        f.gpu = static_cast<uint32_t>(hash(m_seed, SaltGpu, stepIndex, i) % m_gpus);
        f.kind = static_cast<Kind>(hash(m_seed, SaltKind, stepIndex, i) % 3);
        const uint64_t sizeHash = hash(m_seed, SaltSize, stepIndex, i);
        switch (f.kind) {
        case Kind::Cooling:
            f.size = static_cast<float>(logUniform(sizeHash, 1.5, 25.0));
            f.metric = MetricId::GpuTemp;
            break;
        case Kind::ClockDrop:
            f.size = static_cast<float>(logUniform(sizeHash, 30.0, 700.0));
            f.metric = MetricId::SmClock;
            break;
        default:
            f.size = static_cast<float>(logUniform(sizeHash, 10.0, 250.0));
            f.metric = MetricId::Power;
            break;
        }
        f.onsetSeconds = now;
        f.endSeconds = now + logUniform(hash(m_seed, SaltDuration, stepIndex, i), 60.0, 4 * 3600.0);
        m_active.push_back(m_faults.size());
        m_faults.push_back(f);
        apply(f, 1.0F);
    }
}

void InjectedFaults::note(uint32_t gpu, Kind kind, bool on, double now)
{
    auto &open = kind == Kind::Impaired ? m_openImpaired[gpu] : m_openOffline[gpu];
    if (on == (open >= 0)) {
        return;
    }
    if (on) {
        Fault f;
        f.gpu = gpu;
        f.kind = kind;
        f.onsetSeconds = now;
        f.metric = kind == Kind::Impaired ? MetricId::SmClock : MetricId::HealthState;
        open = static_cast<int32_t>(m_faults.size());
        m_faults.push_back(f);
    } else {
        m_faults[static_cast<size_t>(open)].endSeconds = now;
        open = -1;
    }
}

} // namespace fleetscope::backend
