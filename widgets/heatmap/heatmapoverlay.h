// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/heatmaplayout.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapimagebuffer.h"

#include <QFont>
#include <QImage>
#include <QRect>
#include <QSizeF>
#include <QString>

class QPainter;

namespace fleetscope {

// The text drawn over the heatmap's GL image, in logical pixels: row names beside the map, rack and job names in
// the aisles above them (rack names named alike in every row once per column, above the top row), and, zoomed in, each
// GPU's value and its node's hostname. What shows depends on the size of a cell on screen (semantic zoom), so a
// zoomed-out map stays clean.
class HeatmapOverlay
{
public:
    // From this cell size on, in logical pixels, each GPU's value and its node's hostname appear; names in the
    // aisles appear once the aisle is tall enough for legible text.
    static constexpr double valueCell = 36.0;

    struct Scene
    {
        const HeatmapLayout *layout = nullptr;
        QSizeF widget; // logical pixels
        double originX = 0; // the layout's top-left, logical pixels
        double originY = 0;
        double cell = 1; // logical pixels per cell
        const MetricPlane *plane = nullptr; // the values shown, or null
        const MetricInfo *metric = nullptr;
        const ColorMap *colorMap = nullptr;
        QString staleNote;
        QString replayNote; // shown when there is no stale note
        double labelScale = 1; // text up to this many times its usual size (a wall)
        QFont font; // the widget's
        // A shared domain's racks, in layout cells, outlined in its colour (HeatmapMapState::domainCells); its
        // revision changes with them.
        const std::vector<QRect> *domainCells = nullptr;
        quint64 domainRevision = 0;
    };

    static void paint(QPainter &painter, const Scene &scene);
    // The font for text over the GL image, from a base font (see the .cpp for why it differs).
    static QFont overlayFont(QFont font);

private:
    static void paintRowLabels(QPainter &painter, const Scene &scene);
    static void paintAisleLabels(
        QPainter &painter, const Scene &scene, const std::vector<HeatmapLayout::Label> &labels, double aisleCells);
    static void paintColumnLabels(QPainter &painter, const Scene &scene);
    static void paintGroupLabels(QPainter &painter, const Scene &scene);
    static void paintLineLabels(QPainter &painter, const Scene &scene);
    static void paintValues(QPainter &painter, const Scene &scene);
    static void paintNodeLabels(QPainter &painter, const Scene &scene);
    static void paintStaleBanner(QPainter &painter, const Scene &scene);
    static void paintDomain(QPainter &painter, const Scene &scene);
};

// The overlay as an image (premultiplied, device pixels), redrawn only when what it shows changes (the view moved, a
// new frame, new notes). The shaders fold it into their per-frame pass, so an animation or hover repaint costs
// nothing for the text; on the CPU, QPainter draws it over the map's image.
class HeatmapOverlayCache
{
public:
    // Redraws the image (Format_ARGB32_Premultiplied) if the scene differs from the last; devicePixelRatio: device
    // pixels per scene.widget pixel.
    void update(const HeatmapOverlay::Scene &scene, double devicePixelRatio);
    const QImage &image() const { return m_image.image(); }
    // Its image's memory (HeatmapImageBuffer::adopt); holds: whether it has enough for this many device pixels.
    HeatmapImageBuffer &buffer() { return m_image; }
    // The part of the image with anything drawn, device pixels from the top-left; empty for none.
    QRect used() const { return m_used; }
    // Bumped on every redraw.
    quint64 revision() const { return m_revision; }

private:
    struct Key
    {
        const void *layoutCells = nullptr; // a new layout is a new cell vector
        int layoutWidth = 0;
        QSizeF widget;
        double dpr = 0;
        double originX = 0;
        double originY = 0;
        double cell = 0;
        const MetricPlane *plane = nullptr; // a new frame is a new plane
        QString metricId;
        float rangeMin = 0;
        float rangeMax = 0;
        QString colorMap;
        QString staleNote;
        QString replayNote;
        double labelScale = 0;
        QFont font;
        quint64 domainRevision = 0;
        bool operator==(const Key &o) const;
    };
    Key m_key;
    HeatmapImageBuffer m_image; // resized without a fresh allocation
    QRect m_used;
    quint64 m_revision = 0;
};

} // namespace fleetscope
