// SPDX-License-Identifier: Apache-2.0
#include "sim/domainfaultmodel.h"

#include "core/determinism.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetscope::backend {

using namespace determinism;

namespace {
// 404 chose a rack's single-corded nodes, which the shape now says (FleetShape::cordsOf).
enum Salt : uint64_t { SaltCount = 401, SaltPick, SaltDuration, SaltSymbols = 405 };

constexpr double day = 86400.0;
constexpr size_t kindCount = 6;
using Kind = InjectedFaults::DomainFault::Kind;

// Per domain (LinkFlap: per GPU's link; Leak: per NVL72 tray) and day: docs/FAULTS.md. Llama 3's network switch and
// cable interruptions (35 in 54 days on 16,384 GPUs) are split a quarter to whole leaves (512 leaves of 32 ports on
// that many GPUs) and three quarters to single links, which also take its NIC ones (7).
constexpr double llamaGpuDays = 54.0 * 16384.0;
constexpr double leafDownRate = 0.25 * 35 / 54.0 / 512.0;
constexpr double linkFlapRate = (0.75 * 35 + 7) / llamaGpuDays;
// No public per-unit figures: chosen, once in 10 years per PDU and once in 5 per cooling unit or CDU (their
// redundancy masks most failures), once in 1,000 years per tray for a leak.
constexpr double pduTripRate = 1.0 / (10 * 365.0);
constexpr double coolingUnitRate = 1.0 / (5 * 365.0);
constexpr double cduRate = 1.0 / (5 * 365.0);
constexpr double leakRate = 1.0 / (1000 * 365.0);
constexpr double rates[kindCount] = { coolingUnitRate, cduRate, pduTripRate, leafDownRate, linkFlapRate, leakRate };
// How long a fault lasts, at random between these (seconds); a leak's tray stays off until repaired.
constexpr double durations[kindCount][2]
    = { { 900, 2700 }, { 900, 2700 }, { 1200, 3600 }, { 600, 2400 }, { 600, 1800 }, { 4 * 3600.0, 8 * 3600.0 } };

// Physics of the effects.
constexpr float coolingRise = 28.0F; // °C of supply air with a cooling unit down (as cooling-failure's row)
constexpr double heatFrontSecondsPerRack = 30.0;
constexpr double rampSeconds = 60.0;
constexpr double recoverySeconds = 120.0;
constexpr float cduSupplyRise = 8.0F; // °C on the secondary supply without the CDU's heat exchange
constexpr float cduFlowLost = 0.75F; // share of flow lost (one pump of a redundant pair left, throttled)
constexpr double flapPeriod = 30.0;
constexpr double flapDownSeconds = 5.0;
constexpr double flapSymbolsPerSecond = 0.5;
constexpr uint32_t receiveErrorsPerSymbol = 5; // one packet dropped per this many symbol errors

float ramp(double x)
{
    return static_cast<float>(std::clamp(x, 0.0, 1.0));
}

} // namespace

DomainFaultModel::DomainFaultModel(const FleetShape &shape, uint64_t seed, float capWatts)
    : m_shape(shape)
    , m_seed(seed)
    , m_capWatts(capWatts)
{
    const size_t domains = shape.domains.size();
    m_racksOf.resize(domains);
    for (uint32_t k = 0; k < shape.racks.size(); ++k) {
        for (const uint32_t d : shape.racks[k].domains) {
            if (d >= domains) {
                continue;
            }
            m_racksOf[d].push_back(k);
            const int32_t parent = shape.domains[d].parent;
            if (shape.domains[d].kind == DomainKind::CoolantLoop && parent >= 0) {
                m_racksOf[static_cast<size_t>(parent)].push_back(k); // a CDU serves its loops' racks
            }
        }
    }
    for (uint32_t d = 0; d < domains; ++d) {
        switch (shape.domains[d].kind) {
        case DomainKind::CoolingUnit:
            m_candidates[static_cast<size_t>(Kind::CoolingUnit)].push_back(d);
            break;
        case DomainKind::Cdu:
            m_candidates[static_cast<size_t>(Kind::Cdu)].push_back(d);
            break;
        case DomainKind::Pdu:
            m_candidates[static_cast<size_t>(Kind::PduTrip)].push_back(d);
            break;
        case DomainKind::LeafSwitch:
            m_candidates[static_cast<size_t>(Kind::LeafDown)].push_back(d);
            break;
        case DomainKind::NvlinkDomain:
            m_candidates[static_cast<size_t>(Kind::Leak)].push_back(d);
            break;
        default:
            break;
        }
    }
    // The nodes corded to each PDU, as the shape says (FleetShape::cordsOf), and whether that PDU is their only one.
    m_corded.resize(domains);
    for (uint32_t n = 0; n < shape.nodes.size(); ++n) {
        const auto cords = shape.cordsOf(n);
        for (const uint32_t d : cords) {
            m_corded[d].emplace_back(n, cords.size() == 1);
        }
    }
    // The GPUs of each leaf, in GPU order.
    m_leafFirst.assign(domains + 1, 0);
    for (const auto &link : shape.gpuLinks) {
        if (link.leaf < domains) {
            ++m_leafFirst[link.leaf + 1];
        }
    }
    for (size_t d = 0; d < domains; ++d) {
        m_leafFirst[d + 1] += m_leafFirst[d];
    }
    m_leafGpus.resize(m_leafFirst.back());
    std::vector<uint32_t> fill(m_leafFirst.begin(), m_leafFirst.end() - 1);
    for (uint32_t g = 0; g < shape.gpuLinks.size(); ++g) {
        if (shape.gpuLinks[g].leaf < domains) {
            m_leafGpus[fill[shape.gpuLinks[g].leaf]++] = g;
        }
    }

    m_rackOffset.assign(shape.racks.size(), 0.0F);
    m_rackFlow.assign(shape.racks.size(), 1.0F);
    m_nodeCap.assign(shape.nodes.size(), std::numeric_limits<float>::infinity());
    m_nodeDown.assign(shape.nodes.size(), 0);
    m_gpuState.assign(shape.gpuCount, 0);
    m_wasDown.assign(shape.gpuCount, 0);
}

void DomainFaultModel::plan(const DomainFault &fault, bool staged)
{
    m_active.push_back(Active { fault, 0, staged, false });
}

bool DomainFaultModel::busy(Kind kind, uint32_t domain) const
{
    return std::any_of(m_active.begin(), m_active.end(),
        [&](const Active &a) { return a.fault.kind == kind && a.fault.domain == domain; });
}

void DomainFaultModel::startRandom(uint64_t stepIndex, double now, double dt, InjectedFaults *truth)
{
    if (m_rateScale <= 0) {
        return;
    }
    for (size_t k = 0; k < kindCount; ++k) {
        const auto kind = static_cast<Kind>(k);
        // A flap's candidates are the GPUs' links, a leak's the NVL72 racks' trays.
        const auto &domains = m_candidates[k];
        size_t candidates = domains.size();
        if (kind == Kind::LinkFlap) {
            candidates = m_leafGpus.size();
        } else if (kind == Kind::Leak) {
            candidates = domains.size() * HardwareSpec::of(m_shape.hardware).nodesPerRack;
        }
        if (candidates == 0) {
            continue;
        }
        const double lambda = rates[k] * m_rateScale * static_cast<double>(candidates) * dt / day;
        const uint32_t count = poisson(hash(m_seed, SaltCount, stepIndex, k), lambda);
        for (uint32_t i = 0; i < count; ++i) {
            const uint64_t h = hash(m_seed, SaltPick + k * 16, stepIndex, i);
            DomainFault f { kind, 0, -1, now, now };
            if (kind == Kind::LinkFlap) {
                const uint32_t gpu = m_leafGpus[h % candidates];
                f.domain = m_shape.gpuLinks[gpu].leaf;
                f.gpu = gpu;
            } else if (kind == Kind::Leak) {
                f.domain = domains[h % domains.size()];
                const auto &rack = m_shape.racks[m_racksOf[f.domain].front()];
                const uint32_t tray = rack.firstNode + static_cast<uint32_t>(mix(h) % rack.nodeCount);
                f.gpu = m_shape.nodes[tray].firstGpu;
            } else {
                f.domain = domains[h % domains.size()];
            }
            if (busy(kind, f.domain)) {
                continue; // already failed: one fault of a domain at a time
            }
            const double lo = durations[k][0];
            const double hi = durations[k][1];
            f.endSeconds = now + lo + (hi - lo) * unit(hash(m_seed, SaltDuration, stepIndex, k * 1000 + i));
            Active a { f, truth->recordDomainFault(f), true, true };
            m_active.push_back(a);
        }
    }
}

void DomainFaultModel::touchGpu(uint32_t gpu, uint8_t state)
{
    if (m_gpuState[gpu] == 0) {
        m_touchedGpus.push_back(gpu);
    }
    m_gpuState[gpu] |= state;
}

void DomainFaultModel::touchNode(uint32_t node, float cap, bool down)
{
    if (std::isinf(m_nodeCap[node]) && m_nodeDown[node] == 0) {
        m_touchedNodes.push_back(node);
    }
    m_nodeCap[node] = std::min(m_nodeCap[node], cap);
    m_nodeDown[node] |= down ? 1 : 0;
}

void DomainFaultModel::touchRack(uint32_t rack, float offset, float flow)
{
    if (m_rackOffset[rack] == 0 && m_rackFlow[rack] == 1) {
        m_touchedRacks.push_back(rack);
    }
    m_rackOffset[rack] += offset;
    m_rackFlow[rack] *= flow;
}

void DomainFaultModel::apply(const Active &a, double now, double dt)
{
    const DomainFault &f = a.fault;
    const double since = now - f.onsetSeconds;
    switch (f.kind) {
    case Kind::CoolingUnit: {
        // The heat front travels along the unit's racks, as cooling-failure's along a row.
        const float recovering = ramp((now - f.endSeconds) / recoverySeconds);
        const auto &racks = m_racksOf[f.domain];
        for (size_t i = 0; i < racks.size(); ++i) {
            const float rising = ramp((since - static_cast<double>(i) * heatFrontSecondsPerRack) / rampSeconds);
            touchRack(racks[i], coolingRise * rising * (1.0F - recovering), 1.0F);
        }
        break;
    }
    case Kind::Cdu: {
        const float level = ramp(since / rampSeconds) * (1.0F - ramp((now - f.endSeconds) / recoverySeconds));
        for (const uint32_t k : m_racksOf[f.domain]) {
            touchRack(k, cduSupplyRise * level, 1.0F - cduFlowLost * level);
        }
        break;
    }
    case Kind::PduTrip:
        // Its nodes run on their other cord under the power brake; those corded to it alone go down. A node corded to
        // the rack's other PDU alone is not touched.
        if (now < f.endSeconds && f.domain < m_corded.size()) {
            for (const auto &[node, alone] : m_corded[f.domain]) {
                touchNode(node, m_capWatts, alone);
            }
        }
        break;
    case Kind::LeafDown:
        if (now < f.endSeconds && f.domain + 1 < m_leafFirst.size()) {
            for (uint32_t i = m_leafFirst[f.domain]; i < m_leafFirst[f.domain + 1]; ++i) {
                touchGpu(m_leafGpus[i], LinkDown);
            }
        }
        break;
    case Kind::LinkFlap: {
        if (now >= f.endSeconds || f.gpu < 0) {
            break;
        }
        const auto gpu = static_cast<uint32_t>(f.gpu);
        const bool down = std::fmod(since, flapPeriod) < flapDownSeconds;
        touchGpu(gpu, static_cast<uint8_t>(Flapping | (down ? LinkDown : 0)));
        // Downs: the cycles that began within this step; errors: about flapSymbolsPerSecond while it flaps.
        const double cyclesBefore = std::max(-1.0, std::floor((since - dt) / flapPeriod));
        const auto downs = static_cast<uint32_t>(std::floor(since / flapPeriod) - cyclesBefore);
        // Rounded at random, so that short steps count what long ones do.
        const uint64_t h = hash(m_seed, SaltSymbols, static_cast<uint64_t>(now * 1000), gpu);
        const double expected = flapSymbolsPerSecond * std::min(dt, since) * (0.5 + unit(h));
        const auto symbols = static_cast<uint32_t>(expected + unit(mix(h)));
        const auto received
            = static_cast<uint32_t>(static_cast<double>(symbols) / receiveErrorsPerSymbol + unit(mix(h + 1)));
        m_portCounts.push_back({ gpu, downs, symbols, received });
        break;
    }
    case Kind::Leak: {
        if (now >= f.endSeconds || f.gpu < 0 || static_cast<uint32_t>(f.gpu) >= m_shape.gpuCount) {
            break;
        }
        // The tray whose sensor tripped and the trays above and below it, which its coolant drips onto, are powered
        // off; the sensor's reading stays (the rack's BMC serves it).
        const uint32_t tray = m_shape.nodeOfGpu[static_cast<uint32_t>(f.gpu)];
        const auto &rack = m_shape.racks[m_shape.nodes[tray].rack];
        const uint32_t first = std::max(rack.firstNode, tray == 0 ? 0 : tray - 1);
        const uint32_t last = std::min(rack.firstNode + rack.nodeCount - 1, tray + 1);
        for (uint32_t n = first; n <= last; ++n) {
            touchNode(n, std::numeric_limits<float>::infinity(), true);
        }
        const auto &node = m_shape.nodes[tray];
        for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
            touchGpu(g, Leaking);
        }
        break;
    }
    }
}

void DomainFaultModel::step(uint64_t stepIndex, double now, double dt, InjectedFaults *truth)
{
    // Undo the last step's effects: only what they touched.
    const std::vector<uint32_t> before = std::move(m_touchedGpus);
    m_touchedGpus.clear();
    for (const uint32_t g : before) {
        m_gpuState[g] = 0;
    }
    for (const uint32_t n : m_touchedNodes) {
        m_nodeCap[n] = std::numeric_limits<float>::infinity();
        m_nodeDown[n] = 0;
    }
    m_touchedNodes.clear();
    for (const uint32_t k : m_touchedRacks) {
        m_rackOffset[k] = 0;
        m_rackFlow[k] = 1;
    }
    m_touchedRacks.clear();
    m_portCounts.clear();
    m_linkChanges.clear();

    // Planned faults begin at their onset; random ones now.
    for (auto &a : m_active) {
        if (!a.begun && a.fault.onsetSeconds <= now) {
            a.begun = true;
            a.record = truth->recordDomainFault(a.fault);
        }
    }
    startRandom(stepIndex, now, dt, truth);

    // Effects of those in force (a cooling fault's racks recover for a while after it ends); the rest are done.
    for (size_t i = 0; i < m_active.size();) {
        const Active &a = m_active[i];
        const bool cooling = a.fault.kind == Kind::CoolingUnit || a.fault.kind == Kind::Cdu;
        if (a.begun && now >= a.fault.endSeconds + (cooling ? 2 * recoverySeconds : 0.0)) {
            m_active[i] = m_active.back();
            m_active.pop_back();
            continue;
        }
        if (a.begun && a.staged) {
            apply(a, now, dt);
        }
        ++i;
    }

    // Links that changed state; a link that went down counts one down (a flapping one counted its cycles above).
    const auto check = [&](uint32_t g) {
        const uint8_t down = m_gpuState[g] & LinkDown;
        if (down == m_wasDown[g]) {
            return;
        }
        m_wasDown[g] = down;
        m_linkChanges.push_back(g);
        if (down != 0 && (m_gpuState[g] & Flapping) == 0) {
            m_portCounts.push_back({ g, 1, 0, 0 });
        }
    };
    for (const uint32_t g : before) {
        check(g);
    }
    for (const uint32_t g : m_touchedGpus) {
        check(g);
    }
}

} // namespace fleetscope::backend
