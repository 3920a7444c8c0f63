// SPDX-License-Identifier: Apache-2.0
#include "framesource.h"

namespace fleetscope::backend {

namespace {
int64_t toUnixMs(std::chrono::system_clock::time_point t)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
} // namespace

FrameSource::FrameSource(const Options &options)
    : m_options(options)
    , m_simulator(
          options.gpuCount, options.seed, std::chrono::duration<double>(options.interval).count() * options.speed)
    // The generation identifies this layout; it is stable for a given fleet so that a restarted backend with the
    // same arguments serves the same generation and consoles keep their layout.
    , m_generation((static_cast<uint64_t>(options.gpuCount) << 32U) | (options.seed & 0xffffffffU))
    , m_epoch(std::chrono::system_clock::now())
{
    auto first = m_simulator.snapshot();
    first->sampleTimeMs = toUnixMs(m_epoch);
    m_latest = std::move(first);
    m_thread = std::thread([this] { run(); });
}

FrameSource::~FrameSource()
{
    stop();
}

void FrameSource::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_published.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

std::shared_ptr<const SimFrame> FrameSource::latest() const
{
    std::lock_guard lock(m_mutex);
    return m_latest;
}

std::shared_ptr<const SimFrame> FrameSource::waitForFrameAfter(
    uint64_t sequence, std::chrono::milliseconds timeout) const
{
    std::unique_lock lock(m_mutex);
    m_published.wait_for(lock, timeout, [&] { return m_stopping || m_latest->sequence > sequence; });
    if (m_latest->sequence > sequence) {
        return m_latest;
    }
    return nullptr;
}

void FrameSource::run()
{
    auto next = std::chrono::steady_clock::now();
    for (;;) {
        next += m_options.interval;
        {
            std::unique_lock lock(m_mutex);
            if (m_published.wait_until(lock, next, [this] { return m_stopping; })) {
                return;
            }
        }
        m_simulator.step();
        auto events = m_simulator.takeEvents();
        auto frame = m_simulator.snapshot();
        // The sample's own time: when this state was taken, not when a subscriber gets it.
        frame->sampleTimeMs = toUnixMs(std::chrono::system_clock::now());
        {
            std::lock_guard lock(m_mutex);
            m_latest = std::move(frame);
            for (auto &e : events) {
                m_recentEvents.push_back(std::move(e));
            }
            while (m_recentEvents.size() > maxRecentEvents) {
                m_recentEvents.pop_front();
            }
        }
        m_published.notify_all();
        // If the simulation fell behind (a slow machine, a huge fleet), skip ahead instead of bursting to catch up.
        const auto now = std::chrono::steady_clock::now();
        if (now > next + m_options.interval) {
            next = now;
        }
    }
}

} // namespace fleetscope::backend
