// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/history.h"

#include <QObject>
#include <QString>

#include <cstdint>

namespace fleetscope {

// Where a view asks for a GPU's history and events (the detail panel): the console's session answers, over whatever
// connection it holds (app/session/historyservice.h), so that no view sees the transport. Requests are tagged with
// the returned id (never 0); cancel() drops one, and nothing more is delivered for it.
//
// Threads: the object's thread only (the GUI thread); nothing here waits on the network.
class HistorySource : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    // Asks QueryRange; rangeReady or requestFailed answers.
    virtual quint64 queryRange(const RangeRequest &request) = 0;
    // Follows StreamEvents from sinceMs (untilMs 0: until cancelled), eventsReady with each batch.
    virtual quint64 streamEvents(const EventFilter &filter, int64_t sinceMs, int64_t untilMs = 0) = 0;
    virtual void cancel(quint64 requestId) = 0;

Q_SIGNALS:
    void rangeReady(const fleetscope::RangeResultPtr &result);
    void eventsReady(const fleetscope::EventBatchPtr &batch);
    void requestFinished(quint64 requestId);
    void requestFailed(quint64 requestId, const QString &message);
    // The connection behind the source changed: the requests under way are gone, and ids may be given again.
    void reset();
};

} // namespace fleetscope
