// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapcamera.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <memory>

namespace fleetscope {

HeatmapCamera::HeatmapCamera()
    : m_clock([timer = std::make_shared<QElapsedTimer>()] {
        if (!timer->isValid()) {
            timer->start();
        }
        return timer->elapsed();
    })
{ }

void HeatmapCamera::setViewport(const QSizeF &logical, double devicePixelRatio)
{
    m_viewport = logical;
    m_dpr = devicePixelRatio > 0 ? devicePixelRatio : 1.0;
}

void HeatmapCamera::setLayoutSize(int width, int height)
{
    m_layoutWidth = std::max(0, width);
    m_layoutHeight = std::max(0, height);
}

void HeatmapCamera::setFitMargins(double left, double top)
{
    m_marginLeft = std::max(0.0, left);
    m_marginTop = std::max(0.0, top);
}

void HeatmapCamera::setClock(std::function<qint64()> clock)
{
    m_clock = std::move(clock);
}

HeatmapCamera::Placement HeatmapCamera::fittedPlacement() const
{
    Placement p;
    if (m_layoutWidth == 0 || m_layoutHeight == 0) {
        return p;
    }
    const double margin = std::min(m_marginLeft, m_viewport.width() / 8.0) * m_dpr;
    const double top = std::min(m_marginTop, m_viewport.height() / 16.0) * m_dpr;
    const double w = m_viewport.width() * m_dpr - margin;
    const double h = m_viewport.height() * m_dpr - top;
    double cell = std::max(minCellSize, std::min(w / m_layoutWidth, h / m_layoutHeight));
    // Whole physical pixels per cell from four on, so that every cell (and its border, from six) is the same size;
    // below that, rounding down would waste up to half the window, and cells of n and n + 1 pixels read the same.
    if (cell >= 4.0) {
        cell = std::floor(cell);
    }
    p.cellSize = cell;
    p.originX = margin + std::floor((w - cell * m_layoutWidth) / 2);
    p.originY = top + std::floor((h - cell * m_layoutHeight) / 2);
    return p;
}

HeatmapCamera::Placement HeatmapCamera::cellsPlacement(const QRect &cells) const
{
    const double w = m_viewport.width() * m_dpr;
    const double h = m_viewport.height() * m_dpr;
    Placement p;
    p.cellSize = std::clamp(std::min(0.9 * w / cells.width(), 0.9 * h / cells.height()), minCellSize,
        std::max(maxCellSize * m_dpr, fittedPlacement().cellSize));
    const QPointF centre = QRectF(cells).center();
    p.originX = w / 2 - centre.x() * p.cellSize;
    p.originY = h / 2 - centre.y() * p.cellSize;
    return p;
}

HeatmapCamera::Placement HeatmapCamera::targetPlacement() const
{
    switch (m_mode) {
    case Mode::Whole:
        return fittedPlacement();
    case Mode::Cells:
        return cellsPlacement(m_cells);
    case Mode::Free:
        break;
    }
    return m_view;
}

HeatmapCamera::Placement HeatmapCamera::placement() const
{
    const Placement target = targetPlacement();
    if (m_zoomStart < 0) {
        return target;
    }
    // The zoom morph: the cell size changes geometrically and the layout point at the view's centre moves
    // linearly, eased at both ends. The target is where the fit is now, whatever the window did meanwhile.
    const double linear = std::clamp(static_cast<double>(m_clock() - m_zoomStart) / zoomMs, 0.0, 1.0);
    const double t = linear * linear * (3 - 2 * linear);
    const double cx = m_viewport.width() * m_dpr / 2;
    const double cy = m_viewport.height() * m_dpr / 2;
    const auto centreOf = [cx, cy](const Placement &p) {
        return QPointF((cx - p.originX) / p.cellSize, (cy - p.originY) / p.cellSize);
    };
    const QPointF from = centreOf(m_zoomFrom);
    const QPointF to = centreOf(target);
    Placement p;
    p.cellSize = std::exp(std::log(m_zoomFrom.cellSize) * (1 - t) + std::log(target.cellSize) * t);
    const QPointF centre = from + (to - from) * t;
    p.originX = cx - centre.x() * p.cellSize;
    p.originY = cy - centre.y() * p.cellSize;
    return p;
}

void HeatmapCamera::fit()
{
    m_zoomStart = -1;
    m_mode = Mode::Whole;
}

void HeatmapCamera::zoomToCells(const QRect &cells, bool animated)
{
    if (m_layoutWidth == 0) {
        return;
    }
    const bool whole = cells.isEmpty();
    if (whole && isFitted()) {
        return; // already showing the whole layout
    }
    const Placement from = placement();
    m_mode = whole ? Mode::Whole : Mode::Cells;
    m_cells = whole ? QRect() : cells;
    m_zoomStart = -1;
    if (animated) {
        m_zoomFrom = from;
        m_zoomStart = m_clock();
    }
}

bool HeatmapCamera::settleMorph()
{
    if (m_zoomStart >= 0 && m_clock() - m_zoomStart >= zoomMs) {
        m_zoomStart = -1;
    }
    return m_zoomStart >= 0;
}

void HeatmapCamera::zoomAt(const QPointF &anchor, double factor)
{
    if (m_layoutWidth == 0 || !(factor > 0)) {
        return;
    }
    const Placement fit = fittedPlacement();
    Placement p = placement();
    m_zoomStart = -1;
    // From half the fitted size (the whole fleet with a margin) to 96 logical pixels per GPU (room for its value
    // and its node's name at any device pixel ratio); never below a quarter of a physical pixel, the most a pixel
    // aggregates (4 x 4 GPUs), so that no GPU is skipped.
    const double cell = std::clamp(
        p.cellSize * factor, std::max(minCellSize, fit.cellSize / 2), std::max(maxCellSize * m_dpr, fit.cellSize));
    const double ax = anchor.x() * m_dpr;
    const double ay = anchor.y() * m_dpr;
    p.originX = ax - (ax - p.originX) * cell / p.cellSize;
    p.originY = ay - (ay - p.originY) * cell / p.cellSize;
    p.cellSize = cell;
    m_view = p;
    m_mode = Mode::Free;
}

void HeatmapCamera::panBy(const QPointF &delta)
{
    if (m_layoutWidth == 0) {
        return;
    }
    Placement p = placement();
    m_zoomStart = -1;
    p.originX += delta.x() * m_dpr;
    p.originY += delta.y() * m_dpr;
    // Keep at least a quarter of the map on screen, so it can never be lost off the edge.
    const double w = m_viewport.width() * m_dpr;
    const double h = m_viewport.height() * m_dpr;
    const double mapW = m_layoutWidth * p.cellSize;
    const double mapH = m_layoutHeight * p.cellSize;
    p.originX = std::clamp(p.originX, std::min(0.0, w / 4 - mapW), std::max(0.0, w - std::min(mapW, w) / 4));
    p.originY = std::clamp(p.originY, std::min(0.0, h / 4 - mapH), std::max(0.0, h - std::min(mapH, h) / 4));
    m_view = p;
    m_mode = Mode::Free;
}

HeatmapCamera::ViewPosition HeatmapCamera::viewPosition() const
{
    if (isFitted() || m_layoutWidth == 0) {
        return {};
    }
    const Placement p = placement();
    return { p.cellSize / m_dpr, (m_viewport.width() * m_dpr / 2 - p.originX) / p.cellSize,
        (m_viewport.height() * m_dpr / 2 - p.originY) / p.cellSize };
}

void HeatmapCamera::setViewPosition(const ViewPosition &position)
{
    if (!(position.zoom > 0) || m_layoutWidth == 0) {
        fit();
        return;
    }
    Placement p;
    p.cellSize = std::clamp(position.zoom * m_dpr, minCellSize, maxCellSize * m_dpr);
    p.originX = m_viewport.width() * m_dpr / 2 - position.centreX * p.cellSize;
    p.originY = m_viewport.height() * m_dpr / 2 - position.centreY * p.cellSize;
    m_zoomStart = -1;
    m_view = p;
    m_mode = Mode::Free;
}

QPoint HeatmapCamera::cellAt(const QPointF &pos) const
{
    const Placement p = placement();
    return { static_cast<int>(std::floor((pos.x() * m_dpr - p.originX) / p.cellSize)),
        static_cast<int>(std::floor((pos.y() * m_dpr - p.originY) / p.cellSize)) };
}

QRectF HeatmapCamera::cellRect(const QPoint &cell) const
{
    const Placement p = placement();
    return { (p.originX + cell.x() * p.cellSize) / m_dpr, (p.originY + cell.y() * p.cellSize) / m_dpr,
        p.cellSize / m_dpr, p.cellSize / m_dpr };
}

int HeatmapCamera::gpuAt(const HeatmapLayout &layout, const QPointF &pos) const
{
    if (layout.width == 0) {
        return -1;
    }
    const QPoint cell = cellAt(pos);
    return layout.gpuAt(cell.x(), cell.y());
}

QRectF HeatmapCamera::gpuRect(const HeatmapLayout &layout, int gpu) const
{
    if (gpu < 0 || static_cast<size_t>(gpu) >= layout.gpuCells.size()) {
        return {};
    }
    return cellRect(layout.gpuCells[static_cast<size_t>(gpu)]);
}

} // namespace fleetscope
