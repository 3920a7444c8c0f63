// SPDX-License-Identifier: Apache-2.0
// HeatmapView: what is shown (handed on to HeatmapMapState), the layout asked of HeatmapLayoutJob, the camera. The
// surface and the paint's pacing are in heatmapviewpaint.cpp, input in heatmapviewinput.cpp.
#include "widgets/heatmap/heatmapview.h"

#include "widgets/heatmap/heatmapsurface.h"

#include <QLoggingCategory>
#include <QSurfaceFormat>
#include <QThread>
#include <QVBoxLayout>

#include <cmath>

Q_LOGGING_CATEGORY(lcHeatmap, "fleetscope.heatmap")

namespace fleetscope {

HeatmapView::HeatmapView(QWidget *parent)
    : QWidget(parent)
    , m_layoutJob([this](std::shared_ptr<const HeatmapLayout> layout, bool builtOffThread) {
        applyLayout(std::move(layout), builtOffThread);
    })
{
    setMouseTracking(true);
    auto *surfaceLayout = new QVBoxLayout(this); // the surface fills the view
    surfaceLayout->setContentsMargins(0, 0, 0, 0);
    m_camera.setClock([this] { return m_state.now(); });
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
    delete m_surface->widget(); // its GL objects go while this object is whole
}

void HeatmapView::redraw()
{
    m_surface->requestPaint();
}

void HeatmapView::setTopology(const TopologyPtr &topology)
{
    Q_ASSERT(QThread::currentThread() == thread());
    const bool hadDomain = m_state.domainGpuCount() > 0;
    m_state.setTopology(topology);
    m_camera.fit();
    relayout();
    if (hadDomain) {
        Q_EMIT domainGpusChanged(0);
    }
}

void HeatmapView::setJobs(const JobsPtr &jobs)
{
    if (m_state.setJobs(jobs)) {
        relayout();
    }
}

void HeatmapView::setArrangement(Arrangement arrangement)
{
    if (m_state.setArrangement(arrangement)) {
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
    // Big fleets on the job's worker, the old layout drawn meanwhile; small ones at once.
    m_layoutJob.request({ m_state.topology(), m_state.jobs(), m_state.arrangement(), layoutAspect() });
}

void HeatmapView::applyLayout(std::shared_ptr<const HeatmapLayout> layout, bool builtOffThread)
{
    m_state.setLayout(std::move(layout));
    if (m_hasPendingPosition) {
        m_hasPendingPosition = false;
        camera().setViewPosition(m_pendingPosition);
    }
    redraw();
    if (builtOffThread) {
        Q_EMIT layoutReady();
    }
}

const HeatmapCamera &HeatmapView::camera() const
{
    // Cheap, and always right: the window's size and pixel ratio, the layout and the margins the floor plan's
    // names need when fitted.
    m_camera.setViewport(QSizeF(size()), devicePixelRatioF());
    m_state.fitCamera(m_camera);
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
    if (m_state.arrangement() != Arrangement::FloorPlan && m_state.topology()) {
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
    const bool overlay = !m_scenes.overlay().buffer().holds(framebuffer);
    HeatmapImageBuffer *image = m_surface->imageBuffer();
    const bool shown = image != nullptr && !image->holds(framebuffer);
    if (!overlay && !shown) {
        return;
    }
    m_bufferWorker.run([this, framebuffer, overlay, shown]() -> Worker::Result {
        std::vector<uint32_t> forOverlay
            = overlay ? HeatmapImageBuffer::pixelsFor(framebuffer) : std::vector<uint32_t>();
        std::vector<uint32_t> forShown = shown ? HeatmapImageBuffer::pixelsFor(framebuffer) : std::vector<uint32_t>();
        return [this, forOverlay = std::move(forOverlay), forShown = std::move(forShown)]() mutable {
            m_scenes.overlay().buffer().adopt(std::move(forOverlay));
            if (HeatmapImageBuffer *image = m_surface->imageBuffer()) {
                image->adopt(std::move(forShown));
            }
        };
    });
}

void HeatmapView::setFrame(const FramePtr &frame)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_state.setFrame(frame)) {
        // The client checks frames against the topology; this guards a frame from a topology we no longer show.
        qCWarning(lcHeatmap, "ignoring a frame that does not match the topology shown");
        return;
    }
    redraw();
}

void HeatmapView::setAnimated(bool animated)
{
    m_state.setAnimated(animated);
    if (!animated) {
        m_pacer.stop();
    }
    redraw();
}

void HeatmapView::setLabelScale(double scale)
{
    if (m_state.setLabelScale(scale)) {
        redraw();
    }
}

void HeatmapView::setStaleNote(const QString &note)
{
    if (m_state.setStaleNote(note)) {
        redraw();
    }
}

void HeatmapView::setReplayNote(const QString &note)
{
    if (m_state.setReplayNote(note)) {
        redraw();
    }
}

void HeatmapView::setSelectedGpu(int gpu)
{
    if (m_state.setSelectedGpu(gpu)) {
        redraw();
    }
}

void HeatmapView::setClock(std::function<qint64()> clock)
{
    m_state.setClock(std::move(clock));
}

void HeatmapView::setWallClock(std::function<qint64()> clock)
{
    m_state.setWallClock(std::move(clock));
}

double HeatmapView::interpolation() const
{
    return m_state.interpolation();
}

void HeatmapView::setMetric(const MetricInfo &metric)
{
    m_state.setMetric(metric);
    redraw();
}

void HeatmapView::setRange(float rangeMin, float rangeMax)
{
    if (m_state.setRange(rangeMin, rangeMax)) {
        redraw();
    }
}

void HeatmapView::setColorMap(const ColorMap &map)
{
    m_state.setColorMap(map);
    redraw();
}

void HeatmapView::zoomToCells(const QRect &cells)
{
    camera().zoomToCells(cells, m_state.isAnimated() && isVisible());
    redraw();
}

QRect HeatmapView::cellsOf(uint32_t first, uint32_t count) const
{
    return m_state.cellsOf(first, count);
}

HeatmapView::ViewPosition HeatmapView::viewPosition() const
{
    return camera().viewPosition();
}

void HeatmapView::setViewPosition(const ViewPosition &position)
{
    if (m_layoutJob.isPending()) {
        m_pendingPosition = position; // for the layout being built
        m_hasPendingPosition = true;
        return;
    }
    camera().setViewPosition(position);
    redraw();
}

void HeatmapView::setFocusRange(uint32_t first, uint32_t count)
{
    m_state.setFocusRange(first, count);
    redraw();
}

void HeatmapView::setMarkedGpus(const std::vector<uint32_t> &gpus)
{
    const bool hadDomain = m_state.domainGpuCount() > 0;
    m_state.setMarkedGpus(gpus);
    redraw();
    if (hadDomain) {
        Q_EMIT domainGpusChanged(0);
    }
}

void HeatmapView::setDomainGpus(const std::vector<std::pair<uint32_t, uint32_t>> &runs)
{
    m_state.setDomainGpus(runs);
    redraw();
    Q_EMIT domainGpusChanged(m_state.domainGpuCount());
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
    m_state.setAggregation(aggregation);
    redraw();
}

void HeatmapView::zoomToFit()
{
    camera().fit();
    redraw();
}

int HeatmapView::gpuAt(const QPointF &pos) const
{
    return camera().gpuAt(m_state.layout(), pos);
}

QRectF HeatmapView::cellRect(int gpu) const
{
    return camera().gpuRect(m_state.layout(), gpu);
}

float HeatmapView::valueOf(int gpu) const
{
    return m_state.valueOf(gpu);
}

QString HeatmapView::describeGpu(int gpu) const
{
    QString text = m_state.describeGpu(gpu);
    // The job named above has a page of its own: J opens it (keyPressEvent).
    const JobsPtr jobs = m_state.jobs();
    if (!text.isEmpty() && jobs && gpu >= 0 && jobs->runningJobOn(static_cast<uint32_t>(gpu)) != nullptr) {
        text += QStringLiteral("<br><small>J: job page</small>");
    }
    return text;
}

} // namespace fleetscope
