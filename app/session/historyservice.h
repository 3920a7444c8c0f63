// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/historysource.h"

#include <QList>
#include <QPointer>

namespace fleetscope {

class HistoryClient;

// The session's history for views: HistorySource over the session's HistoryClient of the moment, one object for the
// session's life while the client is made again on each connection (reset() then).
//
// Threads: the GUI thread, as the client's.
class HistoryService : public HistorySource
{
    Q_OBJECT
public:
    using HistorySource::HistorySource;

    // The client asked (not owned); null: requests return 0, and nothing answers.
    void setClient(HistoryClient *client);
    bool hasClient() const { return !m_client.isNull(); }

    quint64 queryRange(const RangeRequest &request) override;
    quint64 streamEvents(const EventFilter &filter, int64_t sinceMs, int64_t untilMs = 0) override;
    void cancel(quint64 requestId) override;

private:
    QPointer<HistoryClient> m_client;
    QList<QMetaObject::Connection> m_connections;
};

} // namespace fleetscope
