// SPDX-License-Identifier: Apache-2.0
#include "core/framesource.h"

#include "core/determinism.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
int64_t nowUnixMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

size_t frameBytes(const Frame &frame)
{
    size_t bytes = frame.health.size();
    for (const auto &p : frame.planes) {
        bytes += p.size() * sizeof(float);
    }
    // Counted whole although frames share it while it does not change: a busy fleet changes it every step.
    if (frame.rawErrors) {
        for (const auto &t : frame.rawErrors->totals) {
            bytes += t.size() * sizeof(uint32_t);
        }
        bytes += frame.rawErrors->lastXid.size() * sizeof(uint32_t);
    }
    return bytes;
}
} // namespace

FrameSource::FrameSource(const Options &options)
    : m_options(options)
    , m_simulator(std::make_unique<Simulator>(options.gpuCount, options.seed,
          std::chrono::duration<double>(options.interval).count() * options.speed, options.scenario, options.hardware))
    // The generation identifies this layout; it is stable for a given fleet so that a restarted backend with the
    // same arguments serves the same generation and consoles keep their layout. Another kind of hardware is another
    // layout (an HGX fleet's generation is as it always was: its kind is 0).
    , m_generation((static_cast<uint64_t>(options.hardware) << 56U) | (static_cast<uint64_t>(options.gpuCount) << 32U)
          | (options.seed & 0xffffffffU))
{
    auto first = m_simulator->snapshot();
    const size_t bytes = std::max<size_t>(1, frameBytes(*first));
    m_maxFrames = std::max<size_t>(2, options.frameMemoryBudget / bytes);
    m_maxCoarse = std::max<size_t>(2, options.coarseMemoryBudget / bytes);
    m_coarseEveryFrames = static_cast<uint64_t>(std::max<int64_t>(1, options.coarseEvery / options.interval));
    const int64_t now = nowUnixMs();
    if (options.history.count() > 0) {
        simulatePast(now);
        first = m_simulator->snapshot();
    }
    first->sampleTimeMs = now;
    publish(std::move(first), m_simulator->takeEvents());
    m_thread = std::thread([this] { run(); });
}

FrameSource::FrameSource(std::unique_ptr<FramePoller> poller, const Options &options)
    : m_options(options)
    , m_poller(std::move(poller))
    , m_generation(m_poller->topologyGeneration())
{
    auto first = m_poller->emptyFrame();
    const size_t bytes = std::max<size_t>(1, frameBytes(*first));
    m_maxFrames = std::max<size_t>(2, options.frameMemoryBudget / bytes);
    m_maxCoarse = std::max<size_t>(2, options.coarseMemoryBudget / bytes);
    m_coarseEveryFrames = static_cast<uint64_t>(std::max<int64_t>(1, options.coarseEvery / options.interval));
    // Sequence 0 is the frame without data; the first poll follows at once rather than one interval later.
    first->sequence = 0;
    if (first->sampleTimeMs == 0) {
        first->sampleTimeMs = nowUnixMs();
    }
    publish(std::move(first), {});
    m_thread = std::thread([this] { runPoller(); });
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

JobInfo FrameSource::describeJob(const Simulator::Job &job, int64_t nowMs) const
{
    static const char *const kinds[] = { "train-llm", "finetune", "eval-suite", "train-vision", "rl-rollout", "embed" };
    static const char *const teams[] = { "ml-research", "ml-platform", "vision", "speech", "ranking", "search" };
    const uint64_t h = determinism::hash(m_options.seed, 0x4a4f42, job.id);
    const auto &shape = m_simulator->shape();
    const auto &lastNode = shape.nodes[job.firstNode + job.nodeCount - 1];
    JobInfo info;
    info.id = job.id;
    info.name = fmt::format("{}-{}", kinds[h % 6], job.id);
    info.owner = teams[(h >> 8U) % 6];
    info.firstGpu = shape.nodes[job.firstNode].firstGpu;
    info.gpuCount = lastNode.firstGpu + lastNode.gpuCount - info.firstGpu;
    // Simulated seconds before now, converted to wall-clock milliseconds at the simulation's speed.
    const double t = m_simulator->nowSeconds();
    auto wall = [&](double simSeconds) {
        return nowMs - static_cast<int64_t>(std::llround((t - simSeconds) / m_options.speed * 1000.0));
    };
    info.startMs = wall(job.startSeconds);
    const double age = std::min(t, job.endSeconds) - job.startSeconds;
    if (age >= job.checkpointEverySeconds) {
        info.lastCheckpointMs
            = wall(job.startSeconds + std::floor(age / job.checkpointEverySeconds) * job.checkpointEverySeconds);
    }
    info.endMs = job.endSeconds <= t ? wall(job.endSeconds) : 0;
    return info;
}

void FrameSource::simulatePast(int64_t nowMs)
{
    // Coarse steps of coarseEvery (wall-clock) each, as many as the history asks and the coarse budget holds.
    const auto stepMs = m_options.coarseEvery.count();
    const auto wanted = static_cast<size_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(m_options.history).count() / stepMs);
    const size_t steps = std::min(wanted, m_maxCoarse);
    const double simSeconds = static_cast<double>(stepMs) / 1000.0 * m_options.speed;
    for (size_t i = 0; i < steps; ++i) {
        m_simulator->step(simSeconds);
        if (i + 1 == steps) {
            break; // the state now is the first live frame, published by the caller with its events
        }
        auto frame = m_simulator->snapshot();
        frame->sampleTimeMs = nowMs - static_cast<int64_t>(steps - i) * stepMs;
        auto events = m_simulator->takeEvents();
        std::lock_guard lock(m_mutex);
        for (auto &e : events) {
            m_events.push_back({ m_nextEventSequence++, frame->sampleTimeMs, std::move(e) });
        }
        while (m_events.size() > maxRecentEvents) {
            m_events.pop_front();
        }
        m_coarse.push_back(std::move(frame));
    }
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

void FrameSource::publish(std::shared_ptr<Frame> frame, std::vector<FleetEvent> events)
{
    // Built outside the lock: the ticker is the only writer.
    std::vector<JobInfo> jobs;
    if (m_poller) {
        jobs = m_poller->jobs();
    } else {
        jobs.reserve(m_simulator->jobs().size() + m_simulator->endedJobs().size());
        for (const auto &j : m_simulator->jobs()) {
            jobs.push_back(describeJob(j, frame->sampleTimeMs));
        }
        for (auto it = m_simulator->endedJobs().rbegin(); it != m_simulator->endedJobs().rend(); ++it) {
            jobs.push_back(describeJob(*it, frame->sampleTimeMs));
        }
    }
    {
        std::lock_guard lock(m_mutex);
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
    auto next = std::chrono::steady_clock::now();
    for (;;) {
        next += m_options.interval;
        {
            std::unique_lock lock(m_mutex);
            if (m_published.wait_until(lock, next, [this] { return m_stopping; })) {
                return;
            }
        }
        m_simulator->step();
        auto frame = m_simulator->snapshot();
        // The sample's own time: when this state was taken, not when a subscriber gets it.
        frame->sampleTimeMs = nowUnixMs();
        publish(std::move(frame), m_simulator->takeEvents());
        // If the simulation fell behind (a slow machine, a huge fleet), skip ahead instead of bursting to catch up.
        const auto now = std::chrono::steady_clock::now();
        if (now > next + m_options.interval) {
            next = now;
        }
    }
}

void FrameSource::runPoller()
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
    auto next = std::chrono::steady_clock::now();
    uint64_t sequence = 0;
    for (;;) {
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
        std::unique_lock lock(m_mutex);
        if (m_published.wait_until(lock, next, [this] { return m_stopping; })) {
            return;
        }
    }
}

} // namespace fleetscope::backend
