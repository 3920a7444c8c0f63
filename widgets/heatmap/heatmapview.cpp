// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapview.h"

#include "widgets/style/fontscale.h"
#include "widgets/heatmap/heatmapoverlay.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLoggingCategory>
#include <QMouseEvent>
#include <QNativeGestureEvent>
#include <QOpenGLContext>
#include <QOpenGLShaderProgram>
#include <QOpenGLVertexArrayObject>
#include <QPainter>
#include <QSurfaceFormat>
#include <QThread>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>
#include <ctime>
#include <limits>

Q_LOGGING_CATEGORY(lcHeatmap, "fleetscope.heatmap")

namespace fleetscope {

namespace {
constexpr QRgb backgroundColour = 0xff15171c;
constexpr QRgb aisleColour = 0xff22252c;

void setColourUniform(QOpenGLShaderProgram *program, const char *name, QRgb rgb)
{
    program->setUniformValue(name, QColor::fromRgb(rgb));
}

QString formatValue(float value, const QString &unit)
{
    if (std::isnan(value)) {
        return QStringLiteral("no value");
    }
    const int decimals = std::abs(value) >= 100 ? 0 : 1;
    return QString::number(value, 'f', decimals) + QLatin1Char(' ') + unit;
}
} // namespace

HeatmapView::HeatmapView(QWidget *parent)
    : QOpenGLWidget(parent)
    , m_colorMap(ColorMap::byName(QStringLiteral("inferno")))
{
    setMouseTracking(true);
    m_clock = [timer = std::make_shared<QElapsedTimer>()] {
        if (!timer->isValid()) {
            timer->start();
        }
        return timer->elapsed();
    };
    m_wallClock = [] { return QDateTime::currentMSecsSinceEpoch(); };
    // About 60 repaints a second while a transition runs (fewer where painting is slow), none otherwise.
    m_animationTimer.setInterval(16);
    connect(&m_animationTimer, &QTimer::timeout, this, qOverload<>(&QWidget::update));
    m_relayoutTimer.setSingleShot(true);
    m_relayoutTimer.setInterval(60);
    connect(&m_relayoutTimer, &QTimer::timeout, this, &HeatmapView::relayout);
    setFocusPolicy(Qt::StrongFocus); // + - 0 and the arrows zoom and pan
    setMinimumSize(320, 200);
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
    // QOpenGLWidget's own destructor emits aboutToBeDestroyed after this object is gone: release here instead.
    disconnect(m_contextDestroyed);
    if (context() != nullptr) {
        makeCurrent();
        releaseGL();
        doneCurrent();
    }
}

void HeatmapView::setTopology(const TopologyPtr &topology)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_topology = topology;
    if (m_jobs && (!topology || m_jobs->topologyGeneration != topology->generation)) {
        m_jobs.reset();
    }
    m_fitted = true;
    m_selectedGpu = -1;
    m_frame.reset();
    m_hasData = false;
    m_topologyDirty = true;
    m_zoomStart = -1;
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
        m_fitted = true;
        relayout();
    }
}

double HeatmapView::layoutAspect() const
{
    return std::max(1, width()) / static_cast<double>(std::max(1, height()));
}

void HeatmapView::relayout()
{
    if (!m_topology) {
        m_layout = HeatmapLayout();
    } else {
        switch (m_arrangement) {
        case Arrangement::FloorPlan:
            m_layout = HeatmapLayout::floorPlan(*m_topology);
            break;
        case Arrangement::Compact:
            m_layout = HeatmapLayout::compact(*m_topology, layoutAspect());
            break;
        case Arrangement::ByJob:
            m_layout = HeatmapLayout::byJob(*m_topology, m_jobs.get(), layoutAspect());
            break;
        }
    }
    m_layoutDirty = true;
    update();
}

void HeatmapView::resizeEvent(QResizeEvent *event)
{
    QOpenGLWidget::resizeEvent(event);
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
    update();
}

void HeatmapView::setAnimated(bool animated)
{
    m_animated = animated;
    if (!animated) {
        m_animationTimer.stop();
    }
    update();
}

void HeatmapView::setLabelScale(double scale)
{
    scale = std::clamp(scale, 0.5, 8.0);
    if (scale != m_labelScale) {
        m_labelScale = scale; // the fitted placement's margins follow on the next paint
        update();
    }
}

void HeatmapView::setStaleNote(const QString &note)
{
    if (note != m_staleNote) {
        m_staleNote = note;
        update();
    }
}

void HeatmapView::setReplayNote(const QString &note)
{
    if (note != m_replayNote) {
        m_replayNote = note;
        update();
    }
}

void HeatmapView::setSelectedGpu(int gpu)
{
    const int valid = (m_topology && gpu >= 0 && static_cast<uint32_t>(gpu) < m_topology->gpuCount) ? gpu : -1;
    if (valid != m_selectedGpu) {
        m_selectedGpu = valid;
        update();
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
        setColorMap(ColorMap::byName(metric.colourMap));
    }
    m_frameDirty = true;
    update();
}

void HeatmapView::setRange(float rangeMin, float rangeMax)
{
    if (rangeMin < rangeMax && (rangeMin != m_metric.rangeMin || rangeMax != m_metric.rangeMax)) {
        m_metric.rangeMin = rangeMin;
        m_metric.rangeMax = rangeMax;
        update();
    }
}

void HeatmapView::setColorMap(const ColorMap &map)
{
    m_colorMap = map;
    m_colorMapDirty = true;
    update();
}

HeatmapView::Placement HeatmapView::placement() const
{
    if (m_zoomStart < 0) {
        return m_fitted ? fittedPlacement() : m_view;
    }
    // The zoom morph: the cell size changes geometrically and the layout point at the view's centre moves
    // linearly, eased at both ends.
    const double linear = std::clamp(static_cast<double>(m_clock() - m_zoomStart) / zoomMs, 0.0, 1.0);
    const double t = linear * linear * (3 - 2 * linear);
    const double dpr = devicePixelRatioF();
    const double cx = width() * dpr / 2;
    const double cy = height() * dpr / 2;
    const auto centreOf = [cx, cy](const Placement &p) {
        return QPointF((cx - p.originX) / p.cellSize, (cy - p.originY) / p.cellSize);
    };
    // A morph back to the whole fleet ends where the fit is now, whatever the window did meanwhile.
    const Placement target = m_zoomEndsFitted ? fittedPlacement() : m_zoomTo;
    const QPointF from = centreOf(m_zoomFrom);
    const QPointF to = centreOf(target);
    Placement p;
    p.cellSize = std::exp(std::log(m_zoomFrom.cellSize) * (1 - t) + std::log(target.cellSize) * t);
    const QPointF centre = from + (to - from) * t;
    p.originX = cx - centre.x() * p.cellSize;
    p.originY = cy - centre.y() * p.cellSize;
    return p;
}

void HeatmapView::zoomToCells(const QRect &cells)
{
    if (m_layout.width == 0) {
        return;
    }
    const bool fit = cells.isEmpty();
    if (fit && m_fitted && m_zoomStart < 0) {
        return; // already showing the whole fleet
    }
    const Placement from = placement();
    Placement to;
    if (fit) {
        to = fittedPlacement();
    } else {
        const double dpr = devicePixelRatioF();
        const double w = width() * dpr;
        const double h = height() * dpr;
        to.cellSize = std::clamp(std::min(0.9 * w / cells.width(), 0.9 * h / cells.height()), minCellSize,
            std::max(maxCellSize * dpr, fittedPlacement().cellSize));
        const QPointF centre = QRectF(cells).center();
        to.originX = w / 2 - centre.x() * to.cellSize;
        to.originY = h / 2 - centre.y() * to.cellSize;
    }
    m_fitted = false;
    m_view = to;
    if (m_animated && isVisible()) {
        m_zoomFrom = from;
        m_zoomTo = to;
        m_zoomStart = m_clock();
        m_zoomEndsFitted = fit;
    } else {
        m_fitted = fit;
    }
    update();
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
    if (m_fitted || m_layout.width == 0) {
        return {};
    }
    const Placement p = placement();
    const double dpr = devicePixelRatioF();
    return { p.cellSize / dpr, (width() * dpr / 2 - p.originX) / p.cellSize,
        (height() * dpr / 2 - p.originY) / p.cellSize };
}

void HeatmapView::setViewPosition(const ViewPosition &position)
{
    if (!(position.zoom > 0) || m_layout.width == 0) {
        zoomToFit();
        return;
    }
    const double dpr = devicePixelRatioF();
    Placement p;
    p.cellSize = std::clamp(position.zoom * dpr, minCellSize, maxCellSize * dpr);
    p.originX = width() * dpr / 2 - position.centreX * p.cellSize;
    p.originY = height() * dpr / 2 - position.centreY * p.cellSize;
    m_zoomStart = -1;
    m_view = p;
    m_fitted = false;
    update();
}

void HeatmapView::setFocusRange(uint32_t first, uint32_t count)
{
    m_focusFirst = first;
    m_focusCount = count;
    update();
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
    update();
}

void HeatmapView::zoomAt(const QPointF &anchor, double factor)
{
    if (m_layout.width == 0 || !(factor > 0)) {
        return;
    }
    m_zoomStart = -1;
    const Placement fit = fittedPlacement();
    Placement p = placement();
    // From half the fitted size (the whole fleet with a margin) to 96 logical pixels per GPU (room for its value
    // and its node's name at any device pixel ratio); never below a quarter of a physical pixel, the most a pixel
    // aggregates (4 x 4 GPUs), so that no GPU is skipped.
    const double dpr = devicePixelRatioF();
    const double cell = std::clamp(
        p.cellSize * factor, std::max(minCellSize, fit.cellSize / 2), std::max(maxCellSize * dpr, fit.cellSize));
    const double ax = anchor.x() * dpr;
    const double ay = anchor.y() * dpr;
    p.originX = ax - (ax - p.originX) * cell / p.cellSize;
    p.originY = ay - (ay - p.originY) * cell / p.cellSize;
    p.cellSize = cell;
    m_view = p;
    m_fitted = false;
    update();
}

void HeatmapView::panBy(const QPointF &delta)
{
    if (m_layout.width == 0) {
        return;
    }
    Placement p = placement();
    m_zoomStart = -1;
    const double dpr = devicePixelRatioF();
    p.originX += delta.x() * dpr;
    p.originY += delta.y() * dpr;
    // Keep at least a quarter of the map on screen, so it can never be lost off the edge.
    const double w = width() * dpr;
    const double h = height() * dpr;
    const double mapW = m_layout.width * p.cellSize;
    const double mapH = m_layout.height * p.cellSize;
    p.originX = std::clamp(p.originX, std::min(0.0, w / 4 - mapW), std::max(0.0, w - std::min(mapW, w) / 4));
    p.originY = std::clamp(p.originY, std::min(0.0, h / 4 - mapH), std::max(0.0, h - std::min(mapH, h) / 4));
    m_view = p;
    m_fitted = false;
    update();
}

void HeatmapView::setAggregation(Aggregation aggregation)
{
    m_aggregation = aggregation;
    update();
}

void HeatmapView::zoomToFit()
{
    m_zoomStart = -1;
    m_fitted = true;
    update();
}

HeatmapView::Placement HeatmapView::fittedPlacement() const
{
    Placement p;
    if (m_layout.width == 0) {
        return p;
    }
    const double dpr = devicePixelRatioF();
    // The floor plan keeps a margin on the left for the row names and one on top for the first row's rack names.
    const bool floorPlan = m_arrangement == Arrangement::FloorPlan;
    const double margin = floorPlan ? std::min(64.0 * m_labelScale, width() / 8.0) * dpr : 0.0;
    const double top = floorPlan ? std::min(20.0 * m_labelScale, height() / 16.0) * dpr : 0.0;
    const double w = width() * dpr - margin;
    const double h = height() * dpr - top;
    double cell = std::max(minCellSize, std::min(w / m_layout.width, h / m_layout.height));
    // Whole physical pixels per cell from four on, so that every cell (and its border, from six) is the same size;
    // below that, rounding down would waste up to half the window, and cells of n and n + 1 pixels read the same.
    if (cell >= 4.0) {
        cell = std::floor(cell);
    }
    p.cellSize = cell;
    p.originX = margin + std::floor((w - cell * m_layout.width) / 2);
    p.originY = top + std::floor((h - cell * m_layout.height) / 2);
    return p;
}

int HeatmapView::gpuAt(const QPointF &pos) const
{
    if (m_layout.width == 0) {
        return -1;
    }
    const auto p = placement();
    const double dpr = devicePixelRatioF();
    const int x = static_cast<int>(std::floor((pos.x() * dpr - p.originX) / p.cellSize));
    const int y = static_cast<int>(std::floor((pos.y() * dpr - p.originY) / p.cellSize));
    return m_layout.gpuAt(x, y);
}

QRectF HeatmapView::cellRect(int gpu) const
{
    if (gpu < 0 || static_cast<size_t>(gpu) >= m_layout.gpuCells.size()) {
        return {};
    }
    const auto p = placement();
    const double dpr = devicePixelRatioF();
    const QPoint c = m_layout.gpuCells[static_cast<size_t>(gpu)];
    return { (p.originX + c.x() * p.cellSize) / dpr, (p.originY + c.y() * p.cellSize) / dpr, p.cellSize / dpr,
        p.cellSize / dpr };
}

float HeatmapView::valueOf(int gpu) const
{
    const MetricPlane *plane = m_frame ? m_frame->plane(m_metric.id) : nullptr;
    if (plane == nullptr || gpu < 0 || static_cast<size_t>(gpu) >= plane->values.size()) {
        return std::numeric_limits<float>::quiet_NaN();
    }
    return plane->values[static_cast<size_t>(gpu)];
}

QString HeatmapView::describeGpu(int gpu) const
{
    if (!m_topology || gpu < 0 || static_cast<uint32_t>(gpu) >= m_topology->gpuCount) {
        return {};
    }
    const auto &node = m_topology->nodeOf(static_cast<uint32_t>(gpu));
    QString text = QStringLiteral("<b>%1</b> GPU %2<br>%3: %4")
                       .arg(node.hostname)
                       .arg(static_cast<uint32_t>(gpu) - node.firstGpu)
                       .arg(m_metric.name.toHtmlEscaped(), formatValue(valueOf(gpu), m_metric.unit).toHtmlEscaped());
    if (m_frame) {
        text += QStringLiteral("<br>health: %1").arg(health::describe(m_frame->health[static_cast<size_t>(gpu)]));
    }
    if (const Job *job = m_jobs ? m_jobs->runningJobOn(static_cast<uint32_t>(gpu)) : nullptr) {
        text += QStringLiteral("<br>job: %1 #%2 (%3, %L4 GPUs)")
                    .arg(job->name.toHtmlEscaped())
                    .arg(job->id)
                    .arg(job->owner.toHtmlEscaped())
                    .arg(job->gpus.size());
    } else if (m_jobs) {
        text += QStringLiteral("<br>job: none (idle)");
    }
    if (m_frame) {
        const qint64 ageMs = std::max<qint64>(0, m_wallClock() - m_frame->sampleTimeMs);
        const QString when = QDateTime::fromMSecsSinceEpoch(m_frame->sampleTimeMs).toString(QStringLiteral("HH:mm:ss"));
        text += QStringLiteral("<br>data as of %1 (%2 s old)")
                    .arg(when)
                    .arg(static_cast<double>(ageMs) / 1000.0, 0, 'f', 1);
    }
    const QString uuid = m_topology->uuidText(static_cast<uint32_t>(gpu));
    if (!uuid.isEmpty()) {
        text += QStringLiteral("<br><small>%1</small>").arg(uuid);
    }
    text += QStringLiteral("<br><small>fleet index %1 · %2</small>").arg(gpu).arg(node.model.toHtmlEscaped());
    return text;
}

QString HeatmapView::shaderSource(const QString &path) const
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        qCCritical(lcHeatmap, "missing shader resource %s", qPrintable(path));
        return {};
    }
    const QByteArray header = context()->isOpenGLES()
        ? QByteArrayLiteral("#version 300 es\nprecision highp float;\nprecision highp int;\n")
        : QByteArrayLiteral("#version 330 core\n");
    return QString::fromUtf8(header + file.readAll());
}

void HeatmapView::initializeGL()
{
    initializeOpenGLFunctions();
    disconnect(m_contextDestroyed);
    m_contextDestroyed = connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, [this] {
        makeCurrent();
        releaseGL();
        doneCurrent();
    });

    m_program = std::make_unique<QOpenGLShaderProgram>();
    const bool ok = m_program->addShaderFromSourceCode(
                        QOpenGLShader::Vertex, shaderSource(QStringLiteral(":/shaders/heatmap.vert")))
        && m_program->addShaderFromSourceCode(
            QOpenGLShader::Fragment, shaderSource(QStringLiteral(":/shaders/heatmap.frag")))
        && m_program->link();
    if (!ok) {
        qCCritical(lcHeatmap, "heatmap shader failed: %s", qPrintable(m_program->log()));
        m_program.reset();
        return;
    }
    m_vao = std::make_unique<QOpenGLVertexArrayObject>();
    m_vao->create();

    GLuint textures[6];
    glGenTextures(6, textures);
    m_layoutTexture = textures[0];
    m_dataTextures = { textures[1], textures[4] };
    m_healthTexture = textures[2];
    m_colorMapTexture = textures[3];
    m_markTexture = textures[5];
    for (GLuint t : textures) {
        glBindTexture(GL_TEXTURE_2D, t);
        // Every lookup is a texelFetch of an exact texel: no filtering, no mipmaps.
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    m_topologyDirty = true;
    m_layoutDirty = true;
    m_frameDirty = true;
    m_colorMapDirty = true;
}

void HeatmapView::releaseGL()
{
    if (m_layoutTexture != 0) {
        const GLuint textures[6] = { m_layoutTexture, m_dataTextures[0], m_healthTexture, m_colorMapTexture,
            m_dataTextures[1], m_markTexture };
        glDeleteTextures(6, textures);
        m_layoutTexture = m_healthTexture = m_colorMapTexture = m_markTexture = 0;
        m_dataTextures = {};
    }
    m_vao.reset();
    m_program.reset();
}

void HeatmapView::uploadLayout()
{
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, m_layoutTexture);
    const int w = std::max(1, m_layout.width);
    const int h = std::max(1, m_layout.height);
    static const int32_t none = HeatmapLayout::gap;
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32I, w, h, 0, GL_RED_INTEGER, GL_INT,
        m_layout.cells.empty() ? &none : m_layout.cells.data());
    m_layoutDirty = false;
}

void HeatmapView::allocateDataTextures()
{
    // The dense-order textures for this fleet size; frames fill them with sub-image uploads.
    const int n = m_topology ? static_cast<int>(m_topology->gpuCount) : 1;
    const int rows = (n + dataTextureWidth - 1) / dataTextureWidth;
    for (GLuint t : m_dataTextures) {
        glBindTexture(GL_TEXTURE_2D, t);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, dataTextureWidth, rows, 0, GL_RED, GL_FLOAT, nullptr);
    }
    glBindTexture(GL_TEXTURE_2D, m_healthTexture);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8UI, dataTextureWidth, rows, 0, GL_RED_INTEGER, GL_UNSIGNED_BYTE, nullptr);
    glBindTexture(GL_TEXTURE_2D, m_markTexture);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8UI, dataTextureWidth, rows, 0, GL_RED_INTEGER, GL_UNSIGNED_BYTE, nullptr);
    m_marksDirty = true;
    m_topologyDirty = false;
    m_hasData = false;
    m_hasPrevious = false;
}

void HeatmapView::uploadFrame()
{
    m_frameDirty = false;
    const bool newFrame = m_frameIsNew;
    m_frameIsNew = false;
    const MetricPlane *plane = m_frame ? m_frame->plane(m_metric.id) : nullptr;
    if (plane == nullptr) {
        m_hasData = false;
        m_hasPrevious = false;
        return;
    }
    // A new frame goes into the other texture, so the one shown until now becomes the previous frame; a new metric
    // replaces the current one.
    if (newFrame && m_hasData) {
        m_current = 1 - m_current;
        m_hasPrevious = m_animated;
    }
    const int n = static_cast<int>(plane->values.size());
    const int fullRows = n / dataTextureWidth;
    const int rest = n % dataTextureWidth;
    // Straight from the frame's memory: the full texture rows in one call, the partial last row in a second.
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glBindTexture(GL_TEXTURE_2D, m_dataTextures[static_cast<size_t>(m_current)]);
    if (fullRows > 0) {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, dataTextureWidth, fullRows, GL_RED, GL_FLOAT, plane->values.data());
    }
    if (rest > 0) {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, fullRows, rest, 1, GL_RED, GL_FLOAT,
            plane->values.data() + static_cast<ptrdiff_t>(fullRows) * dataTextureWidth);
    }
    glBindTexture(GL_TEXTURE_2D, m_healthTexture);
    if (fullRows > 0) {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, dataTextureWidth, fullRows, GL_RED_INTEGER, GL_UNSIGNED_BYTE,
            m_frame->health.data());
    }
    if (rest > 0) {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, fullRows, rest, 1, GL_RED_INTEGER, GL_UNSIGNED_BYTE,
            m_frame->health.data() + static_cast<ptrdiff_t>(fullRows) * dataTextureWidth);
    }
    // Back to GL's default: QPainter's glyph cache uploads with it and draws garbled text otherwise.
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    m_hasData = true;
}

void HeatmapView::uploadColorMap()
{
    std::array<uint8_t, ColorMap::size * 4> rgba {};
    for (int i = 0; i < ColorMap::size; ++i) {
        const QRgb c = m_colorMap.at(i);
        rgba[static_cast<size_t>(i) * 4 + 0] = static_cast<uint8_t>(qRed(c));
        rgba[static_cast<size_t>(i) * 4 + 1] = static_cast<uint8_t>(qGreen(c));
        rgba[static_cast<size_t>(i) * 4 + 2] = static_cast<uint8_t>(qBlue(c));
        rgba[static_cast<size_t>(i) * 4 + 3] = 255;
    }
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, m_colorMapTexture);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, ColorMap::size, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    m_colorMapDirty = false;
}

void HeatmapView::uploadDirty()
{
    if (m_topologyDirty) {
        allocateDataTextures();
    }
    if (m_layoutDirty) {
        uploadLayout();
    }
    if (m_frameDirty) {
        uploadFrame();
    }
    if (m_colorMapDirty) {
        uploadColorMap();
    }
    if (m_marksDirty) {
        uploadMarks();
    }
}

void HeatmapView::uploadMarks()
{
    m_marksDirty = false;
    const size_t n = m_topology ? m_topology->gpuCount : 0;
    if (m_marks.size() != n || n == 0) {
        return; // none: the shader is told there are no marks
    }
    const int fullRows = static_cast<int>(n / dataTextureWidth);
    const int rest = static_cast<int>(n % dataTextureWidth);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glBindTexture(GL_TEXTURE_2D, m_markTexture);
    if (fullRows > 0) {
        glTexSubImage2D(
            GL_TEXTURE_2D, 0, 0, 0, dataTextureWidth, fullRows, GL_RED_INTEGER, GL_UNSIGNED_BYTE, m_marks.data());
    }
    if (rest > 0) {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, fullRows, rest, 1, GL_RED_INTEGER, GL_UNSIGNED_BYTE,
            m_marks.data() + static_cast<ptrdiff_t>(fullRows) * dataTextureWidth);
    }
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
}

void HeatmapView::uploadPending()
{
    if (!m_program || !m_topology) {
        return;
    }
    makeCurrent();
    uploadDirty();
    glFinish();
    doneCurrent();
}

void HeatmapView::paintGL()
{
    ++m_paintCount;
    const double dpr = devicePixelRatioF();
    const int fbWidth = static_cast<int>(std::lround(width() * dpr));
    const int fbHeight = static_cast<int>(std::lround(height() * dpr));
    glViewport(0, 0, fbWidth, fbHeight);
    glClearColor(
        qRed(backgroundColour) / 255.0F, qGreen(backgroundColour) / 255.0F, qBlue(backgroundColour) / 255.0F, 1.0F);
    glClear(GL_COLOR_BUFFER_BIT);
    if (!m_program || !m_topology) {
        QPainter painter(this);
        painter.setPen(QColor(0xc8, 0xcc, 0xd4));
        QFont f = scaledFont(HeatmapOverlay::overlayFont(painter.font()), 1.6);
        painter.setFont(f);
        painter.drawText(rect(), Qt::AlignCenter,
            m_program ? tr("Waiting for the fleet's topology…") : tr("OpenGL 3.3 or ES 3.0 is needed"));
        return;
    }
    uploadDirty();

    const auto p = placement();
    m_program->bind();
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, m_layoutTexture);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, m_dataTextures[static_cast<size_t>(m_current)]);
    glActiveTexture(GL_TEXTURE4);
    glBindTexture(GL_TEXTURE_2D, m_dataTextures[static_cast<size_t>(1 - m_current)]);
    glActiveTexture(GL_TEXTURE2);
    glBindTexture(GL_TEXTURE_2D, m_healthTexture);
    glActiveTexture(GL_TEXTURE3);
    glBindTexture(GL_TEXTURE_2D, m_colorMapTexture);
    glActiveTexture(GL_TEXTURE5);
    glBindTexture(GL_TEXTURE_2D, m_markTexture);
    m_program->setUniformValue("uMarks", 5);
    m_program->setUniformValue("uHasMarks", m_markCount > 0 ? 1 : 0);
    m_program->setUniformValue("uFocusFirst", static_cast<int>(m_focusFirst));
    m_program->setUniformValue("uFocusCount", static_cast<int>(m_focusCount));
    m_program->setUniformValue("uLayout", 0);
    m_program->setUniformValue("uData", 1);
    m_program->setUniformValue("uHealth", 2);
    m_program->setUniformValue("uColorMap", 3);
    m_program->setUniformValue("uPrevious", 4);
    const double mix = interpolation();
    m_program->setUniformValue("uMix", static_cast<float>(mix));
    m_program->setUniformValue("uViewport", QVector2D(static_cast<float>(fbWidth), static_cast<float>(fbHeight)));
    m_program->setUniformValue("uOrigin", QVector2D(static_cast<float>(p.originX), static_cast<float>(p.originY)));
    m_program->setUniformValue("uCellSize", static_cast<float>(p.cellSize));
    // QOpenGLShaderProgram has no ivec2 setter; a float pair would leave the ivec2 unset.
    glUniform2i(m_program->uniformLocation("uLayoutSize"), m_layout.width, m_layout.height);
    m_program->setUniformValue("uDataWidth", dataTextureWidth);
    m_program->setUniformValue("uRange", QVector2D(m_metric.rangeMin, m_metric.rangeMax));
    m_program->setUniformValue("uHasData", m_hasData ? 1 : 0);
    m_program->setUniformValue("uAggregate", m_aggregation == Aggregation::Worst ? 0 : 1);
    m_program->setUniformValue("uStale", m_staleNote.isEmpty() ? 0 : 1);
    float ringRadius = 0.0F;
    QPointF ringCentre;
    if (m_selectedGpu >= 0 && static_cast<size_t>(m_selectedGpu) < m_layout.gpuCells.size()) {
        const QPoint c = m_layout.gpuCells[static_cast<size_t>(m_selectedGpu)];
        ringCentre = QPointF(p.originX + (c.x() + 0.5) * p.cellSize, p.originY + (c.y() + 0.5) * p.cellSize);
        ringRadius = static_cast<float>(std::max(6.0, p.cellSize * 0.75));
    }
    m_program->setUniformValue("uSelectedCentre", ringCentre);
    m_program->setUniformValue("uSelectedRadius", ringRadius);
    setColourUniform(m_program.get(), "uBackground", backgroundColour);
    setColourUniform(m_program.get(), "uAisle", aisleColour);
    setColourUniform(m_program.get(), "uNoData", noDataColour);
    m_vao->bind();
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    m_vao->release();
    m_program->release();
    glActiveTexture(GL_TEXTURE0);
    paintLabels(p);
    pace();
    if (m_zoomStart >= 0 && m_clock() - m_zoomStart >= zoomMs) {
        m_zoomStart = -1;
        m_fitted = m_zoomEndsFitted;
    }
    if (mix < 1.0 || m_zoomStart >= 0) {
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

void HeatmapView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_dragging) {
        panBy(event->position() - m_dragFrom);
        m_dragFrom = event->position();
    }
    const int gpu = gpuAt(event->position());
    if (gpu != m_hoveredGpu) {
        m_hoveredGpu = gpu;
        Q_EMIT hoveredGpuChanged(gpu);
        if (gpu < 0) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(
                event->globalPosition().toPoint(), describeGpu(gpu), this, cellRect(gpu).toAlignedRect());
        }
    }
    QOpenGLWidget::mouseMoveEvent(event);
}

void HeatmapView::paintLabels(const Placement &p)
{
    QPainter painter(this);
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
    HeatmapOverlay::paint(painter, scene);
}

void HeatmapView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        m_pressedAt = event->position();
        m_dragFrom = event->position();
        m_dragging = true;
        setCursor(Qt::ClosedHandCursor);
    }
    QOpenGLWidget::mousePressEvent(event);
}

void HeatmapView::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton && m_dragging) {
        m_dragging = false;
        unsetCursor();
        // A click, not a drag: select the GPU under the cursor (or nothing).
        if ((event->position() - m_pressedAt).manhattanLength() < 4) {
            const int gpu = gpuAt(event->position());
            setSelectedGpu(gpu);
            Q_EMIT gpuSelected(m_selectedGpu);
        }
    }
    QOpenGLWidget::mouseReleaseEvent(event);
}

void HeatmapView::mouseDoubleClickEvent(QMouseEvent *event)
{
    zoomAt(event->position(), (event->modifiers() & Qt::ShiftModifier) != 0 ? 0.5 : 2.0);
}

void HeatmapView::wheelEvent(QWheelEvent *event)
{
    // One notch (120) zooms by 25%; touchpads send smaller steps for smooth zooming.
    const double notches = event->angleDelta().y() / 120.0;
    if (notches != 0) {
        zoomAt(event->position(), std::pow(1.25, notches));
    }
    event->accept();
}

void HeatmapView::keyPressEvent(QKeyEvent *event)
{
    const QPointF centre(width() / 2.0, height() / 2.0);
    const double step = std::min(width(), height()) * 0.1;
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomAt(centre, 1.25);
        break;
    case Qt::Key_Minus:
        zoomAt(centre, 0.8);
        break;
    case Qt::Key_0:
    case Qt::Key_Home:
        zoomToFit();
        break;
    case Qt::Key_Escape:
    case Qt::Key_Backspace:
        Q_EMIT upRequested();
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (const int gpu = m_selectedGpu >= 0 ? m_selectedGpu : m_hoveredGpu; gpu >= 0) {
            Q_EMIT gpuActivated(gpu);
        }
        break;
    case Qt::Key_Left:
        panBy({ step, 0 });
        break;
    case Qt::Key_Right:
        panBy({ -step, 0 });
        break;
    case Qt::Key_Up:
        panBy({ 0, step });
        break;
    case Qt::Key_Down:
        panBy({ 0, -step });
        break;
    default:
        QOpenGLWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

void HeatmapView::leaveEvent(QEvent *event)
{
    if (m_hoveredGpu >= 0) {
        m_hoveredGpu = -1;
        Q_EMIT hoveredGpuChanged(-1);
    }
    QOpenGLWidget::leaveEvent(event);
}

bool HeatmapView::event(QEvent *event)
{
    // Pinch on a touchpad or touch screen.
    if (event->type() == QEvent::NativeGesture) {
        auto *gesture = static_cast<QNativeGestureEvent *>(event);
        if (gesture->gestureType() == Qt::ZoomNativeGesture) {
            zoomAt(gesture->position(), 1.0 + gesture->value());
            return true;
        }
    }
    // A tooltip request (the mouse rests) shows the live value, refreshed from the current frame.
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const int gpu = gpuAt(help->pos());
        if (gpu >= 0) {
            QToolTip::showText(help->globalPos(), describeGpu(gpu), this, cellRect(gpu).toAlignedRect());
        } else {
            QToolTip::hideText();
            event->ignore();
        }
        return true;
    }
    return QOpenGLWidget::event(event);
}

} // namespace fleetscope
