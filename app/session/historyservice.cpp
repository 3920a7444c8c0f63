// SPDX-License-Identifier: Apache-2.0
#include "app/session/historyservice.h"

#include "client/historyclient.h"

namespace fleetscope {

void HistoryService::setClient(HistoryClient *client)
{
    for (const auto &c : std::as_const(m_connections)) {
        disconnect(c);
    }
    m_connections.clear();
    m_client = client;
    if (client != nullptr) {
        m_connections << connect(client, &HistoryClient::rangeReady, this, &HistorySource::rangeReady)
                      << connect(client, &HistoryClient::eventsReady, this, &HistorySource::eventsReady)
                      << connect(client, &HistoryClient::requestFinished, this, &HistorySource::requestFinished)
                      << connect(client, &HistoryClient::requestFailed, this, &HistorySource::requestFailed);
    }
    Q_EMIT reset();
}

quint64 HistoryService::queryRange(const RangeRequest &request)
{
    return m_client ? m_client->queryRange(request) : 0;
}

quint64 HistoryService::streamEvents(const EventFilter &filter, int64_t sinceMs, int64_t untilMs)
{
    return m_client ? m_client->streamEvents(filter, sinceMs, untilMs) : 0;
}

void HistoryService::cancel(quint64 requestId)
{
    if (m_client && requestId != 0) {
        m_client->cancel(requestId);
    }
}

} // namespace fleetscope
