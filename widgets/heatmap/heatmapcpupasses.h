// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/parallelrows.h"
#include "model/heatmaplayout.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapcpuscreen.h"
#include "widgets/heatmap/heatmappassschedule.h"
#include "widgets/heatmap/heatmapscene.h"

#include <array>
#include <functional>
#include <utility>
#include <vector>

namespace fleetscope {

// The heatmap's three shader passes (shaders/heatmapresolve.frag, heatmapscreen.frag, heatmap.frag) done on the
// CPU's threads, where OpenGL is a software renderer (Mesa's llvmpipe, softpipe, swrast) or missing. There a
// full-screen fragment shader that only fetches one texel costs more than filling every pixel here and painting the
// image with QPainter. Same inputs, the same single-precision arithmetic in the same order, so the same
// pixels (tst_heatmapview draws every case both ways and compares). HeatmapPassSchedule decides when passes 1 and 2
// run; HeatmapCpuRenderer runs pass 3.
class HeatmapCpuPasses final : public HeatmapPasses
{
public:
    HeatmapCpuPasses();
    ~HeatmapCpuPasses();
    HeatmapCpuPasses(const HeatmapCpuPasses &) = delete;
    HeatmapCpuPasses &operator=(const HeatmapCpuPasses &) = delete;

    // The inputs the textures hold on the GPU path, copied.
    void allocate(size_t gpuCount);
    // A layout's cells (HeatmapLayout::cells), width x height.
    void setLayout(std::vector<int32_t> cells, int width, int height);
    void setFrame(const std::vector<float> &values, const std::vector<uint8_t> &health, bool shift);
    void setMarks(const std::vector<uint8_t> &marks);
    void setColorMap(const ColorMap &map);

    // Pass 1 over these layout cells; true when a cell's kind or flags changed (which alone pass 2 reads where a GPU
    // covers a pixel or more: else only the values changed, and the colours follow in pass 3).
    bool resolve(const HeatmapScene &scene, const QRect &cells) override;
    // Pass 2 over the whole framebuffer; changedRowsOnly: where a GPU covers a pixel or more, only over the pixels of
    // the layout rows whose kind or flags the last resolve changed (the caller knows nothing else changed).
    void screen(const HeatmapScene &scene, bool changedRowsOnly = false) override;
    // Pass 3 at the scene's mix: the framebuffer as QImage::Format_RGB32 pixels (cpuPack), rows from the top.
    // [*firstRow, *endRow): the rows that may differ from the image the previous call returned.
    const std::vector<uint32_t> &compose(const HeatmapScene &scene, int *firstRow, int *endRow);
    // The image compose returns, as it is now (pass 2 writes into it, and reallocates it for another size).
    const std::vector<uint32_t> &image() const { return m_out; }

private:
    // fn(chunk) for chunks [0, count) on the pool's threads and this one; returns when all are done.
    void parallel(int count, const std::function<void(int)> &fn);
    int chunkRows(int chunk, int *end) const; // pass 2 and 3 split the framebuffer's rows alike
    uint32_t colourOf(const CpuCell &source, float mix, float rangeMin, float rangeMax) const;
    // Pixels [x, x + length) of row y (from the bottom) with one pixel code (a cell's index, or one general).
    struct Run
    {
        uint32_t y;
        uint32_t x;
        uint32_t length;
        uint32_t code;
    };
    void addRuns(int y, int first, int last, std::vector<Run> &runs) const;

    // Helpers for the GUI thread (pass 3 in a paint) and for the preparation's thread, which runs below it
    // (jobs/background.h): a helper lowered once stays lowered, so each kind of caller has its own.
    ParallelRows m_pool;
    ParallelRows m_backgroundPool { ParallelRows::defaultHelpers(), ParallelRows::Priority::Background };
    size_t m_gpuCount = 0;
    int m_layoutWidth = 0;
    int m_layoutHeight = 0;
    std::vector<int32_t> m_cells;
    std::array<std::vector<float>, 2> m_values;
    int m_current = 0;
    std::vector<uint8_t> m_health;
    std::vector<uint8_t> m_marks;
    std::array<uint32_t, ColorMap::size> m_table {}; // cpuPack's colours

    std::vector<CpuCell> m_resolved; // pass 1, one per layout cell
    std::vector<std::array<float, 2>> m_normalised; // pass 2 below a pixel per cell (HeatmapCpuScreen)
    // Pass 2, one code per framebuffer pixel (HeatmapCpuScreen::row).
    std::vector<uint32_t> m_pixels;
    std::vector<CpuCell> m_pixelSources; // below one pixel per cell: each pixel's worst-of or mean, its own source
    bool m_sourcesArePixels = false;
    std::vector<std::vector<CpuGeneral>> m_general; // per chunk of rows
    std::vector<std::vector<Run>> m_runs; // per chunk of rows, when m_useRuns: the pixels pass 3 colours
    bool m_useRuns = false;
    QRect m_sourceCells; // the layout cells the pixels read, when the sources are cells
    QRect m_changing; // the pixels whose colour moves with the mix (rows from the bottom)
    std::vector<uint8_t> m_backgroundRows; // per row (from the bottom): all background in m_pixels and m_out
    std::pair<int, int> m_activeColumns { 0, 0 }; // [first, end): outside them every row is background
    std::vector<uint8_t> m_changedRows; // per layout row: the last resolve changed a cell's kind or flags there
    std::vector<size_t> m_generalsAfterFull; // per chunk: its generals after the last whole pass 2
    bool m_screened = false; // pass 2 ran since the last compose
    QSize m_framebuffer;
    int m_chunks = 1;
    std::vector<uint32_t> m_colours; // per source cell, for one compose
    std::vector<uint32_t> m_out;
};

} // namespace fleetscope
