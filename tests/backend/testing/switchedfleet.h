// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framepoller.h"
#include "sim/simulatedfleet.h"

#include <atomic>
#include <memory>
#include <string>

namespace fleetscope::testing {

// The simulated fleet behind a switch the test holds. While it is off, a poll either gives no frame and says why, as
// a Prometheus poller does when its server is unreachable (WhileOff::Unreachable), or serves the state at the start
// again, stamped now, so that the fleet's clock stands still and a scenario's onset comes a known number of polls
// after the test turns it on (WhileOff::Held).
class SwitchedFleet final : public backend::FramePoller
{
public:
    enum class WhileOff { Unreachable, Held };

    SwitchedFleet(const backend::SimulationOptions &options, std::shared_ptr<std::atomic<bool>> on, WhileOff whileOff)
        : m_fleet(options)
        , m_on(std::move(on))
        , m_whileOff(whileOff)
    { }
    const backend::FleetShape &shape() const override { return m_fleet.shape(); }
    uint64_t topologyGeneration() const override { return m_fleet.topologyGeneration(); }
    std::shared_ptr<backend::Frame> firstFrame() override { return m_fleet.firstFrame(); }
    std::shared_ptr<backend::Frame> poll() override
    {
        if (m_on->load()) {
            m_error.clear();
            return m_fleet.poll();
        }
        if (m_whileOff == WhileOff::Held) {
            return m_fleet.firstFrame();
        }
        m_error = "connection refused";
        return nullptr;
    }
    std::string upstreamError() const override { return m_error; }
    std::vector<backend::FleetEvent> takeEvents() override { return m_fleet.takeEvents(); }
    std::vector<backend::JobInfo> jobs() const override { return m_fleet.jobs(); }
    std::chrono::steady_clock::time_point nextPollAt(std::chrono::steady_clock::time_point scheduled) const override
    {
        return m_fleet.nextPollAt(scheduled);
    }

private:
    backend::SimulatedFleet m_fleet;
    std::shared_ptr<std::atomic<bool>> m_on;
    WhileOff m_whileOff;
    std::string m_error; // the ticker's only
};

} // namespace fleetscope::testing
