// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/heatmap/heatmapcpurenderer.h"
#include "widgets/heatmap/heatmapsurface.h"

#include <QWidget>

namespace fleetscope {

// The map's surface where OpenGL is a software renderer or missing: a plain widget that pulls each paint's scene from
// its source, has HeatmapCpuRenderer draw it on the CPU's threads and paints the image and the text over it with
// QPainter, so that the window holds no OpenGL and Qt composes it with its raster engine.
class HeatmapCpuSurface final : public QWidget, public HeatmapSurface
{
    Q_OBJECT
public:
    HeatmapCpuSurface(HeatmapSceneSource &source, QWidget *parent);

    Kind kind() const override { return Kind::Cpu; }
    QWidget *widget() override { return this; }
    void requestPaint() override { update(); }
    void uploadPending() override;
    QImage grabMap() override;
    QString description() const override;
    quint64 resolveCount() const override { return m_renderer.resolveCount(); }
    quint64 screenCount() const override { return m_renderer.screenCount(); }
    HeatmapImageBuffer *imageBuffer() override { return &m_renderer.shownBuffer(); }
    // See HeatmapView::setBackgroundPreparation.
    void setBackgroundPreparation(bool on) { m_renderer.setAsynchronous(on); }

Q_SIGNALS:
    // After each paint; map: the fleet was drawn (not a placeholder), morphing: at a point of a morph before its end.
    void painted(bool map, bool morphing);
    // A paint of the scene asked for (not an earlier image shown while it is prepared) has reached the window.
    void presented();

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    HeatmapSceneSource &m_source;
    HeatmapCpuRenderer m_renderer;
};

} // namespace fleetscope
