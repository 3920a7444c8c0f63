// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/worker.h"

#include <QtGlobal>

#include <atomic>
#include <memory>
#include <type_traits>
#include <utility>

namespace fleetscope {

// The console's one way to compute something off the GUI thread when only the latest request matters (a layout for
// the fleet now shown, the rollups of this frame, the drift of these jobs, a search index): start() a job with what to
// do with its result, start() again and the earlier job's result is never applied. Jobs run one at a time on the
// tracker's own Worker (a std::thread lowered to background priority; docs/ARCHITECTURE.md), results on the owner's
// thread.
//
//     m_layouts.start([fleet](const JobTracker::Ticket &ticket) { return buildLayout(fleet, ticket); },
//                     [this](Layout layout) { apply(std::move(layout)); });
//
// A job that is stale before it begins is not run at all; a long job asks ticket.stale() between its steps and returns
// early (its result is dropped anyway). compute and apply are copied into std::function, so what they capture must be
// copyable (a std::shared_ptr for what is not). compute's result is moved into apply; compute may return void, and
// apply then takes nothing.
//
// Threads: start(), cancel() and running() on the owner's thread (the one the tracker was made on, which needs an
// event loop); compute on the worker; apply on the owner's. The destructor waits for the job under way and drops the
// rest: no apply runs after it. Declare the tracker after what its jobs read, so that it goes first.
class JobTracker
{
public:
    // What a running job holds: whether a later start() or a cancel() has made it pointless.
    class Ticket
    {
    public:
        Ticket(std::shared_ptr<const std::atomic<quint64>> latest, quint64 id)
            : m_latest(std::move(latest))
            , m_id(id)
        { }
        bool stale() const { return m_latest->load(std::memory_order_relaxed) != m_id; }

    private:
        std::shared_ptr<const std::atomic<quint64>> m_latest;
        quint64 m_id;
    };

    JobTracker() = default;
    JobTracker(const JobTracker &) = delete;
    JobTracker &operator=(const JobTracker &) = delete;

    template <typename Compute, typename Apply> void start(Compute compute, Apply apply)
    {
        const quint64 id = m_latest->fetch_add(1, std::memory_order_relaxed) + 1;
        m_running = true;
        m_worker.run([this, latest = m_latest, id, compute = std::move(compute),
                         apply = std::move(apply)]() mutable -> Worker::Result {
            const Ticket ticket(latest, id);
            if (ticket.stale()) {
                return {};
            }
            using Result = std::invoke_result_t<Compute &, const Ticket &>;
            if constexpr (std::is_void_v<Result>) {
                compute(ticket);
                if (ticket.stale()) {
                    return {};
                }
                return [this, id, apply = std::move(apply)]() mutable {
                    if (finish(id)) {
                        apply();
                    }
                };
            } else {
                auto result = std::make_shared<Result>(compute(ticket));
                if (ticket.stale()) {
                    return {};
                }
                return [this, id, result = std::move(result), apply = std::move(apply)]() mutable {
                    if (finish(id)) {
                        apply(std::move(*result));
                    }
                };
            }
        });
    }

    // No result of a job started before this is applied.
    void cancel()
    {
        m_latest->fetch_add(1, std::memory_order_relaxed);
        m_running = false;
    }

    // Whether the latest job's result is still to come.
    bool running() const { return m_running; }

private:
    // On the owner's thread, before apply: whether job id is still the latest (and so no longer running).
    bool finish(quint64 id)
    {
        if (m_latest->load(std::memory_order_relaxed) != id) {
            return false;
        }
        m_running = false;
        return true;
    }

    std::shared_ptr<std::atomic<quint64>> m_latest = std::make_shared<std::atomic<quint64>>(0);
    bool m_running = false; // owner's thread
    Worker m_worker; // last: waits for the job under way before the rest goes
};

} // namespace fleetscope
