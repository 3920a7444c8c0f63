// SPDX-License-Identifier: Apache-2.0
#include "sim/railcounters.h"

#include "core/determinism.h"

#include <algorithm>
#include <cmath>

namespace fleetscope::backend {

using namespace determinism;

namespace {
enum Salt : uint64_t { SaltMarginal = 501, SaltHealthy, SaltWeak, SaltBurst };

constexpr double day = 86400.0;
constexpr double marginalShare = 0.01;
// Symbol-error bursts per link and day: a healthy link's (one every few days), a marginal one's. Chosen (no public
// fleet-wide figure): docs/FAULTS.md.
constexpr double healthyBurstsPerDay = 0.3;
constexpr double marginalBurstsPerDay = 48.0;

} // namespace

RailCounters::RailCounters(uint32_t gpuCount, uint64_t seed)
    : m_seed(seed)
{
    for (uint32_t g = 0; g < gpuCount; ++g) {
        if (unit(hash(seed, SaltMarginal, g)) < marginalShare) {
            m_marginal.push_back(g);
        }
    }
    m_linkState.assign(gpuCount, 1.0F);
    m_wait.assign(gpuCount, 0.0F);
    for (size_t c = 0; c < 3; ++c) {
        m_window[c].assign(gpuCount, 0.0F);
        m_total[c].assign(gpuCount, 0);
    }
    m_waitMicroseconds.assign(gpuCount, 0);
}

void RailCounters::expire(double now)
{
    while (!m_increments.empty() && m_increments.front().time <= now - windowSeconds) {
        const auto &inc = m_increments.front();
        m_window[inc.counter][inc.gpu] -= static_cast<float>(inc.amount);
        m_increments.pop_front();
    }
}

void RailCounters::backgroundDraws(uint64_t stepIndex, double dt, std::vector<uint32_t> *gpus)
{
    gpus->clear();
    const auto n = static_cast<uint32_t>(m_linkState.size());
    if (n == 0) {
        return;
    }
    const uint32_t healthy = poisson(hash(m_seed, SaltHealthy, stepIndex), healthyBurstsPerDay * n * dt / day);
    for (uint32_t i = 0; i < healthy; ++i) {
        const uint64_t h = hash(m_seed, SaltBurst, stepIndex, i);
        gpus->push_back(static_cast<uint32_t>(h % n));
        gpus->push_back(1 + static_cast<uint32_t>(mix(h) % 3));
    }
    if (!m_marginal.empty()) {
        const uint32_t weak = poisson(hash(m_seed, SaltWeak, stepIndex),
            marginalBurstsPerDay * static_cast<double>(m_marginal.size()) * dt / day);
        for (uint32_t i = 0; i < weak; ++i) {
            const uint64_t h = hash(m_seed, SaltBurst, stepIndex, healthy + i);
            gpus->push_back(m_marginal[h % m_marginal.size()]);
            gpus->push_back(1 + static_cast<uint32_t>(mix(h) % 12));
        }
    }
}

void RailCounters::count(uint32_t gpu, uint32_t linkDowns, uint32_t symbolErrors, uint32_t receiveErrors, double now)
{
    const uint32_t amounts[3] = { linkDowns, symbolErrors, receiveErrors };
    for (uint8_t c = 0; c < 3; ++c) {
        if (amounts[c] == 0) {
            continue;
        }
        m_window[c][gpu] += static_cast<float>(amounts[c]);
        m_total[c][gpu] += amounts[c];
        m_increments.push_back({ now, gpu, amounts[c], c });
    }
}

void RailCounters::accumulateWait(double now)
{
    const double elapsed = now - m_waitAt;
    if (elapsed < totalsEverySeconds) {
        return;
    }
    const double microsecondsPerPercent = elapsed * 1e4;
    for (size_t g = 0; g < m_wait.size(); ++g) {
        m_waitMicroseconds[g] += static_cast<uint64_t>(m_wait[g] * microsecondsPerPercent);
    }
    m_waitAt = now;
}

std::shared_ptr<const RailCounterTotals> RailCounters::totals(double now) const
{
    if (m_totals && now >= m_totalsAt && now < m_totalsAt + totalsEverySeconds) {
        return m_totals;
    }
    auto rail = std::make_shared<RailCounterTotals>();
    rail->linkDowns = m_total[0];
    rail->symbolErrors = m_total[1];
    rail->receiveErrors = m_total[2];
    rail->transmitWaitMicroseconds = m_waitMicroseconds;
    m_totals = rail;
    m_totalsAt = now;
    return rail;
}

} // namespace fleetscope::backend
