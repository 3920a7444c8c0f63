// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "simulator.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace fleetscope::backend {

// Runs the simulator on its own thread, one step per interval of wall-clock time, and publishes each frame as the
// latest. Any number of subscribers wait on it; one simulation serves them all.
//
// Locking: m_mutex guards m_latest, m_recentEvents and m_stopping; the simulator itself is touched only by the ticker
// thread.
class FrameSource
{
public:
    struct Options
    {
        uint32_t gpuCount = 10240;
        uint64_t seed = 1;
        std::chrono::milliseconds interval { 1000 };
        double speed = 1.0; // simulated seconds per wall-clock second
        Scenario::Kind scenario = Scenario::Kind::None;
    };

    explicit FrameSource(const Options &options);
    ~FrameSource();
    FrameSource(const FrameSource &) = delete;
    FrameSource &operator=(const FrameSource &) = delete;

    const FleetShape &shape() const { return m_simulator.shape(); }
    uint64_t topologyGeneration() const { return m_generation; }
    std::chrono::milliseconds interval() const { return m_options.interval; }

    std::shared_ptr<const SimFrame> latest() const;
    // Blocks until a frame newer than `sequence` is published, the timeout passes (returns null) or the source stops.
    std::shared_ptr<const SimFrame> waitForFrameAfter(uint64_t sequence, std::chrono::milliseconds timeout) const;

    void stop();

    static constexpr size_t maxRecentEvents = 100000;

private:
    void run();

    Options m_options;
    Simulator m_simulator;
    uint64_t m_generation;
    std::chrono::system_clock::time_point m_epoch;

    mutable std::mutex m_mutex;
    mutable std::condition_variable m_published;
    std::shared_ptr<const SimFrame> m_latest;
    std::deque<FleetEvent> m_recentEvents; // newest last, at most maxRecentEvents
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace fleetscope::backend
