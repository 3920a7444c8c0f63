// SPDX-License-Identifier: Apache-2.0
#include "app/consolesession.h"

#include "client/historyclient.h"
#include "client/jobclient.h"
#include "client/summaryclient.h"
#include "model/replaycontroller.h"

#include <QThread>

#include <algorithm>

namespace fleetscope {

namespace {
Display::Options displayOptions(const ConsoleSession::Options &options)
{
    Display::Options display;
    display.metric = options.metric;
    display.changeWindowS = options.changeWindowS;
    display.autoRange = options.autoRange;
    return display;
}
} // namespace

ConsoleSession::ConsoleSession(const Options &options, QObject *parent)
    : QObject(parent)
    , m_events(&m_historyService, &m_live)
    , m_time(options.recordMinutes, &m_historyService)
    , m_display(displayOptions(options), &m_live, &m_time)
{
    // The parts' own reactions come first; the views hear of a change once the session has followed it.
    connect(&m_live, &LiveFeed::stateChanged, this, [this](TelemetryClient::State state, const QString &detail) {
        // The fleet's event stream ends with the backend; back live, it is followed again.
        if (state == TelemetryClient::State::Live) {
            m_events.resume();
        }
        Q_EMIT connectionChanged(state, detail);
    });
    connect(&m_live, &LiveFeed::topologyChanged, this, &ConsoleSession::onTopologyChanged);
    connect(&m_live, &LiveFeed::metricsChanged, &m_display, &Display::onCatalogueChanged);
    connect(&m_live, &LiveFeed::jobsChanged, this, [this](const JobsPtr &jobs) {
        m_display.updateDrift();
        Q_EMIT jobsChanged(jobs);
    });
    connect(&m_live, &LiveFeed::frameArrived, this, &ConsoleSession::onLiveFrame);
    connect(&m_live, &LiveFeed::errorOccurred, this, &ConsoleSession::problemReported);
    connect(&m_time, &TimeMachine::frameToShow, &m_display, &Display::showFrame);
    connect(&m_time, &TimeMachine::compared, &m_display, &Display::showComparison);
    connect(&m_time, &TimeMachine::historyLoadingChanged, this, &ConsoleSession::historyLoadingChanged);
    connect(&m_time, &TimeMachine::message, this, &ConsoleSession::message);
    connect(&m_events, &FleetEvents::changed, this, &ConsoleSession::fleetEventsChanged);
    connect(&m_alerts, &FleetAlerts::errorOccurred, this, &ConsoleSession::problemReported);
    connect(&m_display, &Display::shownChanged, this, &ConsoleSession::shownChanged);
    connect(&m_display, &Display::metricsChanged, this, [this] {
        Q_EMIT metricsChanged();
        goToPendingTime();
    });
    connect(&m_display, &Display::driftChanged, this, &ConsoleSession::driftChanged);
    connect(&m_display, &Display::alertLayerChanged, this, &ConsoleSession::alertLayerChanged);
    m_display.followAlerts(&m_alerts);
    connect(&m_display, &Display::optionsChanged, this, &ConsoleSession::displayOptionsChanged);
    connect(&m_display, &Display::message, this, &ConsoleSession::message);
}

ConsoleSession::~ConsoleSession() = default;

void ConsoleSession::connectTo(const QString &address)
{
    // The first connection subscribes to what will be shown from its first frame on when that is known before the
    // catalogue (no metric chosen: the catalogue's first, gpu_temp; or one of the defaults).
    m_live.connectTo(address, m_security, metricId().isEmpty() ? QStringLiteral("gpu_temp") : metricId());
    HistoryClient *const oldHistory = m_history;
    SummaryClient *const oldSummaries = m_summaryClient;
    JobClient *const oldJobs = m_jobClient;
    m_history = new HistoryClient(address, m_security, this);
    m_history->setTopology(m_live.topology());
    m_summaryClient = new SummaryClient(address, m_security, this);
    m_jobClient = new JobClient(address, m_security, this);
    m_jobClient->setTopology(m_live.topology());
    m_alerts.connectTo(address, m_security);
    // Requests of the old connections are gone: the services cancel them on the old clients and say so (reset), and
    // what follows the fleet's events follows them on the new one. The old clients go after.
    m_historyService.setClient(m_history);
    m_summaries.setClient(m_summaryClient);
    m_jobWatch.setClient(m_jobClient);
    delete oldHistory;
    delete oldSummaries;
    delete oldJobs;
    Q_EMIT clientsChanged();
}

void ConsoleSession::onTopologyChanged(const TopologyPtr &topology)
{
    if (m_history != nullptr) {
        m_history->setTopology(topology);
    }
    if (m_jobClient != nullptr) {
        m_jobClient->setTopology(topology);
    }
    if (m_jobWatch.isWatching()) {
        m_jobWatch.watch(m_jobWatch.jobId(), m_jobWatch.jobName()); // asked again at once, checked against this fleet
    }
    m_events.follow();
    m_alerts.setTopology(topology);
    m_display.updateDrift();
    m_display.updateAlertLayer();
    Q_EMIT topologyChanged(topology);
    goToPendingTime();
}

void ConsoleSession::onLiveFrame(const FramePtr &frame)
{
    m_time.record(frame); // and shown through the replay when live
    Q_EMIT liveFrame(frame);
}

std::vector<Problem> ConsoleSession::problems(int64_t nowMs) const
{
    const TopologyPtr topology = m_live.topology();
    const JobsPtr jobs = m_live.jobs();
    const JobList *current
        = jobs && topology && jobs->topologyGeneration == topology->generation ? jobs.get() : nullptr;
    std::vector<Problem> open = m_events.board().open(nowMs, topology.get(), current);
    if (topology && versionDrift().topologyGeneration == topology->generation) {
        std::vector<Problem> drift = m_display.driftProblems();
        rankProblems(&drift, current);
        open.insert(open.end(), std::make_move_iterator(drift.begin()), std::make_move_iterator(drift.end()));
        sortProblems(&open);
    }
    return open;
}

void ConsoleSession::goToTime(qint64 timeMs)
{
    m_pendingTimeMs.reset();
    const MetricInfo *metric = m_display.selectedMetric();
    if (m_history != nullptr && (!m_live.topology() || metric == nullptr)) {
        // Connected, but the fleet or its catalogue is still on its way (a view string with a time, opened as the
        // console starts): gone to once both are here.
        m_pendingTimeMs = timeMs;
        return;
    }
    if (!m_time.goToTime(timeMs, m_live.topology(), metric != nullptr ? metric->id : QString())) {
        Q_EMIT message(tr("Not connected: no history to load"), 10000);
    }
}

void ConsoleSession::goToPendingTime()
{
    if (m_pendingTimeMs && m_live.topology() && m_display.selectedMetric() != nullptr) {
        goToTime(*m_pendingTimeMs);
    }
}

void ConsoleSession::compare(qint64 aMs, qint64 bMs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    const MetricInfo *metric = m_display.selectedMetric();
    if (!m_time.compare(aMs, bMs, metric != nullptr ? metric->id : QString())) {
        Q_EMIT message(tr("Nothing recorded at one of the two times"), 10000);
    }
}

void ConsoleSession::clearComparison()
{
    m_display.clearComparison();
    replay()->goLive();
}

} // namespace fleetscope
