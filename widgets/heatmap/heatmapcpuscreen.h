// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/heatmap/heatmapscene.h"

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace fleetscope {

// What pass 1 leaves per layout cell (heatmapresolve.frag's texel): the values (0 without one) and flags, 0..1 the
// kind (0 gap, 1 GPU without a value, 2 with one), 4 marked, 8 out of focus, 16 in the domain highlighted. Below one
// pixel per cell, pass 2 leaves one per pixel too: the worst-of or mean under it.
struct CpuCell
{
    float value;
    float before;
    uint32_t flags;
};

// A pixel that is neither its source's colour as it is nor fixed: colour * a + b.
struct CpuGeneral
{
    uint32_t source;
    float a;
    std::array<float, 3> b;
};

// A float to an 8-bit unsigned normalised channel as the rasteriser writes it: to the nearest, ties to even (adding
// 1.5 * 2^23 leaves no fraction to keep); and an opaque colour as QImage::Format_RGB32 holds it (0xffRRGGBB), which
// a raster paint engine draws without converting; cpuChannel(c, 0..2) reads its red, green and blue back.
inline uint32_t cpuUnorm8(float x)
{
    x = x > 0.0F ? (x < 1.0F ? x : 1.0F) : 0.0F;
    return static_cast<uint32_t>((x * 255.0F + 12582912.0F) - 12582912.0F);
}
inline uint32_t cpuPack(uint32_t r, uint32_t g, uint32_t b)
{
    return (r << 16) | (g << 8) | b | 0xff000000U;
}
inline uint32_t cpuChannel(uint32_t colour, size_t k)
{
    return (colour >> (16 - 8 * k)) & 0xffU;
}

// Pass 2 (shaders/heatmapscreen.frag) on the CPU, one framebuffer row at a time (rows counted from the bottom, as
// OpenGL does; the image itself is stored from the top, as QImage does), for HeatmapCpuPasses' threads. What does
// not change along a row or down a column is computed once, and a pixel that nothing but its cell decides (no edge,
// dot, mark, dimming or ring) takes a short path; the others go through the shader's steps one by one, in the same
// order and precision. The shader's last step, the text over the map, is left to QPainter (HeatmapView).
class HeatmapCpuScreen
{
public:
    // A pixel below 2^31 is the index of the source whose colour it takes; with bit 30 set, a CpuGeneral of its
    // row's chunk; else its colour is fixed and already in the image.
    static constexpr uint32_t notPlain = 0x80000000U;
    static constexpr uint32_t general = 0x40000000U;

    // resolved: pass 1's cells, layoutWidth a row; normalised: per cell, the value and the value morphed from mapped
    // onto 0..1 (where normalises(), filled by normaliseRow).
    HeatmapCpuScreen(const HeatmapScene &scene, const std::vector<CpuCell> &resolved, int layoutWidth, int layoutHeight,
        std::vector<std::array<float, 2>> *normalised);

    bool aggregate() const { return m_aggregate; }
    // Whether the aggregate pixels read the cells mapped onto the range (normaliseRow). Not for the worst of a
    // footprint on a range of positive width: the mapping never lowers a value, so the worst mapped is the worst
    // value mapped, exactly, and the footprint reads the values themselves (a pass over the cells less).
    bool normalises() const { return m_aggregate && !m_worstOfValues; }
    // The layout rows a pixel reads (normalises(): normaliseRow them first).
    int firstCellRow() const { return m_firstCellRow; }
    int endCellRow() const { return m_endCellRow; }
    void normaliseRow(int cellRow) const;
    // The columns [first, end) that a cell or the ring reaches: the others are background in every row.
    int activeFirst() const { return m_activeFirst; }
    int activeEnd() const { return m_activeEnd; }
    // Columns [begin, end) of row y of the framebuffer (from the bottom): pixel codes into pixels (rows from the
    // bottom), fixed colours into image (rows from the top), sources below a pixel per cell, generals
    // appended; [*first, *last] the pixels whose colour moves with the morph (last < first: none).
    void row(int y, int begin, int end, uint32_t *pixels, uint32_t *image, CpuCell *pixelSources,
        std::vector<CpuGeneral> &generals, int *first, int *last) const;
    // Row y (from the bottom) is background from edge to edge: no cell or ring reaches it.
    bool isBackgroundRow(int y) const;
    // The layout row whose cells row y's pixels show (a pixel per GPU or more), -1 for none.
    int cellRowOf(int y) const;
    // The colour a fixed pixel of this colour transform gets (b alone, through pass 3's 10 bits).
    static uint32_t fixedColour(const std::array<float, 3> &b);

private:
    struct Transform;
    // The GPUs under one pixel below a pixel per GPU, cells [firstX, lastX] x [firstY, lastY] (at most 4 x 4): their
    // flags OR-ed, how many have a value, and the worst or mean of those in both frames, back as values (pass 3
    // normalises them as a cell's).
    struct Footprint
    {
        uint32_t any = 0;
        int values = 0;
        CpuCell reduced { 0, 0, 0 };
    };
    Footprint reduce(int firstX, int lastX, int firstY, int lastY) const;
    void shade(int x, int y, Transform &t, int64_t &source, CpuCell *pixelSources) const;
    uint32_t emit(const Transform &t, int64_t source, std::vector<CpuGeneral> &generals, uint32_t *image) const;

    const std::vector<CpuCell> &m_resolved;
    std::vector<std::array<float, 2>> *m_normalised;
    int m_resolvedWidth; // m_resolved's row length
    int m_layoutWidth;
    int m_layoutHeight;
    int m_width;
    int m_height;
    bool m_aggregate;
    int m_firstCellRow = 0;
    int m_endCellRow = 0;
    // The shader's uniforms, in single precision.
    float m_originX, m_originY, m_cellSize, m_rangeMin, m_rangeMax;
    bool m_mean, m_stale;
    bool m_worstOfValues; // reduce() takes the worst of the cells' values, then maps it (see normalises())
    float m_ringX, m_ringY, m_ringRadius;
    // Per column: its cell (-1 outside the layout), p.x, the aggregate footprint, and which per-pixel effects may
    // apply there (bits: 1 edge, 2 stale dot, 4 ring).
    std::vector<int> m_cellX;
    std::vector<float> m_p;
    std::vector<int> m_firstX;
    std::vector<int> m_lastX;
    std::vector<uint8_t> m_effects;
    int m_activeFirst = std::numeric_limits<int>::max();
    int m_activeEnd = 0;
    uint32_t m_background, m_aisle;
    std::array<uint32_t, 2> m_hatch {}; // by the hatching's parity
    std::array<uint32_t, 2> m_hatchEdge {}; // on a cell's edge
    float m_edgeScale = 1; // a on a cell's edge
};

} // namespace fleetscope
