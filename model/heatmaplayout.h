// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QPoint>
#include <QRect>
#include <QSize>
#include <QString>

#include <cstdint>
#include <utility>
#include <vector>

namespace fleetscope {

// Where each GPU sits on the map, in cells (one cell = one GPU). Computed once per topology generation and uploaded
// as the layout texture; frames never change it.
struct HeatmapLayout
{
    static constexpr int32_t gap = -1;
    // Aisles, in cells: between racks, between rows of racks (rack names go there), above shelves of jobs.
    static constexpr int rackGap = 1;
    static constexpr int rowGap = 3;
    static constexpr int labelAisle = 2;

    int width = 0;
    int height = 0;
    std::vector<int32_t> cells; // width x height, row-major from the top: dense GPU index, or gap
    std::vector<QPoint> gpuCells; // dense GPU index -> its cell

    struct Label
    {
        QString text;
        QRect cells; // the cells the label names
        QString shortText = {}; // for when text does not fit, e.g. a rack's name without its row's
    };
    std::vector<Label> rowLabels; // beside the map, one per row of racks (floor plan)
    std::vector<Label> rackLabels; // in the aisle above each rack (floor plan)
    // Every row's racks named alike by column (k01...k16 in each row): one per column, over the top row's racks;
    // drawn instead of rackLabels. Empty otherwise (floor plan).
    std::vector<Label> rackColumnLabels;
    std::vector<Label> nodeLabels; // over the cells of each node that sits on one line
    std::vector<Label> groupLabels; // one per job block, and the idle GPUs, named in the aisle above (by job)
    std::vector<Label> lineLabels; // one per leaf switch's line of a scalable unit's block (by fabric)

    // The GPUs of one node on one line; labels cover them.
    void labelNodes(const Topology &topology);

    int32_t gpuAt(int x, int y) const
    {
        return (x < 0 || y < 0 || x >= width || y >= height) ? gap : cells[static_cast<size_t>(y) * width + x];
    }

    // The floor plan: rows top to bottom in floor order, racks left to right by position, each rack a block of
    // nodes (top to bottom) x GPUs (left to right), a one-cell aisle between racks and a wider one between rows. An
    // HGX rack is 8 x 8; an NVL72 rack (its NVLink domain) a column of 18 trays of 4, as it stands on the floor.
    static HeatmapLayout floorPlan(const Topology &topology);
    // The floor plan's width and height in cells, in 64 bits: a topology is checked with it before it is laid out
    // (racks at positions far apart would make a plan of billions of cells).
    static std::pair<uint64_t, uint64_t> floorPlanSize(const Topology &topology);
    // All GPUs in fleet order, line by line, in a rectangle of about the given width / height ratio; lines are a
    // whole number of nodes wide when nodes are the same size, so nodes stay on one line.
    static HeatmapLayout compact(const Topology &topology, double aspect);
    // Each running job's GPUs together in a block (biggest jobs first, shelf-packed with aisles; two cells above
    // each shelf for the job names), and the idle GPUs last, in a band across the bottom. Without jobs, every GPU
    // is idle.
    static HeatmapLayout byJob(const Topology &topology, const JobList *jobs, double aspect);
    // The fabric (model/fabriclayout.cpp): each scalable unit a block of its leaf switches (lines, by rail) x their
    // ports (cells), so that a leaf down is a line and a port a cell; shelf-packed as byJob's blocks, the GPUs whose
    // link is not known last, in a band across the bottom. Without domains, every GPU is in that band.
    static HeatmapLayout byFabric(const Topology &topology, double aspect);

    // Blocks left to right with a one-cell aisle, a new shelf when the line is full, labelAisle cells above each
    // shelf (and the band after them) for their names; origins gets each block's top left. Returns where the band
    // after them starts.
    static int shelfPack(const std::vector<QSize> &blocks, int lineWidth, std::vector<QPoint> *origins);
    // A width near sqrt(count * aspect), rounded up to a whole number of nodes.
    static int lineWidthFor(double count, double aspect, int nodeWidth);
};

} // namespace fleetscope
