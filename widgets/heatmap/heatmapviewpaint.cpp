// SPDX-License-Identifier: Apache-2.0
// HeatmapView's surface: which one draws the map (the shaders on their OpenGL child, or the CPU's passes on a plain
// child), and what follows each of its paints (counts, HeatmapPacer). The surface pulls what it draws from
// the view's HeatmapSceneBuilder. The rest of the view is in heatmapview.cpp and heatmapviewinput.cpp.
#include "widgets/heatmap/heatmapview.h"

#include "widgets/heatmap/heatmapcpusurface.h"
#include "widgets/heatmap/heatmapglsurface.h"

#include <QLayout>
#include <QLoggingCategory>

#include <cmath>
#include <utility>

Q_DECLARE_LOGGING_CATEGORY(lcHeatmap)

namespace fleetscope {

template <typename Surface> void HeatmapView::adopt(Surface *surface)
{
    if (m_surface != nullptr) {
        delete m_surface->widget();
    }
    m_surface = surface;
    QWidget::layout()->addWidget(surface); // (layout() is the map's)
    connect(surface, &Surface::painted, this, &HeatmapView::surfacePainted);
}

void HeatmapView::setPasses(Passes passes)
{
    m_requestedPasses = passes;
    const QByteArray forced = qgetenv("FLEETSCOPE_HEATMAP_PASSES");
    if (passes == Passes::Auto && (forced == "cpu" || forced == "gpu")) {
        passes = forced == "cpu" ? Passes::Cpu : Passes::Gpu;
    }
    if (passes == Passes::Auto) {
        passes = HeatmapGlSurface::probeIsSoftware() ? Passes::Cpu : Passes::Gpu;
    }
    const bool gpu = m_surface != nullptr && m_surface->kind() == HeatmapSurface::Kind::Gpu;
    if (passes == Passes::Gpu && (m_surface == nullptr || !gpu)) {
        auto *surface = new HeatmapGlSurface(m_scenes, this);
        adopt(surface);
        connect(surface, &QOpenGLWidget::frameSwapped, this, &HeatmapView::framePresented);
        connect(surface, &HeatmapGlSurface::shadersFailed, this, [this] {
            if (m_requestedPasses == Passes::Auto && qgetenv("FLEETSCOPE_HEATMAP_PASSES") != "gpu") {
                qCWarning(lcHeatmap, "the heatmap's shaders failed: drawing it on the CPU");
                // Not from inside the surface's own initialisation.
                QMetaObject::invokeMethod(
                    this, [this] { setPasses(Passes::Cpu); }, Qt::QueuedConnection);
            }
        });
        setAttribute(Qt::WA_OpaquePaintEvent, false);
    } else if (passes == Passes::Cpu && (m_surface == nullptr || gpu)) {
        auto *surface = new HeatmapCpuSurface(m_scenes, this);
        surface->setBackgroundPreparation(m_backgroundPreparation);
        adopt(surface);
        connect(surface, &HeatmapCpuSurface::presented, this, &HeatmapView::framePresented);
        setAttribute(Qt::WA_OpaquePaintEvent); // every pixel painted by the surface, none erased first
        static bool said = false; // once a process
        if (!std::exchange(said, true)) {
            qCInfo(lcHeatmap, "heatmap drawn by its passes on the CPU (OpenGL: %s)",
                qPrintable(HeatmapGlSurface::probe().isEmpty() ? QStringLiteral("none") : HeatmapGlSurface::probe()));
        }
    } else {
        return;
    }
    m_scenes.uploadAgain(); // all of it to the new renderer
    redraw();
}

HeatmapView::Passes HeatmapView::passes() const
{
    return m_surface->kind() == HeatmapSurface::Kind::Gpu ? Passes::Gpu : Passes::Cpu;
}

quint64 HeatmapView::resolveCount() const
{
    return m_surface->resolveCount();
}

quint64 HeatmapView::screenCount() const
{
    return m_surface->screenCount();
}

QString HeatmapView::rendererDescription() const
{
    return m_surface->description();
}

QImage HeatmapView::grabMap()
{
    return m_surface->grabMap();
}

void HeatmapView::setBackgroundPreparation(bool on)
{
    m_backgroundPreparation = on;
    if (auto *cpu = dynamic_cast<HeatmapCpuSurface *>(m_surface)) {
        cpu->setBackgroundPreparation(on);
    }
}

QSize HeatmapView::framebufferSize() const
{
    const double dpr = devicePixelRatioF();
    return { static_cast<int>(std::lround(width() * dpr)), static_cast<int>(std::lround(height() * dpr)) };
}

void HeatmapView::uploadPending()
{
    m_surface->uploadPending();
}

void HeatmapView::paintEvent(QPaintEvent * /*event*/)
{
    // The surface covers the view: an update() of this widget is one of the map.
    if (m_surface->kind() == HeatmapSurface::Kind::Gpu) {
        m_surface->requestPaint();
    }
}

void HeatmapView::surfacePainted(bool map, bool morphing)
{
    ++m_paintCount;
    if (!map) {
        return;
    }
    Q_EMIT mapPainted();
    const bool zooming = m_camera.settleMorph();
    m_pacer.painted(morphing || zooming);
}

} // namespace fleetscope
