// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "core/frame.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fleetscope::backend {

// An event with the wall-clock time of the sample it happened in and its place in the source's event sequence.
struct TimedEvent
{
    uint64_t sequence = 0;
    int64_t timeMs = 0;
    FleetEvent event;
};

// A job as served by ListJobs: wall-clock times, named and owned.
struct JobInfo
{
    uint64_t id = 0;
    std::string name;
    std::string owner;
    // The GPUs: gpus when not empty (a real fleet's jobs need not be contiguous in dense order), otherwise the range
    // [firstGpu, firstGpu + gpuCount). firstGpu and gpuCount span the listed GPUs either way.
    uint32_t firstGpu = 0;
    uint32_t gpuCount = 0;
    std::vector<uint32_t> gpus; // ascending
    int64_t startMs = 0;
    int64_t lastCheckpointMs = 0;
    int64_t endMs = 0; // 0 while running

    // The dense indices of its GPUs, ascending.
    std::vector<uint32_t> gpuList() const
    {
        if (!gpus.empty()) {
            return gpus;
        }
        std::vector<uint32_t> out(gpuCount);
        for (uint32_t i = 0; i < gpuCount; ++i) {
            out[i] = firstGpu + i;
        }
        return out;
    }
};

// History straight from a polled source's upstream, for QueryRange: the upstream keeps far more than the frames held
// in memory. Called from any number of gRPC threads at once, so implementations are thread-safe.
class HistoryProvider
{
public:
    struct Range
    {
        int64_t fromMs = 0;
        int64_t toMs = 0;
        int64_t stepMs = 1;
        std::vector<uint32_t> gpus; // dense indices, each < the fleet's GPU count
    };

    virtual ~HistoryProvider() = default;

    // The output times of a range, from + k x step (step possibly coarsened, see *range), and the sample time each
    // one's values were taken at. Times at which the upstream held no sample at all are left out. False with an
    // error when the upstream fails or answers badly.
    virtual bool rangeTimes(
        Range *range, std::vector<int64_t> *times, std::vector<int64_t> *sampleTimes, std::string *error) const = 0;
    // One metric's values at those times: times.size() rows of range.gpus.size() columns, NaN where there is none.
    virtual bool rangeValues(const Range &range, MetricId metric, const std::vector<int64_t> &times,
        std::vector<float> *values, std::string *error) const = 0;
};

// Where FrameSource's frames come from: something that, once per interval, produces the fleet's current state (a
// simulation's next step, a poll of a Prometheus-compatible server, the windows a remote-write receiver closed).
// FrameSource calls it from its constructor (pastFrames, firstFrame) and then from its ticker thread only (history()
// excepted, see HistoryProvider), and owns it; the shape is fixed for the producer's lifetime.
class FramePoller
{
public:
    virtual ~FramePoller() = default;

    virtual const FleetShape &shape() const = 0;
    virtual uint64_t topologyGeneration() const = 0;
    // What the source knows of the time before its start that it can give at once, oldest first: frames (each
    // with its sequence, below the first frame's, and sample time; at most maxFrames, about one per `every`) and
    // the events that happened in them. Asked once, before firstFrame(). A source that must fetch its past from
    // elsewhere gives its events through pastEvents instead, asked later from the ticker thread.
    struct Past
    {
        std::vector<std::shared_ptr<Frame>> frames;
        std::vector<TimedEvent> events; // sequence left to FrameSource
        // The jobs that ran in them (running and ended ones, as jobs() gives them), for the judge's warm-up; empty:
        // jobs() as of the first frame.
        std::vector<JobInfo> jobs;
    };
    virtual Past pastFrames(int64_t /*nowMs*/, std::chrono::milliseconds /*every*/, size_t /*maxFrames*/) { return {}; }
    // The frame served before the first poll: the state at the start (its sequence is kept, and the following
    // frames number on from it), or every GPU without data where nothing is known yet. Its events: takeEvents().
    virtual std::shared_ptr<Frame> firstFrame() = 0;
    // Produces the current state. Returns the new frame (its sequence is left to FrameSource), or null when there
    // is nothing new to publish: the upstream failed (see upstreamError()) or has no newer sample than the last.
    virtual std::shared_ptr<Frame> poll() = 0;
    // Why the last poll failed, for consoles; empty while the upstream answers (always, for a simulation).
    virtual std::string upstreamError() const = 0;

    // Events found by firstFrame() or the last poll that returned a frame (moved out; they happen at that frame's
    // sample time).
    virtual std::vector<FleetEvent> takeEvents() { return {}; }
    // The jobs as of the last poll that returned a frame: running ones, then recently ended ones.
    virtual std::vector<JobInfo> jobs() const { return {}; }
    // Events of the past [fromMs, toMs], oldest first, asked once before the first poll so that a console asking for
    // recent events gets those from before the backend started; sequence is left to FrameSource.
    virtual std::vector<TimedEvent> pastEvents(int64_t /*fromMs*/, int64_t /*toMs*/) { return {}; }
    // When to poll next, given when the fixed interval would (a source that knows when its next frame is due says
    // so: frames as soon as they are ready, not up to an interval later). Asked before the first poll too, with
    // the time of the start.
    virtual std::chrono::steady_clock::time_point nextPollAt(std::chrono::steady_clock::time_point scheduled) const
    {
        return scheduled;
    }
    // History from the upstream, or null to serve QueryRange from the frames held in memory.
    virtual const HistoryProvider *history() const { return nullptr; }
};

// The past as an upstream keeps it, for a source whose own frames begin at its start (the remote-write receiver beside
// a Prometheus-compatible server that holds the same series): QueryRange's values (HistoryProvider), the events
// from before the start, and the frames of before the start that the judge learns from. The program makes and starts
// one and hands it to the source.
class UpstreamHistory : public HistoryProvider
{
public:
    // As FramePoller::pastEvents: the events of [fromMs, toMs], oldest first, asked from the ticker thread.
    virtual std::vector<TimedEvent> pastEvents(int64_t fromMs, int64_t toMs) = 0;
    // As FramePoller::pastFrames, for the source to give as its own (asked once, before its first frame).
    virtual FramePoller::Past pastFrames(int64_t /*nowMs*/, std::chrono::milliseconds /*every*/, size_t /*maxFrames*/)
    {
        return {};
    }
};

} // namespace fleetscope::backend
