// SPDX-License-Identifier: Apache-2.0
#include "app/session/display.h"

#include "app/session/fleetalerts.h"
#include "app/session/livefeed.h"
#include "app/session/timemachine.h"
#include "model/autorange.h"
#include "model/framediff.h"
#include "model/replaycontroller.h"
#include "widgets/heatmap/colormap.h"

#include <QDateTime>
#include <QThread>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {
struct DriftResult
{
    VersionDrift drift;
    std::vector<Problem> problems;
};

// The console's own layers: categories, drawn from a plane made here over each frame, no rate of change.
bool isLayer(const QString &id)
{
    return id == QLatin1String(VersionDrift::metricId) || id == QLatin1String(AlertLayer::metricId);
}
} // namespace

Display::Display(const Options &options, LiveFeed *live, TimeMachine *time, QObject *parent)
    : QObject(parent)
    , m_live(live)
    , m_time(time)
    , m_metricId(options.metric)
    , m_changeWindowS(options.changeWindowS)
    , m_autoRange(options.autoRange)
{
    connect(m_time->replay(), &ReplayController::modeChanged, this, [this] {
        if (m_shown.comparing) { // back from a comparison to the metric itself
            m_shown.comparing = false;
            applyMetric();
        }
    });
}

void Display::updateDrift()
{
    const TopologyPtr topology = m_live->topology();
    if (!topology) {
        return;
    }
    const JobsPtr jobs = m_live->jobs();
    // A million GPUs take tens of ms: off the GUI thread, the latest request wins.
    m_driftJob.start(
        [topology, jobs](const JobTracker::Ticket &) {
            DriftResult result;
            result.drift = computeVersionDrift(*topology, jobs.get());
            // Its problems too, worded once here rather than on every batch of events that problems are read for: at
            // a million GPUs the wording was a third of the problems dock's refresh on the GUI thread.
            result.problems = ::fleetscope::driftProblems(result.drift);
            return result;
        },
        [this](DriftResult result) {
            m_drift = std::move(result.drift);
            m_driftProblems = std::move(result.problems);
            rebuildMetrics();
            if (m_shown.metric.id == QLatin1String(VersionDrift::metricId)) {
                m_layerSource.reset();
                applyMetric(); // new categories
            }
            Q_EMIT driftChanged();
        });
}

void Display::followAlerts(const FleetAlerts *alerts)
{
    m_alerts = alerts;
    connect(alerts, &FleetAlerts::boardChanged, this, &Display::updateAlertLayer);
    connect(alerts, &FleetAlerts::freshnessChanged, this, &Display::offerAlertLayer);
    updateAlertLayer();
}

void Display::offerAlertLayer()
{
    const AlertBoard &board = m_alerts->board();
    // Offered while the backend reads an Alertmanager: said so, or a board came (kept, as old, while it is down).
    const bool offered = m_alerts->freshness() != FleetAlerts::Freshness::NotConfigured || board.generation != 0
        || !board.alerts.empty();
    if (offered != m_alertsOffered) {
        m_alertsOffered = offered;
        if (offered && m_wantsAlertLayer && !m_live->metrics().empty()) {
            m_wantsAlertLayer = false;
            rebuildMetrics();
            setMetric(QString::fromLatin1(AlertLayer::metricId));
        } else {
            onCatalogueChanged(); // offered, or taken away (the layer shown gives way to the first metric, said so)
        }
    }
}

void Display::updateAlertLayer()
{
    if (m_alerts == nullptr) {
        return;
    }
    offerAlertLayer();
    const TopologyPtr topology = m_live->topology();
    if (!topology) {
        return;
    }
    // Every board, even of a generation seen: FleetAlerts hands the same state again placed on another fleet.
    const AlertBoard &board = m_alerts->board();
    // The runs are copied here (a few ms for 10,000 alerts), the board's text stays; the layer takes tens of ms at a
    // million GPUs when alerts cover whole rows: off the GUI thread, the latest request wins.
    m_alertJob.start([runs = alertRunsOf(board), topology](
                         const JobTracker::Ticket &) { return computeAlertLayer(runs, *topology); },
        [this](AlertLayer layer) {
            m_alertLayer = std::move(layer);
            if (m_shown.metric.id == QLatin1String(AlertLayer::metricId)) {
                redrawLayer();
            }
            Q_EMIT alertLayerChanged();
        });
}

void Display::redrawLayer()
{
    m_layerSource.reset();
    if (m_shown.raw && !m_shown.comparing) {
        showFrame(m_shown.raw);
    }
}

void Display::rebuildMetrics()
{
    m_metrics = m_live->metrics();
    if (!m_metrics.empty()) {
        m_metrics.push_back(m_drift.metric());
        if (m_alertsOffered) {
            m_metrics.push_back(AlertLayer::metric());
        }
    }
    Q_EMIT metricsChanged();
}

const MetricInfo *Display::selectedMetric() const
{
    const auto found
        = std::find_if(m_metrics.begin(), m_metrics.end(), [this](const MetricInfo &m) { return m.id == m_metricId; });
    return found != m_metrics.end() ? &*found : nullptr;
}

QString Display::metricName(const QString &id) const
{
    for (const auto &m : m_metrics) {
        if (m.id == id) {
            return m.name;
        }
    }
    return id;
}

void Display::onCatalogueChanged()
{
    rebuildMetrics();
    if (m_metrics.empty()) {
        return;
    }
    if (selectedMetric() == nullptr) {
        if (m_metricId == QLatin1String(AlertLayer::metricId)) {
            // Chosen (a wall's page, a view) before the backend said it reads an Alertmanager: shown once it does.
            m_wantsAlertLayer = true;
            Q_EMIT message(tr("The alerts layer shows once the backend's alerts arrive; showing %1 meanwhile.")
                               .arg(m_metrics[0].name),
                15000);
        } else if (!m_metricId.isEmpty()) {
            Q_EMIT message(
                tr("The backend has no metric '%1'; showing %2 instead.").arg(m_metricId, m_metrics[0].name), 15000);
        }
        m_metricId = m_metrics[0].id;
        Q_EMIT optionsChanged();
    }
    applyMetric();
}

void Display::setMetric(const QString &id)
{
    m_wantsAlertLayer = false; // chosen now: what was waiting for the alerts layer gives way
    if (id == m_metricId) {
        return;
    }
    m_metricId = id;
    if (!m_metrics.empty() && selectedMetric() == nullptr) {
        onCatalogueChanged(); // unknown here: the first one, said so
        return;
    }
    applyMetric();
    Q_EMIT optionsChanged();
}

template <typename T> void Display::setOption(T &option, T value)
{
    if (value == option) {
        return;
    }
    option = std::move(value);
    applyMetric();
    Q_EMIT optionsChanged();
}

void Display::setChangeWindow(int seconds)
{
    setOption(m_changeWindowS, std::max(0, seconds));
}

void Display::setColourMap(const QString &name)
{
    setOption(m_colourMap, name);
}

void Display::setAutoRange(bool autoRange)
{
    setOption(m_autoRange, autoRange);
}

void Display::applyMetric()
{
    const MetricInfo *metric = selectedMetric();
    if (metric == nullptr) {
        return;
    }
    m_shown.comparing = false;
    m_time->cancelComparison(); // of another metric, or of this one now drawn otherwise
    const bool layer = isLayer(metric->id);
    // The value, or its rate of change per minute over the chosen window (from the frames as they arrive); a
    // layer of categories has no rate.
    if (m_changeWindowS > 0 && !layer) {
        if (!m_rate || m_rate->metricId() != metric->id || m_rate->window() != std::chrono::seconds(m_changeWindowS)) {
            m_rate.emplace(metric->id, std::chrono::seconds(m_changeWindowS));
            Q_EMIT message(tr("Change per minute: the map fills in once %1 s of frames have arrived.")
                               .arg(std::max(2, m_changeWindowS / 4)),
                10000);
        }
        m_shown.metric = RateOfChange::rateMetric(*metric);
    } else {
        m_rate.reset();
        m_shown.metric = *metric;
    }
    // The user's colour map wins over the metric's suggestion; a categorical map fits only its own metric.
    if (!m_colourMap.isEmpty()) {
        m_shown.metric.colourMap = m_colourMap;
    }
    m_pending |= ShownState::Metric;
    if (const FramePtr last = m_live->latestFrame(); last && m_time->replay()->mode() == ReplayController::Mode::Live) {
        showFrame(last);
    } else {
        updateAutoRange();
    }
    publish();
    m_live->subscribe(layer ? QString() : metric->id); // a layer is the console's: the backend serves no such metric
}

void Display::showFrame(const FramePtr &frame)
{
    const TopologyPtr topology = m_live->topology();
    if (!frame || !topology || frame->topologyGeneration != topology->generation || m_shown.comparing) {
        publish();
        return; // a recorded frame of an earlier fleet layout cannot be drawn on this one
    }
    FramePtr shown = m_rate ? m_rate->apply(frame) : frame;
    if (isLayer(m_shown.metric.id)) {
        // The layer's plane over the frame's time and health (made once per frame: the wall and the desk share it).
        if (frame != m_layerSource || !m_layerFrame) {
            auto layered = std::make_shared<Frame>();
            layered->sequence = frame->sequence;
            layered->sampleTimeMs = frame->sampleTimeMs;
            layered->topologyGeneration = frame->topologyGeneration;
            layered->health = frame->health;
            const bool alerts = m_shown.metric.id == QLatin1String(AlertLayer::metricId);
            layered->planes.push_back(
                { m_shown.metric.id, alerts ? m_alertLayer.plane(*topology) : m_drift.plane(*topology) });
            m_layerSource = frame;
            m_layerFrame = std::move(layered);
        }
        shown = m_layerFrame;
    }
    m_shown.frame = std::move(shown);
    m_shown.raw = frame;
    m_pending |= ShownState::Frame;
    updateAutoRange();
    publish();
}

void Display::updateAutoRange()
{
    const ColorMap::Kind kind = ColorMap::forMetric(m_shown.metric).kind();
    if (!m_autoRange || kind == ColorMap::Kind::Categorical) {
        return; // categories have no range to fit
    }
    const MetricPlane *plane = m_shown.frame ? m_shown.frame->plane(m_shown.metric.id) : nullptr;
    if (plane == nullptr) {
        return;
    }
    const ValueRange range = robustRange(plane->values, 0.01, 0.99, kind == ColorMap::Kind::Diverging);
    if (!range.valid) {
        return;
    }
    // Move the range only when it is off by more than a tenth of its span, so the colours do not shimmer from one
    // frame to the next while the fleet is steady.
    const float tolerance = (m_shown.metric.rangeMax - m_shown.metric.rangeMin) * 0.1F;
    if (std::abs(range.min - m_shown.metric.rangeMin) <= tolerance
        && std::abs(range.max - m_shown.metric.rangeMax) <= tolerance) {
        return;
    }
    m_shown.metric.rangeMin = range.min;
    m_shown.metric.rangeMax = range.max;
    m_pending |= ShownState::Range;
}

void Display::publish()
{
    if (m_pending == ShownState::Changes()) {
        return;
    }
    const ShownState::Changes changes = m_pending;
    m_pending = {};
    Q_EMIT shownChanged(m_shown, changes);
}

void Display::showComparison(const FrameComparer::ResultPtr &result)
{
    const MetricInfo *metric = selectedMetric();
    if (metric == nullptr) {
        return;
    }
    if (!result->diff) {
        Q_EMIT message(result->error, 10000);
        return;
    }
    if (const TopologyPtr topology = m_live->topology();
        !topology || result->diff->topologyGeneration != topology->generation) {
        // Views draw frames of the fleet shown only: every frame they are handed is checked here, once.
        Q_EMIT message(tr("Those two times were recorded on another layout of the fleet"), 10000);
        return;
    }
    // The colour range fits the change: symmetric about zero, from the 1st to the 99th percentile.
    m_shown.metric = differenceMetric(*metric, result->range.valid ? result->range.max : 0.0F);
    const QString when = QStringLiteral("%1 → %2").arg(
        QDateTime::fromMSecsSinceEpoch(result->olderMs).toString(QStringLiteral("HH:mm:ss")),
        QDateTime::fromMSecsSinceEpoch(result->newerMs).toString(QStringLiteral("HH:mm:ss")));
    m_shown.metric.name = tr("%1 change %2").arg(metric->name, when);
    m_shown.frame = result->diff;
    m_shown.raw.reset();
    m_shown.comparing = true; // until the timeline goes live or the comparison is cleared
    m_pending |= ShownState::Metric | ShownState::Frame;
    publish();
}

void Display::clearComparison()
{
    m_time->cancelComparison();
    m_shown.comparing = false;
    applyMetric();
}

} // namespace fleetscope
