// SPDX-License-Identifier: Apache-2.0
#include "sim/jobtruth.h"

#include <algorithm>

namespace fleetscope::backend {

const JobTruth::Account *JobTruth::account(uint64_t jobId) const
{
    const auto it = m_accounts.find(jobId);
    return it == m_accounts.end() ? nullptr : &it->second;
}

void JobTruth::record(uint64_t jobId, uint32_t gpuCount, double startSeconds, double dt, const Step &step)
{
    auto &a = m_accounts[jobId];
    if (a.jobId == 0) {
        a.jobId = jobId;
        a.gpuCount = gpuCount;
        a.startSeconds = startSeconds;
    }
    const double gpuSeconds = static_cast<double>(gpuCount) * dt;
    a.gpuSeconds += gpuSeconds;
    switch (step.state) {
    case State::Compute: {
        const double pace = std::clamp(static_cast<double>(step.pace), 0.0, 1.0);
        const double done = gpuSeconds * pace;
        a.productive += done;
        a.sinceCheckpoint += done;
        const double slow = gpuSeconds - done;
        if (slow > 0) {
            a.straggler += slow;
            const auto gpu = static_cast<uint32_t>(std::max<int64_t>(step.slowGpu, 0));
            auto it = std::find_if(
                a.stragglers.begin(), a.stragglers.end(), [gpu](const StragglerLoss &s) { return s.gpu == gpu; });
            if (it == a.stragglers.end()) {
                a.stragglers.push_back({ gpu, 0 });
                it = a.stragglers.end() - 1;
            }
            it->gpuSeconds += slow;
        }
        break;
    }
    case State::Checkpoint:
        a.checkpoint += gpuSeconds;
        break;
    case State::Restart:
        a.restart += gpuSeconds;
        a.restartLoading += gpuSeconds;
        break;
    case State::Stall: {
        a.stall += gpuSeconds;
        const auto &s = step.stall;
        auto it = std::find_if(a.stalls.begin(), a.stalls.end(), [&s](const StallLoss &o) {
            return o.cause == s.cause && o.gpu == s.gpu && o.node == s.node && o.domain == s.domain;
        });
        if (it == a.stalls.end()) {
            a.stalls.push_back(s);
            it = a.stalls.end() - 1;
            it->gpuSeconds = 0;
        }
        it->gpuSeconds += gpuSeconds;
        break;
    }
    }
}

void JobTruth::checkpointed(uint64_t jobId)
{
    if (const auto it = m_accounts.find(jobId); it != m_accounts.end()) {
        it->second.sinceCheckpoint = 0;
    }
}

void JobTruth::restarted(uint64_t jobId)
{
    const auto it = m_accounts.find(jobId);
    if (it == m_accounts.end()) {
        return;
    }
    auto &a = it->second;
    a.productive -= a.sinceCheckpoint;
    a.rework += a.sinceCheckpoint;
    a.restart += a.sinceCheckpoint;
    a.sinceCheckpoint = 0;
    ++a.restarts;
}

void JobTruth::ended(uint64_t jobId, double now)
{
    if (const auto it = m_accounts.find(jobId); it != m_accounts.end()) {
        it->second.endSeconds = now;
    }
}

void JobTruth::slowGpu(uint32_t gpu, uint64_t jobId, float drop, StragglerKind kind, double now)
{
    const uint64_t key = openKey(gpu, kind);
    if (const auto it = m_open.find(key); it != m_open.end()) {
        Episode &e = m_episodes[it->second.episode];
        if (e.jobId == jobId && e.drop == drop) {
            it->second.seen = true;
            return;
        }
        e.endSeconds = now; // another job, or another drop: another episode
        m_open.erase(it);
    }
    m_open.emplace(key, Open { m_episodes.size(), true });
    m_episodes.push_back({ gpu, jobId, now, std::numeric_limits<double>::infinity(), drop, kind });
}

void JobTruth::endStep(double now)
{
    for (auto it = m_open.begin(); it != m_open.end();) {
        if (!it->second.seen) {
            m_episodes[it->second.episode].endSeconds = now;
            it = m_open.erase(it);
        } else {
            it->second.seen = false;
            ++it;
        }
    }
    for (auto it = m_accounts.begin(); it != m_accounts.end();) {
        if (it->second.endSeconds < now - 3600.0) {
            it = m_accounts.erase(it);
        } else {
            ++it;
        }
    }
}

} // namespace fleetscope::backend
