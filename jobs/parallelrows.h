// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fleetscope {

// A data-parallel loop for the passes that fill an image (rows of the map on the CPU): run(count, fn) calls fn(0) ..
// fn(count - 1), each once, on the calling thread and a few helper threads at once, and returns when all are done.
// What the caller wrote before run() is visible to fn on every thread, and what fn wrote is visible to the caller
// after it: the hand-overs both ways go through a std::mutex, which ThreadSanitizer sees (jobs/worker.h says why not
// QThreadPool).
//
// Helpers are std::threads, started by the first run() that needs them and kept until the object goes. Background:
// each helper lowers itself first (runThisThreadInBackground), for callers that run lowered themselves; a helper
// lowered once stays so, so a caller at the GUI thread's priority needs an object of its own.
//
// Threads: run() from one thread at a time (a second caller waits for the first); fn must not call run() again.
class ParallelRows
{
public:
    enum class Priority { AsCaller, Background };
    // helpers: threads besides the caller; defaultHelpers() is one fewer than the cores.
    explicit ParallelRows(int helpers = defaultHelpers(), Priority priority = Priority::AsCaller);
    ~ParallelRows();
    ParallelRows(const ParallelRows &) = delete;
    ParallelRows &operator=(const ParallelRows &) = delete;

    void run(int count, const std::function<void(int)> &fn);
    int helpers() const { return m_helpers; }
    static int defaultHelpers();

private:
    void loop();
    void work(const std::function<void(int)> &fn, int count);

    const int m_helpers;
    const Priority m_priority;
    std::mutex m_caller; // one run() at a time
    std::mutex m_mutex; // guards what follows, shared by the caller and the helpers
    std::condition_variable m_wake; // a new run, or stopping
    std::condition_variable m_finished; // a helper left a run
    const std::function<void(int)> *m_fn = nullptr; // the run under way, null between runs
    int m_count = 0;
    unsigned long long m_run = 0; // counts runs, so that a helper joins each at most once
    int m_inside = 0; // helpers working on the run under way
    bool m_stopping = false;
    std::atomic<int> m_next { 0 }; // the next index to take, in the run under way
    std::vector<std::thread> m_threads; // last: joined by the destructor before the rest goes
};

} // namespace fleetscope
