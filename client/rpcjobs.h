// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/handover.h"

#include <grpcpp/alarm.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/support/async_stream.h>
#include <grpcpp/support/async_unary_call.h>
#include <grpcpp/support/status.h>

#include <QObject>
#include <QPointer>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace fleetscope {

// The gRPC calls in flight for one client, on gRPC's asynchronous API driven by one completion-queue thread of its
// own: no thread per call, a refresh of dozens of requests runs on that one thread (the model is hotspot's job
// tracker: a job id per request, and the result of a job that was cancelled or superseded is dropped). Internal to
// client/: protobuf and gRPC types do not leave it.
//
// Why one thread of ours and not gRPC's callback API: everything gRPC's headers compile into our code for a call
// (issuing it, serializing the request, its op sets, parsing each message, the status, TryCancel) runs on that thread,
// so ThreadSanitizer sees a call's life on one thread, handed over through std::mutex at both ends; with reactors it
// ran on gRPC's threads, ordered by gRPC's own (uninstrumented) synchronization, and read as hundreds of races.
//
// A call is made on the owner thread and handed to start(), which queues it for the completion-queue thread; from then
// on the call is that thread's: it issues it, runs each step as its operation completes, and deletes it by calling
// finish(), its last act. Results reach the receiver's thread through a Handover (a std::mutex, which ThreadSanitizer
// sees, not Qt's queued calls); there they are dropped when the call has been cancelled in the meantime or the
// receiver has been deleted. A call's last result is posted with its release, under m_mutex: once it has run, the call
// no longer counts as running either.
//
// Threads: start(), cancel(), cancelAll() and pending() belong to the thread the RpcJobs was made in (the owner
// thread), and every receiver must live there; cancel() is carried out on the completion-queue thread. The destructor
// cancels what is in flight, waits until every call has ended, then shuts the completion queue down and joins its
// thread: a call never outlives the client whose members it uses.
class RpcJobs
{
public:
    class Call
    {
    public:
        virtual ~Call() = default;
        Call(const Call &) = delete;
        Call &operator=(const Call &) = delete;

        quint64 id() const { return m_id; }
        grpc::ClientContext *context() { return &m_context; }

        // The completion-queue thread, while the call runs: f() runs on the receiver's thread unless, by then, the
        // call has been cancelled or the receiver deleted.
        template <typename F> void deliver(F &&f) { m_jobs.post(m_id, m_receiver, std::forward<F>(f), false); }

    protected:
        // receiver: where the results go (null: nowhere); deadline: none for an open-ended stream.
        Call(RpcJobs &jobs, QObject *receiver, std::optional<std::chrono::milliseconds> deadline);
        // What to give gRPC for step (0 to 2) of this call: proceed(step, ok) runs when it completes.
        void *tag(int step) { return &m_tags[step]; }
        // Once, last: deletes this, then delivers last() like deliver() and ends the call (it no longer counts as
        // running, nor as pending once last() has run or been dropped).
        template <typename F> void finish(F &&last)
        {
            Handover::Task task = m_jobs.wrap(m_id, m_receiver, std::forward<F>(last), true);
            RpcJobs &jobs = m_jobs;
            const quint64 id = m_id;
            delete this;
            jobs.release(id, std::move(task));
        }

    private:
        friend class RpcJobs;
        struct Tag
        {
            Call *call;
            int step;
        };
        // The completion-queue thread: issues the call on cq.
        virtual void start(grpc::CompletionQueue *cq) = 0;
        // The completion-queue thread: the operation given tag(step) has completed (ok as CompletionQueue::Next says).
        virtual void proceed(int step, bool ok) = 0;

        RpcJobs &m_jobs;
        quint64 m_id = 0;
        QPointer<QObject> m_receiver;
        grpc::ClientContext m_context; // outlives the derived class's reader, which lives in the call's arena
        Tag m_tags[3];
    };

    // A unary call: issue(context, request, cq) prepares it (stub->PrepareAsyncMethod(...)) on the completion-queue
    // thread, which also runs done(id, status, response) when the call ends; done returns what to run on the receiver's
    // thread. Both are destroyed there too: what they hold must be safe to use from that thread.
    template <typename Request, typename Response> class Unary final : public Call
    {
    public:
        using Issue = std::function<std::unique_ptr<grpc::ClientAsyncResponseReader<Response>>(
            grpc::ClientContext *, const Request &, grpc::CompletionQueue *)>;
        using Done = std::function<std::function<void()>(quint64, const grpc::Status &, Response &)>;
        Unary(RpcJobs &jobs, QObject *receiver, std::chrono::milliseconds deadline, Request request, Issue issue,
            Done done)
            : Call(jobs, receiver, deadline)
            , m_request(std::move(request))
            , m_issue(std::move(issue))
            , m_done(std::move(done))
        { }

    private:
        void start(grpc::CompletionQueue *cq) override
        {
            m_reader = m_issue(context(), m_request, cq);
            m_reader->StartCall();
            m_reader->Finish(&m_response, &m_status, tag(0));
        }
        void proceed(int, bool) override { finish(m_done(id(), m_status, m_response)); }

        Request m_request;
        Issue m_issue;
        Done m_done;
        Response m_response;
        grpc::Status m_status;
        std::unique_ptr<grpc::ClientAsyncResponseReader<Response>> m_reader;
    };

    // A server-streaming call: issue() prepares it (stub->PrepareAsyncMethod(context, request, cq)), then onRead()
    // runs for each message and onDone() once at the end, which must call finish(). All on the completion-queue
    // thread, one after another.
    template <typename Response> class Stream : public Call
    {
    protected:
        Stream(RpcJobs &jobs, QObject *receiver, std::optional<std::chrono::milliseconds> deadline)
            : Call(jobs, receiver, deadline)
        { }
        virtual std::unique_ptr<grpc::ClientAsyncReader<Response>> issue(
            grpc::ClientContext *context, grpc::CompletionQueue *cq)
            = 0;
        virtual void onRead(Response &message) = 0;
        virtual void onDone(const grpc::Status &status) = 0;
        // From onRead(): no further read; the call is cancelled and onDone() follows.
        void stop() { m_stopped = true; }

    private:
        enum Step { Started, Read, Finished };
        void start(grpc::CompletionQueue *cq) override
        {
            m_reader = issue(context(), cq);
            m_reader->StartCall(tag(Started));
        }
        void proceed(int step, bool ok) override
        {
            if (step == Finished) {
                onDone(m_status);
                return;
            }
            if (step == Read && ok) {
                onRead(m_message);
            }
            if (ok && !m_stopped) {
                m_reader->Read(&m_message, tag(Read));
                return;
            }
            if (m_stopped) {
                context()->TryCancel();
            }
            m_reader->Finish(&m_status, tag(Finished));
        }

        Response m_message;
        grpc::Status m_status;
        bool m_stopped = false;
        std::unique_ptr<grpc::ClientAsyncReader<Response>> m_reader;
    };

    RpcJobs();
    ~RpcJobs();
    RpcJobs(const RpcJobs &) = delete;
    RpcJobs &operator=(const RpcJobs &) = delete;

    // Takes over a call made on the owner thread, registers it and has it issued on the completion-queue thread;
    // returns its id (never 0).
    quint64 start(Call *call);
    // Starts a unary call under a deadline (unary calls always have one); see Unary.
    template <typename Request, typename Response>
    quint64 unary(QObject *receiver, std::chrono::milliseconds deadline, Request request,
        typename Unary<Request, Response>::Issue issue, typename Unary<Request, Response>::Done done)
    {
        return start(new Unary<Request, Response>(
            *this, receiver, deadline, std::move(request), std::move(issue), std::move(done)));
    }
    // A request refused before it goes out: f(id) runs on the receiver's thread (or is dropped, as a call's result
    // would be); until then it counts as pending.
    template <typename F> quint64 reject(QObject *receiver, F f)
    {
        const quint64 id = ++m_nextId;
        m_pending[id] = false;
        post(
            id, QPointer<QObject>(receiver), [f = std::move(f), id]() mutable { f(id); }, true);
        return id;
    }

    // Cancels the call (ClientContext::TryCancel, on the completion-queue thread) and drops whatever it still
    // delivers. Unknown or finished ids are ignored.
    void cancel(quint64 id);
    void cancelAll();
    // Calls whose end has not yet reached the owner thread, cancelled ones included.
    int pending() const { return static_cast<int>(m_pending.size()); }
    // Calls that have not yet ended on the completion-queue thread (any thread; for tests and the destructor).
    int running() const;

private:
    // What runs on the owner thread for a result of call id: f(), unless the call was cancelled or the receiver is
    // gone.
    template <typename F> Handover::Task wrap(quint64 id, QPointer<QObject> receiver, F &&f, bool last)
    {
        return [this, id, receiver = std::move(receiver), f = std::forward<F>(f), last]() mutable {
            if (arrive(id, last) && receiver) {
                f();
            }
        };
    }
    // m_mailbox lives as long as this object, which outlives every call; what is still queued when it dies is dropped.
    template <typename F> void post(quint64 id, QPointer<QObject> receiver, F &&f, bool last)
    {
        m_mailbox.post(wrap(id, std::move(receiver), std::forward<F>(f), last));
    }
    // Owner thread: whether what arrived for id is still wanted; the last arrival ends the call's bookkeeping.
    bool arrive(quint64 id, bool last);
    // Completion-queue thread: the call is gone (deleted); posts its last result and wakes the destructor.
    void release(quint64 id, Handover::Task last);
    // Owner thread: task runs on the completion-queue thread, after those queued before it.
    void toQueueThread(std::function<void()> task);
    // The completion-queue thread's loop, until the queue has been shut down and drained.
    void run();

    Handover m_mailbox; // on the owner thread; results land here first, then go to their receiver
    // Owner thread only.
    quint64 m_nextId = 0;
    std::map<quint64, bool> m_pending; // id -> cancelled

    // Completion-queue thread only: the calls started and not yet finished, for cancel().
    std::map<quint64, Call *> m_calls;

    grpc::CompletionQueue m_cq;

    mutable std::mutex m_mutex; // guards what follows, shared by the owner thread and the completion-queue thread
    std::condition_variable m_released;
    int m_running = 0;
    std::vector<std::function<void()>> m_tasks; // for the completion-queue thread, in order
    // Set (to now) while m_tasks waits for the completion-queue thread; it takes the tasks and the alarm together.
    std::unique_ptr<grpc::Alarm> m_wake;

    std::thread m_thread; // last: starts once everything above is made
};

} // namespace fleetscope
