// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/heatmap/heatmapcpupasses.h"
#include "widgets/heatmap/heatmappassschedule.h"

#include <QImage>

namespace fleetscope {

// The heatmap drawn without OpenGL: the three passes on the CPU's threads (HeatmapCpuPasses) into an image that
// HeatmapView paints with QPainter. Chosen where OpenGL is a software renderer or missing: there the window is
// composed by Qt's raster engine instead of through OpenGL, and no paint waits for a software rasteriser. Per paint
// it costs what changed (HeatmapPassSchedule): an animation repaint recolours only the pixels whose colour moves.
class HeatmapCpuRenderer final : public HeatmapInputs
{
public:
    void allocate(size_t gpuCount) override;
    void uploadLayout(const HeatmapLayout &layout) override;
    void uploadFrame(const std::vector<float> &values, const std::vector<uint8_t> &health, bool shift) override;
    void uploadColorMap(const ColorMap &map) override;
    void uploadMarks(const std::vector<uint8_t> &marks) override;
    quint64 resolveCount() const override { return m_schedule.resolveCount(); }
    quint64 screenCount() const override { return m_schedule.screenCount(); }

    // The scene at the framebuffer's size (physical pixels at this ratio, Format_RGB32, background included) but the
    // text over the map (scene.overlay), which the caller paints over it; valid until the next call. A null image
    // for an empty framebuffer.
    const QImage &paint(const HeatmapScene &scene, double devicePixelRatio);

private:
    HeatmapCpuPasses m_passes;
    HeatmapPassSchedule m_schedule;
    QSize m_layoutSize { 1, 1 };
    QImage m_image;
};

} // namespace fleetscope
