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

const QImage &HeatmapCpuRenderer::paint(const HeatmapScene &drawn, double devicePixelRatio)
{
    const int width = drawn.framebuffer.width();
    const int height = drawn.framebuffer.height();
    if (width <= 0 || height <= 0) {
        m_image = QImage();
        return m_image;
    }
    // The text over the map is the caller's to paint on top (the shaders' last step, premultiplied over): the
    // passes leave it out, so that new text (values redrawn for a new frame) costs no pass 2.
    HeatmapScene scene = drawn;
    scene.overlay = nullptr;
    scene.overlayUsed = QRect();
    scene.overlayRevision = 0;
    const QRect cells = m_schedule.resolveCells(scene, m_layoutSize);
    const bool flagsChanged = !cells.isEmpty() && m_passes.resolve(scene, cells);
    if (m_schedule.screenNow(scene, !cells.isEmpty())) {
        m_passes.screen(scene);
    } else if (flagsChanged) {
        m_passes.screen(scene, true); // the pixels of the rows where a GPU's kind or flags changed
    }
    int firstRow = 0;
    int endRow = 0;
    const std::vector<uint32_t> &pixels = m_passes.compose(scene, &firstRow, &endRow);
    if (pixels.size() != static_cast<size_t>(width) * static_cast<size_t>(height)) {
        m_image = QImage();
        return m_image;
    }
    // The passes' own memory, not a copy; QPainter reads it while this paint lasts.
    if (m_image.constBits() != reinterpret_cast<const uchar *>(pixels.data()) || m_image.size() != drawn.framebuffer) {
        m_image = QImage(reinterpret_cast<const uchar *>(pixels.data()), width, height,
            static_cast<qsizetype>(width) * 4, QImage::Format_RGB32);
    }
    if (m_image.devicePixelRatio() != devicePixelRatio) {
        m_image.setDevicePixelRatio(devicePixelRatio); // no copy: this is the only reference
    }
    return m_image;
}

} // namespace fleetscope
