// SPDX-License-Identifier: Apache-2.0
#include "sim/faultmodel.h"

#include "core/determinism.h"

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
// Rates per GPU per day at propensity 1.
constexpr double xidRate = 0.01;
constexpr double sbeRate = 0.2;
constexpr double dbeRate = 0.002;
constexpr double nvlinkRate = 1.0;
constexpr double pcieRate = 1.0;
constexpr double nodeFailRate = 0.01; // per node per day, independent of its GPUs
constexpr double badActorShare = 0.01;
constexpr float badActorFactor = 150.0F;
// Row remapping (A100, H100): a row that held an uncorrectable error is always remapped to a spare; one with
// correctable errors now and then.
constexpr double remapShareOfSbe = 0.1;

// XIDs by how often a fleet sees them: the first few are soft, 48/79/94/95 are serious.
constexpr uint32_t xidPool[] = { 13, 31, 43, 45, 74, 92, 63, 119, 48, 94, 95, 79 };
constexpr size_t xidPoolSize = sizeof(xidPool) / sizeof(xidPool[0]);

} // namespace

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
    const double perStep = dt / day;
    const double total = (xidRate + sbeRate + dbeRate + nvlinkRate + pcieRate) * perStep;
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
        double edge = xidRate * perStep;
        if (u < edge) {
            const auto pick = static_cast<size_t>(unit(hash(m_seed, SaltFaultKind, stepIndex, g)) * xidPoolSize);
            // The pool is ordered from common to rare: square the draw so the serious ones stay rare.
            const uint32_t xid = xidPool[std::min(xidPoolSize - 1, pick * pick / xidPoolSize)];
            logXid(g, xid, now);
            if (xid == 79) {
                m_nodeDownUntil[node] = now + 600.0; // the node reboots
            } else if (fleetscope::xidSerious(xid)) {
                m_impairedUntil[g] = now + 180.0 + 420.0 * unit(hash(m_seed, SaltRecovery, stepIndex, g));
            }
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
        if (u < (edge += nvlinkRate * perStep)) {
            count(NvlinkCount, g, now);
            continue;
        }
        count(PcieReplayCount, g, now);
    }
}

} // namespace fleetscope::backend
