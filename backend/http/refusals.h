// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace fleetscope::backend {

// Who an HTTP door refused, by client address: for the limit on refusals (so that guessing a token is as slow here
// as at the gRPC door) and for the log (once a minute per address and reason). Both tables are bounded.
//
// The limit: a bucket of perMinute refusals per address, one back every 60 / perMinute s, spent by each refusal;
// while it is empty mayRefuse() says no and the door answers 429 before looking at any credential. At most 16,384
// addresses are held; a full bucket is forgotten when room is needed, and past that new addresses are not limited
// (rather than share one record: a flood from many addresses must not lock out a sender).
//
// Thread-safe.
class Refusals
{
public:
    using Clock = std::chrono::steady_clock;
    static constexpr size_t maxAddresses = 16384;
    static constexpr size_t maxLogged = 4096;

    void setPerMinute(size_t perMinute) { m_perMinute = perMinute; } // 0: not limited; before any call
    bool mayRefuse(const std::string &peer, Clock::time_point now = Clock::now());
    void spend(const std::string &peer);
    // Whether a refusal of peer for reason is to be logged now: once a minute per address and reason; past
    // maxLogged pairs in the last minute, not at all.
    bool shouldLog(const std::string &peer, std::string_view reason, Clock::time_point now = Clock::now());

private:
    struct Bucket
    {
        double tokens = 0; // refusals left
        Clock::time_point refilled;
    };
    size_t m_perMinute = 60;
    std::mutex m_mutex;
    std::unordered_map<std::string, Bucket> m_buckets;
    std::map<std::string, Clock::time_point> m_logged; // address \n reason -> when
    Clock::time_point m_lastSweep {}; // of m_buckets, past maxAddresses
    Clock::time_point m_lastLogSweep {}; // of m_logged, past maxLogged
};

} // namespace fleetscope::backend
