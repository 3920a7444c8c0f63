// SPDX-License-Identifier: Apache-2.0
#include "http/refusals.h"

#include <algorithm>
#include <iterator>

namespace fleetscope::backend {

bool Refusals::mayRefuse(const std::string &peer, Clock::time_point now)
{
    if (m_perMinute == 0) {
        return true;
    }
    const auto full = static_cast<double>(m_perMinute);
    const double refill = full / 60.0; // a second
    auto tokensAt = [&](const Bucket &b) {
        return std::min(full, b.tokens + std::chrono::duration<double>(now - b.refilled).count() * refill);
    };
    std::lock_guard lock(m_mutex);
    auto it = m_buckets.find(peer);
    if (it == m_buckets.end()) {
        if (m_buckets.size() >= maxAddresses) {
            // Swept at most once a second: past the bound, each new address must not cost a pass over the table.
            if (now - m_lastSweep >= std::chrono::seconds(1)) {
                m_lastSweep = now;
                for (auto old = m_buckets.begin(); old != m_buckets.end();) {
                    old = tokensAt(old->second) >= full ? m_buckets.erase(old) : std::next(old);
                }
            }
            if (m_buckets.size() >= maxAddresses) {
                return true;
            }
        }
        it = m_buckets.emplace(peer, Bucket { full, now }).first;
    }
    Bucket &bucket = it->second;
    bucket.tokens = tokensAt(bucket);
    bucket.refilled = now;
    return bucket.tokens >= 1.0;
}

void Refusals::spend(const std::string &peer)
{
    std::lock_guard lock(m_mutex);
    if (auto it = m_buckets.find(peer); it != m_buckets.end()) {
        it->second.tokens = std::max(0.0, it->second.tokens - 1.0);
    }
}

bool Refusals::shouldLog(const std::string &peer, std::string_view reason, Clock::time_point now)
{
    std::string key = peer + '\n' + std::string(reason);
    std::lock_guard lock(m_mutex);
    if (m_logged.size() >= maxLogged) {
        if (now - m_lastLogSweep < std::chrono::seconds(1)) {
            return false;
        }
        m_lastLogSweep = now;
        for (auto it = m_logged.begin(); it != m_logged.end();) {
            it = now - it->second >= std::chrono::minutes(1) ? m_logged.erase(it) : std::next(it);
        }
        if (m_logged.size() >= maxLogged) {
            return false;
        }
    }
    auto [it, fresh] = m_logged.try_emplace(std::move(key), now);
    if (!fresh && now - it->second < std::chrono::minutes(1)) {
        return false;
    }
    it->second = now;
    return true;
}

} // namespace fleetscope::backend
