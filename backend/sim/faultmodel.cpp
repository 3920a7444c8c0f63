// SPDX-License-Identifier: Apache-2.0
#include "sim/faultmodel.h"

#include "core/determinism.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace determinism {
double normal(uint64_t h)
{
    const double u1 = std::max(unit(h), 1e-300);
    const double u2 = unit(mix(h));
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

uint32_t poisson(uint64_t h, double lambda)
{
    if (lambda <= 0) {
        return 0;
    }
    if (lambda > 50) {
        return static_cast<uint32_t>(std::max(0.0, std::round(lambda + std::sqrt(lambda) * normal(h))));
    }
    const double u = unit(h);
    uint32_t count = 0;
    double p = std::exp(-lambda);
    double cdf = p;
    while (u > cdf && count < 1000) {
        ++count;
        p *= lambda / count;
        cdf += p;
    }
    return count;
}
} // namespace determinism

using namespace determinism;

namespace {
enum Salt : uint64_t {
    SaltPropensity = 101,
    SaltBadActor,
    SaltFault,
    SaltFaultKind,
    SaltRecovery,
    SaltNodeFail,
    SaltDegrading,
    SaltRemap
};

constexpr double day = 86400.0;
// Rates per GPU per day, the fleet's mean (docs/FAULTS.md). The interrupting ones from Meta's Llama 3 405B run, 419
// unexpected interruptions in 54 days on 16,384 H100s (The Llama 3 Herd of Models, 2024, table 5): a cause's count
// over 54 x 16,384 GPU-days.
constexpr double llamaGpuDays = 54.0 * 16384.0;
constexpr double faultyGpuRate = 148 / llamaGpuDays; // "faulty GPU" (NVLink included): XID 79 or 74
constexpr double dbeRate = 72 / llamaGpuDays; // GPU HBM3 memory: double-bit ECC (XID 48), its row remapped
constexpr double sramRate = 19 / llamaGpuDays; // GPU SRAM memory: XID 95, an uncontained ECC error
constexpr double gspRate = 17 / llamaGpuDays; // GPU system processor: XID 119
// Host maintenance, SSD, power supply, chassis, IO board, CPU and system memory (48 of 419): the node goes down. Per
// node (8 GPUs) per day.
constexpr double nodeFailRate = 48 / (54.0 * 16384.0 / 8.0);
// Soft errors interrupt nothing and no public study gives a fleet-wide rate to calibrate against: chosen so that the
// planes show a few a day per thousand GPUs outside the bad actors (docs/FAULTS.md).
constexpr double softXidRate = 0.01; // XIDs 13, 31, 43, 45, 63, 92: mostly the application's own faults
constexpr double sbeRate = 0.05;
constexpr double nvlinkRate = 0.5; // CRC errors, retried by the link
constexpr double pcieRate = 0.5; // replays
constexpr double badActorShare = 0.01;
constexpr float badActorFactor = 150.0F;
// The mean propensity (the log-normal spread's mean is 1): rates are divided by it so that they are the fleet's mean.
constexpr double meanPropensity = 1.0 - badActorShare + badActorShare * badActorFactor;
// Row remapping (A100, H100): a row that held an uncorrectable error is always remapped to a spare; one with
// correctable errors now and then.
constexpr double remapShareOfSbe = 0.1;

constexpr uint32_t softXids[] = { 13, 31, 43, 45, 63, 92 };
constexpr size_t softXidCount = sizeof(softXids) / sizeof(softXids[0]);

} // namespace

double FaultModel::doubleBitPerGpuDay()
{
    return dbeRate;
}

double FaultModel::interruptionsPerGpuDay()
{
    return faultyGpuRate + dbeRate + sramRate + gspRate + nodeFailRate / FleetShape::gpusPerNode;
}

FaultModel::FaultModel(const FleetShape &shape, uint64_t seed)
    : m_shape(shape)
    , m_seed(seed)
{
    const size_t n = shape.gpuCount;
    m_propensity.resize(n);
    for (size_t i = 0; i < n; ++i) {
        // Log-normal spread for everyone, and a small share of bad actors far above the rest.
        const double spread = std::exp(0.8 * normal(hash(seed, SaltPropensity, i)) - 0.32);
        const bool bad = unit(hash(seed, SaltBadActor, i)) < badActorShare;
        m_propensity[i] = static_cast<float>(spread * (bad ? badActorFactor : 1.0F));
    }
    m_nodeDownUntil.assign(shape.nodes.size(), -1.0);
    m_impairedUntil.assign(n, -1.0);
    for (auto &w : m_window) {
        w.assign(n, 0.0F);
    }
    m_lifetime.assign(n, 0);
    for (auto &t : m_total) {
        t.assign(n, 0);
    }
    m_lastXid.assign(n, 0);
}

void FaultModel::count(Counter c, uint32_t gpu, double now)
{
    m_window[c][gpu] += 1.0F;
    m_increments.push_back({ now, gpu, c });
    ++m_total[c][gpu];
    ++m_totalsVersion;
}

void FaultModel::logXid(uint32_t gpu, uint32_t xid, double now)
{
    const uint32_t node = m_shape.nodeOfGpu[gpu];
    count(XidCount, gpu, now);
    ++m_lifetime[gpu];
    m_lastXid[gpu] = xid;
    auto e = FleetEvent(now, FleetEvent::Kind::Xid,
        fleetscope::xidSerious(xid) ? FleetEvent::Severity::Critical : FleetEvent::Severity::Warning, gpu, node,
        fmt::format("XID {} on {} GPU {}: {}", xid, m_shape.nodes[node].hostname, gpu - m_shape.nodes[node].firstGpu,
            xidDescription(xid)));
    e.xid = xid;
    emit(std::move(e));
}

void FaultModel::step(uint64_t stepIndex, double now, double dt, const std::vector<float> &temp, int64_t extraGpu,
    double extraXidPerSecond, const std::function<bool(uint32_t)> &nodeHeldDown)
{
    m_now = now;
    while (!m_increments.empty() && m_increments.front().time <= now - windowSeconds) {
        const auto &inc = m_increments.front();
        m_window[inc.counter][inc.gpu] -= 1.0F;
        m_increments.pop_front();
    }

    // Nodes: held down by a scenario, failing on their own, coming back.
    for (uint32_t k = 0; k < m_shape.nodes.size(); ++k) {
        const bool wasDown = m_nodeDownUntil[k] > now - dt;
        if (nodeHeldDown(k)) {
            m_nodeDownUntil[k] = std::max(m_nodeDownUntil[k], now + dt / 2);
        } else if (!wasDown && unit(hash(m_seed, SaltNodeFail, stepIndex, k)) < nodeFailRate * dt / day) {
            m_nodeDownUntil[k] = now + 300.0 + 900.0 * unit(hash(m_seed, SaltRecovery, stepIndex, k));
        }
        const bool isDown = m_nodeDownUntil[k] > now;
        if (isDown != wasDown) {
            emit(FleetEvent(now, isDown ? FleetEvent::Kind::NodeDown : FleetEvent::Kind::NodeUp,
                isDown ? FleetEvent::Severity::Critical : FleetEvent::Severity::Info, -1, k,
                fmt::format("{} {}", m_shape.nodes[k].hostname, isDown ? "is down" : "is back up")));
        }
    }

    // GPUs: one uniform per GPU per step decides whether anything happened and what.
    const double perStep = dt / day / meanPropensity;
    const double total
        = (softXidRate + sbeRate + nvlinkRate + pcieRate + faultyGpuRate + dbeRate + sramRate + gspRate) * perStep;
    for (uint32_t g = 0; g < m_shape.gpuCount; ++g) {
        const uint32_t node = m_shape.nodeOfGpu[g];
        if (m_nodeDownUntil[node] > now) {
            continue;
        }
        if (static_cast<int64_t>(g) == extraGpu
            && unit(hash(m_seed, SaltDegrading, stepIndex, g)) < extraXidPerSecond * dt) {
            const uint32_t xid = unit(hash(m_seed, SaltFaultKind, stepIndex, g)) < 0.7 ? 92 : 63;
            logXid(g, xid, now);
            continue;
        }
        // Heat makes everything worse: propensity doubles every 5 °C above 80 °C.
        const float p = m_propensity[g] * std::exp2(std::max(0.0F, temp[g] - 80.0F) / 5.0F);
        const double u = unit(hash(m_seed, SaltFault, stepIndex, g)) / p;
        if (u >= total) {
            continue;
        }
        const auto impair
            = [&] { m_impairedUntil[g] = now + 180.0 + 420.0 * unit(hash(m_seed, SaltRecovery, stepIndex, g)); };
        double edge = softXidRate * perStep;
        if (u < edge) {
            const auto pick = static_cast<size_t>(unit(hash(m_seed, SaltFaultKind, stepIndex, g)) * softXidCount);
            logXid(g, softXids[std::min(softXidCount - 1, pick)], now);
            continue;
        }
        if (u < (edge += sbeRate * perStep)) {
            count(EccSbeCount, g, now);
            ++m_lifetime[g];
            if (unit(hash(m_seed, SaltRemap, stepIndex, g)) < remapShareOfSbe) {
                count(RemappedCorrectableCount, g, now);
            }
            continue;
        }
        if (u < (edge += nvlinkRate * perStep)) {
            count(NvlinkCount, g, now);
            continue;
        }
        if (u < (edge += pcieRate * perStep)) {
            count(PcieReplayCount, g, now);
            continue;
        }
        if (u < (edge += faultyGpuRate * perStep)) {
            // Fallen off the bus (the node reboots) or an NVLink fault that takes the GPU out of its job.
            if (unit(hash(m_seed, SaltFaultKind, stepIndex, g)) < 0.6) {
                logXid(g, 79, now);
                m_nodeDownUntil[node] = now + 600.0;
            } else {
                logXid(g, 74, now);
                impair();
            }
            continue;
        }
        if (u < (edge += dbeRate * perStep)) {
            count(EccDbeCount, g, now);
            ++m_lifetime[g];
            count(RemappedUncorrectableCount, g, now);
            m_impairedUntil[g] = now + 300.0;
            auto e = FleetEvent(now, FleetEvent::Kind::EccDoubleBit, FleetEvent::Severity::Critical, g, node,
                fmt::format("double-bit ECC error on {} GPU {}", m_shape.nodes[node].hostname,
                    g - m_shape.nodes[node].firstGpu));
            e.xid = 48;
            emit(std::move(e));
            continue;
        }
        logXid(g, u < edge + sramRate * perStep ? 95 : 119, now);
        impair();
    }
}

} // namespace fleetscope::backend
