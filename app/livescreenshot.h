// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QObject>
#include <QPixmap>
#include <QString>

#include <functional>

namespace fleetscope {

class ConsoleSession;
class HeatmapView;

// --screenshot: once a live frame of the metric shown has been painted on the map, grabs the window (through
// `grab`, which draws the map's labels too), saves it as PNG and emits done(0); after timeoutS seconds without one,
// done(1) with a message on stderr. The same for the desk and the wall.
class LiveScreenshot : public QObject
{
    Q_OBJECT
public:
    LiveScreenshot(ConsoleSession *session, HeatmapView *map, std::function<QPixmap()> grab, QString file,
        int timeoutS, QObject *parent = nullptr);

Q_SIGNALS:
    void done(int exitCode);

private:
    void onLiveFrame();

    ConsoleSession *m_session;
    HeatmapView *m_map;
    std::function<QPixmap()> m_grab;
    QString m_file;
    bool m_armed = true;
};

} // namespace fleetscope
