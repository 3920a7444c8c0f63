// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/history.h"
#include "model/replaycontroller.h"

#include <QPointer>
#include <QWidget>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QToolButton;

namespace fleetscope {

class ReplayController;

// An event drawn on the timeline.
struct TimelineMarker
{
    int64_t timeMs = 0;
    FleetEvent::Severity severity = FleetEvent::Severity::Info;
    QString text;
};

// The timeline under the map: the held history from its earliest to its latest frame, the play head, LIVE,
// play/pause and speed, and event markers coloured by severity. A click or drag on the bar seeks; a click within a
// few pixels of a marker seeks to the marker's own time. Times are shown as local HH:mm:ss. Sizes follow the font.
//
// Compare: while the Compare button is down, clicks on the bar place marker A, then marker B, and then emit
// compareRequested(a, b) (the map shows B - A); a further click starts a new pair. Releasing the button removes the
// markers and emits compareCleared(). A toggle rather than shift+click so that it can be found, and done on a wall
// display with a touch screen.
//
// With a controller, the range follows its recorder and the play head its position; without, setRange() sets the
// range and clicks do nothing but compare.
class TimelineBar : public QWidget
{
    Q_OBJECT
public:
    static constexpr std::array<double, 6> speeds = { 1, 2, 5, 10, 30, 60 };

    explicit TimelineBar(ReplayController *controller = nullptr, QWidget *parent = nullptr);
    ~TimelineBar() override;

    void setController(ReplayController *controller);
    ReplayController *controller() const { return m_controller; }

    void setRange(qint64 earliestMs, qint64 latestMs);
    qint64 earliestMs() const { return m_earliestMs; }
    qint64 latestMs() const { return m_latestMs; }

    void setEvents(std::vector<TimelineMarker> markers);
    static std::vector<TimelineMarker> markersFrom(const std::vector<FleetEvent> &events);
    const std::vector<TimelineMarker> &events() const { return m_markers; }

    void setCompare(qint64 aMs, qint64 bMs);
    void clearCompare();
    std::optional<qint64> compareA() const { return m_compareA; }
    std::optional<qint64> compareB() const { return m_compareB; }

    // The bar itself (without buttons and labels), and its mapping between time and x in its own coordinates.
    QWidget *track() const;
    int xForTime(qint64 timeMs) const;
    qint64 timeAtX(int x) const;

Q_SIGNALS:
    void compareRequested(qint64 aMs, qint64 bMs);
    void compareCleared();

private:
    class Track;

    void sync();
    void refreshRange();
    double selectedSpeed() const;
    // What a click at x on the bar means: the nearest marker's time within reach, else the time under x.
    qint64 timeForClick(int x) const;
    const TimelineMarker *markerNear(int x) const;
    void pressAt(int x);
    void dragTo(int x);
    void onPlayClicked();
    void onSpeedChosen();
    void onCompareToggled(bool on);

    QPointer<ReplayController> m_controller;
    std::vector<QMetaObject::Connection> m_connections;
    qint64 m_earliestMs = 0;
    qint64 m_latestMs = 0;
    std::vector<TimelineMarker> m_markers; // sorted by severity, so that the worst is painted last, on top
    std::optional<qint64> m_compareA;
    std::optional<qint64> m_compareB;

    QToolButton *m_live;
    QToolButton *m_play;
    QComboBox *m_speed;
    QToolButton *m_compare;
    QLabel *m_startLabel;
    QLabel *m_endLabel;
    QLabel *m_positionLabel;
    Track *m_track;
};

} // namespace fleetscope
