// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "fleetshape.h"
#include "simulator.h"

#include <cstdint>
#include <memory>
#include <string>

namespace fleetscope::backend {

// Where FrameSource's frames come from when they are not simulated: something that, once per interval, fetches the
// fleet's current state from outside (a Prometheus-compatible server). FrameSource calls it from its ticker thread
// only, and owns it; the shape is fixed for the poller's lifetime.
class FramePoller
{
public:
    virtual ~FramePoller() = default;

    virtual const FleetShape &shape() const = 0;
    virtual uint64_t topologyGeneration() const = 0;
    // The frame served before the first poll succeeds: every GPU without data.
    virtual std::shared_ptr<SimFrame> emptyFrame() const = 0;
    // Fetches the current state. Returns the new frame (its sequence is left to FrameSource), or null when there is
    // nothing new to publish: the upstream failed (see upstreamError()) or has no newer sample than the last frame.
    virtual std::shared_ptr<SimFrame> poll() = 0;
    // Why the last poll failed, for consoles; empty while the upstream answers.
    virtual std::string upstreamError() const = 0;
};

} // namespace fleetscope::backend
