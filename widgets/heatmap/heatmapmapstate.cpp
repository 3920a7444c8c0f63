// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapmapstate.h"

#include "widgets/heatmap/heatmappassschedule.h"

#include <QDateTime>
#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace fleetscope {

namespace {
QString formatValue(float value, const QString &unit)
{
    if (std::isnan(value)) {
        return QStringLiteral("no value");
    }
    const int decimals = std::abs(value) >= 100 ? 0 : 1;
    return QString::number(value, 'f', decimals) + QLatin1Char(' ') + unit;
}
} // namespace

HeatmapMapState::HeatmapMapState()
    : m_colorMap(ColorMap::byName(QStringLiteral("inferno")))
{
    m_clock = [timer = std::make_shared<QElapsedTimer>()] {
        if (!timer->isValid()) {
            timer->start();
        }
        return timer->elapsed();
    };
    m_wallClock = [] { return QDateTime::currentMSecsSinceEpoch(); };
}

void HeatmapMapState::setTopology(const TopologyPtr &topology)
{
    m_topology = topology;
    if (m_jobs && (!topology || m_jobs->topologyGeneration != topology->generation)) {
        m_jobs.reset();
    }
    m_selectedGpu = -1;
    m_frame.reset();
    m_hasData = false;
    m_topologyDirty = true;
    m_marks.clear();
    m_markCount = 0;
    m_domainRuns.clear();
    m_domainCount = 0;
    placeDomain();
    m_focusCount = 0;
}

bool HeatmapMapState::setJobs(const JobsPtr &jobs)
{
    const JobsPtr before = m_jobs;
    m_jobs = (jobs && m_topology && jobs->topologyGeneration == m_topology->generation) ? jobs : nullptr;
    if (m_arrangement != HeatmapArrangement::ByJob) {
        return false;
    }
    // GPUs move only when the set of running jobs changed, not on every poll.
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
    return running(before) != running(m_jobs);
}

bool HeatmapMapState::setArrangement(HeatmapArrangement arrangement)
{
    if (arrangement == m_arrangement) {
        return false;
    }
    m_arrangement = arrangement;
    return true;
}

void HeatmapMapState::setLayout(std::shared_ptr<const HeatmapLayout> layout)
{
    m_layout = std::move(layout);
    m_layoutDirty = true;
    if (!m_domainRuns.empty()) {
        placeDomain();
    }
}

bool HeatmapMapState::setFrame(const FramePtr &frame)
{
    // The client checks frames against the topology; this guards a frame from a topology no longer shown.
    if (!m_topology || !frame || frame->health.size() != m_topology->gpuCount) {
        return false;
    }
    if (m_animated && m_frame && m_hasData && frame->plane(m_metric.id) != nullptr) {
        m_transitionStart = m_clock();
        m_transitionMs = std::clamp<qint64>(frame->sampleTimeMs - m_frame->sampleTimeMs, 50, 5000);
    }
    m_frame = frame;
    m_frameDirty = true;
    m_frameIsNew = true;
    return true;
}

void HeatmapMapState::setMetric(const MetricInfo &metric)
{
    m_metric = metric;
    m_hasPrevious = false; // no morph from another metric's values
    if (!metric.colourMap.isEmpty()) {
        setColorMap(ColorMap::forMetric(metric));
    }
    m_frameDirty = true;
}

bool HeatmapMapState::setRange(float rangeMin, float rangeMax)
{
    if (rangeMin < rangeMax && (rangeMin != m_metric.rangeMin || rangeMax != m_metric.rangeMax)) {
        m_metric.rangeMin = rangeMin;
        m_metric.rangeMax = rangeMax;
        return true;
    }
    return false;
}

void HeatmapMapState::setColorMap(const ColorMap &map)
{
    m_colorMap = map;
    m_colorMapDirty = true;
}

void HeatmapMapState::setMarkedGpus(const std::vector<uint32_t> &gpus)
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
    if (!m_domainRuns.empty()) {
        m_domainRuns.clear();
        m_domainCount = 0;
        placeDomain();
    }
}

void HeatmapMapState::setDomainGpus(const std::vector<std::pair<uint32_t, uint32_t>> &runs)
{
    const uint32_t n = m_topology ? m_topology->gpuCount : 0;
    if (m_marks.size() != n) {
        m_marks.assign(n, 0);
        m_markCount = 0;
    }
    for (uint8_t &m : m_marks) {
        m &= uint8_t { 1 };
    }
    m_domainRuns.clear();
    m_domainCount = 0;
    for (const auto &[first, count] : runs) {
        // Runs from an incident the backend sent are checked against this fleet, not trusted.
        if (first >= n) {
            continue;
        }
        const uint32_t end = first + std::min(count, n - first);
        for (uint32_t g = first; g < end; ++g) {
            m_marks[g] |= uint8_t { 2 };
        }
        m_domainRuns.emplace_back(first, end - first);
        m_domainCount += end - first;
    }
    m_marksDirty = true;
    placeDomain();
}

void HeatmapMapState::placeDomain()
{
    ++m_domainRevision;
    m_domainCells.clear();
    if (!m_topology || m_domainRuns.empty() || m_layout->gpuCells.size() != m_topology->gpuCount
        || m_topology->nodeOfGpu.size() != m_topology->gpuCount) {
        return;
    }
    // The bounding cells of the domain's GPUs in each rack: a leaf's one column of a floor plan's rack, a PDU's whole
    // rack, a segment of a by-fabric block's line.
    std::vector<QRect> byRack;
    uint32_t rack = UINT32_MAX;
    for (const auto &[first, count] : m_domainRuns) {
        for (uint32_t g = first; g < first + count; ++g) {
            const uint32_t r = m_topology->nodeOf(g).rack;
            const QPoint c = m_layout->gpuCells[g];
            if (r != rack || byRack.empty()) {
                byRack.emplace_back(c, QSize(1, 1));
                rack = r;
            } else {
                byRack.back() |= QRect(c, QSize(1, 1));
            }
        }
    }
    // Racks side by side on one line (a by-fabric leaf's ports, a scalable unit's racks) become one outline.
    std::sort(byRack.begin(), byRack.end(), [](const QRect &a, const QRect &b) {
        return std::make_tuple(a.top(), a.bottom(), a.left()) < std::make_tuple(b.top(), b.bottom(), b.left());
    });
    for (const QRect &r : byRack) {
        if (!m_domainCells.empty()) {
            QRect &last = m_domainCells.back();
            if (last.top() == r.top() && last.bottom() == r.bottom() && r.left() <= last.right() + 1) {
                last |= r;
                continue;
            }
        }
        m_domainCells.push_back(r);
    }
}

void HeatmapMapState::setFocusRange(uint32_t first, uint32_t count)
{
    m_focusFirst = first;
    m_focusCount = count;
}

bool HeatmapMapState::setSelectedGpu(int gpu)
{
    const int valid = (m_topology && gpu >= 0 && static_cast<uint32_t>(gpu) < m_topology->gpuCount) ? gpu : -1;
    return std::exchange(m_selectedGpu, valid) != valid;
}

bool HeatmapMapState::setStaleNote(const QString &note)
{
    return std::exchange(m_staleNote, note) != note;
}

bool HeatmapMapState::setReplayNote(const QString &note)
{
    return std::exchange(m_replayNote, note) != note;
}

bool HeatmapMapState::setLabelScale(double scale)
{
    scale = std::clamp(scale, 0.5, 8.0);
    return std::exchange(m_labelScale, scale) != scale; // the fitted placement's margins follow on the next paint
}

const MetricPlane *HeatmapMapState::shownPlane() const
{
    return (m_frame && m_hasData) ? m_frame->plane(m_metric.id) : nullptr;
}

double HeatmapMapState::interpolation() const
{
    if (!m_animated || !m_hasPrevious) {
        return 1.0;
    }
    return std::clamp(
        static_cast<double>(m_clock() - m_transitionStart) / static_cast<double>(m_transitionMs), 0.0, 1.0);
}

float HeatmapMapState::valueOf(int gpu) const
{
    const MetricPlane *plane = m_frame ? m_frame->plane(m_metric.id) : nullptr;
    if (plane == nullptr || gpu < 0 || static_cast<size_t>(gpu) >= plane->values.size()) {
        return std::numeric_limits<float>::quiet_NaN();
    }
    return plane->values[static_cast<size_t>(gpu)];
}

QString HeatmapMapState::describeGpu(int gpu) const
{
    if (!m_topology || gpu < 0 || static_cast<uint32_t>(gpu) >= m_topology->gpuCount) {
        return {};
    }
    const auto &node = m_topology->nodeOf(static_cast<uint32_t>(gpu));
    const float value = valueOf(gpu);
    // A layer of categories names the GPU's; a metric gives its value.
    const auto category = static_cast<qsizetype>(std::isnan(value) ? -1.0F : std::round(value));
    const QString shown = !m_metric.categories.isEmpty() && category >= 0 && category < m_metric.categories.size()
        ? m_metric.categories[category]
        : formatValue(value, m_metric.unit);
    QString text = QStringLiteral("<b>%1</b> GPU %2<br>%3: %4")
                       .arg(node.hostname)
                       .arg(static_cast<uint32_t>(gpu) - node.firstGpu)
                       .arg(m_metric.name.toHtmlEscaped(), shown.toHtmlEscaped());
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
    // Its power, cooling and network domains where the backend knows them, a line a cause: one line of them all is
    // the tooltip's widest, and broken where it wraps inside a name ("r07-" on a line, "crah1" on the next).
    for (const QString &line : Topology::linesByCause(m_topology->domainNames(static_cast<uint32_t>(gpu)))) {
        text += QStringLiteral("<br>") + line.toHtmlEscaped();
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

QRect HeatmapMapState::cellsOf(uint32_t first, uint32_t count) const
{
    QRect bounds;
    const auto end = std::min<size_t>(static_cast<size_t>(first) + count, m_layout->gpuCells.size());
    for (size_t g = first; g < end; ++g) {
        bounds |= QRect(m_layout->gpuCells[g], QSize(1, 1));
    }
    return bounds;
}

void HeatmapMapState::fitCamera(HeatmapCamera &camera) const
{
    camera.setLayoutSize(m_layout->width, m_layout->height);
    const bool floorPlan = m_arrangement == HeatmapArrangement::FloorPlan;
    camera.setFitMargins(floorPlan ? 64.0 * m_labelScale : 0.0, floorPlan ? 20.0 * m_labelScale : 0.0);
}

void HeatmapMapState::uploadAgain()
{
    m_topologyDirty = m_layoutDirty = m_frameDirty = m_colorMapDirty = true;
}

void HeatmapMapState::upload(HeatmapInputs &renderer)
{
    if (m_topologyDirty) {
        renderer.allocate(m_topology ? m_topology->gpuCount : 0);
        m_marksDirty = true;
        m_topologyDirty = false;
        m_hasData = false;
        m_hasPrevious = false;
    }
    if (m_layoutDirty) {
        renderer.uploadLayout(m_layout);
        m_layoutDirty = false;
    }
    if (m_frameDirty) {
        m_frameDirty = false;
        const bool newFrame = std::exchange(m_frameIsNew, false);
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
            renderer.uploadFrame(m_frame, plane->values, m_frame->health, shift);
            m_hasData = true;
        }
    }
    if (m_colorMapDirty) {
        renderer.uploadColorMap(m_colorMap);
        m_colorMapDirty = false;
    }
    if (m_marksDirty) {
        m_marksDirty = false;
        if (m_topology && m_marks.size() == m_topology->gpuCount && !m_marks.empty()) {
            renderer.uploadMarks(m_marks);
        }
    }
}

HeatmapScene HeatmapMapState::scene(const HeatmapCamera::Placement &p, QSize framebuffer, double mix) const
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
    scene.worst = m_aggregation == HeatmapAggregation::Worst;
    scene.stale = !m_staleNote.isEmpty();
    scene.hasMarks = m_markCount > 0 || m_domainCount > 0;
    scene.focusFirst = m_focusFirst;
    scene.focusCount = m_focusCount;
    if (m_selectedGpu >= 0 && static_cast<size_t>(m_selectedGpu) < m_layout->gpuCells.size()) {
        const QPoint c = m_layout->gpuCells[static_cast<size_t>(m_selectedGpu)];
        scene.ringCentre = QPointF(p.originX + (c.x() + 0.5) * p.cellSize, p.originY + (c.y() + 0.5) * p.cellSize);
        scene.ringRadius = static_cast<float>(std::max(6.0, p.cellSize * 0.75));
    }
    return scene;
}

} // namespace fleetscope
