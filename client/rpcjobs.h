// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "common/tsan.h"
#include "model/handover.h"

#include <grpcpp/client_context.h>
#include <grpcpp/support/client_callback.h>

#include <QObject>
#include <QPointer>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace fleetscope {

// The gRPC calls in flight for one client, on gRPC's callback API: no thread of ours per call, a refresh of dozens of
// requests runs on gRPC's own small pool (the model is hotspot's job tracker: a job id per request, and the result of
// a job that was cancelled or superseded is dropped). Internal to client/: protobuf and gRPC types do not leave it.
//
// A call is a reactor deriving from Call; it is registered with add() before it is started and deletes itself in
// OnDone by calling finish(), its last act. Results reach the receiver's thread through a Handover (a std::mutex, which
// ThreadSanitizer sees, not Qt's queued calls); there they are dropped when the call has been cancelled in the
// meantime or the receiver has been deleted. A call's last result is posted with its release, under m_mutex: once it
// has run, the call no longer counts as running either.
//
// Threads: add(), cancel(), cancelAll() and pending() belong to the thread the RpcJobs was made in (the owner thread),
// and every receiver must live there. m_mutex guards m_live and m_running, shared with gRPC's threads (OnDone).
// The destructor cancels what is in flight and waits until every call has passed OnDone: a reactor never outlives
// the client whose members it uses.
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
        grpc::ClientContext *context() const { return m_context.get(); }

        // Any gRPC thread, while the call runs: f() runs on the receiver's thread unless, by then, the call has been
        // cancelled or the receiver deleted.
        template <typename F> void deliver(F &&f) { m_jobs.post(m_id, m_receiver, std::forward<F>(f), false); }

    protected:
        // receiver: where the results go (null: nowhere); deadline: none for an open-ended stream.
        Call(RpcJobs &jobs, QObject *receiver, std::optional<std::chrono::milliseconds> deadline);
        // From OnDone only, once: deletes this, then delivers last() like deliver() and ends the call (it no longer
        // counts as running, nor as pending once last() has run or been dropped).
        template <typename F> void finish(F &&last)
        {
            Handover::Task task = m_jobs.wrap(m_id, m_receiver, std::forward<F>(last), true);
            RpcJobs &jobs = m_jobs;
            const quint64 id = m_id;
            delete this;
            jobs.release(id, std::move(task));
        }
        // For ThreadSanitizer, which cannot see gRPC's completion queue: gRPC runs a reactor's callbacks after it was
        // handed over (StartCall, StartRead, TryCancel) and OnDone after every other callback, on any of its threads.
        // handOver() just before each hand-over, takeOver() first in each callback (common/tsan.h).
        void handOver() const { tsanRelease(this); }
        void takeOver() const { tsanAcquire(this); }

    private:
        friend class RpcJobs;
        RpcJobs &m_jobs;
        quint64 m_id = 0;
        QPointer<QObject> m_receiver;
        // Shared with cancel(), which may still hold it (briefly) after the reactor has been deleted.
        std::shared_ptr<grpc::ClientContext> m_context;
    };

    // A unary call: the request is kept until the call ends (gRPC serialises it late); done(id, status, response) runs
    // on a gRPC thread when the call ends and returns what to run on the receiver's thread.
    template <typename Request, typename Response> class Unary final : public grpc::ClientUnaryReactor, public Call
    {
    public:
        using Done = std::function<std::function<void()>(quint64, const grpc::Status &, Response &)>;
        Unary(RpcJobs &jobs, QObject *receiver, std::chrono::milliseconds deadline, Request request, Done done)
            : Call(jobs, receiver, deadline)
            , m_request(std::move(request))
            , m_done(std::move(done))
        { }
        const Request *request() const { return &m_request; }
        Response *response() { return &m_response; }
        void OnDone(const grpc::Status &status) override
        {
            takeOver(); // what unary() wrote before StartCall
            finish(m_done(id(), status, m_response));
        }

    private:
        Request m_request;
        Response m_response;
        Done m_done;
    };

    RpcJobs();
    ~RpcJobs();
    RpcJobs(const RpcJobs &) = delete;
    RpcJobs &operator=(const RpcJobs &) = delete;

    // Registers a call made but not started yet and returns its id (never 0); start it after this returns.
    quint64 add(Call *call);
    // Starts a unary call under a deadline (unary calls always have one). issue(context, request, response, reactor)
    // hands it to the stub: stub->async()->Method(...).
    template <typename Request, typename Response, typename Issue>
    quint64 unary(QObject *receiver, std::chrono::milliseconds deadline, Request request, Issue issue,
        typename Unary<Request, Response>::Done done)
    {
        auto *call = new Unary<Request, Response>(*this, receiver, deadline, std::move(request), std::move(done));
        const quint64 id = add(call);
        issue(call->context(), call->request(), call->response(), static_cast<grpc::ClientUnaryReactor *>(call));
        call->handOver(); // the call as made here, to OnDone on gRPC's thread
        call->StartCall(); // from here on the call may end, and be deleted, on another thread
        return id;
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

    // Cancels the call (ClientContext::TryCancel) and drops whatever it still delivers. Unknown or finished ids are
    // ignored.
    void cancel(quint64 id);
    void cancelAll();
    // Calls whose end has not yet reached the owner thread, cancelled ones included.
    int pending() const { return static_cast<int>(m_pending.size()); }
    // Calls that have not yet passed OnDone (any thread; for tests and the destructor).
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
    // Any thread: the call is gone (deleted); posts its last result and wakes the destructor.
    void release(quint64 id, Handover::Task last);

    Handover m_mailbox; // on the owner thread; results land here first, then go to their receiver
    // Owner thread only.
    quint64 m_nextId = 0;
    std::map<quint64, bool> m_pending; // id -> cancelled

    mutable std::mutex m_mutex;
    std::condition_variable m_released;
    std::map<quint64, std::shared_ptr<grpc::ClientContext>> m_live; // cancellable: started, not yet past OnDone
    int m_running = 0;
};

} // namespace fleetscope
