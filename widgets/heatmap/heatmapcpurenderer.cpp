// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapcpurenderer.h"

namespace fleetscope {

void HeatmapCpuRenderer::allocate(size_t gpuCount)
{
    m_passes.allocate(gpuCount);
    m_schedule.resolveAgain();
}

void HeatmapCpuRenderer::uploadLayout(const HeatmapLayout &layout)
{
    m_passes.setLayout(layout);
    m_layoutSize = QSize(std::max(1, layout.width), std::max(1, layout.height));
    m_schedule.resolveAgain();
}

void HeatmapCpuRenderer::uploadFrame(const std::vector<float> &values, const std::vector<uint8_t> &health, bool shift)
{
    m_passes.setFrame(values, health, shift);
    m_schedule.resolveAgain();
}

void HeatmapCpuRenderer::uploadColorMap(const ColorMap &map)
{
    m_passes.setColorMap(map); // pass 3 reads it on every paint
}

void HeatmapCpuRenderer::uploadMarks(const std::vector<uint8_t> &marks)
{
    m_passes.setMarks(marks);
    m_schedule.resolveAgain();
}

const QImage &HeatmapCpuRenderer::paint(const HeatmapScene &scene)
{
    const int width = scene.framebuffer.width();
    const int height = scene.framebuffer.height();
    if (width <= 0 || height <= 0) {
        m_image = QImage();
        return m_image;
    }
    const QRect cells = m_schedule.resolveCells(scene, m_layoutSize);
    if (!cells.isEmpty()) {
        m_passes.resolve(scene, cells);
    }
    if (m_schedule.screenNow(scene)) {
        m_passes.screen(scene);
    }
    int firstRow = 0;
    int endRow = 0;
    const std::vector<uint32_t> &pixels = m_passes.compose(scene, &firstRow, &endRow);
    if (pixels.size() != static_cast<size_t>(width) * static_cast<size_t>(height)) {
        m_image = QImage();
        return m_image;
    }
    // The passes' own memory, not a copy; QPainter reads it while this paint lasts.
    if (m_image.constBits() != reinterpret_cast<const uchar *>(pixels.data()) || m_image.size() != scene.framebuffer) {
        m_image = QImage(reinterpret_cast<const uchar *>(pixels.data()), width, height,
            static_cast<qsizetype>(width) * 4, QImage::Format_RGB32);
    }
    return m_image;
}

} // namespace fleetscope
