// SPDX-License-Identifier: Apache-2.0
// HeatmapView's drawing: which renderer draws the map (the shaders on their OpenGL child, or the CPU's passes), what
// is handed over to it, and each paint. The rest of the view is in heatmapview.cpp and heatmapviewinput.cpp.
#include "widgets/heatmap/heatmapview.h"

#include "widgets/heatmap/heatmapcpurenderer.h"
#include "widgets/heatmap/heatmapglsurface.h"
#include "widgets/heatmap/heatmapoverlay.h"
#include "widgets/style/fontscale.h"

#include <QLayout>
#include <QLoggingCategory>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QPainter>

#include <cmath>
#include <ctime>
#include <utility>

Q_DECLARE_LOGGING_CATEGORY(lcHeatmap)

namespace fleetscope {

namespace {
constexpr QRgb backgroundColour = 0xff15171c;
} // namespace

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
    if (passes == Passes::Gpu && m_glSurface == nullptr) {
        m_cpu.reset();
        m_glSurface = new HeatmapGlSurface(this);
        QWidget::layout()->addWidget(m_glSurface); // (layout() is the map's)
        connect(m_glSurface, &QOpenGLWidget::frameSwapped, this, &HeatmapView::framePresented);
        setAttribute(Qt::WA_OpaquePaintEvent, false);
    } else if (passes == Passes::Cpu && !m_cpu) {
        delete m_glSurface;
        m_glSurface = nullptr;
        m_cpu = std::make_unique<HeatmapCpuRenderer>([this] { redraw(); }); // a prepared image: show it
        m_cpu->setAsynchronous(m_backgroundPreparation);
        setAttribute(Qt::WA_OpaquePaintEvent); // every pixel painted, none erased first
        static bool said = false; // once a process
        if (!std::exchange(said, true)) {
            qCInfo(lcHeatmap, "heatmap drawn by its passes on the CPU (OpenGL: %s)",
                qPrintable(HeatmapGlSurface::probe().isEmpty() ? QStringLiteral("none") : HeatmapGlSurface::probe()));
        }
    } else {
        return;
    }
    m_topologyDirty = m_layoutDirty = m_frameDirty = m_colorMapDirty = true; // all of it to the new renderer
    redraw();
}

HeatmapView::Passes HeatmapView::passes() const
{
    return m_glSurface != nullptr ? Passes::Gpu : Passes::Cpu;
}

void HeatmapView::surfaceReset(bool ready)
{
    m_topologyDirty = m_layoutDirty = m_frameDirty = m_colorMapDirty = true;
    if (!ready && m_requestedPasses == Passes::Auto && qgetenv("FLEETSCOPE_HEATMAP_PASSES") != "gpu") {
        qCWarning(lcHeatmap, "the heatmap's shaders failed: drawing it on the CPU");
        // Not from inside the surface's own initialisation.
        QMetaObject::invokeMethod(
            this, [this] { setPasses(Passes::Cpu); }, Qt::QueuedConnection);
    }
}

HeatmapInputs *HeatmapView::inputs()
{
    if (m_glSurface != nullptr) {
        return m_glSurface->isReady() ? &m_glSurface->renderer() : nullptr;
    }
    return m_cpu.get();
}

quint64 HeatmapView::resolveCount() const
{
    return m_glSurface != nullptr ? m_glSurface->renderer().resolveCount() : m_cpu->resolveCount();
}

quint64 HeatmapView::screenCount() const
{
    return m_glSurface != nullptr ? m_glSurface->renderer().screenCount() : m_cpu->screenCount();
}

QString HeatmapView::rendererDescription() const
{
    if (m_glSurface != nullptr) {
        return m_glSurface->isReady() ? tr("shaders on %1").arg(m_glSurface->renderer().description())
                                      : tr("shaders (OpenGL not ready)");
    }
    const QString gl = HeatmapGlSurface::probe();
    return gl.isEmpty() ? tr("CPU (no OpenGL 3.3)") : tr("CPU (OpenGL is %1)").arg(gl);
}

QImage HeatmapView::grabMap()
{
    if (m_glSurface != nullptr) {
        return m_glSurface->grabFramebuffer();
    }
    finishCpuPasses(); // the state as it is now, not the image shown while it is prepared
    return grab().toImage();
}

void HeatmapView::setBackgroundPreparation(bool on)
{
    m_backgroundPreparation = on;
    if (m_cpu) {
        m_cpu->setAsynchronous(on);
    }
}

void HeatmapView::finishCpuPasses()
{
    if (!m_cpu || !m_topology) {
        return;
    }
    uploadDirty();
    m_cpu->finish(scene(camera().placement(), framebufferSize(), interpolation()));
}

QSize HeatmapView::framebufferSize() const
{
    const double dpr = devicePixelRatioF();
    return { static_cast<int>(std::lround(width() * dpr)), static_cast<int>(std::lround(height() * dpr)) };
}

void HeatmapView::uploadDirty()
{
    HeatmapInputs *renderer = inputs();
    if (renderer == nullptr) {
        return;
    }
    if (m_topologyDirty) {
        renderer->allocate(m_topology ? m_topology->gpuCount : 0);
        m_marksDirty = true;
        m_topologyDirty = false;
        m_hasData = false;
        m_hasPrevious = false;
    }
    if (m_layoutDirty) {
        renderer->uploadLayout(m_layout);
        m_layoutDirty = false;
    }
    if (m_frameDirty) {
        m_frameDirty = false;
        const bool newFrame = m_frameIsNew;
        m_frameIsNew = false;
        const MetricPlane *plane = m_frame ? m_frame->plane(m_metric.id) : nullptr;
        if (plane == nullptr) {
            m_hasData = false;
            m_hasPrevious = false;
        } else {
            // A new frame goes into the other texture, so the one shown until now becomes the previous frame; a
            // new metric replaces the current one.
            const bool shift = newFrame && m_hasData;
            if (shift) {
                m_hasPrevious = m_animated;
            }
            renderer->uploadFrame(m_frame, plane->values, m_frame->health, shift);
            m_hasData = true;
        }
    }
    if (m_colorMapDirty) {
        renderer->uploadColorMap(m_colorMap);
        m_colorMapDirty = false;
    }
    if (m_marksDirty) {
        m_marksDirty = false;
        if (m_topology && m_marks.size() == m_topology->gpuCount && !m_marks.empty()) {
            renderer->uploadMarks(m_marks);
        }
    }
}

void HeatmapView::uploadPending()
{
    if (!m_topology) {
        return;
    }
    if (m_glSurface == nullptr) {
        uploadDirty();
        m_cpu->applyInputs();
        return;
    }
    if (!m_glSurface->isReady()) {
        return;
    }
    m_glSurface->makeCurrent();
    uploadDirty();
    m_glSurface->context()->functions()->glFinish();
    m_glSurface->doneCurrent();
}

void HeatmapView::paintEvent(QPaintEvent * /*event*/)
{
    if (m_glSurface == nullptr) {
        paintMap();
    } else {
        m_glSurface->update(); // an update() of this widget is one of the map
    }
}

HeatmapScene HeatmapView::scene(const HeatmapCamera::Placement &p, QSize framebuffer, double mix) const
{
    HeatmapScene scene;
    scene.framebuffer = framebuffer;
    scene.originX = p.originX;
    scene.originY = p.originY;
    scene.cellSize = p.cellSize;
    scene.layoutSize = QSize(m_layout->width, m_layout->height);
    scene.mix = static_cast<float>(mix);
    scene.hasData = m_hasData;
    scene.hasPrevious = m_hasPrevious && m_animated;
    scene.rangeMin = m_metric.rangeMin;
    scene.rangeMax = m_metric.rangeMax;
    scene.worst = m_aggregation == Aggregation::Worst;
    scene.stale = !m_staleNote.isEmpty();
    scene.hasMarks = m_markCount > 0;
    scene.focusFirst = m_focusFirst;
    scene.focusCount = m_focusCount;
    if (m_selectedGpu >= 0 && static_cast<size_t>(m_selectedGpu) < m_layout->gpuCells.size()) {
        const QPoint c = m_layout->gpuCells[static_cast<size_t>(m_selectedGpu)];
        scene.ringCentre = QPointF(p.originX + (c.x() + 0.5) * p.cellSize, p.originY + (c.y() + 0.5) * p.cellSize);
        scene.ringRadius = static_cast<float>(std::max(6.0, p.cellSize * 0.75));
    }
    scene.overlay = &m_overlay.image();
    scene.overlayUsed = m_overlay.used();
    scene.overlayRevision = m_overlay.revision();
    return scene;
}

void HeatmapView::paintMap()
{
    ++m_paintCount;
    const double dpr = devicePixelRatioF();
    const QSize framebuffer = framebufferSize();
    QPaintDevice *device = m_glSurface != nullptr ? static_cast<QPaintDevice *>(m_glSurface) : this;
    const bool ready = inputs() != nullptr;
    if (!ready || !m_topology) {
        QPainter painter(device);
        painter.fillRect(rect(), QColor::fromRgb(backgroundColour)); // else the renderer draws it with the map
        painter.setPen(QColor(0xc8, 0xcc, 0xd4));
        QFont f = scaledFont(HeatmapOverlay::overlayFont(painter.font()), 1.6);
        painter.setFont(f);
        painter.drawText(rect(), Qt::AlignCenter,
            ready ? tr("Waiting for the fleet's topology…") : tr("OpenGL 3.3 or ES 3.0 is needed"));
        if (m_glSurface == nullptr) {
            QMetaObject::invokeMethod(this, &HeatmapView::framePresented, Qt::QueuedConnection);
        }
        return;
    }
    uploadDirty();

    const HeatmapCamera::Placement p = camera().placement();
    const double mix = interpolation();
    updateOverlay(p);
    const HeatmapScene drawn = scene(p, framebuffer, mix);
    if (m_glSurface != nullptr) {
        m_glSurface->renderer().paint(drawn);
    } else {
        QPainter painter(this);
        painter.setCompositionMode(QPainter::CompositionMode_Source);
        const QImage &image = m_cpu->paint(drawn, dpr);
        if (image.size() != framebuffer) {
            // None yet, or one of another size while this one is prepared: the rest is background, not whatever the
            // window held there.
            painter.fillRect(rect(), QColor::fromRgb(backgroundColour));
        }
        if (!image.isNull()) {
            painter.drawImage(QPointF(0, 0), image);
        }
        // The text over everything, premultiplied, as the shaders' last step.
        const QRect used = m_overlay.used();
        if (!used.isEmpty()) {
            painter.setCompositionMode(QPainter::CompositionMode_SourceOver);
            painter.drawImage(QPointF(used.topLeft()) / dpr, m_overlay.image(), QRectF(used));
        }
        painter.end();
        // After the paint event, the window flushed by then; not for an image shown while the next is prepared.
        if (m_cpu->isCurrent()) {
            QMetaObject::invokeMethod(this, &HeatmapView::framePresented, Qt::QueuedConnection);
        }
    }
    pace();
    const bool morphing = m_camera.settleMorph();
    if (mix < 1.0 || morphing) {
        if (!m_animationTimer.isActive()) {
            m_animationTimer.start();
        }
    } else {
        m_animationTimer.stop();
    }
}

void HeatmapView::pace()
{
    // While animating, the process's CPU time per animation frame (the paint, the compositing after it, a software
    // renderer's threads) sets the rate: at most about a third of a core, and the display's rate where a frame is
    // cheap (a real GPU). Measured over eight frames at a time.
    if (!m_animationTimer.isActive()) {
        m_paceFrames = 0;
        return;
    }
    const std::clock_t now = std::clock();
    if (m_paceFrames == 0) {
        m_paceStart = now;
    }
    if (++m_paceFrames <= 8) {
        return;
    }
    const double cpuMsPerFrame = 1000.0 * static_cast<double>(now - m_paceStart) / CLOCKS_PER_SEC / 8.0;
    m_paceFrames = 0;
    m_frameCpuMs = m_frameCpuMs <= 0 ? cpuMsPerFrame : 0.5 * m_frameCpuMs + 0.5 * cpuMsPerFrame;
    m_animationTimer.setInterval(std::clamp(static_cast<int>(std::lround(m_frameCpuMs / 0.35)), 16, 500));
}

void HeatmapView::updateOverlay(const HeatmapCamera::Placement &p)
{
    const double dpr = devicePixelRatioF();
    HeatmapOverlay::Scene scene;
    scene.layout = m_layout.get();
    scene.widget = QSizeF(size());
    scene.originX = p.originX / dpr;
    scene.originY = p.originY / dpr;
    scene.cell = p.cellSize / dpr;
    scene.plane = (m_frame && m_hasData) ? m_frame->plane(m_metric.id) : nullptr;
    scene.metric = &m_metric;
    scene.colorMap = &m_colorMap;
    scene.staleNote = m_staleNote;
    scene.labelScale = m_labelScale;
    scene.replayNote = m_replayNote;
    scene.font = font();
    m_overlay.update(scene, dpr);
}

} // namespace fleetscope
