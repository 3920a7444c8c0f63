// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapcpupasses.h"

#include "jobs/background.h"

#include <QImage>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <utility>

namespace fleetscope {

namespace {
constexpr uint32_t notPlain = HeatmapCpuScreen::notPlain;
constexpr uint32_t general = HeatmapCpuScreen::general;
} // namespace

HeatmapCpuPasses::HeatmapCpuPasses() = default;

HeatmapCpuPasses::~HeatmapCpuPasses() = default;

void HeatmapCpuPasses::parallel(int count, const std::function<void(int)> &fn)
{
    // The GUI thread works too, with one helper fewer than cores; the preparation's thread with its own, lowered.
    (runsInBackground() ? m_backgroundPool : m_pool).run(count, fn);
}

int HeatmapCpuPasses::chunkRows(int chunk, int *end) const
{
    const int rows = m_framebuffer.height();
    *end = static_cast<int>(static_cast<int64_t>(chunk + 1) * rows / m_chunks);
    return static_cast<int>(static_cast<int64_t>(chunk) * rows / m_chunks);
}

void HeatmapCpuPasses::allocate(size_t gpuCount)
{
    m_gpuCount = gpuCount;
    for (auto &v : m_values) {
        v.assign(gpuCount, 0.0F);
    }
    m_health.assign(gpuCount, 0);
    m_marks.assign(gpuCount, 0);
}

void HeatmapCpuPasses::setLayout(std::vector<int32_t> cells, int width, int height)
{
    m_layoutWidth = std::max(1, width);
    m_layoutHeight = std::max(1, height);
    m_cells = std::move(cells);
    m_cells.resize(static_cast<size_t>(m_layoutWidth) * static_cast<size_t>(m_layoutHeight), HeatmapLayout::gap);
    m_resolved.assign(m_cells.size(), CpuCell { 0, 0, 0 });
    m_normalised.clear();
}

void HeatmapCpuPasses::setFrame(const std::vector<float> &values, const std::vector<uint8_t> &health, bool shift)
{
    if (shift) {
        m_current = 1 - m_current;
    }
    auto &current = m_values[static_cast<size_t>(m_current)];
    std::copy_n(values.begin(), std::min(values.size(), current.size()), current.begin());
    std::copy_n(health.begin(), std::min({ health.size(), values.size(), m_health.size() }), m_health.begin());
}

void HeatmapCpuPasses::setMarks(const std::vector<uint8_t> &marks)
{
    std::copy_n(marks.begin(), std::min(marks.size(), m_marks.size()), m_marks.begin());
}

void HeatmapCpuPasses::setColorMap(const ColorMap &map)
{
    for (int i = 0; i < ColorMap::size; ++i) {
        const QRgb c = map.at(i);
        m_table[static_cast<size_t>(i)] = cpuPack(
            static_cast<uint32_t>(qRed(c)), static_cast<uint32_t>(qGreen(c)), static_cast<uint32_t>(qBlue(c)));
    }
}

bool HeatmapCpuPasses::resolve(const HeatmapScene &scene, const QRect &cells)
{
    const QRect rect = cells & QRect(0, 0, m_layoutWidth, m_layoutHeight);
    if (rect.isEmpty()) {
        return false;
    }
    const std::vector<float> &data = m_values[static_cast<size_t>(m_current)];
    const std::vector<float> &previous = m_values[static_cast<size_t>(1 - m_current)];
    const int64_t focusFirst = scene.focusFirst;
    const int64_t focusEnd = focusFirst + scene.focusCount;
    const int chunks = std::min(rect.height(), 64);
    std::atomic<bool> flagsChanged { false };
    m_changedRows.assign(static_cast<size_t>(m_layoutHeight), 0);
    parallel(chunks, [&](int chunk) {
        const int top = rect.top() + static_cast<int>(static_cast<int64_t>(chunk) * rect.height() / chunks);
        const int bottom = rect.top() + static_cast<int>(static_cast<int64_t>(chunk + 1) * rect.height() / chunks);
        for (int y = top; y < bottom; ++y) {
            uint32_t changed = 0;
            const size_t row = static_cast<size_t>(y) * static_cast<size_t>(m_layoutWidth);
            for (int x = rect.left(); x <= rect.right(); ++x) {
                const int32_t gpu = m_cells[row + static_cast<size_t>(x)];
                CpuCell &out = m_resolved[row + static_cast<size_t>(x)];
                if (gpu < 0 || static_cast<size_t>(gpu) >= m_gpuCount) {
                    changed |= out.flags;
                    out = { 0, 0, 0 };
                    continue;
                }
                const auto g = static_cast<size_t>(gpu);
                uint32_t flags = 0;
                if (scene.hasMarks) {
                    flags |= (m_marks[g] & 1U) != 0 ? 4U : 0U;
                    flags |= (m_marks[g] & 2U) != 0 ? 16U : 0U;
                }
                if (scene.focusCount > 0 && (gpu < focusFirst || gpu >= focusEnd)) {
                    flags |= 8U;
                }
                const float value = data[g];
                float before = value;
                if (scene.hasPrevious) {
                    const float p = previous[g];
                    if (!std::isnan(p) && !std::isnan(value)) {
                        before = p;
                    }
                }
                const uint32_t state = m_health[g] & 7U;
                const bool hasValue = scene.hasData && !std::isnan(value) && state != 3U && state != 4U;
                flags |= hasValue ? 2U : 1U;
                changed |= out.flags ^ flags;
                out = { hasValue ? value : 0.0F, hasValue ? before : 0.0F, flags };
            }
            if (changed != 0) {
                m_changedRows[static_cast<size_t>(y)] = 1;
                flagsChanged = true;
            }
        }
    });
    return flagsChanged;
}

void HeatmapCpuPasses::screen(const HeatmapScene &scene, bool changedRowsOnly)
{
    const int width = std::max(1, scene.framebuffer.width());
    const int height = std::max(1, scene.framebuffer.height());
    const size_t pixels = static_cast<size_t>(width) * static_cast<size_t>(height);
    // Again only where pass 1 changed a cell's kind or flags: what else pass 2 reads is as it was (the caller
    // knows), and below a pixel per GPU it reads values too.
    const bool partial = changedRowsOnly && m_framebuffer == QSize(width, height) && scene.cellSize >= 1.0
        && m_changedRows.size() == static_cast<size_t>(m_layoutHeight);
    // Columns no cell or ring reached last time nor reaches now are background already: not written again.
    const bool sameSize = m_framebuffer == QSize(width, height);
    if (m_framebuffer != QSize(width, height)) {
        m_framebuffer = QSize(width, height);
        m_pixels.assign(pixels, 0);
        m_out.assign(pixels, 0);
        m_pixelSources.clear();
        m_chunks = std::min(height, 64);
        m_general.assign(static_cast<size_t>(m_chunks), {});
        m_backgroundRows.assign(static_cast<size_t>(height), 0); // none known to be background yet
    }
    const HeatmapCpuScreen pass(scene, m_resolved, m_layoutWidth, m_layoutHeight, &m_normalised);
    m_sourcesArePixels = pass.aggregate();
    if (pass.aggregate()) {
        m_pixelSources.resize(pixels, CpuCell { 0, 0, 0 });
    }
    if (pass.normalises()) {
        m_normalised.resize(m_resolved.size());
        const int first = pass.firstCellRow();
        const int rows = pass.endCellRow() - first;
        const int chunks = std::min(rows, 64);
        parallel(chunks, [&](int chunk) {
            const int end = first + static_cast<int>(static_cast<int64_t>(chunk + 1) * rows / chunks);
            for (int y = first + static_cast<int>(static_cast<int64_t>(chunk) * rows / chunks); y < end; ++y) {
                pass.normaliseRow(y);
            }
        });
    }
    const int columnsBegin = sameSize ? std::min(m_activeColumns.first, pass.activeFirst()) : 0;
    const int columnsEnd = sameSize ? std::max(m_activeColumns.second, pass.activeEnd()) : width;
    m_activeColumns = { pass.activeFirst(), pass.activeEnd() };
    std::vector<QRect> changing(static_cast<size_t>(m_chunks));
    // Cells several pixels wide: pass 3 goes by runs of a row's pixels that take one cell's colour.
    m_runs.resize(static_cast<size_t>(m_chunks));
    m_useRuns = !pass.aggregate() && scene.cellSize >= 4.0;
    if (!partial) {
        m_generalsAfterFull.assign(static_cast<size_t>(m_chunks), 0);
    }
    parallel(m_chunks, [&](int chunk) {
        auto &generals = m_general[static_cast<size_t>(chunk)];
        auto &runs = m_runs[static_cast<size_t>(chunk)];
        // A partial pass appends the redone rows' generals (the others keep their indices); past four times what
        // a whole pass left, the chunk is done whole again.
        const bool chunkPartial
            = partial && generals.size() <= 4 * m_generalsAfterFull[static_cast<size_t>(chunk)] + 64;
        if (!chunkPartial) {
            generals.clear();
        }
        QRect moving;
        bool redone = false;
        int end = 0;
        for (int y = chunkRows(chunk, &end); y < end; ++y) {
            if (chunkPartial) {
                const int cellRow = pass.cellRowOf(y);
                if (cellRow < 0 || m_changedRows[static_cast<size_t>(cellRow)] == 0) {
                    continue; // as it was
                }
            }
            // A row that was background and stays so is left as it is (most of the screen, zoomed out on a
            // big one); it has no general pixels.
            const bool background = pass.isBackgroundRow(y);
            uint8_t &was = m_backgroundRows[static_cast<size_t>(y)];
            if (background && was != 0) {
                continue;
            }
            was = background ? 1 : 0;
            int first = 0;
            int last = 0;
            pass.row(y, columnsBegin, columnsEnd, m_pixels.data(), m_out.data(), m_pixelSources.data(), generals,
                &first, &last);
            redone = true;
            if (last >= first) {
                moving |= QRect(first, y, last - first + 1, 1);
            }
        }
        if (!chunkPartial) {
            m_generalsAfterFull[static_cast<size_t>(chunk)] = generals.size();
        }
        changing[static_cast<size_t>(chunk)] = moving;
        if (m_useRuns && (redone || !chunkPartial)) {
            runs.clear();
            const QRect span = chunkPartial ? (moving | m_changing) : moving;
            const int top = std::max(chunkRows(chunk, &end), span.top());
            for (int y = top; y < std::min(end, span.bottom() + 1); ++y) {
                addRuns(y, span.left(), span.right(), runs);
            }
        }
    });
    if (!partial) {
        m_changing = QRect();
    }
    for (const QRect &r : changing) {
        m_changing |= r;
    }
    // The cells whose colour a pixel may take: those on screen.
    m_sourceCells = QRect();
    if (!pass.aggregate()) {
        const float cell = static_cast<float>(scene.cellSize);
        const auto cellOf = [cell](float pixel, double origin) {
            return static_cast<int>(std::floor(std::clamp((pixel - static_cast<float>(origin)) / cell, -2.0F, 1e9F)));
        };
        m_sourceCells = QRect(QPoint(cellOf(0.0F, scene.originX), cellOf(0.0F, scene.originY)),
                            QPoint(cellOf(static_cast<float>(width), scene.originX),
                                cellOf(static_cast<float>(height), scene.originY)))
            & QRect(0, 0, m_layoutWidth, m_layoutHeight);
        m_colours.resize(m_resolved.size());
    }
    m_screened = true;
}

void HeatmapCpuPasses::addRuns(int y, int first, int last, std::vector<Run> &runs) const
{
    const uint32_t *codes = m_pixels.data() + static_cast<size_t>(y) * static_cast<size_t>(m_framebuffer.width());
    const auto row = static_cast<uint32_t>(y);
    for (int x = first; x <= last;) {
        const uint32_t code = codes[x];
        int end = x + 1;
        if ((code & notPlain) == 0) {
            while (end <= last && codes[end] == code) {
                ++end;
            }
        } else if ((code & general) == 0) {
            x = end; // a fixed colour, already in the image
            continue;
        }
        runs.push_back({ row, static_cast<uint32_t>(x), static_cast<uint32_t>(end - x), code });
        x = end;
    }
}

uint32_t HeatmapCpuPasses::colourOf(const CpuCell &source, float mix, float rangeMin, float rangeMax) const
{
    // heatmap.frag: mix(before, value, uMix), normalised, clamped, ColorMap::indexFor's rounding.
    const float value = source.before * (1.0F - mix) + source.value * mix;
    float t = (value - rangeMin) / (rangeMax - rangeMin);
    t = t > 0.0F ? (t < 1.0F ? t : 1.0F) : 0.0F;
    return m_table[static_cast<size_t>(std::floor(t * 255.0F + 0.5F))];
}

const std::vector<uint32_t> &HeatmapCpuPasses::compose(const HeatmapScene &scene, int *firstRow, int *endRow)
{
    const float mix = scene.hasPrevious ? scene.mix : 1.0F;
    const float lo = scene.rangeMin;
    const float hi = scene.rangeMax;
    if (!m_sourcesArePixels && !m_sourceCells.isEmpty()) {
        const QRect cells = m_sourceCells;
        const int chunks = std::min(cells.height(), 64);
        parallel(chunks, [&](int chunk) {
            const int top = cells.top() + static_cast<int>(static_cast<int64_t>(chunk) * cells.height() / chunks);
            const int bottom
                = cells.top() + static_cast<int>(static_cast<int64_t>(chunk + 1) * cells.height() / chunks);
            for (int y = top; y < bottom; ++y) {
                const size_t row = static_cast<size_t>(y) * static_cast<size_t>(m_layoutWidth);
                for (int x = cells.left(); x <= cells.right(); ++x) {
                    m_colours[row + static_cast<size_t>(x)]
                        = colourOf(m_resolved[row + static_cast<size_t>(x)], mix, lo, hi);
                }
            }
        });
    }
    const QRect changing = m_changing;
    const int width = m_framebuffer.width();
    const int height = m_framebuffer.height();
    const auto generalColour = [&](const CpuGeneral &g) {
        const uint32_t c = m_sourcesArePixels ? colourOf(m_pixelSources[g.source], mix, lo, hi) : m_colours[g.source];
        std::array<uint32_t, 3> rgb {};
        for (size_t k = 0; k < 3; ++k) {
            const float colour = static_cast<float>(cpuChannel(c, k)) / 255.0F;
            rgb[k] = cpuUnorm8(colour * g.a + g.b[k]);
        }
        return cpuPack(rgb[0], rgb[1], rgb[2]);
    };
    parallel(m_chunks, [&](int chunk) {
        const auto &generals = m_general[static_cast<size_t>(chunk)];
        if (m_useRuns) {
            for (const Run &run : m_runs[static_cast<size_t>(chunk)]) {
                uint32_t *out
                    = m_out.data() + static_cast<size_t>(height - 1 - static_cast<int>(run.y)) * width + run.x;
                if ((run.code & notPlain) == 0) {
                    std::fill_n(out, run.length, m_colours[run.code]);
                } else {
                    *out = generalColour(generals[run.code & (general - 1)]);
                }
            }
            return;
        }
        int end = 0;
        const int begin = std::max(chunkRows(chunk, &end), changing.top());
        end = std::min(end, changing.bottom() + 1);
        for (int y = begin; y < end; ++y) {
            const uint32_t *codes = m_pixels.data() + static_cast<size_t>(y) * static_cast<size_t>(width);
            uint32_t *out = m_out.data() + static_cast<size_t>(height - 1 - y) * static_cast<size_t>(width);
            for (int x = changing.left(); x <= changing.right(); ++x) {
                const uint32_t p = codes[x];
                if ((p & notPlain) == 0) {
                    out[x] = m_sourcesArePixels ? colourOf(m_pixelSources[p], mix, lo, hi) : m_colours[p];
                } else if ((p & general) != 0) {
                    out[x] = generalColour(generals[p & (general - 1)]);
                }
            }
        }
    });
    if (m_screened) {
        *firstRow = 0;
        *endRow = height;
    } else {
        // From the top, as the image's rows.
        *firstRow = changing.isEmpty() ? 0 : height - 1 - changing.bottom();
        *endRow = changing.isEmpty() ? 0 : height - changing.top();
    }
    m_screened = false;
    return m_out;
}

} // namespace fleetscope
