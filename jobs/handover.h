// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QObject>

#include <functional>
#include <mutex>
#include <vector>

class QEvent;

namespace fleetscope {

// Tasks handed to the thread a Handover lives on from any thread, run there in the order posted: the way results of
// work done elsewhere (a worker, gRPC's threads) come back to their owner.
//
// Not a queued functor (QMetaObject::invokeMethod with Qt::QueuedConnection): Debian's Qt synchronizes its event
// queue with its own futex-based mutex, which ThreadSanitizer cannot see, so a functor made on one thread and run and
// deleted on another read as a race, with everything it captured. Here the tasks go through a std::mutex, and the
// event that wakes the owner carries nothing and was made on the owner's thread (one made by the poster and deleted by
// Qt on the owner's thread would read as a race too). At most one wake event is outstanding.
//
// Threads: post() from any thread; the rest on the Handover's thread, which needs an event loop. Tasks still queued
// when the Handover is destroyed are dropped, as are those queued behind a task that destroys it: nothing runs after
// it. Whoever posts must stop before it is destroyed (join the thread, wait for the call's end).
class Handover : public QObject
{
    Q_OBJECT
public:
    using Task = std::function<void()>;

    explicit Handover(QObject *parent = nullptr);
    ~Handover() override;
    Handover(const Handover &) = delete;
    Handover &operator=(const Handover &) = delete;

    void post(Task task);

protected:
    void customEvent(QEvent *event) override;

private:
    std::mutex m_mutex; // guards what follows, shared by the posting threads and the Handover's thread
    std::vector<Task> m_tasks;
    QEvent *m_wake; // made on the Handover's thread; posted when m_tasks stops being empty, then made anew
};

} // namespace fleetscope
