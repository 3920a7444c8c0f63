// SPDX-License-Identifier: Apache-2.0
#include "sim/stragglermodel.h"

#include "core/determinism.h"

#include <algorithm>
#include <cmath>

namespace fleetscope::backend {

using namespace determinism;

namespace {
// Salts of their own (InjectedFaults' start at 301).
enum Salt : uint64_t { SaltCount = 401, SaltGpu, SaltDrop, SaltDuration };
} // namespace

StragglerModel::StragglerModel(uint32_t gpuCount, uint64_t seed)
    : m_gpus(gpuCount)
    , m_seed(seed)
{ }

void StragglerModel::refresh(uint32_t gpu)
{
    float drop = 0;
    for (const size_t i : m_active) {
        if (m_faults[i].gpu == gpu) {
            drop = std::max(drop, m_faults[i].drop);
        }
    }
    m_drop[gpu] = drop;
}

void StragglerModel::begin(const Fault &fault)
{
    if (fault.gpu >= m_gpus) {
        return;
    }
    if (m_drop.empty()) {
        m_drop.assign(m_gpus, 0.0F);
    }
    m_active.push_back(m_faults.size());
    m_faults.push_back(fault);
    refresh(fault.gpu);
}

void StragglerModel::step(uint64_t stepIndex, double now, double dt)
{
    // Ends first, so that a fault of one step still counts.
    for (size_t i = 0; i < m_active.size();) {
        const Fault &f = m_faults[m_active[i]];
        if (f.endSeconds <= now) {
            const uint32_t gpu = f.gpu;
            m_active[i] = m_active.back();
            m_active.pop_back();
            refresh(gpu);
        } else {
            ++i;
        }
    }
    if (m_rate <= 0 || m_gpus == 0) {
        return;
    }
    // A Poisson count for the whole fleet this step; drops uniform, durations log-uniform (as many short repairs as
    // long ones, per factor).
    const uint32_t count = poisson(hash(m_seed, SaltCount, stepIndex), m_rate * m_gpus * dt / 86400.0);
    for (uint32_t i = 0; i < count; ++i) {
        Fault f;
        f.gpu = static_cast<uint32_t>(hash(m_seed, SaltGpu, stepIndex, i) % m_gpus);
        f.drop = static_cast<float>(minDrop + (maxDrop - minDrop) * unit(hash(m_seed, SaltDrop, stepIndex, i)));
        f.onsetSeconds = now;
        const double hours
            = minHours * std::exp(unit(hash(m_seed, SaltDuration, stepIndex, i)) * std::log(maxHours / minHours));
        f.endSeconds = now + hours * 3600.0;
        begin(f);
    }
}

} // namespace fleetscope::backend
