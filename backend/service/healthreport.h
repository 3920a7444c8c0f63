// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framesource.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace fleetscope::backend {

// What the standard gRPC health service (grpc.health.v1.Health, gRPC's own, which BackendServer enables) says about
// the backend, from its frame source: SERVING once a poll of the source's producer has given a frame and while its
// upstream answers; NOT_SERVING before (the frame served until then is the one at the start, for a polled source every
// GPU without data: the backend is still discovering what it serves) and while the upstream is unreachable (the
// source's upstreamError()). Kubernetes' gRPC probes and load balancers send calls only where it says SERVING.
//
// The source has no signal for a change of its upstream's state, only for new frames, so a thread of its own looks
// every `every` (250 ms: a probe's period is seconds) and reports only changes, the first look at once.
class HealthReport
{
public:
    using Report = std::function<void(bool serving)>;

    HealthReport(
        const FrameSource &source, Report report, std::chrono::milliseconds every = std::chrono::milliseconds(250));
    ~HealthReport();
    HealthReport(const HealthReport &) = delete;
    HealthReport &operator=(const HealthReport &) = delete;

    // Stops looking (before what report() reports to goes); safe to call twice.
    void stop();

    // Whether source serves, and when it does not, why in *why (thread-safe).
    static bool serving(const FrameSource &source, std::string *why);

private:
    void run();

    const FrameSource &m_source;
    Report m_report;
    std::chrono::milliseconds m_every;
    std::mutex m_mutex; // guards m_stopping
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace fleetscope::backend
