// SPDX-License-Identifier: Apache-2.0
#include "service/healthreport.h"

#include <limits>
#include <optional>
#include <vector>

namespace fleetscope::backend {

HealthReport::HealthReport(const FrameSource &source, Report report, std::chrono::milliseconds every)
    : m_source(source)
    , m_report(std::move(report))
    , m_every(every)
    , m_thread([this] { run(); })
{ }

HealthReport::~HealthReport()
{
    stop();
}

void HealthReport::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

bool HealthReport::serving(const FrameSource &source, std::string *why)
{
    // Whether a poll has given a frame: the source holds the first frame and every one polled since, at least two
    // (FrameSource keeps no fewer), so more than one frame held means one was polled. Asked for the frames after the
    // last possible sequence, framesAfter() answers with the held range at once and copies nothing.
    std::vector<std::shared_ptr<const Frame>> none;
    uint64_t heldFrom = 0;
    uint64_t heldTo = 0;
    source.framesAfter(std::numeric_limits<uint64_t>::max(), &none, &heldFrom, &heldTo);
    if (const std::string error = source.upstreamError(); !error.empty()) {
        *why = "the upstream is unreachable: " + error;
        return false;
    }
    if (heldTo <= heldFrom) {
        *why = "no frame polled yet";
        return false;
    }
    why->clear();
    return true;
}

void HealthReport::run()
{
    std::optional<bool> reported;
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        lock.unlock();
        std::string why;
        const bool now = serving(m_source, &why);
        if (reported != now) {
            m_report(now);
            reported = now;
        }
        lock.lock();
        m_wake.wait_for(lock, m_every, [this] { return m_stopping; });
    }
}

} // namespace fleetscope::backend
