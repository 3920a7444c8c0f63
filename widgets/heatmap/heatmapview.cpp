// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapview.h"

#include "jobs/background.h"
#include "widgets/heatmap/heatmapcpurenderer.h"
#include "widgets/heatmap/heatmapglsurface.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QSurfaceFormat>
#include <QThread>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

Q_LOGGING_CATEGORY(lcHeatmap, "fleetscope.heatmap")

namespace fleetscope {

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
    m_reserveTimer.setSingleShot(true);
    m_reserveTimer.setInterval(100);
    connect(&m_reserveTimer, &QTimer::timeout, this, &HeatmapView::reserveBuffers);
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
        applyLayout(std::make_shared<const HeatmapLayout>(build()));
        return;
    }
    // 100-160 ms at a million GPUs: on the worker, the old layout drawn meanwhile. The pool runs one at a time and
    // waits for it before this object dies; a layout superseded before it starts is skipped, one superseded while
    // it runs is dropped on arrival.
    m_layoutPending = true;
    m_layoutPool.start([this, build, generation] {
        runThisThreadInBackground();
        if (generation != m_layoutGeneration.load()) {
            return;
        }
        auto layout = std::make_shared<const HeatmapLayout>(build());
        QMetaObject::invokeMethod(
            this,
            [this, layout, generation] {
                if (generation == m_layoutGeneration.load()) {
                    m_layoutPending = false;
                    applyLayout(layout);
                    Q_EMIT layoutReady();
                }
            },
            Qt::QueuedConnection);
    });
}

void HeatmapView::applyLayout(std::shared_ptr<const HeatmapLayout> layout)
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
    m_camera.setLayoutSize(m_layout->width, m_layout->height);
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
    m_reserveTimer.start();
}

void HeatmapView::reserveBuffers()
{
    // The text overlay's image and the CPU renderer's shown copy grow to the map's new size here, their memory
    // allocated and touched on a worker thread, rather than in the paints that first need them: at 1500 x 900 each is
    // 1,250 fresh pages, 12 ms of page faults on the machines measured, which the fleet's first frame paid on the GUI
    // thread (docs/PERFORMANCE.md).
    const QSize framebuffer = framebufferSize();
    const bool overlay = !m_overlay.buffer().holds(framebuffer);
    const bool shown = m_cpu && !m_cpu->shownBuffer().holds(framebuffer);
    if (!overlay && !shown) {
        return;
    }
    m_bufferWorker.run([this, framebuffer, overlay, shown]() -> Worker::Result {
        std::vector<uint32_t> forOverlay
            = overlay ? HeatmapImageBuffer::pixelsFor(framebuffer) : std::vector<uint32_t>();
        std::vector<uint32_t> forShown = shown ? HeatmapImageBuffer::pixelsFor(framebuffer) : std::vector<uint32_t>();
        return [this, forOverlay = std::move(forOverlay), forShown = std::move(forShown)]() mutable {
            m_overlay.buffer().adopt(std::move(forOverlay));
            if (m_cpu) {
                m_cpu->shownBuffer().adopt(std::move(forShown));
            }
        };
    });
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
    const auto end = std::min<size_t>(static_cast<size_t>(first) + count, m_layout->gpuCells.size());
    for (size_t g = first; g < end; ++g) {
        bounds |= QRect(m_layout->gpuCells[g], QSize(1, 1));
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
    return camera().gpuAt(*m_layout, pos);
}

QRectF HeatmapView::cellRect(int gpu) const
{
    return camera().gpuRect(*m_layout, gpu);
}

float HeatmapView::valueOf(int gpu) const
{
    const MetricPlane *plane = m_frame ? m_frame->plane(m_metric.id) : nullptr;
    if (plane == nullptr || gpu < 0 || static_cast<size_t>(gpu) >= plane->values.size()) {
        return std::numeric_limits<float>::quiet_NaN();
    }
    return plane->values[static_cast<size_t>(gpu)];
}

} // namespace fleetscope
