// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapview.h"

#include "widgets/heatmap/heatmapcpurenderer.h"
#include "widgets/heatmap/heatmapglsurface.h"
#include "widgets/heatmap/heatmapoverlay.h"
#include "widgets/style/fontscale.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QPainter>
#include <QSurfaceFormat>
#include <QThread>
#include <QVBoxLayout>

#include <cmath>
#include <ctime>
#include <limits>
#include <utility>

Q_LOGGING_CATEGORY(lcHeatmap, "fleetscope.heatmap")

namespace fleetscope {

namespace {
constexpr QRgb backgroundColour = 0xff15171c;
} // namespace

HeatmapView::HeatmapView(QWidget *parent)
    : QWidget(parent)
    , m_colorMap(ColorMap::byName(QStringLiteral("inferno")))
{
    setMouseTracking(true);
    auto *surfaceLayout = new QVBoxLayout(this); // the OpenGL child, when there is one, fills the view
    surfaceLayout->setContentsMargins(0, 0, 0, 0);
    m_clock = [timer = std::make_shared<QElapsedTimer>()] {
        if (!timer->isValid()) {
            timer->start();
        }
        return timer->elapsed();
    };
    m_wallClock = [] { return QDateTime::currentMSecsSinceEpoch(); };
    m_camera.setClock([this] { return m_clock(); });
    m_layoutPool.setMaxThreadCount(1);
    // About 60 repaints a second while a transition runs (fewer where painting is slow), none otherwise.
    m_animationTimer.setInterval(16);
    connect(&m_animationTimer, &QTimer::timeout, this, &HeatmapView::redraw);
    m_relayoutTimer.setSingleShot(true);
    m_relayoutTimer.setInterval(60);
    connect(&m_relayoutTimer, &QTimer::timeout, this, &HeatmapView::relayout);
    setFocusPolicy(Qt::StrongFocus); // + - 0 and the arrows zoom and pan
    setMinimumSize(320, 200);
    setPasses(Passes::Auto);
}

void HeatmapView::requestSurfaceFormat()
{
    QSurfaceFormat format;
    format.setVersion(3, 3);
    format.setProfile(QSurfaceFormat::CoreProfile);
    QSurfaceFormat::setDefaultFormat(format);
}

HeatmapView::~HeatmapView()
{
    // A layout being built calls back into this object: drop the queued ones, wait for the one running.
    m_layoutGeneration = std::numeric_limits<quint64>::max();
    m_layoutPool.clear();
    m_layoutPool.waitForDone();
    delete m_glSurface; // its GL objects go while this object is whole
}

void HeatmapView::redraw()
{
    if (m_glSurface != nullptr) {
        m_glSurface->update();
    } else {
        update();
    }
}

void HeatmapView::setTopology(const TopologyPtr &topology)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_topology = topology;
    if (m_jobs && (!topology || m_jobs->topologyGeneration != topology->generation)) {
        m_jobs.reset();
    }
    m_camera.fit();
    m_selectedGpu = -1;
    m_frame.reset();
    m_hasData = false;
    m_topologyDirty = true;
    m_marks.clear();
    m_markCount = 0;
    m_focusCount = 0;
    relayout();
}

void HeatmapView::setJobs(const JobsPtr &jobs)
{
    const JobsPtr before = m_jobs;
    m_jobs = (jobs && m_topology && jobs->topologyGeneration == m_topology->generation) ? jobs : nullptr;
    if (m_arrangement != Arrangement::ByJob) {
        return;
    }
    // Move GPUs only when the set of running jobs changed, not on every poll.
    const auto running = [](const JobsPtr &list) {
        std::vector<std::pair<uint64_t, size_t>> ids;
        if (list) {
            for (const auto &job : list->jobs) {
                if (job.isRunning()) {
                    ids.emplace_back(job.id, job.gpus.size());
                }
            }
        }
        return ids;
    };
    if (running(before) != running(m_jobs)) {
        relayout();
    }
}

void HeatmapView::setArrangement(Arrangement arrangement)
{
    if (arrangement != m_arrangement) {
        m_arrangement = arrangement;
        m_camera.fit();
        relayout();
    }
}

double HeatmapView::layoutAspect() const
{
    return std::max(1, width()) / static_cast<double>(std::max(1, height()));
}

void HeatmapView::relayout()
{
    Q_ASSERT(QThread::currentThread() == thread());
    const quint64 generation = ++m_layoutGeneration;
    const auto build = [topology = m_topology, jobs = m_jobs, arrangement = m_arrangement, aspect = layoutAspect()] {
        if (!topology) {
            return HeatmapLayout();
        }
        switch (arrangement) {
        case Arrangement::Compact:
            return HeatmapLayout::compact(*topology, aspect);
        case Arrangement::ByJob:
            return HeatmapLayout::byJob(*topology, jobs.get(), aspect);
        case Arrangement::FloorPlan:
            break;
        }
        return HeatmapLayout::floorPlan(*topology);
    };
    if (!m_topology || m_topology->gpuCount <= syncLayoutGpus) {
        m_layoutPending = false;
        applyLayout(build());
        return;
    }
    // 100-160 ms at a million GPUs: on the worker, the old layout drawn meanwhile. The pool runs one at a time and
    // waits for it before this object dies; a layout superseded before it starts is skipped, one superseded while
    // it runs is dropped on arrival.
    m_layoutPending = true;
    m_layoutPool.start([this, build, generation] {
        if (generation != m_layoutGeneration.load()) {
            return;
        }
        auto layout = std::make_shared<HeatmapLayout>(build());
        QMetaObject::invokeMethod(
            this,
            [this, layout, generation] {
                if (generation == m_layoutGeneration.load()) {
                    m_layoutPending = false;
                    applyLayout(std::move(*layout));
                    Q_EMIT layoutReady();
                }
            },
            Qt::QueuedConnection);
    });
}

void HeatmapView::applyLayout(HeatmapLayout layout)
{
    m_layout = std::move(layout);
    m_layoutDirty = true;
    if (m_hasPendingPosition) {
        m_hasPendingPosition = false;
        camera().setViewPosition(m_pendingPosition);
    }
    redraw();
}

const HeatmapCamera &HeatmapView::camera() const
{
    // Cheap, and always right: the window's size and pixel ratio, the layout and the margins the floor plan's
    // names need when fitted.
    m_camera.setViewport(QSizeF(size()), devicePixelRatioF());
    m_camera.setLayoutSize(m_layout.width, m_layout.height);
    const bool floorPlan = m_arrangement == Arrangement::FloorPlan;
    m_camera.setFitMargins(floorPlan ? 64.0 * m_labelScale : 0.0, floorPlan ? 20.0 * m_labelScale : 0.0);
    return m_camera;
}

HeatmapCamera &HeatmapView::camera()
{
    static_cast<const HeatmapView *>(this)->camera();
    return m_camera;
}

void HeatmapView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    // The camera refits what it was fitted to (the fleet or a place's cells) on its next use.
    if (m_arrangement != Arrangement::FloorPlan && m_topology) {
        m_relayoutTimer.start(); // once the resizing settles
    }
}

void HeatmapView::setFrame(const FramePtr &frame)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_topology || !frame || frame->health.size() != m_topology->gpuCount) {
        // The client checks frames against the topology; this guards a frame from a topology we no longer show.
        qCWarning(lcHeatmap, "ignoring a frame that does not match the topology shown");
        return;
    }
    if (m_animated && m_frame && m_hasData && frame->plane(m_metric.id) != nullptr) {
        m_transitionStart = m_clock();
        m_transitionMs = std::clamp<qint64>(frame->sampleTimeMs - m_frame->sampleTimeMs, 50, 5000);
    }
    m_frame = frame;
    m_frameDirty = true;
    m_frameIsNew = true;
    redraw();
}

void HeatmapView::setAnimated(bool animated)
{
    m_animated = animated;
    if (!animated) {
        m_animationTimer.stop();
    }
    redraw();
}

void HeatmapView::setLabelScale(double scale)
{
    scale = std::clamp(scale, 0.5, 8.0);
    if (scale != m_labelScale) {
        m_labelScale = scale; // the fitted placement's margins follow on the next paint
        redraw();
    }
}

void HeatmapView::setStaleNote(const QString &note)
{
    if (note != m_staleNote) {
        m_staleNote = note;
        redraw();
    }
}

void HeatmapView::setReplayNote(const QString &note)
{
    if (note != m_replayNote) {
        m_replayNote = note;
        redraw();
    }
}

void HeatmapView::setSelectedGpu(int gpu)
{
    const int valid = (m_topology && gpu >= 0 && static_cast<uint32_t>(gpu) < m_topology->gpuCount) ? gpu : -1;
    if (valid != m_selectedGpu) {
        m_selectedGpu = valid;
        redraw();
    }
}

void HeatmapView::setClock(std::function<qint64()> clock)
{
    m_clock = std::move(clock);
}

void HeatmapView::setWallClock(std::function<qint64()> clock)
{
    m_wallClock = std::move(clock);
}

double HeatmapView::interpolation() const
{
    if (!m_animated || !m_hasPrevious) {
        return 1.0;
    }
    return std::clamp(
        static_cast<double>(m_clock() - m_transitionStart) / static_cast<double>(m_transitionMs), 0.0, 1.0);
}

void HeatmapView::setMetric(const MetricInfo &metric)
{
    m_metric = metric;
    m_hasPrevious = false; // no transition from another metric's values
    if (!metric.colourMap.isEmpty()) {
        setColorMap(ColorMap::forMetric(metric));
    }
    m_frameDirty = true;
    redraw();
}

void HeatmapView::setRange(float rangeMin, float rangeMax)
{
    if (rangeMin < rangeMax && (rangeMin != m_metric.rangeMin || rangeMax != m_metric.rangeMax)) {
        m_metric.rangeMin = rangeMin;
        m_metric.rangeMax = rangeMax;
        redraw();
    }
}

void HeatmapView::setColorMap(const ColorMap &map)
{
    m_colorMap = map;
    m_colorMapDirty = true;
    redraw();
}

void HeatmapView::zoomToCells(const QRect &cells)
{
    camera().zoomToCells(cells, m_animated && isVisible());
    redraw();
}

QRect HeatmapView::cellsOf(uint32_t first, uint32_t count) const
{
    QRect bounds;
    const auto end = std::min<size_t>(static_cast<size_t>(first) + count, m_layout.gpuCells.size());
    for (size_t g = first; g < end; ++g) {
        bounds |= QRect(m_layout.gpuCells[g], QSize(1, 1));
    }
    return bounds;
}

HeatmapView::ViewPosition HeatmapView::viewPosition() const
{
    return camera().viewPosition();
}

void HeatmapView::setViewPosition(const ViewPosition &position)
{
    if (m_layoutPending) {
        m_pendingPosition = position; // for the layout being built
        m_hasPendingPosition = true;
        return;
    }
    camera().setViewPosition(position);
    redraw();
}

void HeatmapView::setFocusRange(uint32_t first, uint32_t count)
{
    m_focusFirst = first;
    m_focusCount = count;
    redraw();
}

void HeatmapView::setMarkedGpus(const std::vector<uint32_t> &gpus)
{
    const size_t n = m_topology ? m_topology->gpuCount : 0;
    m_marks.assign(n, 0);
    m_markCount = 0;
    for (uint32_t g : gpus) {
        if (g < n && m_marks[g] == 0) {
            m_marks[g] = 1;
            ++m_markCount;
        }
    }
    m_marksDirty = true;
    redraw();
}

void HeatmapView::zoomAt(const QPointF &anchor, double factor)
{
    camera().zoomAt(anchor, factor);
    redraw();
}

void HeatmapView::panBy(const QPointF &delta)
{
    camera().panBy(delta);
    redraw();
}

void HeatmapView::setAggregation(Aggregation aggregation)
{
    m_aggregation = aggregation;
    redraw();
}

void HeatmapView::zoomToFit()
{
    camera().fit();
    redraw();
}

int HeatmapView::gpuAt(const QPointF &pos) const
{
    return camera().gpuAt(m_layout, pos);
}

QRectF HeatmapView::cellRect(int gpu) const
{
    return camera().gpuRect(m_layout, gpu);
}

float HeatmapView::valueOf(int gpu) const
{
    const MetricPlane *plane = m_frame ? m_frame->plane(m_metric.id) : nullptr;
    if (plane == nullptr || gpu < 0 || static_cast<size_t>(gpu) >= plane->values.size()) {
        return std::numeric_limits<float>::quiet_NaN();
    }
    return plane->values[static_cast<size_t>(gpu)];
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
        QMetaObject::invokeMethod(this, [this] { setPasses(Passes::Cpu); }, Qt::QueuedConnection);
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
    const HeatmapCamera::Placement p = camera().placement();
    const double dpr = devicePixelRatioF();
    const QSize framebuffer(
        static_cast<int>(std::lround(width() * dpr)), static_cast<int>(std::lround(height() * dpr)));
    m_cpu->finish(scene(p, framebuffer, interpolation()));
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
    scene.layoutSize = QSize(m_layout.width, m_layout.height);
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
    if (m_selectedGpu >= 0 && static_cast<size_t>(m_selectedGpu) < m_layout.gpuCells.size()) {
        const QPoint c = m_layout.gpuCells[static_cast<size_t>(m_selectedGpu)];
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
    const QSize framebuffer(
        static_cast<int>(std::lround(width() * dpr)), static_cast<int>(std::lround(height() * dpr)));
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
        if (image.isNull()) {
            painter.fillRect(rect(), QColor::fromRgb(backgroundColour)); // the first image is being prepared
        } else {
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
    scene.layout = &m_layout;
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
