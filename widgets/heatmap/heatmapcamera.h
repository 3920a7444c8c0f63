// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/heatmaplayout.h"

#include <QPointF>
#include <QRect>
#include <QRectF>
#include <QSizeF>

#include <functional>

namespace fleetscope {

// Where the heatmap's layout sits in its window: fit, zoom, pan, the quarter-second zoom morph and picking. Pure
// geometry (no GL, no widget), so that it is tested without a display. Positions given to and returned by the
// public functions are logical (widget) pixels; a Placement is in physical pixels.
class HeatmapCamera
{
public:
    // The smallest cell, in physical pixels: a pixel shows at most 4 x 4 GPUs (the shader's footprint).
    static constexpr double minCellSize = 0.25;
    // The biggest, in logical pixels.
    static constexpr double maxCellSize = 96.0;
    static constexpr qint64 zoomMs = 250;

    struct Placement
    {
        double originX = 0; // physical pixels
        double originY = 0;
        double cellSize = 1;
    };
    // The view as a position that survives a window of another size: logical pixels per cell and the layout cell
    // at the centre of the view (zoom 0 = fitted).
    struct ViewPosition
    {
        double zoom = 0;
        double centreX = 0;
        double centreY = 0;
    };

    HeatmapCamera();

    void setViewport(const QSizeF &logical, double devicePixelRatio);
    QSizeF viewport() const { return m_viewport; }
    double devicePixelRatio() const { return m_dpr; }
    void setLayoutSize(int width, int height);
    // Room kept free of cells when fitted, in logical pixels (the floor plan's row and rack names); at most an
    // eighth of the width and a sixteenth of the height.
    void setFitMargins(double left, double top);
    // Monotonic milliseconds for the morph; tests drive it.
    void setClock(std::function<qint64()> clock);

    Placement placement() const;
    Placement fittedPlacement() const;
    // Fitted to the whole layout (not to a place's cells, not zoomed or panned by the user).
    bool isFitted() const { return m_mode == Mode::Whole && !isMorphing(); }
    // Fitted to something (the layout or a place's cells) that a resize refits.
    bool followsResize() const { return m_mode != Mode::Free; }
    // The cells the view is fitted to: empty for the whole layout or when the user moved the view.
    QRect fittedCells() const { return m_mode == Mode::Cells ? m_cells : QRect(); }

    void fit();
    // The point under anchor stays under it; the cell size stays between half the fitted size (at least a quarter
    // of a physical pixel) and maxCellSize logical pixels (or the fitted size if bigger).
    void zoomAt(const QPointF &anchor, double factor);
    void panBy(const QPointF &delta);
    // Fits these cells (empty: the whole layout), morphing there from the current placement when animated. The
    // view stays fitted to them across resizes until the user zooms or pans.
    void zoomToCells(const QRect &cells, bool animated);
    bool isMorphing() const { return m_zoomStart >= 0; }
    // After a paint: ends a morph whose time is up. Returns whether one is still running.
    bool settleMorph();

    ViewPosition viewPosition() const;
    void setViewPosition(const ViewPosition &position);

    // Picking: the cell under a point (may be outside the layout) and a cell's rectangle, logical pixels.
    QPoint cellAt(const QPointF &pos) const;
    QRectF cellRect(const QPoint &cell) const;
    int gpuAt(const HeatmapLayout &layout, const QPointF &pos) const;
    QRectF gpuRect(const HeatmapLayout &layout, int gpu) const;

private:
    enum class Mode { Whole, Cells, Free };
    Placement cellsPlacement(const QRect &cells) const;
    Placement targetPlacement() const; // where the mode puts the layout now

    QSizeF m_viewport;
    double m_dpr = 1;
    int m_layoutWidth = 0;
    int m_layoutHeight = 0;
    double m_marginLeft = 0;
    double m_marginTop = 0;
    std::function<qint64()> m_clock;
    Mode m_mode = Mode::Whole;
    QRect m_cells; // Mode::Cells
    Placement m_view; // Mode::Free
    Placement m_zoomFrom;
    qint64 m_zoomStart = -1; // -1: not morphing
};

} // namespace fleetscope
