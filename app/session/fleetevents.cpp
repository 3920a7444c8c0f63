// SPDX-License-Identifier: Apache-2.0
#include "app/session/fleetevents.h"

#include "app/session/livefeed.h"
#include "model/historysource.h"

#include <QDateTime>
#include <QTimer>

#include <algorithm>

namespace fleetscope {

namespace {
constexpr int64_t eventWindowMs = 3600 * 1000; // the fleet's events kept: the last hour
constexpr size_t eventsKept = 2000;
} // namespace

FleetEvents::FleetEvents(HistorySource *history, const LiveFeed *live, QObject *parent)
    : QObject(parent)
    , m_history(history)
    , m_live(live)
{
    connect(m_history, &HistorySource::eventsReady, this, &FleetEvents::onEvents);
    connect(m_history, &HistorySource::requestFailed, this, [this](quint64 id) {
        if (id != m_stream) {
            return;
        }
        // Followed again when the feed is live again, and in any case on a timer: the history channel can fail while
        // the live stream carries on.
        m_stream = 0;
        QTimer::singleShot(10000, this, [this] {
            if (m_live->state() == TelemetryClient::State::Live) {
                resume();
            }
        });
    });
    // Another connection: its stream replaces the old one's.
    connect(m_history, &HistorySource::reset, this, [this] {
        m_stream = 0;
        if (m_live->topology()) {
            follow();
        }
    });
}

void FleetEvents::follow()
{
    m_history->cancel(m_stream);
    m_events.clear();
    m_board.clear(); // the stream replays the last hour, and with it the problems still open
    EventFilter all;
    all.everything = true;
    m_stream = m_history->streamEvents(all, QDateTime::currentMSecsSinceEpoch() - eventWindowMs);
}

void FleetEvents::resume()
{
    if (m_stream == 0 && m_live->topology()) {
        follow();
    }
}

void FleetEvents::onEvents(const EventBatchPtr &batch)
{
    if (batch->requestId != m_stream || m_stream == 0) {
        return;
    }
    for (const auto &e : batch->events) {
        m_board.add(e);
        if (e.severity != FleetEvent::Severity::Info) {
            m_events.push_back(e);
        }
    }
    const int64_t from = QDateTime::currentMSecsSinceEpoch() - eventWindowMs;
    m_events.erase(
        std::remove_if(m_events.begin(), m_events.end(), [from](const FleetEvent &e) { return e.timeMs < from; }),
        m_events.end());
    if (m_events.size() > eventsKept) {
        m_events.erase(m_events.begin(), m_events.end() - static_cast<std::ptrdiff_t>(eventsKept));
    }
    Q_EMIT changed();
}

} // namespace fleetscope
