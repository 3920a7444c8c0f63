// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapcpuscreen.h"

#include "widgets/heatmap/colormap.h"

#include <QImage>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetscope {

namespace {
// The colours HeatmapRenderer gives pass 2 as uniforms.
constexpr QRgb backgroundColour = 0xff15171c;
constexpr QRgb aisleColour = 0xff22252c;

using Rgb = std::array<float, 3>;

Rgb rgbOf(QRgb c)
{
    return { static_cast<float>(qRed(c)) / 255.0F, static_cast<float>(qGreen(c)) / 255.0F,
        static_cast<float>(qBlue(c)) / 255.0F };
}

const Rgb white { 1.0F, 1.0F, 1.0F };
const Rgb black { 0.0F, 0.0F, 0.0F };

// Per-pixel effects a column or row may have (HeatmapCpuScreen::m_effects).
constexpr uint8_t edgeEffect = 1;
constexpr uint8_t dotEffect = 2;
constexpr uint8_t ringEffect = 4;
} // namespace

// heatmapscreen.frag's colour transform c -> c * a + b and its steps.
struct HeatmapCpuScreen::Transform
{
    float a = 0;
    Rgb b {};

    void setColour(const Rgb &colour)
    {
        a = 0.0F;
        b = colour;
    }
    void scale(float k)
    {
        a *= k;
        for (float &c : b) {
            c *= k;
        }
    }
    void towardsWhite(float f)
    {
        a *= 1.0F - f;
        for (float &c : b) {
            c = c * (1.0F - f) + f;
        }
    }
    void towards(const Rgb &colour, float f)
    {
        a *= 1.0F - f;
        for (size_t k = 0; k < 3; ++k) {
            b[k] = b[k] * (1.0F - f) + colour[k] * f;
        }
    }
    // Diagonal hatching for GPUs without a value: mod(floor((pixel.x + pixel.y) / 3.0), 2.0) >= 1.0 with pixel =
    // (x, yTop) + 0.5, whole numbers, so exact in integers.
    void hatch(int x, int yTop)
    {
        setColour(rgbOf(noDataColour));
        if (((x + yTop + 1) / 3) % 2 == 1) {
            scale(0.55F);
        }
    }
};

HeatmapCpuScreen::Footprint HeatmapCpuScreen::reduce(int firstX, int lastX, int firstY, int lastY) const
{
    Footprint under;
    const float span = m_rangeMax - m_rangeMin;
    if (m_worstOfValues) {
        // The worst value, then mapped: equal to the worst of the values mapped (normalises()).
        float worst = -std::numeric_limits<float>::infinity();
        float worstBefore = worst;
        for (int cy = firstY; cy <= lastY; ++cy) {
            const CpuCell *row = m_resolved.data() + static_cast<size_t>(cy) * static_cast<size_t>(m_resolvedWidth);
            for (int c = firstX; c <= lastX; ++c) {
                const CpuCell &cell = row[c];
                under.any |= cell.flags;
                if ((cell.flags & 3U) == 2U) {
                    worst = std::max(worst, cell.value);
                    worstBefore = std::max(worstBefore, cell.before);
                    ++under.values;
                }
            }
        }
        if (under.values > 0) {
            const float tc = std::clamp((worst - m_rangeMin) / span, 0.0F, 1.0F);
            const float tb = std::clamp((worstBefore - m_rangeMin) / span, 0.0F, 1.0F);
            under.reduced = { m_rangeMin + tc * span, m_rangeMin + tb * span, 2U };
        }
        return under;
    }
    float worst = 0;
    float worstBefore = 0;
    float sum = 0;
    float sumBefore = 0;
    for (int cy = firstY; cy <= lastY; ++cy) {
        const size_t start = static_cast<size_t>(cy) * static_cast<size_t>(m_resolvedWidth);
        for (int c = firstX; c <= lastX; ++c) {
            const uint32_t flags = m_resolved[start + static_cast<size_t>(c)].flags;
            under.any |= flags;
            if ((flags & 3U) == 2U) {
                const auto &n = (*m_normalised)[start + static_cast<size_t>(c)];
                worst = std::max(worst, n[0]);
                worstBefore = std::max(worstBefore, n[1]);
                sum += n[0];
                sumBefore += n[1];
                ++under.values;
            }
        }
    }
    if (under.values > 0) {
        // Back to values, so that pass 3 normalises both cases alike.
        const float tc = m_mean ? sum / static_cast<float>(under.values) : worst;
        const float tb = m_mean ? sumBefore / static_cast<float>(under.values) : worstBefore;
        under.reduced = { m_rangeMin + tc * span, m_rangeMin + tb * span, 2U };
    }
    return under;
}

uint32_t HeatmapCpuScreen::fixedColour(const std::array<float, 3> &b)
{
    std::array<uint32_t, 3> rgb {};
    for (size_t k = 0; k < 3; ++k) {
        const auto bits = static_cast<uint32_t>(std::clamp(b[k], 0.0F, 1.0F) * 1023.0F + 0.5F);
        rgb[k] = cpuUnorm8(static_cast<float>(bits) / 1023.0F);
    }
    return cpuPack(rgb[0], rgb[1], rgb[2]);
}

HeatmapCpuScreen::HeatmapCpuScreen(const HeatmapScene &scene, const std::vector<CpuCell> &resolved, int layoutWidth,
    int layoutHeight, std::vector<std::array<float, 2>> *normalised)
    : m_resolved(resolved)
    , m_normalised(normalised)
    , m_resolvedWidth(layoutWidth)
    , m_layoutWidth(std::min(scene.layoutSize.width(), layoutWidth))
    , m_layoutHeight(std::min(scene.layoutSize.height(), layoutHeight))
    , m_width(std::max(1, scene.framebuffer.width()))
    , m_height(std::max(1, scene.framebuffer.height()))
    , m_aggregate(scene.cellSize < 1.0)
    , m_originX(static_cast<float>(scene.originX))
    , m_originY(static_cast<float>(scene.originY))
    , m_cellSize(static_cast<float>(scene.cellSize))
    , m_rangeMin(scene.rangeMin)
    , m_rangeMax(scene.rangeMax)
    , m_mean(!scene.worst)
    , m_stale(scene.stale)
    , m_worstOfValues(
          scene.worst && scene.rangeMax - scene.rangeMin > 0.0F && std::isfinite(scene.rangeMax - scene.rangeMin))
    , m_ringX(static_cast<float>(scene.ringCentre.x()))
    , m_ringY(static_cast<float>(scene.ringCentre.y()))
    , m_ringRadius(scene.ringRadius)
    , m_background(fixedColour(rgbOf(backgroundColour)))
    , m_aisle(fixedColour(rgbOf(aisleColour)))
{
    for (int parity = 0; parity < 2; ++parity) {
        Transform t;
        t.hatch(parity == 1 ? 2 : 0, 0);
        m_hatch[static_cast<size_t>(parity)] = fixedColour(t.b);
        t.scale(0.7F);
        m_hatchEdge[static_cast<size_t>(parity)] = fixedColour(t.b);
    }
    Transform edge;
    edge.a = 1.0F;
    edge.scale(0.7F);
    m_edgeScale = edge.a;
    const auto n = static_cast<size_t>(m_width);
    m_cellX.resize(n);
    m_p.resize(n);
    m_firstX.resize(n);
    m_lastX.resize(n);
    m_effects.resize(n);
    const float reach = 1.0F / m_cellSize;
    for (int x = 0; x < m_width; ++x) {
        const auto i = static_cast<size_t>(x);
        // The shader's p = (pixel - uOrigin) / uCellSize and cell = floor(p), column by column.
        const float p = ((static_cast<float>(x) + 0.5F) - m_originX) / m_cellSize;
        const float cell = std::floor(p);
        const bool inside = p >= 0.0F && cell < static_cast<float>(m_layoutWidth);
        m_p[i] = p;
        m_cellX[i] = inside ? static_cast<int>(cell) : -1;
        if (inside && m_aggregate) {
            const float edge = (static_cast<float>(x) - m_originX) / m_cellSize;
            m_firstX[i] = std::max(static_cast<int>(std::floor(edge)), 0);
            m_lastX[i]
                = std::min(static_cast<int>(std::ceil(edge + reach)) - 1, std::min(m_firstX[i] + 3, m_layoutWidth - 1));
        }
        uint8_t effects = 0;
        if (inside && !m_aggregate && m_cellSize >= 6.0F && (p - cell) * m_cellSize < 1.0F) {
            effects |= edgeEffect;
        }
        if (m_stale && x % 6 < 2) {
            effects |= dotEffect;
        }
        if (m_ringRadius > 0.0F && std::abs(static_cast<float>(x) + 0.5F - m_ringX) < m_ringRadius + 4.0F) {
            effects |= ringEffect;
        }
        m_effects[i] = effects;
        if (inside || (effects & ringEffect) != 0) {
            m_activeFirst = std::min(m_activeFirst, x);
            m_activeEnd = x + 1;
        }
    }
    if (m_activeEnd == 0) {
        m_activeFirst = 0;
    }
    // The layout rows the framebuffer's pixels read, a row either side for the aggregate footprint.
    const float top = std::floor(std::clamp((0.0F - m_originY) / m_cellSize, -2.0F, 1e9F)) - 1.0F;
    const float bottom
        = std::ceil(std::clamp((static_cast<float>(m_height) - m_originY) / m_cellSize, -2.0F, 1e9F)) + 1.0F;
    m_firstCellRow = std::clamp(static_cast<int>(top), 0, m_layoutHeight);
    m_endCellRow = std::clamp(static_cast<int>(bottom) + 1, m_firstCellRow, m_layoutHeight);
}

void HeatmapCpuScreen::normaliseRow(int cellRow) const
{
    const float span = m_rangeMax - m_rangeMin;
    const size_t start = static_cast<size_t>(cellRow) * static_cast<size_t>(m_resolvedWidth);
    for (int x = 0; x < m_layoutWidth; ++x) {
        const CpuCell &c = m_resolved[start + static_cast<size_t>(x)];
        if ((c.flags & 3U) == 2U) {
            (*m_normalised)[start + static_cast<size_t>(x)] = { std::clamp((c.value - m_rangeMin) / span, 0.0F, 1.0F),
                std::clamp((c.before - m_rangeMin) / span, 0.0F, 1.0F) };
        }
    }
}

void HeatmapCpuScreen::shade(int x, int y, Transform &t, int64_t &source, CpuCell *pixelSources) const
{
    const int yTop = m_height - 1 - y;
    const float pixelX = static_cast<float>(x) + 0.5F;
    const float pixelY = static_cast<float>(m_height) - (static_cast<float>(y) + 0.5F);
    const float px = m_p[static_cast<size_t>(x)];
    const float py = (pixelY - m_originY) / m_cellSize;
    const float cellX = std::floor(px);
    const float cellY = std::floor(py);
    const bool stale = m_stale && x % 6 < 2 && yTop % 6 < 2;
    t.setColour(rgbOf(backgroundColour));
    source = -1;
    if (px >= 0.0F && py >= 0.0F && cellX < static_cast<float>(m_layoutWidth)
        && cellY < static_cast<float>(m_layoutHeight)) {
        if (m_aggregate) {
            // Several GPUs share this pixel: the worst (highest) or the mean of those with a value, at most 4 x 4
            // cells; the two frames reduced alike.
            const float edgeY = (static_cast<float>(yTop) - m_originY) / m_cellSize;
            const int firstX = m_firstX[static_cast<size_t>(x)];
            const int lastX = m_lastX[static_cast<size_t>(x)];
            const int firstY = std::max(static_cast<int>(std::floor(edgeY)), 0);
            const int lastY = std::min(
                static_cast<int>(std::ceil(edgeY + 1.0F / m_cellSize)) - 1, std::min(firstY + 3, m_layoutHeight - 1));
            const Footprint under = reduce(firstX, lastX, firstY, lastY);
            if ((under.any & 3U) == 0) {
                t.setColour(rgbOf(aisleColour));
            } else {
                if (under.values == 0) {
                    t.hatch(x, yTop);
                } else {
                    const size_t i = static_cast<size_t>(y) * static_cast<size_t>(m_width) + static_cast<size_t>(x);
                    pixelSources[i] = under.reduced;
                    source = static_cast<int64_t>(i);
                    t.a = 1.0F;
                    t.b = black;
                }
                if (stale) {
                    t.towardsWhite(0.65F);
                }
            }
            if ((under.any & 4U) != 0) {
                t.towardsWhite(0.6F);
            } else if ((under.any & 16U) != 0) {
                t.towards(rgbOf(domainColour), 0.5F);
            }
            const size_t first
                = static_cast<size_t>(firstY) * static_cast<size_t>(m_resolvedWidth) + static_cast<size_t>(firstX);
            if ((m_resolved[first].flags & 8U) != 0) {
                t.scale(0.35F);
            }
        } else {
            const size_t index
                = static_cast<size_t>(cellY) * static_cast<size_t>(m_resolvedWidth) + static_cast<size_t>(cellX);
            const CpuCell &c = m_resolved[index];
            const uint32_t kind = c.flags & 3U;
            if (kind == 0U) {
                t.setColour(rgbOf(aisleColour));
            } else {
                if (kind == 1U) {
                    t.hatch(x, yTop);
                } else {
                    source = static_cast<int64_t>(index);
                    t.a = 1.0F;
                    t.b = black;
                }
                const float withinX = (px - cellX) * m_cellSize;
                const float withinY = (py - cellY) * m_cellSize;
                // From a few pixels per GPU on, a thin darker edge separates the cells.
                if (m_cellSize >= 6.0F && (withinX < 1.0F || withinY < 1.0F)) {
                    t.scale(0.7F);
                }
                if (stale) {
                    t.towardsWhite(0.65F);
                }
                if ((c.flags & 8U) != 0) {
                    t.scale(0.35F);
                }
                // Outlined GPUs: a white frame inside the cell, or the whole cell lightened when too small for one.
                if ((c.flags & 4U) != 0) {
                    const float frame = std::max(1.0F, std::floor(m_cellSize / 8.0F));
                    if (m_cellSize < 4.0F) {
                        t.towardsWhite(0.6F);
                    } else if (withinX < frame || withinY < frame || withinX >= m_cellSize - frame
                        || withinY >= m_cellSize - frame) {
                        t.setColour(white);
                    }
                } else if ((c.flags & 16U) != 0) {
                    // The rest of the domain highlighted: the same frame in its colour, or the cell tinted with it.
                    const float frame = std::max(1.0F, std::floor(m_cellSize / 8.0F));
                    if (m_cellSize < 4.0F) {
                        t.towards(rgbOf(domainColour), 0.5F);
                    } else if (withinX < frame || withinY < frame || withinX >= m_cellSize - frame
                        || withinY >= m_cellSize - frame) {
                        t.setColour(rgbOf(domainColour));
                    }
                }
            }
        }
    }
    // The selected GPU's ring, white with a dark outline.
    if (m_ringRadius > 0.0F) {
        const float dx = pixelX - m_ringX;
        const float dy = pixelY - m_ringY;
        const float d = std::sqrt(dx * dx + dy * dy);
        if (d >= m_ringRadius && d < m_ringRadius + 2.0F) {
            t.setColour(white);
        } else if (d >= m_ringRadius + 2.0F && d < m_ringRadius + 3.0F) {
            t.setColour(black);
        }
    }
    // (The shader's last step, the text over everything, is HeatmapView's: QPainter draws it over the image.)
}

uint32_t HeatmapCpuScreen::emit(
    const Transform &t, int64_t source, std::vector<CpuGeneral> &generals, uint32_t *image) const
{
    // Pass 2 hands b to pass 3 as 10 bits a channel.
    std::array<uint32_t, 3> bits {};
    Rgb b {};
    for (size_t k = 0; k < 3; ++k) {
        bits[k] = static_cast<uint32_t>(std::clamp(t.b[k], 0.0F, 1.0F) * 1023.0F + 0.5F);
        b[k] = static_cast<float>(bits[k]) / 1023.0F;
    }
    if (source >= 0 && t.a == 1.0F && bits[0] == 0 && bits[1] == 0 && bits[2] == 0) {
        return static_cast<uint32_t>(source);
    }
    if (source < 0 || t.a == 0.0F) {
        *image = cpuPack(cpuUnorm8(b[0]), cpuUnorm8(b[1]), cpuUnorm8(b[2]));
        return notPlain;
    }
    generals.push_back({ static_cast<uint32_t>(source), t.a, b });
    return notPlain | general | static_cast<uint32_t>(generals.size() - 1);
}

bool HeatmapCpuScreen::isBackgroundRow(int y) const
{
    // row()'s first test, alone.
    const float pixelY = static_cast<float>(m_height) - (static_cast<float>(y) + 0.5F);
    const float py = (pixelY - m_originY) / m_cellSize;
    const bool inside = py >= 0.0F && std::floor(py) < static_cast<float>(m_layoutHeight);
    const bool ring = m_ringRadius > 0.0F && std::abs(pixelY - m_ringY) < m_ringRadius + 4.0F;
    return !inside && !ring;
}

int HeatmapCpuScreen::cellRowOf(int y) const
{
    // row()'s cell row, alone.
    const float pixelY = static_cast<float>(m_height) - (static_cast<float>(y) + 0.5F);
    const float py = (pixelY - m_originY) / m_cellSize;
    const float cellY = std::floor(py);
    return py >= 0.0F && cellY < static_cast<float>(m_layoutHeight) ? static_cast<int>(cellY) : -1;
}

void HeatmapCpuScreen::row(int y, int begin, int end, uint32_t *pixels, uint32_t *image, CpuCell *pixelSources,
    std::vector<CpuGeneral> &generals, int *first, int *last) const
{
    const int yTop = m_height - 1 - y;
    const float pixelY = static_cast<float>(m_height) - (static_cast<float>(y) + 0.5F);
    const float py = (pixelY - m_originY) / m_cellSize;
    const float cellY = std::floor(py);
    const bool inside = py >= 0.0F && cellY < static_cast<float>(m_layoutHeight);
    uint8_t rowEffects = edgeEffect;
    if (m_stale && yTop % 6 < 2) {
        rowEffects |= dotEffect;
    }
    if (m_ringRadius > 0.0F && std::abs(pixelY - m_ringY) < m_ringRadius + 4.0F) {
        rowEffects |= ringEffect;
    }
    const bool rowEdge = inside && !m_aggregate && m_cellSize >= 6.0F && (py - cellY) * m_cellSize < 1.0F;
    const size_t rowStart = static_cast<size_t>(y) * static_cast<size_t>(m_width);
    uint32_t *pix = pixels + rowStart;
    uint32_t *img = image + static_cast<size_t>(yTop) * static_cast<size_t>(m_width);
    const int xBegin = std::clamp(begin, 0, m_width);
    const int xEnd = std::clamp(end, xBegin, m_width);
    *first = m_width;
    *last = -1;
    const auto moving = [first, last](int x) {
        *first = std::min(*first, x);
        *last = x;
    };
    if (!inside && (rowEffects & ringEffect) == 0) {
        std::fill(pix + xBegin, pix + xEnd, notPlain);
        std::fill(img + xBegin, img + xEnd, m_background);
        return;
    }
    const int cellRow = inside ? static_cast<int>(cellY) : 0;
    const CpuCell *cells = m_resolved.data() + static_cast<size_t>(cellRow) * static_cast<size_t>(m_resolvedWidth);
    int firstY = 0;
    int lastY = -1;
    if (m_aggregate && inside) {
        const float edgeY = (static_cast<float>(yTop) - m_originY) / m_cellSize;
        firstY = std::max(static_cast<int>(std::floor(edgeY)), 0);
        lastY = std::min(
            static_cast<int>(std::ceil(edgeY + 1.0F / m_cellSize)) - 1, std::min(firstY + 3, m_layoutHeight - 1));
    }
    for (int x = xBegin; x < xEnd; ++x) {
        const auto i = static_cast<size_t>(x);
        const int cx = inside ? m_cellX[i] : -1;
        const uint8_t effects = m_effects[i] & rowEffects;
        const bool special = rowEdge || effects != 0;
        if (cx < 0 && (effects & ringEffect) == 0) {
            pix[x] = notPlain;
            img[x] = m_background;
            continue;
        }
        const bool edge = rowEdge || (effects & edgeEffect) != 0;
        if (cx >= 0 && (effects & ~edgeEffect) == 0 && !m_aggregate) {
            // Only the cell and its edge decide: the cell's colour, scaled by 0.7 on the edge.
            const uint32_t flags = cells[cx].flags;
            if ((flags & 28U) == 0) {
                const uint32_t kind = flags & 3U;
                const auto index = static_cast<uint32_t>(
                    static_cast<size_t>(cellRow) * static_cast<size_t>(m_resolvedWidth) + static_cast<size_t>(cx));
                if (kind == 2U && !edge) {
                    pix[x] = index;
                    moving(x);
                } else if (kind == 2U) {
                    pix[x] = notPlain | general | static_cast<uint32_t>(generals.size());
                    generals.push_back({ index, m_edgeScale, black });
                    moving(x);
                } else {
                    const auto parity = static_cast<size_t>(((x + yTop + 1) / 3) % 2);
                    pix[x] = notPlain;
                    img[x] = kind == 0U ? m_aisle : (edge ? m_hatchEdge[parity] : m_hatch[parity]);
                }
                continue;
            }
        } else if (cx >= 0 && !special) {
            // shade()'s aggregate branch, for the pixels nothing else decides.
            const int firstX = m_firstX[i];
            const Footprint under = reduce(firstX, m_lastX[i], firstY, lastY);
            const size_t corner
                = static_cast<size_t>(firstY) * static_cast<size_t>(m_resolvedWidth) + static_cast<size_t>(firstX);
            if ((under.any & 20U) == 0 && (m_resolved[corner].flags & 8U) == 0) {
                if (under.values > 0) {
                    pixelSources[rowStart + i] = under.reduced;
                    pix[x] = static_cast<uint32_t>(rowStart + i);
                    moving(x);
                } else {
                    pix[x] = notPlain;
                    img[x] = (under.any & 3U) == 0 ? m_aisle : m_hatch[static_cast<size_t>(((x + yTop + 1) / 3) % 2)];
                }
                continue;
            }
        }
        Transform t;
        int64_t source = -1;
        shade(x, y, t, source, pixelSources);
        pix[x] = emit(t, source, generals, img + x);
        if ((pix[x] & notPlain) == 0 || (pix[x] & general) != 0) {
            moving(x);
        }
    }
}

} // namespace fleetscope
