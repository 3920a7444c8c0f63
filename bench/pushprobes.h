// SPDX-License-Identifier: Apache-2.0
#pragma once
// What bench_pushlatency times the push path with: the receiver's polls (TimedPoller, between it and FrameSource),
// the frames' publication (PublishWatcher) and a console's live stream without the console (FrameClient).
#include "client/protodecode.h"
#include "core/clock.h"
#include "core/framesource.h"
#include "remotewrite/remotewritesource.h"

#include "fleetscope/telemetry/v1/telemetry.grpc.pb.h"

#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace fleetscope::bench {

namespace be = fleetscope::backend;
namespace pb = fleetscope::telemetry::v1;
using Clock = std::chrono::steady_clock;

// Wall-clock milliseconds as a steady time point: the receiver's windows are in wall time, the timings in steady.
inline Clock::time_point steadyAt(int64_t unixMs)
{
    return Clock::now() + std::chrono::milliseconds(unixMs - be::nowUnixMs());
}

inline double msBetween(Clock::time_point from, Clock::time_point to)
{
    return std::chrono::duration<double, std::milli>(to - from).count();
}

inline int freePort()
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof a;
    int port = 0;
    if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0
        && getsockname(fd, reinterpret_cast<sockaddr *>(&a), &length) == 0) {
        port = ntohs(a.sin_port);
    }
    close(fd);
    return port;
}

// The receiver behind FrameSource, with the times of every poll that produced a frame.
class TimedPoller final : public be::FramePoller
{
public:
    struct Poll
    {
        Clock::time_point start;
        Clock::time_point end;
    };

    explicit TimedPoller(std::unique_ptr<be::RemoteWriteSource> receiver)
        : m_receiver(std::move(receiver))
    { }
    const be::FleetShape &shape() const override { return m_receiver->shape(); }
    uint64_t topologyGeneration() const override { return m_receiver->topologyGeneration(); }
    std::shared_ptr<be::Frame> firstFrame() override { return m_receiver->firstFrame(); }
    std::shared_ptr<be::Frame> poll() override
    {
        const auto start = Clock::now();
        auto frame = m_receiver->poll();
        const auto end = Clock::now();
        if (frame) {
            std::lock_guard lock(m_mutex);
            m_polls[frame->sampleTimeMs] = { start, end };
        }
        return frame;
    }
    std::string upstreamError() const override { return m_receiver->upstreamError(); }
    std::vector<be::FleetEvent> takeEvents() override { return m_receiver->takeEvents(); }
    std::vector<be::JobInfo> jobs() const override { return m_receiver->jobs(); }
    Clock::time_point nextPollAt(Clock::time_point scheduled) const override
    {
        return m_receiver->nextPollAt(scheduled);
    }

    std::optional<Poll> pollOf(int64_t sampleTimeMs) const
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_polls.find(sampleTimeMs);
        return it == m_polls.end() ? std::nullopt : std::optional<Poll>(it->second);
    }
    be::RemoteWriteSource &receiver() { return *m_receiver; }

private:
    std::unique_ptr<be::RemoteWriteSource> m_receiver;
    mutable std::mutex m_mutex; // m_polls: written by FrameSource's ticker, read by the bench
    std::map<int64_t, Poll> m_polls; // by the frame's sample time
};

// A console's live stream without the console: GetTopology, then Subscribe on a thread of its own, each frame's parts
// assembled as they arrive. Frames with data are kept by sample time with the time they were whole.
class FrameClient
{
public:
    struct Received
    {
        Clock::time_point decoded;
        size_t parts = 0;
    };

    FrameClient() = default;
    FrameClient(const FrameClient &) = delete;
    FrameClient &operator=(const FrameClient &) = delete;
    ~FrameClient() { stop(); }

    bool start(int port, const std::vector<be::MetricId> &metrics, std::string *error)
    {
        grpc::ChannelArguments args;
        args.SetMaxReceiveMessageSize(16 << 20);
        m_stub = pb::Telemetry::NewStub(
            grpc::CreateCustomChannel(fmt::format("127.0.0.1:{}", port), grpc::InsecureChannelCredentials(), args));
        std::vector<pb::TopologyPart> parts;
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
            auto reader = m_stub->GetTopology(&context, pb::GetTopologyRequest());
            pb::TopologyPart part;
            while (reader->Read(&part)) {
                parts.push_back(part);
            }
            if (const auto status = reader->Finish(); !status.ok()) {
                *error = "GetTopology: " + status.error_message();
                return false;
            }
        }
        QString why;
        m_topology = fleetscope::decodeTopology(parts, &why);
        if (!m_topology) {
            *error = "topology: " + why.toStdString();
            return false;
        }
        pb::SubscribeRequest request;
        for (const auto id : metrics) {
            request.add_metric_ids(be::metricCatalog()[static_cast<size_t>(id)].key);
        }
        m_thread = std::thread([this, request] { run(request); });
        return true;
    }

    void stop()
    {
        m_context.TryCancel();
        if (m_thread.joinable()) {
            m_thread.join();
        }
    }

    // The frame of this sample time, once decoded, or nothing by the deadline.
    std::optional<Received> waitFor(int64_t sampleTimeMs, Clock::time_point deadline)
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait_until(lock, deadline, [&] { return m_frames.count(sampleTimeMs) > 0 || m_done; });
        const auto it = m_frames.find(sampleTimeMs);
        return it == m_frames.end() ? std::nullopt : std::optional<Received>(it->second);
    }
    // Why the stream ended, if it has.
    std::string ended()
    {
        std::lock_guard lock(m_mutex);
        return m_done ? "the stream ended: " + m_status : std::string();
    }
    // Every frame with data received so far, by sample time.
    std::map<int64_t, Received> frames()
    {
        std::lock_guard lock(m_mutex);
        return m_frames;
    }

private:
    void run(const pb::SubscribeRequest &request)
    {
        fleetscope::FrameAssembler assembler(m_topology);
        auto reader = m_stub->Subscribe(&m_context, request);
        pb::FramePart part;
        size_t parts = 0;
        while (reader->Read(&part)) {
            ++parts;
            const auto result = assembler.add(part);
            if (result.frame) {
                const auto decoded = Clock::now();
                if (result.frame->sequence > 0 && result.frame->sampleTimeMs > 0) {
                    std::lock_guard lock(m_mutex);
                    m_frames[result.frame->sampleTimeMs] = { decoded, parts };
                    m_changed.notify_all();
                }
                parts = 0;
            }
        }
        const auto status = reader->Finish();
        std::lock_guard lock(m_mutex);
        m_status = status.ok() ? std::string() : status.error_message();
        m_done = true;
        m_changed.notify_all();
    }

    std::unique_ptr<pb::Telemetry::Stub> m_stub;
    fleetscope::TopologyPtr m_topology;
    grpc::ClientContext m_context;
    std::thread m_thread;
    std::mutex m_mutex; // m_frames, m_done: written by the stream's thread
    std::condition_variable m_changed;
    std::map<int64_t, Received> m_frames;
    bool m_done = false;
    std::string m_status; // why the stream ended, when it did
};

// When each frame became the source's latest (FrameSource::publish done), by sample time: a thread waiting as the
// service's do.
class PublishWatcher
{
public:
    explicit PublishWatcher(const be::FrameSource &source)
        : m_thread([this, &source] {
            uint64_t sequence = source.latest()->sequence;
            while (!m_stop) {
                if (const auto frame = source.waitForFrameAfter(sequence, std::chrono::milliseconds(200))) {
                    const auto now = Clock::now();
                    sequence = frame->sequence;
                    std::lock_guard lock(m_mutex);
                    m_published[frame->sampleTimeMs] = now;
                }
            }
        })
    { }
    PublishWatcher(const PublishWatcher &) = delete;
    PublishWatcher &operator=(const PublishWatcher &) = delete;
    ~PublishWatcher()
    {
        m_stop = true;
        m_thread.join();
    }
    std::optional<Clock::time_point> publishedAt(int64_t sampleTimeMs)
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_published.find(sampleTimeMs);
        return it == m_published.end() ? std::nullopt : std::optional<Clock::time_point>(it->second);
    }

private:
    std::atomic<bool> m_stop { false };
    std::mutex m_mutex; // m_published: written by the thread, read by the bench
    std::map<int64_t, Clock::time_point> m_published;
    std::thread m_thread; // last: it uses the members above
};

} // namespace fleetscope::bench
