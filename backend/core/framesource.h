// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framejudge.h"
#include "core/framepoller.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fleetscope::backend {

// Runs a frame producer (FramePoller: the simulator, a Prometheus poller, the remote-write receiver) on its own
// thread, one poll per interval of wall-clock time (or when the producer says its next frame is due), and publishes
// each frame as the latest. Any number of subscribers wait on it; one simulation step or one upstream poll serves
// them all. It keeps the recent frames (for resuming subscribers, within a memory budget), the recent
// events, and the jobs as of the last step. Every frame it publishes is judged first, whatever the producer, by the
// FrameJudge it is given (the fleet's analytics: the anomaly and repeat-offender planes, the anomalies' starts and
// ends; judgedSource, analytics/fleetanalytics.h); without one those planes are "no data".
//
// Locking: m_mutex guards m_frames, m_events, m_jobs, m_nextEventSequence, m_upstreamError and m_stopping; the
// producer itself is touched only by the ticker thread (and by the constructor before it starts).
class FrameSource
{
public:
    struct Options
    {
        std::chrono::milliseconds interval { 1000 };
        size_t frameMemoryBudget = 256U << 20U; // bytes of recent frames, every one, for resume and history
        // Older history: one frame a minute (of wall-clock time), within its own budget.
        std::chrono::milliseconds coarseEvery { 60000 };
        size_t coarseMemoryBudget = 512U << 20U;
        // A polled source: how far back to ask the upstream for events at the start.
        std::chrono::milliseconds pastEvents { 3600000 };
    };

    // Frames, events and jobs from the producer, polled every options.interval, judged by judge (when given) and held
    // within the budgets (a simulated fleet: simulatedSource, sim/simulatedfleet.h). Before the first poll it is asked
    // for the events of the last options.pastEvents. The judge learns from the frames the producer gave from before
    // the start (FrameJudge::warm) before it judges the first frame; those frames stay unjudged.
    FrameSource(
        std::unique_ptr<FramePoller> poller, const Options &options, std::unique_ptr<FrameJudge> judge = nullptr);
    ~FrameSource();
    FrameSource(const FrameSource &) = delete;
    FrameSource &operator=(const FrameSource &) = delete;

    const FleetShape &shape() const { return m_poller->shape(); }
    uint64_t topologyGeneration() const { return m_generation; }
    std::chrono::milliseconds interval() const { return m_options.interval; }
    // History from a polled source's upstream (thread-safe), or null: QueryRange then answers from the frames held.
    const HistoryProvider *history() const { return m_poller->history(); }
    // The jobs' accounts its judge keeps (thread-safe), or null without a judge that keeps them.
    const JobAccounts *jobAccounts() const { return m_judge ? m_judge->jobAccounts() : nullptr; }

    std::shared_ptr<const Frame> latest() const;
    // Why the upstream of a polled source failed at its last poll; empty while it answers (and for the simulator).
    std::string upstreamError() const;
    // Blocks until a frame newer than `sequence` is published, the timeout passes (returns null) or the source stops.
    std::shared_ptr<const Frame> waitForFrameAfter(uint64_t sequence, std::chrono::milliseconds timeout) const;
    // The held frames after `sequence`, oldest first. False when the frame right after it is no longer (or not yet)
    // held; heldFrom and heldTo then say what is.
    bool framesAfter(
        uint64_t sequence, std::vector<std::shared_ptr<const Frame>> *out, uint64_t *heldFrom, uint64_t *heldTo) const;

    // Held events with time >= sinceMs and sequence > *afterSequence, oldest first; waits up to timeout for a new
    // one. Advances *afterSequence past every event it looked at, kept or not.
    std::vector<TimedEvent> eventsAfter(
        int64_t sinceMs, uint64_t *afterSequence, std::chrono::milliseconds timeout) const;
    std::vector<JobInfo> jobs() const;
    // The sequence of the newest event held (0 when none yet).
    uint64_t lastEventSequence() const;

    // The held frames (both tiers) whose sample time is in [fromMs, toMs], plus the last one before fromMs, in time
    // order.
    std::vector<std::shared_ptr<const Frame>> framesBetween(int64_t fromMs, int64_t toMs) const;

    void stop();

    static constexpr size_t maxRecentEvents = 100000;

private:
    void run();
    void publish(std::shared_ptr<Frame> frame, std::vector<FleetEvent> events);
    // The judged planes "no data", for a frame no judge saw.
    void unjudged(Frame *frame) const;

    Options m_options;
    std::unique_ptr<FramePoller> m_poller;
    std::unique_ptr<FrameJudge> m_judge; // the ticker's (and the constructor's) only; may be null
    uint64_t m_generation;
    size_t m_maxFrames;

    mutable std::mutex m_mutex;
    mutable std::condition_variable m_published;
    std::deque<std::shared_ptr<const Frame>> m_frames; // newest last; never empty
    std::deque<std::shared_ptr<const Frame>> m_coarse; // one per coarseEvery, newest last
    size_t m_maxCoarse = 2;
    uint64_t m_coarseEveryFrames = 1;
    std::deque<TimedEvent> m_events; // newest last, at most maxRecentEvents
    uint64_t m_nextEventSequence = 1;
    std::vector<JobInfo> m_jobs;
    std::string m_upstreamError;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace fleetscope::backend
