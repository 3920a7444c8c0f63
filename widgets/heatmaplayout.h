// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "fleetmodel.h"

#include <QPoint>
#include <QRect>
#include <QString>

#include <cstdint>
#include <vector>

namespace fleetscope {

// Where each GPU sits on the map, in cells (one cell = one GPU). Computed once per topology generation and uploaded
// as the layout texture; frames never change it.
struct HeatmapLayout
{
    static constexpr int32_t gap = -1;

    int width = 0;
    int height = 0;
    std::vector<int32_t> cells; // width x height, row-major from the top: dense GPU index, or gap
    std::vector<QPoint> gpuCells; // dense GPU index -> its cell

    struct Label
    {
        QString text;
        QRect cells; // the cells the label names
    };
    std::vector<Label> rowLabels;

    int32_t gpuAt(int x, int y) const
    {
        return (x < 0 || y < 0 || x >= width || y >= height) ? gap : cells[static_cast<size_t>(y) * width + x];
    }

    // The floor plan: rows top to bottom in floor order, racks left to right by position, each rack a block of
    // nodes (top to bottom) x GPUs (left to right), a one-cell aisle between racks and a wider one between rows.
    static HeatmapLayout floorPlan(const Topology &topology);
};

} // namespace fleetscope
