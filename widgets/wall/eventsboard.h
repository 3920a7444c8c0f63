// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/history.h"

#include <QWidget>

#include <vector>

namespace fleetscope {

// The wall's events page: what is wrong right now (GPUs throttling, nodes down) and the latest warnings and failures,
// newest first, in type readable across a room. Painted rather than a table: it shows as many as fit and never
// scrolls, since nobody at a wall can scroll it.
class EventsBoard : public QWidget
{
    Q_OBJECT
public:
    // What is going on now, from the newest live frame's health bytes (not from start/end events: an end is news
    // nobody lists, and a start may be older than the events held).
    struct Active
    {
        int thermal = 0; // throttled while warm or hotter
        int power = 0; // throttled while otherwise fine: the power cap
        int nodesDown = 0; // every GPU offline
    };

    explicit EventsBoard(QWidget *parent = nullptr);

    void setTopology(TopologyPtr topology);
    // Warnings and worse, oldest first (as the console keeps them); those of the hour before nowMs are shown.
    void setEvents(const std::vector<FleetEvent> &events, qint64 nowMs);
    // The newest live frame, for "now"; one of another generation counts nothing.
    void setLiveFrame(const FramePtr &frame);
    // The rows as shown, newest first: "HH:MM:SS  where  what", for tests and the wall's log.
    QStringList rowTexts() const;
    Active active() const { return m_active; }
    int criticalCount() const { return m_critical; }
    int warningCount() const { return m_warnings; }

    static Active activeOf(const Topology &topology, const Frame &frame);

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    QString where(const FleetEvent &e) const;
    QString what(const FleetEvent &e) const;

    TopologyPtr m_topology;
    std::vector<FleetEvent> m_events; // newest first, at most maxRows
    qint64 m_nowMs = 0;
    Active m_active;
    int m_critical = 0;
    int m_warnings = 0;
};

} // namespace fleetscope
