// SPDX-License-Identifier: Apache-2.0
#include "app/session/timemachine.h"

#include "model/historysource.h"
#include "model/replaycontroller.h"

#include <QDateTime>
#include <QThread>

#include <algorithm>

namespace fleetscope {

namespace {
FlightRecorderOptions recorderOptions(int minutes)
{
    FlightRecorderOptions recorder;
    recorder.retention = std::chrono::minutes(minutes);
    return recorder;
}
} // namespace

TimeMachine::TimeMachine(int recordMinutes, HistorySource *history, QObject *parent)
    : QObject(parent)
    , m_history(history)
    , m_recorder(recorderOptions(recordMinutes))
    , m_comparer(&m_recorder)
{
    m_replay = new ReplayController(&m_recorder, this);
    m_replay->setBackgroundDecoding(true); // decoding a recorded frame of a million GPUs takes tens of ms
    connect(m_replay, &ReplayController::frameToShow, this, &TimeMachine::frameToShow);
    connect(m_replay, &ReplayController::modeChanged, this, [this] {
        m_comparer.cancel(); // the replay moved on since the comparison under way was asked for
    });
    connect(&m_comparer, &FrameComparer::compared, this, &TimeMachine::compared);
    connect(m_history, &HistorySource::rangeReady, this, &TimeMachine::onRange);
    connect(m_history, &HistorySource::requestFailed, this, [this](quint64 id, const QString &why) {
        if (id == m_historyRequest) {
            stopLoading();
            Q_EMIT message(tr("Could not load that time from the backend: %1").arg(why), 15000);
        }
    });
    connect(m_history, &HistorySource::reset, this, &TimeMachine::stopLoading);
}

TimeMachine::~TimeMachine()
{
    // Replay decodes from the recorder on its own worker: it goes before the recorder does.
    delete m_replay;
    m_replay = nullptr;
}

void TimeMachine::record(const FramePtr &frame)
{
    m_recordWorker.run([this, frame]() -> Worker::Result {
        m_recorder.record(frame);
        return {};
    });
    m_replay->onLiveFrame(frame); // shown at once when live; kept for later otherwise
}

void TimeMachine::stopLoading()
{
    if (m_historyRequest != 0) {
        m_historyRequest = 0;
        m_loadTopology.reset();
        Q_EMIT historyLoadingChanged(false);
    }
}

bool TimeMachine::goToTime(qint64 timeMs, const TopologyPtr &topology, const QString &metricId)
{
    if (!m_recorder.sampleTimes().empty() && timeMs >= m_recorder.earliestMs()) {
        m_replay->seek(timeMs);
        return true;
    }
    if (!topology || metricId.isEmpty()) {
        return false;
    }
    // One frame of the whole fleet: the metric shown and the health state, at the last sample at or before then.
    RangeRequest request;
    request.metricIds = { metricId, QStringLiteral("health") };
    request.gpus.resize(topology->gpuCount);
    for (uint32_t g = 0; g < topology->gpuCount; ++g) {
        request.gpus[g] = g;
    }
    request.fromMs = timeMs;
    request.toMs = timeMs;
    request.stepMs = 1000;
    m_history->cancel(m_historyRequest);
    const quint64 id = m_history->queryRange(request);
    if (id == 0) {
        stopLoading();
        return false;
    }
    m_replay->pause();
    m_historyRequest = id;
    m_loadTopology = topology;
    Q_EMIT historyLoadingChanged(true);
    Q_EMIT message(
        tr("Loading %1 from the backend…").arg(QDateTime::fromMSecsSinceEpoch(timeMs).toString(Qt::ISODate)), 0);
    return true;
}

void TimeMachine::onRange(const RangeResultPtr &result)
{
    if (result->requestId != m_historyRequest) {
        return;
    }
    const TopologyPtr topology = m_loadTopology;
    stopLoading();
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
    Q_EMIT frameToShow(frame);
    Q_EMIT message(tr("Showing %1 from the backend's history")
                       .arg(QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs).toString(Qt::ISODate)),
        15000);
}

bool TimeMachine::compare(qint64 aMs, qint64 bMs, const QString &metricId)
{
    Q_ASSERT(QThread::currentThread() == thread());
    const std::vector<int64_t> times = m_recorder.sampleTimes();
    if (times.empty() || std::min(aMs, bMs) < times.front() || metricId.isEmpty()) {
        return false;
    }
    m_replay->pause(); // first: a move of the replay drops a comparison under way
    m_comparer.compare(aMs, bMs, metricId);
    return true;
}

} // namespace fleetscope
