// SPDX-License-Identifier: Apache-2.0
#include "core/framesource.h"

#include "core/clock.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace fleetscope::backend {

FrameSource::FrameSource(std::unique_ptr<FramePoller> poller, const Options &options, std::unique_ptr<FrameJudge> judge)
    : m_options(options)
    , m_poller(std::move(poller))
    , m_judge(std::move(judge))
    , m_generation(m_poller->topologyGeneration())
{
    // The budgets in frames, from the size of a frame of this fleet (the raw error fields, where a producer has
    // them, are shared between frames and left out).
    const size_t bytes = std::max<size_t>(1,
        static_cast<size_t>(m_poller->shape().gpuCount) * (static_cast<size_t>(MetricId::Count) * sizeof(float) + 1));
    m_maxFrames = std::max<size_t>(2, options.frameMemoryBudget / bytes);
    m_maxCoarse = std::max<size_t>(2, options.coarseMemoryBudget / bytes);
    m_coarseEveryFrames = static_cast<uint64_t>(std::max<int64_t>(1, options.coarseEvery / options.interval));
    const int64_t now = nowUnixMs();
    auto past = m_poller->pastFrames(now, options.coarseEvery, m_maxCoarse);
    for (auto &e : past.events) {
        e.sequence = m_nextEventSequence++;
        m_events.push_back(std::move(e));
    }
    while (m_events.size() > maxRecentEvents) {
        m_events.pop_front();
    }
    for (auto &f : past.frames) {
        unjudged(f.get()); // frames from before the start were not judged
    }
    auto first = m_poller->firstFrame();
    if (first->sampleTimeMs == 0) {
        first->sampleTimeMs = now;
    }
    // The past as history holds it: in time order and before the first frame, whatever an upstream answered (a
    // store's replica ahead of the one the first poll asked, an exporter's skewed clock).
    int64_t last = std::numeric_limits<int64_t>::min();
    for (auto &f : past.frames) {
        if (f->sampleTimeMs > last && f->sampleTimeMs < first->sampleTimeMs && f->sequence < first->sequence) {
            last = f->sampleTimeMs;
            m_coarse.push_back(std::move(f));
        }
    }
    if (m_judge && !m_coarse.empty()) {
        m_judge->warm({ m_coarse.begin(), m_coarse.end() }, past.jobs.empty() ? m_poller->jobs() : past.jobs);
    }
    publish(std::move(first), m_poller->takeEvents());
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

std::shared_ptr<const Frame> FrameSource::latest() const
{
    std::lock_guard lock(m_mutex);
    return m_frames.back();
}

std::string FrameSource::upstreamError() const
{
    std::lock_guard lock(m_mutex);
    return m_upstreamError;
}

std::shared_ptr<const Frame> FrameSource::waitForFrameAfter(uint64_t sequence, std::chrono::milliseconds timeout) const
{
    std::unique_lock lock(m_mutex);
    m_published.wait_for(lock, timeout, [&] { return m_stopping || m_frames.back()->sequence > sequence; });
    if (m_frames.back()->sequence > sequence) {
        return m_frames.back();
    }
    return nullptr;
}

bool FrameSource::framesAfter(
    uint64_t sequence, std::vector<std::shared_ptr<const Frame>> *out, uint64_t *heldFrom, uint64_t *heldTo) const
{
    std::lock_guard lock(m_mutex);
    *heldFrom = m_frames.front()->sequence;
    *heldTo = m_frames.back()->sequence;
    if (sequence + 1 < *heldFrom || sequence > *heldTo) {
        return false;
    }
    for (const auto &f : m_frames) {
        if (f->sequence > sequence) {
            out->push_back(f);
        }
    }
    return true;
}

std::vector<TimedEvent> FrameSource::eventsAfter(
    int64_t sinceMs, uint64_t *afterSequence, std::chrono::milliseconds timeout) const
{
    std::unique_lock lock(m_mutex);
    m_published.wait_for(
        lock, timeout, [&] { return m_stopping || (!m_events.empty() && m_events.back().sequence > *afterSequence); });
    std::vector<TimedEvent> out;
    // Events are in sequence order: binary search for the first one not yet seen.
    auto it = std::partition_point(
        m_events.begin(), m_events.end(), [&](const TimedEvent &e) { return e.sequence <= *afterSequence; });
    for (; it != m_events.end(); ++it) {
        if (it->timeMs >= sinceMs) {
            out.push_back(*it);
        }
        *afterSequence = it->sequence;
    }
    return out;
}

uint64_t FrameSource::lastEventSequence() const
{
    std::lock_guard lock(m_mutex);
    return m_nextEventSequence - 1;
}

std::vector<JobInfo> FrameSource::jobs() const
{
    std::lock_guard lock(m_mutex);
    return m_jobs;
}

std::vector<std::shared_ptr<const Frame>> FrameSource::framesBetween(int64_t fromMs, int64_t toMs) const
{
    std::vector<std::shared_ptr<const Frame>> out;
    std::lock_guard lock(m_mutex);
    // Both tiers are in time order; merge them, dropping the frames held in both.
    std::vector<std::shared_ptr<const Frame>> all;
    all.reserve(m_coarse.size() + m_frames.size());
    std::merge(m_coarse.begin(), m_coarse.end(), m_frames.begin(), m_frames.end(), std::back_inserter(all),
        [](const auto &a, const auto &b) { return a->sequence < b->sequence; });
    all.erase(
        std::unique(all.begin(), all.end(), [](const auto &a, const auto &b) { return a->sequence == b->sequence; }),
        all.end());
    for (size_t i = 0; i < all.size(); ++i) {
        const int64_t t = all[i]->sampleTimeMs;
        const bool lastBefore = t < fromMs && (i + 1 == all.size() || all[i + 1]->sampleTimeMs >= fromMs);
        if (lastBefore || (t >= fromMs && t <= toMs)) {
            out.push_back(all[i]);
        }
    }
    return out;
}

void FrameSource::unjudged(Frame *frame) const
{
    for (const MetricId id : FrameJudge::planes) {
        frame->planes[static_cast<size_t>(id)].assign(
            m_poller->shape().gpuCount, std::numeric_limits<float>::quiet_NaN());
    }
}

void FrameSource::publish(std::shared_ptr<Frame> frame, std::vector<FleetEvent> events)
{
    // Built outside the lock: the ticker is the only writer.
    std::vector<JobInfo> jobs = m_poller->jobs();
    if (m_judge) {
        m_judge->judge(frame.get(), jobs, &events);
    } else {
        unjudged(frame.get());
    }
    {
        std::lock_guard lock(m_mutex);
        frame->publishedMs = nowUnixMs();
        for (auto &e : events) {
            m_events.push_back({ m_nextEventSequence++, frame->sampleTimeMs, std::move(e) });
        }
        while (m_events.size() > maxRecentEvents) {
            m_events.pop_front();
        }
        if (frame->sequence % m_coarseEveryFrames == 0) {
            m_coarse.push_back(frame);
            while (m_coarse.size() > m_maxCoarse) {
                m_coarse.pop_front();
            }
        }
        m_frames.push_back(std::move(frame));
        while (m_frames.size() > m_maxFrames) {
            m_frames.pop_front();
        }
        m_jobs = std::move(jobs);
    }
    m_published.notify_all();
}

void FrameSource::run()
{
    if (m_options.pastEvents.count() > 0) {
        // Recent events from before the start, so that a console asking for the last hour's gets them.
        const int64_t now = nowUnixMs();
        auto past = m_poller->pastEvents(now - m_options.pastEvents.count(), now);
        std::lock_guard lock(m_mutex);
        for (auto &e : past) {
            e.sequence = m_nextEventSequence++;
            m_events.push_back(std::move(e));
        }
        while (m_events.size() > maxRecentEvents) {
            m_events.pop_front();
        }
    }
    uint64_t sequence = latest()->sequence;
    auto next = m_poller->nextPollAt(std::chrono::steady_clock::now());
    for (;;) {
        {
            std::unique_lock lock(m_mutex);
            if (m_published.wait_until(lock, next, [this] { return m_stopping; })) {
                return;
            }
        }
        auto frame = m_poller->poll();
        std::string error = m_poller->upstreamError();
        {
            std::lock_guard lock(m_mutex);
            m_upstreamError = std::move(error);
        }
        if (frame) {
            frame->sequence = ++sequence;
            publish(std::move(frame), m_poller->takeEvents());
        } else {
            // Subscribers waiting for a frame look at the upstream error now rather than at their next wake-up.
            m_published.notify_all();
        }
        next += m_options.interval;
        const auto now = std::chrono::steady_clock::now();
        if (now > next) {
            next = now; // a slow upstream: poll again at once, but never in a burst
        }
        next = std::max(now, m_poller->nextPollAt(next));
    }
}

} // namespace fleetscope::backend
