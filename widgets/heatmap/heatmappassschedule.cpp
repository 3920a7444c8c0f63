// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmappassschedule.h"

#include <algorithm>
#include <cmath>

namespace fleetscope {

QRect HeatmapPassSchedule::visibleCells(const HeatmapScene &scene, const QSize &layout)
{
    // Zoomed in, a new frame resolves thousands of cells, not a million.
    const double cell = std::max(scene.cellSize, 1e-6);
    return QRect(QPoint(static_cast<int>(std::floor(-scene.originX / cell)) - 4,
                     static_cast<int>(std::floor(-scene.originY / cell)) - 4),
               QPoint(static_cast<int>(std::ceil((scene.framebuffer.width() - scene.originX) / cell)) + 4,
                   static_cast<int>(std::ceil((scene.framebuffer.height() - scene.originY) / cell)) + 4))
        & QRect(QPoint(0, 0), layout);
}

bool HeatmapPassSchedule::resolvedFor(const HeatmapScene &scene, const QRect &visible) const
{
    // A pan or zoom that shows cells not resolved yet resolves again.
    const HeatmapScene &last = m_resolved;
    return !m_resolveDirty && m_resolvedCells.contains(visible) && last.hasData == scene.hasData
        && last.hasPrevious == scene.hasPrevious && last.hasMarks == scene.hasMarks
        && last.focusFirst == scene.focusFirst && last.focusCount == scene.focusCount;
}

bool HeatmapPassSchedule::screenedFor(const HeatmapScene &scene) const
{
    const HeatmapScene &last = m_screened;
    return !m_screenInvalid && last.framebuffer == scene.framebuffer && last.originX == scene.originX
        && last.originY == scene.originY && last.cellSize == scene.cellSize && last.layoutSize == scene.layoutSize
        && last.rangeMin == scene.rangeMin && last.rangeMax == scene.rangeMax && last.worst == scene.worst
        && last.stale == scene.stale && last.ringCentre == scene.ringCentre && last.ringRadius == scene.ringRadius
        && last.overlayRevision == scene.overlayRevision;
}

QRect HeatmapPassSchedule::resolveCells(const HeatmapScene &scene, const QSize &layout)
{
    const QRect visible = visibleCells(scene, layout);
    if (resolvedFor(scene, visible)) {
        return {};
    }
    m_resolvedCells = visible;
    if (visible.isEmpty()) {
        return {};
    }
    m_resolved = scene;
    m_resolveDirty = false;
    m_screenDirty = true;
    ++m_resolveCount;
    return visible;
}

bool HeatmapPassSchedule::screenNow(const HeatmapScene &scene, bool cellsOnly)
{
    if (screenedFor(scene) && (!m_screenDirty || (cellsOnly && scene.cellSize >= 1.0))) {
        m_screenDirty = false;
        return false;
    }
    m_screened = scene;
    m_screenDirty = false;
    m_screenInvalid = false;
    ++m_screenCount;
    return true;
}

void HeatmapPassSchedule::run(const HeatmapScene &scene, const QSize &layout, HeatmapPasses &passes)
{
    const QRect cells = resolveCells(scene, layout);
    const bool flagsChanged = !cells.isEmpty() && passes.resolve(scene, cells);
    if (screenNow(scene, !cells.isEmpty())) {
        passes.screen(scene, false);
    } else if (flagsChanged) {
        passes.screen(scene, true); // the pixels of the rows where a GPU's kind or flags changed
    }
}

bool HeatmapPassSchedule::wouldRun(const HeatmapScene &scene, const QSize &layout) const
{
    const QRect visible = visibleCells(scene, layout);
    const bool resolve = !visible.isEmpty() && !resolvedFor(scene, visible);
    return resolve || m_screenDirty || !screenedFor(scene);
}

} // namespace fleetscope
