// SPDX-License-Identifier: Apache-2.0
#include "jobs/handover.h"

#include <QCoreApplication>
#include <QEvent>
#include <QPointer>

#include <utility>

namespace fleetscope {

namespace {
QEvent::Type tasksReady()
{
    static const auto type = static_cast<QEvent::Type>(QEvent::registerEventType());
    return type;
}
} // namespace

Handover::Handover(QObject *parent)
    : QObject(parent)
    , m_wake(new QEvent(tasksReady()))
{ }

Handover::~Handover()
{
    std::lock_guard lock(m_mutex);
    m_tasks.clear();
    // Not posted, ours to delete; a posted one is deleted by Qt with this object's events, undelivered.
    delete m_wake;
}

void Handover::post(Task task)
{
    QEvent *wake = nullptr;
    {
        std::lock_guard lock(m_mutex);
        m_tasks.push_back(std::move(task));
        if (m_tasks.size() == 1) { // else the owner has been woken already and takes this one too
            wake = std::exchange(m_wake, nullptr);
            Q_ASSERT(wake);
        }
    }
    if (wake) {
        QCoreApplication::postEvent(this, wake);
    }
}

void Handover::customEvent(QEvent *event)
{
    if (event->type() != tasksReady()) {
        QObject::customEvent(event);
        return;
    }
    std::vector<Task> tasks;
    {
        std::lock_guard lock(m_mutex);
        tasks.swap(m_tasks);
        m_wake = new QEvent(tasksReady()); // Qt deletes the one being delivered
    }
    const QPointer<Handover> alive(this);
    for (auto &task : tasks) {
        if (!alive) {
            return; // a task destroyed this Handover: the rest are dropped with it
        }
        task();
    }
}

} // namespace fleetscope
