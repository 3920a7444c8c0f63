// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/handover.h"

#include <QObject>
#include <QString>

#include <chrono>
#include <map>
#include <mutex>

class QTimer;

namespace fleetscope {

// Errors about bad input from the backend (a dropped frame, event or answer), said to people at most once per kind
// per second, with a count. A backend that sends nothing but bad parts once had each of them post its own error to the
// GUI thread, which then did nothing else; now the first of a kind is said at once, the others of that second are
// counted, and when the second is up the latest of them is said with how many there were.
//
// Threads: report() from any thread; the coalescer's own thread (the client's) says them, through errorOccurred.
// Whoever reports must stop before the coalescer is destroyed (join the thread, end the calls), as with a Handover;
// what is still counted then is dropped with it.
class ErrorCoalescer : public QObject
{
    Q_OBJECT
public:
    explicit ErrorCoalescer(QObject *parent = nullptr);
    ~ErrorCoalescer() override;

    // kind: what the error is about, a fixed word of the caller's ("frame", "event"), never text from the wire.
    void report(const QString &kind, const QString &message);
    // How long a kind is quiet after it was said (1 s; tests shorten it).
    void setInterval(std::chrono::milliseconds interval) { m_interval = interval; }

Q_SIGNALS:
    // The message, and when more than one came since the last of its kind was said, how many.
    void errorOccurred(const QString &message);

private:
    struct Kind
    {
        // Shared with the reporting threads, under m_mutex.
        QString latest;
        quint64 count = 0; // reported and not yet said
        bool armed = false; // a delivery is queued or the kind's timer runs: a report only counts
        // The coalescer's thread only (a child of the coalescer, made for the kind's first report).
        QTimer *timer = nullptr;
    };
    // The kind's entry, looked up under m_mutex (report() may be adding one); entries stay where they are.
    Kind &entry(const QString &kind);
    // The coalescer's thread: says what was counted for the kind; false when nothing was.
    bool say(const QString &kind);
    void onTimer(const QString &kind);

    std::chrono::milliseconds m_interval { 1000 };
    std::mutex m_mutex;
    std::map<QString, Kind> m_kinds; // never erased: a kind's entry, and its timer, stay where they are
    Handover m_handover; // last: destroyed first, so that nothing it still holds runs on the members above
};

} // namespace fleetscope
