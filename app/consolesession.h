// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "app/session/display.h"
#include "app/session/fleetalerts.h"
#include "app/session/fleetevents.h"
#include "app/session/historyservice.h"
#include "app/session/jobwatch.h"
#include "app/session/livefeed.h"
#include "app/session/summaryfetcher.h"
#include "app/session/timemachine.h"
#include "client/channelsecurity.h"

#include <QObject>

#include <optional>

#include <vector>

namespace fleetscope {

class HistoryClient;
class JobClient;
class ReplayController;
class SummaryClient;

// What the console *is*, without a window, and the views' only way to the data: the live feed (LiveFeed: topology,
// catalogue, jobs, frames, staleness), the past (TimeMachine: recorder, replay, comparison, a time loaded from the
// backend), the fleet's recent events and open problems (FleetEvents), history and summaries for views (a
// HistorySource and a SummaryFetcher over the connections of the moment), and what is shown (Display: the metric, its
// value or rate of change, the colour range, the version layer), handed to views as one ShownState. The desk window
// and the wall window are two views over one session; each draws what shownChanged hands it.
//
// Threads: everything here belongs to the GUI thread; the parts say which work they put on workers.
class ConsoleSession : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        int recordMinutes = 60;
        QString metric; // wanted before the catalogue is known; empty = the backend's first
        int changeWindowS = 0; // > 0: the rate of change over this window
        bool autoRange = false; // the 1st to 99th percentile of the values shown, else the metric's own range
    };
    explicit ConsoleSession(const Options &options, QObject *parent = nullptr);
    ~ConsoleSession() override;

    // Connects to HOST:PORT (the embedded backend's or the user's): the live stream, and history and summaries each
    // on a channel of their own so a long query never holds up the live stream.
    void connectTo(const QString &address);
    // The credentials and CA for the connections connectTo makes (the embedded backend's need none).
    void setChannelSecurity(const ChannelSecurity &security) { m_security = security; }
    const ChannelSecurity &channelSecurity() const { return m_security; }

    // The fleet and what runs on it as the backend last said (null before its first answer), and the newest live
    // frame: views take them from here (topologyChanged, jobsChanged), never from a client.
    TopologyPtr topology() const { return m_live.topology(); }
    JobsPtr jobs() const { return m_live.jobs(); }
    FramePtr latestFrame() const { return m_live.latestFrame(); }
    // The backend's catalogue alone; metrics() adds the console's own layers.
    const std::vector<MetricInfo> &backendMetrics() const { return m_live.metrics(); }
    // The live connection: where to, its state, and the transport's words for it.
    using ConnectionState = TelemetryClient::State;
    QString address() const { return m_live.address(); }
    ConnectionState connectionState() const { return m_live.state(); }
    QString connectionDetail() const { return m_live.stateDetail(); }
    // History and events for views (the detail panel), over the connection of the moment.
    HistorySource *historySource() { return &m_historyService; }
    // The executive summary's answers for views: refresh() asks, fetched() hands them over (nothing before connectTo).
    SummaryFetcher *summaries() { return &m_summaries; }
    // One job's account for the job page (GetJob, asked again every few seconds while watched), over the connection
    // of the moment, checked against the fleet of the moment.
    JobWatch *jobWatch() { return &m_jobWatch; }
    const FlightRecorder &recorder() const { return m_time.recorder(); }
    ReplayController *replay() const { return m_time.replay(); }
    // What can be shown: the backend's metrics, then the console's own layers (VersionDrift's); empty until the
    // backend's catalogue is known.
    const std::vector<MetricInfo> &metrics() const { return m_display.metrics(); }
    // The fleet's driver and VBIOS versions and their drift, from the topology and the jobs (computed on a worker
    // when either changes; driftChanged says when).
    const VersionDrift &versionDrift() const { return m_display.versionDrift(); }
    // The NOC's alerts as a layer of the map (computed on a worker as the board or the fleet changes;
    // alertLayerChanged says when).
    const AlertLayer &alertLayer() const { return m_display.alertLayer(); }

    // What is shown. The metric by id (kept while the catalogue is unknown; replaced by the first metric, with a
    // message, when the backend has no such metric); the value or its change per minute over a window (0 = value);
    // the colour map by name (empty = the metric's suggestion); fixed or auto range.
    void setMetric(const QString &id) { m_display.setMetric(id); }
    QString metricId() const { return m_display.metricId(); }
    void setChangeWindow(int seconds) { m_display.setChangeWindow(seconds); }
    int changeWindowS() const { return m_display.changeWindowS(); }
    void setColourMap(const QString &name) { m_display.setColourMap(name); }
    QString colourMap() const { return m_display.colourMap(); }
    void setAutoRange(bool autoRange) { m_display.setAutoRange(autoRange); }
    bool autoRange() const { return m_display.autoRange(); }
    // What is drawn, in one piece; shownChanged says what changed.
    const ShownState &shown() const { return m_display.shown(); }
    const MetricInfo &shownMetric() const { return shown().metric; }
    FramePtr shownFrame() const { return shown().frame; }
    QString metricName(const QString &id) const { return m_display.metricName(id); }

    // Compares two recorded moments (the map shows the change of the metric); cleared by going live. The frames are
    // decoded and subtracted on a worker (FrameComparer): the comparison is shown when it is done, unless a newer
    // one, clearComparison, another metric or a move of the replay (live, play, pause) came first.
    void compare(qint64 aMs, qint64 bMs);
    void clearComparison();
    bool isComparing() const { return shown().comparing; }
    // A comparison asked for is being computed.
    bool isComputingComparison() const { return m_time.isComputingComparison(); }
    // Shows the fleet at a past time: from the flight recorder when it holds that time, else from the backend's
    // history (QueryRange), while historyLoadingChanged says so.
    void goToTime(qint64 timeMs);
    bool isLoadingHistory() const { return m_time.isLoadingHistory(); }

    // The newest live sample and the stream's interval; stale past three intervals without a newer sample, by this
    // machine's monotonic clock.
    qint64 lastLiveSampleMs() const { return m_live.lastSampleMs(); }
    qint64 liveIntervalMs() const { return m_live.intervalMs(); }
    bool isStale() const { return m_live.isStale(); }
    qint64 msSinceNewData() const { return m_live.msSinceNewData(); }
    // Warnings and worse of the fleet over the last hour, oldest first.
    const std::vector<FleetEvent> &fleetEvents() const { return m_events.events(); }
    // What is wrong right now, ranked (model/problems.h), from the fleet's events of the last hour and the jobs.
    // Drift problems (a job on mixed driver / VBIOS versions, a rack half way through a rollout) are among them.
    std::vector<Problem> problems(int64_t nowMs) const;
    // The GPUs with an open anomaly (the backend's detector), ascending; cheap, nothing ranked.
    std::vector<uint32_t> anomalousGpus() const { return m_events.board().gpusWith(Problem::Kind::Anomaly); }
    // The NOC's alerts and silences (Alertmanager's, through the backend), who this console is to the backend, and
    // the silences it asks for; followed again by connectTo.
    FleetAlerts *alerts() { return &m_alerts; }

Q_SIGNALS:
    // What is drawn changed (ShownState::Change says which parts): the metric (views reset their transitions), the
    // auto range alone (views keep their transition), the frame (live, replayed, loaded or a comparison).
    void shownChanged(const fleetscope::ShownState &shown, fleetscope::ShownState::Changes changes);
    // Every live frame as it arrives, after staleness and recording.
    void liveFrame(const fleetscope::FramePtr &frame);
    void fleetEventsChanged();
    // metrics() changed: the backend's catalogue, or a layer's categories.
    void metricsChanged();
    void driftChanged();
    void alertLayerChanged();
    // Something went wrong that a person should know (the status bar; a wall's banner).
    void problemReported(const QString &message);
    // Information for the status bar, shown for timeoutMs.
    void message(const QString &text, int timeoutMs);
    void historyLoadingChanged(bool loading);
    // The backend's fleet changed (a new layout, a restarted backend): after the session's own state followed it.
    void topologyChanged(const fleetscope::TopologyPtr &topology);
    void jobsChanged(const fleetscope::JobsPtr &jobs);
    void connectionChanged(fleetscope::TelemetryClient::State state, const QString &detail);
    // connectTo made new connections: views that show what was fetched fetch again.
    void clientsChanged();
    // setMetric, setChangeWindow, setColourMap or setAutoRange changed what the controls should show.
    void displayOptionsChanged();

private:
    void onTopologyChanged(const TopologyPtr &topology);
    void onLiveFrame(const FramePtr &frame);
    void goToPendingTime(); // a time asked before the fleet and its catalogue were known, once they are

    ChannelSecurity m_security;
    // The connections of the moment, made again by connectTo; the services over them live as long as the session.
    HistoryClient *m_history = nullptr;
    std::optional<qint64> m_pendingTimeMs; // asked before the fleet or its catalogue was known: gone to once both are
    SummaryClient *m_summaryClient = nullptr;
    HistoryService m_historyService; // over m_history
    SummaryFetcher m_summaries; // over m_summaryClient
    JobClient *m_jobClient = nullptr;
    JobWatch m_jobWatch; // over m_jobClient
    LiveFeed m_live;
    FleetEvents m_events;
    FleetAlerts m_alerts;
    TimeMachine m_time;
    Display m_display; // reads the live feed and the time machine: declared after them, so it goes first
};

} // namespace fleetscope
