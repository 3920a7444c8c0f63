// SPDX-License-Identifier: Apache-2.0
#include "client/errorcoalescer.h"

#include <QThread>
#include <QTimer>

namespace fleetscope {

ErrorCoalescer::ErrorCoalescer(QObject *parent)
    : QObject(parent)
    , m_handover(this)
{ }

ErrorCoalescer::~ErrorCoalescer() = default;

void ErrorCoalescer::report(const QString &kind, const QString &message)
{
    {
        std::lock_guard lock(m_mutex);
        Kind &k = m_kinds[kind];
        // A copy of the characters, not of the reporter's string: say() appends to it on the owner's thread, and Qt
        // decides to append in place from the count of owners read without ordering, which does not order this
        // thread's dropping of its own copy before that write (ThreadSanitizer reported it).
        k.latest = QString(message.constData(), message.size());
        ++k.count;
        if (k.armed) {
            return;
        }
        k.armed = true;
    }
    m_handover.post([this, kind] {
        say(kind);
        // The kind stays armed for the interval: what is reported meanwhile is only counted, and said when it is up.
        QTimer *&timer = entry(kind).timer;
        if (!timer) {
            timer = new QTimer(this);
            timer->setSingleShot(true);
            connect(timer, &QTimer::timeout, this, [this, kind] { onTimer(kind); });
        }
        timer->start(m_interval);
    });
}

ErrorCoalescer::Kind &ErrorCoalescer::entry(const QString &kind)
{
    std::lock_guard lock(m_mutex);
    return m_kinds.at(kind); // report() made it before it posted
}

bool ErrorCoalescer::say(const QString &kind)
{
    Q_ASSERT(QThread::currentThread() == thread());
    QString message;
    quint64 count = 0;
    {
        std::lock_guard lock(m_mutex);
        Kind &k = m_kinds.at(kind);
        count = k.count;
        message = std::move(k.latest);
        k.latest.clear();
        k.count = 0;
    }
    if (count == 0) {
        return false;
    }
    if (count > 1) {
        message += QStringLiteral(" (and %1 more like it in the last %2 s)")
                       .arg(count - 1)
                       .arg(QString::number(static_cast<double>(m_interval.count()) / 1000.0, 'g', 3));
    }
    Q_EMIT errorOccurred(message);
    return true;
}

void ErrorCoalescer::onTimer(const QString &kind)
{
    if (say(kind)) {
        entry(kind).timer->start(m_interval); // said: quiet for another interval
        return;
    }
    // Nothing came during the interval: the next report is said at once. A report between say() and here found the
    // kind armed and only counted; it is looked at again under the lock.
    std::lock_guard lock(m_mutex);
    Kind &k = m_kinds.at(kind);
    if (k.count > 0) {
        k.timer->start(0);
        return;
    }
    k.armed = false;
}

} // namespace fleetscope
