// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmappacer.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace fleetscope {

HeatmapPacer::HeatmapPacer(std::function<void()> repaint)
{
    m_timer.setInterval(16);
    QObject::connect(&m_timer, &QTimer::timeout, &m_timer, std::move(repaint));
}

void HeatmapPacer::painted(bool moving)
{
    measure();
    if (!moving) {
        m_timer.stop();
    } else if (!m_timer.isActive()) {
        m_timer.start();
    }
}

void HeatmapPacer::measure()
{
    if (!m_timer.isActive()) {
        m_frames = 0;
        return;
    }
    const std::clock_t now = std::clock();
    if (m_frames == 0) {
        m_start = now;
    }
    if (++m_frames <= 8) {
        return;
    }
    const double cpuMsPerFrame = 1000.0 * static_cast<double>(now - m_start) / CLOCKS_PER_SEC / 8.0;
    m_frames = 0;
    m_frameCpuMs = m_frameCpuMs <= 0 ? cpuMsPerFrame : 0.5 * m_frameCpuMs + 0.5 * cpuMsPerFrame;
    m_timer.setInterval(std::clamp(static_cast<int>(std::lround(m_frameCpuMs / 0.35)), 16, 500));
}

} // namespace fleetscope
