// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/history.h"
#include "model/problems.h"

#include <QObject>

#include <vector>

namespace fleetscope {

class HistorySource;
class LiveFeed;

// The fleet's events of the last hour, followed with one fleet-wide StreamEvents (for the timeline, the wall and the
// problems), and the problems they leave open (ProblemBoard). The stream replays the last hour when it starts, so it
// is started again for another fleet, and followed again when the backend is back after it ended.
//
// Threads: the GUI thread.
class FleetEvents : public QObject
{
    Q_OBJECT
public:
    FleetEvents(HistorySource *history, const LiveFeed *live, QObject *parent = nullptr);

    // Follows the fleet's events from an hour ago (again: what was followed is dropped).
    void follow();
    // Follows them when nothing is followed and there is a fleet (the backend back live).
    void resume();

    // Warnings and worse, oldest first.
    const std::vector<FleetEvent> &events() const { return m_events; }
    // Every event followed, Info ones included (a throttle's end).
    const ProblemBoard &board() const { return m_board; }

Q_SIGNALS:
    void changed();

private:
    void onEvents(const EventBatchPtr &batch);

    HistorySource *m_history;
    const LiveFeed *m_live;
    quint64 m_stream = 0; // the StreamEvents followed, 0 for none
    std::vector<FleetEvent> m_events;
    ProblemBoard m_board;
};

} // namespace fleetscope
