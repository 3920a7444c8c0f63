// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapcpusurface.h"

#include "widgets/heatmap/heatmapglsurface.h"

#include <QPainter>

namespace fleetscope {

HeatmapCpuSurface::HeatmapCpuSurface(HeatmapSceneSource &source, QWidget *parent)
    : QWidget(parent)
    , m_source(source)
    , m_renderer([this] { update(); }) // a prepared image: show it
{
    // The view under it takes the mouse, the keyboard and the tooltips. Every pixel is painted, yet not marked
    // WA_OpaquePaintEvent: Qt would then take an update() of the view, which this widget covers, for nothing to paint.
    // Nothing is erased first all the same (no autoFillBackground; the view paints nothing under it).
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setFocusPolicy(Qt::NoFocus);
    m_source.uploadAgain();
}

QString HeatmapCpuSurface::description() const
{
    const QString gl = HeatmapGlSurface::probe();
    return gl.isEmpty() ? tr("CPU (no OpenGL 3.3)") : tr("CPU (OpenGL is %1)").arg(gl);
}

void HeatmapCpuSurface::uploadPending()
{
    if (!m_source.hasMap()) {
        return;
    }
    m_source.upload(m_renderer);
    m_renderer.applyInputs();
}

QImage HeatmapCpuSurface::grabMap()
{
    if (m_source.hasMap()) {
        // The state as it is now, not the image shown while it is prepared.
        m_source.upload(m_renderer);
        m_renderer.finish(m_source.scene(size(), devicePixelRatioF(), font()));
    }
    return grab().toImage();
}

void HeatmapCpuSurface::paintEvent(QPaintEvent * /*event*/)
{
    if (!m_source.hasMap()) {
        QPainter painter(this);
        paintPlaceholder(painter, rect(), font(), tr("Waiting for the fleet's topology…"));
        painter.end();
        Q_EMIT painted(false, false);
        QMetaObject::invokeMethod(this, &HeatmapCpuSurface::presented, Qt::QueuedConnection);
        return;
    }
    m_source.upload(m_renderer);
    const double dpr = devicePixelRatioF();
    const HeatmapScene scene = m_source.scene(size(), dpr, font());
    QPainter painter(this);
    painter.setCompositionMode(QPainter::CompositionMode_Source);
    const QImage &image = m_renderer.paint(scene, dpr);
    if (image.size() != scene.framebuffer) {
        // None yet, or one of another size while this one is prepared: the rest is background, not whatever the
        // window held there.
        painter.fillRect(rect(), QColor::fromRgb(backgroundColour));
    }
    if (!image.isNull()) {
        painter.drawImage(QPointF(0, 0), image);
    }
    // The text over everything, premultiplied, as the shaders' last step.
    if (!scene.overlayUsed.isEmpty() && scene.overlay != nullptr) {
        painter.setCompositionMode(QPainter::CompositionMode_SourceOver);
        painter.drawImage(QPointF(scene.overlayUsed.topLeft()) / dpr, *scene.overlay, QRectF(scene.overlayUsed));
    }
    painter.end();
    const bool current = m_renderer.isCurrent();
    Q_EMIT painted(true, scene.morphing);
    // After the paint event, the window flushed by then; not for an image shown while the next is prepared.
    if (current) {
        QMetaObject::invokeMethod(this, &HeatmapCpuSurface::presented, Qt::QueuedConnection);
    }
}

} // namespace fleetscope
