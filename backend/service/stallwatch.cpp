// SPDX-License-Identifier: Apache-2.0
#include "service/stallwatch.h"

#include <grpc/grpc.h>
#include <grpcpp/server_context.h>

#include <fmt/format.h>

namespace fleetscope::backend {

StallWatch::StallWatch(std::chrono::milliseconds limit, Log log)
    : m_limit(limit)
    , m_log(std::move(log))
{
    if (!m_log) {
        m_log = [](const std::string &line) { fmt::print(stderr, "fleetscope-backend: {}\n", line); };
    }
    m_thread = std::thread([this] { run(); });
}

StallWatch::~StallWatch()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_changed.notify_all();
    m_thread.join();
}

StallWatch::Writing StallWatch::writing(grpc::ServerContext *context, const char *what, uint64_t number)
{
    std::lock_guard lock(m_mutex);
    const uint64_t id = m_nextId++;
    const bool wasIdle = m_writes.empty();
    m_writes.emplace(id, Write { context, what, number, std::chrono::steady_clock::now() });
    if (wasIdle) {
        m_changed.notify_all(); // the watch waits without a deadline while nothing is written
    }
    return { this, id };
}

StallWatch::Writing::Writing(Writing &&other) noexcept
    : m_watch(other.m_watch)
    , m_id(other.m_id)
{
    other.m_watch = nullptr;
}

StallWatch::Writing::~Writing()
{
    if (m_watch) {
        m_watch->done(m_id);
    }
}

void StallWatch::done(uint64_t id)
{
    std::lock_guard lock(m_mutex);
    m_writes.erase(id);
}

uint64_t StallWatch::cut() const
{
    std::lock_guard lock(m_mutex);
    return m_cut;
}

void StallWatch::run()
{
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        if (m_writes.empty()) {
            m_changed.wait(lock);
            continue;
        }
        // Writes are registered in time order: the first is the oldest, and the only one that can be due.
        const auto due = m_writes.begin()->second.since + m_limit;
        if (std::chrono::steady_clock::now() < due) {
            m_changed.wait_until(lock, due);
            continue;
        }
        cutLocked(m_writes.begin()->second);
        m_writes.erase(m_writes.begin());
    }
}

void StallWatch::cutLocked(const Write &write)
{
    const double seconds = std::chrono::duration<double>(m_limit).count();
    const std::string message = fmt::format("this client took nothing for {:g} s ({} {} waiting to be sent): the "
                                            "stream is closed so that a client that stopped reading holds no thread "
                                            "and no memory on the backend; call again",
        seconds, write.what, write.number);
    const std::string peer = write.context->peer(); // before the call is cancelled, which forgets it
    // RESOURCE_EXHAUSTED, not CANCELLED: the client did not cancel, it was too slow; it may call again at once.
    grpc_call_cancel_with_status(write.context->c_call(), GRPC_STATUS_RESOURCE_EXHAUSTED, message.c_str(), nullptr);
    ++m_cut;
    m_log(
        fmt::format("cut a stalled stream to {}: {} {} not taken for {:g} s", peer, write.what, write.number, seconds));
}

} // namespace fleetscope::backend
