// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace grpc {
class ServerContext;
}

namespace fleetscope::backend {

// Ends the server streams of clients that stopped reading. A synchronous Write blocks until flow control lets the
// message out, so a client that never reads holds its handler's thread, the frame it was being sent and what gRPC has
// buffered for as long as its connection lives (its transport answers keepalive pings, so nothing else notices). Each
// write is marked with a Writing guard; one not taken within the limit has its call cancelled with RESOURCE_EXHAUSTED
// and a message saying why. gRPC sends that status as trailers, which flow control does not hold back: the client
// gets it after the messages it had already been sent. The blocked Write returns false and the handler ends.
//
// Locking: m_mutex guards m_writes, m_nextId, m_cut and m_stopping. A call is cancelled under it, and a guard leaves
// under it, so a call is never cancelled after its handler has stopped writing.
class StallWatch
{
public:
    using Log = std::function<void(const std::string &)>;

    explicit StallWatch(std::chrono::milliseconds limit, Log log = {});
    ~StallWatch();
    StallWatch(const StallWatch &) = delete;
    StallWatch &operator=(const StallWatch &) = delete;

    class Writing
    {
    public:
        Writing(Writing &&other) noexcept;
        Writing &operator=(Writing &&) = delete;
        Writing(const Writing &) = delete;
        Writing &operator=(const Writing &) = delete;
        ~Writing();

    private:
        friend class StallWatch;
        Writing(StallWatch *watch, uint64_t id)
            : m_watch(watch)
            , m_id(id)
        { }
        StallWatch *m_watch;
        uint64_t m_id;
    };

    // While the guard lives, a write of `what` `number` ("Subscribe frame" 1234, for the status and the log) on the
    // call of `context` is under way.
    [[nodiscard]] Writing writing(grpc::ServerContext *context, const char *what, uint64_t number);

    std::chrono::milliseconds limit() const { return m_limit; }
    // Calls cut so far.
    uint64_t cut() const;

private:
    struct Write
    {
        grpc::ServerContext *context;
        const char *what;
        uint64_t number;
        std::chrono::steady_clock::time_point since;
    };
    void run();
    void cutLocked(const Write &write);
    void done(uint64_t id);

    const std::chrono::milliseconds m_limit;
    Log m_log;
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    std::map<uint64_t, Write> m_writes; // by id, so the first is the oldest
    uint64_t m_nextId = 1;
    uint64_t m_cut = 0;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace fleetscope::backend
