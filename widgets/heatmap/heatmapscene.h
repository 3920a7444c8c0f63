// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QPointF>
#include <QRect>
#include <QSize>

#include <cstdint>

class QImage;

namespace fleetscope {

// What the heatmap draws in one paint, as a surface pulls it (HeatmapSceneSource) and hands it to its renderer: where
// the layout sits in the framebuffer, the morph between two frames, the range and what is drawn over the cells.
struct HeatmapScene
{
    QSize framebuffer; // physical pixels
    double originX = 0; // the layout's top-left, physical pixels
    double originY = 0;
    double cellSize = 1; // physical pixels per cell
    QSize layoutSize;
    float mix = 1; // 0 = the previous frame .. 1 = the current one
    bool morphing = false; // mix < 1: the next paint differs
    bool hasData = false;
    bool hasPrevious = false;
    float rangeMin = 0;
    float rangeMax = 1;
    bool worst = true; // below one pixel per GPU: the worst of the GPUs under a pixel, else their mean
    bool stale = false;
    bool hasMarks = false;
    uint32_t focusFirst = 0;
    uint32_t focusCount = 0;
    QPointF ringCentre; // physical pixels
    float ringRadius = 0; // 0: no ring
    // Text over the map, premultiplied RGBA8888 at the framebuffer's size; overlayUsed: its part with anything in it
    // (from the top-left); a new revision is a new image.
    const QImage *overlay = nullptr;
    QRect overlayUsed;
    quint64 overlayRevision = 0;
};

} // namespace fleetscope
