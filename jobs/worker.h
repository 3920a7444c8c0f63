// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/handover.h"

#include <QObject>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace fleetscope {

// A thread of its own for an object's slow work (decoding recorded frames, differences at a million GPUs), with each
// result handed back to the thread the Worker lives on. Jobs run one at a time, in the order given; a job returns
// what to run on the owner's thread with its result (or nothing).
//
// Both hand-overs go through a std::mutex, not through QThreadPool or a queued functor: Debian's Qt synchronizes
// those with its own futex-based mutex, which ThreadSanitizer cannot see, so every capture of every job read as a
// race (tests/tsan.supp). Results go back through a Handover.
//
// Threads: run() from any thread; results run on the Worker's thread, which needs an event loop. The destructor
// (owner's thread) waits for the job under way and drops the jobs not started and the results not yet delivered:
// nothing reaches the owner after it. Declare the Worker after what its jobs use, so that it goes first.
class Worker : public QObject
{
    Q_OBJECT
public:
    using Result = std::function<void()>;
    using Job = std::function<Result()>;

    explicit Worker(QObject *parent = nullptr);
    ~Worker() override;
    Worker(const Worker &) = delete;
    Worker &operator=(const Worker &) = delete;

    void run(Job job);
    // Waits until every job given so far has run (owner's thread). Their results are still delivered through the
    // event loop, unless the Worker goes first: for an owner that must finish what it was asked (an export the user
    // chose) before it goes.
    void finishJobs();

private:
    void loop();

    std::mutex m_mutex; // guards what follows, shared by the owner's thread and the worker thread
    std::condition_variable m_wake;
    std::condition_variable m_idle; // the last job given has run
    std::deque<Job> m_jobs;
    bool m_busy = false; // a job is running
    bool m_stopping = false;
    Handover m_results; // the worker thread posts to it until joined
    std::thread m_thread; // started by the first job
};

} // namespace fleetscope
