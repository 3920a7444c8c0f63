// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

class QLabel;
class QProgressBar;
class QStatusBar;

namespace fleetscope {

class ConsoleSession;
class HealthStrip;
class HeatmapView;
class MapPage;

// The desk's status bar: the connection (live, connecting, reconnecting with the reason), a busy bar while history
// loads, the fleet's size, the time and age of the data shown, the frame rate; and on the map, the stale pattern
// and note past three intervals, or the replay banner.
class DeskStatus : public QObject
{
    Q_OBJECT
public:
    DeskStatus(ConsoleSession *session, MapPage *page, QStatusBar *bar);

    // A problem that stops the console from working (the embedded backend failed), in red.
    void showProblem(const QString &message);
    // The age, the frame rate and the map's notes now (also once a second).
    void refresh();

private:
    void showConnection(const QString &detail, const QString &colour);

    ConsoleSession *m_session;
    MapPage *m_page;
    HeatmapView *m_map;
    QStatusBar *m_bar;
    HealthStrip *m_health = nullptr;
    QLabel *m_connection = nullptr;
    QLabel *m_gpus = nullptr;
    QLabel *m_age = nullptr;
    QLabel *m_fps = nullptr;
    QProgressBar *m_loading = nullptr;
    QTimer m_timer;
    QElapsedTimer m_fpsClock;
    quint64 m_fpsPaints = 0;
    double m_fpsValue = -1; // not measured yet
};

} // namespace fleetscope
