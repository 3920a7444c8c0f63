// SPDX-License-Identifier: Apache-2.0
#include "app/consolesession.h"

#include "client/historyclient.h"
#include "client/summaryclient.h"
#include "model/autorange.h"
#include "jobs/background.h"
#include "model/framediff.h"
#include "model/replaycontroller.h"
#include "widgets/heatmap/colormap.h"

#include <QDateTime>
#include <QThread>
#include <QThreadPool>
#include <QTimer>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {
constexpr int64_t eventWindowMs = 3600 * 1000; // the fleet's events kept: the last hour
constexpr size_t eventsKept = 2000;

// What the live stream carries: the metric shown (unless it is a layer of the console's own) and the health-relevant
// defaults, so that a switch back is instant.
QStringList subscribedMetrics(const QString &shownId)
{
    QStringList ids;
    if (!shownId.isEmpty() && shownId != QLatin1String(VersionDrift::metricId)) {
        ids << shownId;
    }
    for (const auto &id : { QStringLiteral("gpu_temp"), QStringLiteral("power"), QStringLiteral("gpu_util") }) {
        if (!ids.contains(id)) {
            ids << id;
        }
    }
    return ids;
}

FlightRecorderOptions recorderOptions(int minutes)
{
    FlightRecorderOptions recorder;
    recorder.retention = std::chrono::minutes(minutes);
    return recorder;
}
} // namespace

ConsoleSession::ConsoleSession(const Options &options, QObject *parent)
    : QObject(parent)
    , m_recorder(recorderOptions(options.recordMinutes))
    , m_comparer(&m_recorder)
    , m_metricId(options.metric)
    , m_changeWindowS(options.changeWindowS)
    , m_autoRange(options.autoRange)
{
    m_recordPool.setMaxThreadCount(1); // frames must reach the recorder in the order they came
    m_driftPool.setMaxThreadCount(1);
    m_replay = new ReplayController(&m_recorder, this);
    m_replay->setBackgroundDecoding(true); // decoding a recorded frame of a million GPUs takes tens of ms
    connect(m_replay, &ReplayController::frameToShow, this, &ConsoleSession::showFrame);
    connect(&m_comparer, &FrameComparer::compared, this, &ConsoleSession::showComparison);
    connect(m_replay, &ReplayController::modeChanged, this, [this] {
        m_comparer.cancel(); // the replay moved on since the comparison under way was asked for
        if (m_comparing) { // back from a comparison to the metric itself
            m_comparing = false;
            applyMetric();
        }
    });
    connect(&m_client, &TelemetryClient::stateChanged, this, &ConsoleSession::onStateChanged);
    connect(&m_client, &TelemetryClient::topologyChanged, this, &ConsoleSession::onTopologyChanged);
    connect(&m_client, &TelemetryClient::metricsChanged, this, &ConsoleSession::onMetricsChanged);
    connect(&m_client, &TelemetryClient::jobsChanged, this, [this](const JobsPtr &jobs) {
        updateDrift();
        Q_EMIT jobsChanged(jobs);
    });
    connect(&m_client, &TelemetryClient::frameReady, this, &ConsoleSession::onFrame);
    connect(&m_client, &TelemetryClient::errorOccurred, this, &ConsoleSession::problemReported);
}

ConsoleSession::~ConsoleSession()
{
    // Replay decodes from the recorder on its own worker: it goes before the recorder does.
    delete m_replay;
    m_replay = nullptr;
    m_recordPool.waitForDone();
    m_driftPool.waitForDone();
}

void ConsoleSession::connectTo(const QString &address)
{
    // The first connection subscribes to what will be shown from its first frame on when that is known before the
    // catalogue (no metric chosen: the catalogue's first, gpu_temp; or one of the defaults): changing the
    // subscription once the catalogue came would restart the stream, waiting for its worker on this thread and
    // fetching the topology again. Another metric waits for the catalogue, which says whether the backend has it.
    const QString first = m_metricId.isEmpty() ? QStringLiteral("gpu_temp") : m_metricId;
    if (m_client.state() == TelemetryClient::State::Idle && subscribedMetrics({}).contains(first)) {
        m_client.setMetrics(subscribedMetrics(first));
    }
    m_client.start(address, m_security);
    delete m_history;
    m_history = new HistoryClient(address, m_security, this);
    m_history->setTopology(m_client.topology());
    delete m_summaryClient;
    m_summaryClient = new SummaryClient(address, m_security, this);
    m_historyService.setClient(m_history);
    m_summaries.setClient(m_summaryClient);
    m_eventStream = 0;
    if (m_historyRequest != 0) {
        m_historyRequest = 0;
        Q_EMIT historyLoadingChanged(false);
    }
    connect(m_history, &HistoryClient::rangeReady, this, &ConsoleSession::onHistoryFrame);
    connect(m_history, &HistoryClient::eventsReady, this, &ConsoleSession::onEvents);
    connect(m_history, &HistoryClient::requestFailed, this, [this](quint64 id, const QString &why) {
        if (id == m_eventStream) {
            // Followed again when the client is live again, and in any case on a timer: the history channel can fail
            // while the live stream carries on.
            m_eventStream = 0;
            QTimer::singleShot(10000, this, [this] {
                if (m_eventStream == 0 && m_client.topology() && m_client.state() == TelemetryClient::State::Live) {
                    followFleetEvents();
                }
            });
        }
        if (id == m_historyRequest) {
            m_historyRequest = 0;
            Q_EMIT historyLoadingChanged(false);
            Q_EMIT message(tr("Could not load that time from the backend: %1").arg(why), 15000);
        }
    });
    Q_EMIT clientsChanged();
    if (m_client.topology()) {
        followFleetEvents();
    }
}

void ConsoleSession::onStateChanged(TelemetryClient::State state, const QString &detail)
{
    // The fleet's event stream ends with the backend; back live, it is followed again.
    if (state == TelemetryClient::State::Live && m_eventStream == 0 && m_client.topology()) {
        followFleetEvents();
    }
    Q_EMIT connectionChanged(state, detail);
}

void ConsoleSession::onTopologyChanged(const TopologyPtr &topology)
{
    if (m_history != nullptr) {
        m_history->setTopology(topology);
    }
    followFleetEvents();
    updateDrift();
    Q_EMIT topologyChanged(topology);
}

void ConsoleSession::followFleetEvents()
{
    if (m_history == nullptr) {
        return;
    }
    m_history->cancel(m_eventStream);
    m_events.clear();
    m_problems.clear(); // the stream replays the last hour, and with it the problems still open
    EventFilter all;
    all.everything = true;
    m_eventStream = m_history->streamEvents(all, QDateTime::currentMSecsSinceEpoch() - eventWindowMs);
}

void ConsoleSession::onEvents(const EventBatchPtr &batch)
{
    if (batch->requestId != m_eventStream) {
        return;
    }
    for (const auto &e : batch->events) {
        m_problems.add(e);
        if (e.severity != FleetEvent::Severity::Info) {
            m_events.push_back(e);
        }
    }
    const int64_t from = QDateTime::currentMSecsSinceEpoch() - eventWindowMs;
    m_events.erase(
        std::remove_if(m_events.begin(), m_events.end(), [from](const FleetEvent &e) { return e.timeMs < from; }),
        m_events.end());
    if (m_events.size() > eventsKept) {
        m_events.erase(m_events.begin(), m_events.end() - static_cast<std::ptrdiff_t>(eventsKept));
    }
    Q_EMIT fleetEventsChanged();
}

std::vector<Problem> ConsoleSession::problems(int64_t nowMs) const
{
    const TopologyPtr topology = m_client.topology();
    const JobsPtr jobs = m_client.jobs();
    const JobList *current
        = jobs && topology && jobs->topologyGeneration == topology->generation ? jobs.get() : nullptr;
    std::vector<Problem> open = m_problems.open(nowMs, topology.get(), current);
    if (topology && m_drift.topologyGeneration == topology->generation) {
        std::vector<Problem> drift = m_driftProblems;
        rankProblems(&drift, current);
        open.insert(open.end(), std::make_move_iterator(drift.begin()), std::make_move_iterator(drift.end()));
        sortProblems(&open);
    }
    return open;
}

void ConsoleSession::updateDrift()
{
    const TopologyPtr topology = m_client.topology();
    if (!topology) {
        return;
    }
    const JobsPtr jobs = m_client.jobs();
    const quint64 request = ++m_driftRequest;
    // A million GPUs take tens of ms: off the GUI thread, on the session's own pool (its destructor waits for it, so
    // the result is never posted to a session gone), the latest request wins.
    m_driftPool.start([this, request, topology, jobs] {
        runThisThreadInBackground();
        auto drift = std::make_shared<VersionDrift>(computeVersionDrift(*topology, jobs.get()));
        // Its problems too, worded once here rather than on every batch of events that problems() is read for: at a
        // million GPUs the wording was a third of the problems dock's refresh on the GUI thread.
        auto problems = std::make_shared<std::vector<Problem>>(driftProblems(*drift));
        QMetaObject::invokeMethod(
            this,
            [this, request, drift, problems] {
                if (request != m_driftRequest) {
                    return; // superseded
                }
                m_drift = std::move(*drift);
                m_driftProblems = std::move(*problems);
                rebuildMetrics();
                if (m_shownMetric.id == QLatin1String(VersionDrift::metricId)) {
                    m_layerSource.reset();
                    applyMetric(); // new categories
                }
                Q_EMIT driftChanged();
            },
            Qt::QueuedConnection);
    });
}

void ConsoleSession::rebuildMetrics()
{
    m_metrics = m_client.metrics();
    if (!m_metrics.empty()) {
        m_metrics.push_back(m_drift.metric());
    }
    Q_EMIT metricsChanged();
}

const MetricInfo *ConsoleSession::selectedMetric() const
{
    const auto &metrics = m_metrics;
    const auto found
        = std::find_if(metrics.begin(), metrics.end(), [this](const MetricInfo &m) { return m.id == m_metricId; });
    return found != metrics.end() ? &*found : nullptr;
}

QString ConsoleSession::metricName(const QString &id) const
{
    for (const auto &m : m_metrics) {
        if (m.id == id) {
            return m.name;
        }
    }
    return id;
}

void ConsoleSession::onMetricsChanged()
{
    rebuildMetrics();
    const auto &metrics = m_metrics;
    if (metrics.empty()) {
        return;
    }
    if (selectedMetric() == nullptr) {
        if (!m_metricId.isEmpty()) {
            Q_EMIT message(
                tr("The backend has no metric '%1'; showing %2 instead.").arg(m_metricId, metrics[0].name), 15000);
        }
        m_metricId = metrics[0].id;
        Q_EMIT displayOptionsChanged();
    }
    applyMetric();
}

void ConsoleSession::setMetric(const QString &id)
{
    if (id == m_metricId) {
        return;
    }
    m_metricId = id;
    if (!m_metrics.empty() && selectedMetric() == nullptr) {
        onMetricsChanged(); // unknown here: the first one, said so
        return;
    }
    m_comparing = false;
    applyMetric();
    Q_EMIT displayOptionsChanged();
}

template <typename T> void ConsoleSession::setDisplayOption(T &option, T value)
{
    if (value == option) {
        return;
    }
    option = std::move(value);
    applyMetric();
    Q_EMIT displayOptionsChanged();
}

void ConsoleSession::setChangeWindow(int seconds)
{
    setDisplayOption(m_changeWindowS, std::max(0, seconds));
}

void ConsoleSession::setColourMap(const QString &name)
{
    setDisplayOption(m_colourMap, name);
}

void ConsoleSession::setAutoRange(bool autoRange)
{
    setDisplayOption(m_autoRange, autoRange);
}

void ConsoleSession::applyMetric()
{
    const MetricInfo *metric = selectedMetric();
    if (metric == nullptr) {
        return;
    }
    m_comparing = false;
    m_comparer.cancel(); // of another metric, or of this one now drawn otherwise
    const bool layer = metric->id == QLatin1String(VersionDrift::metricId);
    // The value, or its rate of change per minute over the chosen window (from the frames as they arrive); a
    // layer of categories has no rate.
    if (m_changeWindowS > 0 && !layer) {
        if (!m_rate || m_rate->metricId() != metric->id || m_rate->window() != std::chrono::seconds(m_changeWindowS)) {
            m_rate.emplace(metric->id, std::chrono::seconds(m_changeWindowS));
            Q_EMIT message(tr("Change per minute: the map fills in once %1 s of frames have arrived.")
                               .arg(std::max(2, m_changeWindowS / 4)),
                10000);
        }
        m_shownMetric = RateOfChange::rateMetric(*metric);
    } else {
        m_rate.reset();
        m_shownMetric = *metric;
    }
    // The user's colour map wins over the metric's suggestion; a categorical map fits only its own metric.
    if (!m_colourMap.isEmpty()) {
        m_shownMetric.colourMap = m_colourMap;
    }
    Q_EMIT metricShown(m_shownMetric);
    if (const FramePtr last = m_client.latestFrame(); last && m_replay->mode() == ReplayController::Mode::Live) {
        showFrame(last);
    } else if (m_shownFrame) {
        updateAutoRange(m_shownFrame);
    }
    m_client.setMetrics(subscribedMetrics(metric->id));
}

void ConsoleSession::onFrame(const FramePtr &frame)
{
    // Staleness is judged by this machine's monotonic clock since the last newer sample arrived, never by comparing
    // the backend's sample times with this machine's wall clock (they may disagree, and either may step). The
    // interval is the median of the recent gaps between samples, leaving out the gap across an outage.
    if (frame->sampleTimeMs > m_lastLiveSampleMs) {
        const bool afterOutage = m_lastLiveSampleMs > 0 && isStale();
        if (m_lastLiveSampleMs > 0 && !afterOutage) {
            m_intervalGaps.push_back(std::clamp<qint64>(frame->sampleTimeMs - m_lastLiveSampleMs, 100, 60000));
            if (m_intervalGaps.size() > 8) {
                m_intervalGaps.erase(m_intervalGaps.begin());
            }
            std::vector<qint64> sorted = m_intervalGaps;
            std::nth_element(
                sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
            m_intervalMs = sorted[sorted.size() / 2];
        }
        m_newDataClock.start();
    }
    m_lastLiveSampleMs = std::max<qint64>(m_lastLiveSampleMs, frame->sampleTimeMs);
    m_recordPool.start([this, frame] {
        runThisThreadInBackground();
        m_recorder.record(frame);
    });
    m_replay->onLiveFrame(frame); // shown at once when live; kept for later otherwise
    Q_EMIT liveFrame(frame);
}

bool ConsoleSession::isStale() const
{
    // Old data must never look fresh: past three intervals without a new sample it is stale.
    return m_lastLiveSampleMs > 0 && static_cast<double>(msSinceNewData()) > 3.0 * static_cast<double>(m_intervalMs);
}

void ConsoleSession::showFrame(const FramePtr &frame)
{
    const TopologyPtr topology = m_client.topology();
    if (!frame || !topology || frame->topologyGeneration != topology->generation || m_comparing) {
        return; // a recorded frame of an earlier fleet layout cannot be drawn on this one
    }
    FramePtr shown = m_rate ? m_rate->apply(frame) : frame;
    if (m_shownMetric.id == QLatin1String(VersionDrift::metricId)) {
        // The layer's plane over the frame's time and health (made once per frame: the wall and the desk share it).
        if (frame != m_layerSource || !m_layerFrame) {
            auto layered = std::make_shared<Frame>();
            layered->sequence = frame->sequence;
            layered->sampleTimeMs = frame->sampleTimeMs;
            layered->topologyGeneration = frame->topologyGeneration;
            layered->health = frame->health;
            layered->planes.push_back({ m_shownMetric.id, m_drift.plane(*topology) });
            m_layerSource = frame;
            m_layerFrame = std::move(layered);
        }
        shown = m_layerFrame;
    }
    m_shownFrame = shown;
    updateAutoRange(shown);
    Q_EMIT frameShown(shown, frame);
}

void ConsoleSession::updateAutoRange(const FramePtr &shown)
{
    const ColorMap::Kind kind = ColorMap::forMetric(m_shownMetric).kind();
    if (!m_autoRange || kind == ColorMap::Kind::Categorical) {
        return; // categories have no range to fit
    }
    const MetricPlane *plane = shown ? shown->plane(m_shownMetric.id) : nullptr;
    if (plane == nullptr) {
        return;
    }
    const ValueRange range = robustRange(plane->values, 0.01, 0.99, kind == ColorMap::Kind::Diverging);
    if (!range.valid) {
        return;
    }
    // Move the range only when it is off by more than a tenth of its span, so the colours do not shimmer from one
    // frame to the next while the fleet is steady.
    const float tolerance = (m_shownMetric.rangeMax - m_shownMetric.rangeMin) * 0.1F;
    if (std::abs(range.min - m_shownMetric.rangeMin) <= tolerance
        && std::abs(range.max - m_shownMetric.rangeMax) <= tolerance) {
        return;
    }
    m_shownMetric.rangeMin = range.min;
    m_shownMetric.rangeMax = range.max;
    Q_EMIT rangeShown(range.min, range.max);
}

void ConsoleSession::goToTime(qint64 timeMs)
{
    if (!m_recorder.sampleTimes().empty() && timeMs >= m_recorder.earliestMs()) {
        m_replay->seek(timeMs);
        return;
    }
    const TopologyPtr topology = m_client.topology();
    const MetricInfo *metric = selectedMetric();
    if (m_history == nullptr || !topology || metric == nullptr) {
        Q_EMIT message(tr("Not connected: no history to load"), 10000);
        return;
    }
    // One frame of the whole fleet: the metric shown and the health state, at the last sample at or before then.
    RangeRequest request;
    request.metricIds = { metric->id, QStringLiteral("health") };
    request.gpus.resize(topology->gpuCount);
    for (uint32_t g = 0; g < topology->gpuCount; ++g) {
        request.gpus[g] = g;
    }
    request.fromMs = timeMs;
    request.toMs = timeMs;
    request.stepMs = 1000;
    m_history->cancel(m_historyRequest);
    m_replay->pause();
    m_historyRequest = m_history->queryRange(request);
    Q_EMIT historyLoadingChanged(true);
    Q_EMIT message(
        tr("Loading %1 from the backend…").arg(QDateTime::fromMSecsSinceEpoch(timeMs).toString(Qt::ISODate)), 0);
}

void ConsoleSession::onHistoryFrame(const RangeResultPtr &result)
{
    if (result->requestId != m_historyRequest) {
        return;
    }
    m_historyRequest = 0;
    Q_EMIT historyLoadingChanged(false);
    const TopologyPtr topology = m_client.topology();
    const RangeSeries *values = result->series.empty() ? nullptr : &result->series.front();
    const RangeSeries *states = result->find(QStringLiteral("health"));
    if (!topology || values == nullptr || values->rows() == 0 || values->columns() != topology->gpuCount) {
        Q_EMIT message(tr("The backend holds nothing at that time"), 15000);
        return;
    }
    auto frame = std::make_shared<Frame>();
    frame->sampleTimeMs = values->sampleTimes.front();
    frame->topologyGeneration = topology->generation;
    frame->planes.push_back(
        { values->metricId, { values->values.begin(), values->values.begin() + values->columns() } });
    frame->health.assign(topology->gpuCount, health::NoData);
    if (states != nullptr && states->rows() > 0 && states->columns() == topology->gpuCount) {
        for (uint32_t g = 0; g < topology->gpuCount; ++g) {
            const float state = states->at(0, g);
            frame->health[g] = static_cast<uint8_t>(state >= 0 && state <= 4 ? state : float(health::NoData));
        }
    }
    m_replay->pause();
    showFrame(frame);
    Q_EMIT message(tr("Showing %1 from the backend's history")
                       .arg(QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs).toString(Qt::ISODate)),
        15000);
}

void ConsoleSession::compare(qint64 aMs, qint64 bMs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    const MetricInfo *metric = selectedMetric();
    const std::vector<int64_t> times = m_recorder.sampleTimes();
    if (times.empty() || std::min(aMs, bMs) < times.front() || metric == nullptr) {
        Q_EMIT message(tr("Nothing recorded at one of the two times"), 10000);
        return;
    }
    m_replay->pause(); // first: a move of the replay drops a comparison under way
    m_comparer.compare(aMs, bMs, metric->id);
}

void ConsoleSession::showComparison(const FrameComparer::ResultPtr &result)
{
    const MetricInfo *metric = selectedMetric();
    if (metric == nullptr) {
        return;
    }
    if (!result->diff) {
        Q_EMIT message(result->error, 10000);
        return;
    }
    m_comparing = false;
    // The colour range fits the change: symmetric about zero, from the 1st to the 99th percentile.
    m_shownMetric = differenceMetric(*metric, result->range.valid ? result->range.max : 0.0F);
    const QString when = QStringLiteral("%1 → %2").arg(
        QDateTime::fromMSecsSinceEpoch(result->olderMs).toString(QStringLiteral("HH:mm:ss")),
        QDateTime::fromMSecsSinceEpoch(result->newerMs).toString(QStringLiteral("HH:mm:ss")));
    m_shownMetric.name = tr("%1 change %2").arg(metric->name, when);
    Q_EMIT metricShown(m_shownMetric);
    m_shownFrame = result->diff;
    Q_EMIT frameShown(result->diff, nullptr);
    m_comparing = true; // until the timeline goes live or the comparison is cleared
}

void ConsoleSession::clearComparison()
{
    m_comparer.cancel();
    m_comparing = false;
    applyMetric();
    m_replay->goLive();
}

} // namespace fleetscope
