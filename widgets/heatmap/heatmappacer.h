// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QTimer>

#include <ctime>
#include <functional>

namespace fleetscope {

// How often the map repaints while something on it moves (the morph between two frames, a zoom's morph): at the
// display's rate (16 ms) where a paint costs little, less often where it costs more CPU (a software renderer), so that
// animating costs at most about a third of a core; not at all once nothing moves. The cost is the process's CPU time
// per repaint (the paint, the compositing after it, a software renderer's threads), measured over eight at a time.
class HeatmapPacer
{
public:
    explicit HeatmapPacer(std::function<void()> repaint);

    // After each paint of the map; moving: the next paint would differ from this one.
    void painted(bool moving);
    void stop() { m_timer.stop(); }
    // Whether it repaints on its own now.
    bool isRepainting() const { return m_timer.isActive(); }
    // Between two repaints while moving, in ms.
    int interval() const { return m_timer.interval(); }

private:
    void measure();

    QTimer m_timer;
    std::clock_t m_start = 0;
    int m_frames = 0;
    double m_frameCpuMs = 0;
};

} // namespace fleetscope
