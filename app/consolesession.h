// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "app/session/historyservice.h"
#include "app/session/summaryfetcher.h"
#include "client/telemetryclient.h"
#include "model/flightrecorder.h"
#include "model/framecomparer.h"
#include "model/history.h"
#include "model/problems.h"
#include "model/rateofchange.h"
#include "model/versiondrift.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QThreadPool>

#include <optional>
#include <vector>

namespace fleetscope {

class HistoryClient;
class ReplayController;
class SummaryClient;

// What the console *is*, without a window: the connections to the backend (live stream, history, summaries), the
// flight recorder and replay, staleness, the fleet's recent events, and what is shown — the metric, its value or its
// rate of change, the colour range, a comparison of two moments, a time loaded from the backend. The desk window and
// the wall window are two views over one session; each draws what frameShown hands it.
//
// Threads: everything here belongs to the GUI thread; the recorder is written on one worker (recordPool) in frame
// order, and read from the GUI thread under its own lock.
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
    TopologyPtr topology() const { return m_client.topology(); }
    JobsPtr jobs() const { return m_client.jobs(); }
    FramePtr latestFrame() const { return m_client.latestFrame(); }
    // The backend's catalogue alone; metrics() adds the console's own layers.
    const std::vector<MetricInfo> &backendMetrics() const { return m_client.metrics(); }
    // The live connection: where to, its state, and the transport's words for it.
    using ConnectionState = TelemetryClient::State;
    QString address() const { return m_client.address(); }
    ConnectionState connectionState() const { return m_client.state(); }
    QString connectionDetail() const { return m_client.stateDetail(); }
    // History and events for views (the detail panel), over the connection of the moment.
    HistorySource *historySource() { return &m_historyService; }
    // The executive summary's answers for views: refresh() asks, fetched() hands them over (nothing before connectTo).
    SummaryFetcher *summaries() { return &m_summaries; }
    const FlightRecorder &recorder() const { return m_recorder; }
    ReplayController *replay() const { return m_replay; }
    // What can be shown: the backend's metrics, then the console's own layers (VersionDrift's); empty until the
    // backend's catalogue is known.
    const std::vector<MetricInfo> &metrics() const { return m_metrics; }
    // The fleet's driver and VBIOS versions and their drift, from the topology and the jobs (computed on a worker
    // when either changes; driftChanged says when).
    const VersionDrift &versionDrift() const { return m_drift; }

    // What is shown. The metric by id (kept while the catalogue is unknown; replaced by the first metric, with a
    // message, when the backend has no such metric); the value or its change per minute over a window (0 = value);
    // the colour map by name (empty = the metric's suggestion); fixed or auto range.
    void setMetric(const QString &id);
    QString metricId() const { return m_metricId; }
    void setChangeWindow(int seconds);
    int changeWindowS() const { return m_changeWindowS; }
    void setColourMap(const QString &name);
    QString colourMap() const { return m_colourMap; }
    void setAutoRange(bool autoRange);
    bool autoRange() const { return m_autoRange; }
    // The metric as drawn: the selected one, its rate or a comparison's difference, with the range in use.
    const MetricInfo &shownMetric() const { return m_shownMetric; }
    FramePtr shownFrame() const { return m_shownFrame; }
    // The newest live frame shown, replayed, loaded or compared: the metric's name for people.
    QString metricName(const QString &id) const;

    // Compares two recorded moments (the map shows the change of the metric); cleared by going live. The frames are
    // decoded and subtracted on a worker (FrameComparer): the comparison is shown when it is done, unless a newer
    // one, clearComparison, another metric or a move of the replay (live, play, pause) came first.
    void compare(qint64 aMs, qint64 bMs);
    void clearComparison();
    bool isComparing() const { return m_comparing; }
    // A comparison asked for is being computed.
    bool isComputingComparison() const { return m_comparer.isBusy(); }
    // Shows the fleet at a past time: from the flight recorder when it holds that time, else from the backend's
    // history (QueryRange), while historyLoadingChanged says so.
    void goToTime(qint64 timeMs);
    bool isLoadingHistory() const { return m_historyRequest != 0; }

    // The newest live sample and the stream's interval; stale past three intervals without a newer sample, by this
    // machine's monotonic clock.
    qint64 lastLiveSampleMs() const { return m_lastLiveSampleMs; }
    qint64 liveIntervalMs() const { return m_intervalMs; }
    bool isStale() const;
    qint64 msSinceNewData() const { return m_newDataClock.isValid() ? m_newDataClock.elapsed() : 0; }
    // Warnings and worse of the fleet over the last hour, oldest first.
    const std::vector<FleetEvent> &fleetEvents() const { return m_events; }
    // What is wrong right now, ranked (model/problems.h), from the fleet's events of the last hour and the jobs.
    std::vector<Problem> problems(int64_t nowMs) const;
    // Drift problems (a job on mixed driver / VBIOS versions, a rack half way through a rollout) are among them.
    // The GPUs with an open anomaly (the backend's detector), ascending; cheap, nothing ranked.
    std::vector<uint32_t> anomalousGpus() const { return m_problems.gpusWith(Problem::Kind::Anomaly); }

Q_SIGNALS:
    // A frame to draw (live, replayed, loaded or a comparison), through the rate of change when chosen; raw is the
    // frame as received (the detail panel shows its values), null for a comparison.
    void frameShown(const fleetscope::FramePtr &shown, const fleetscope::FramePtr &raw);
    // The metric drawn changed (another metric, rate, colour map or a comparison): views reset their transitions.
    void metricShown(const fleetscope::MetricInfo &metric);
    // The auto range moved: views keep their transition and change only the range.
    void rangeShown(float rangeMin, float rangeMax);
    // Every live frame as it arrives, after staleness and recording.
    void liveFrame(const fleetscope::FramePtr &frame);
    void fleetEventsChanged();
    // metrics() changed: the backend's catalogue, or a layer's categories.
    void metricsChanged();
    void driftChanged();
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
    void onStateChanged(TelemetryClient::State state, const QString &detail);
    void onTopologyChanged(const TopologyPtr &topology);
    void onMetricsChanged();
    void rebuildMetrics();
    // Computes the version drift on a worker from the current topology and jobs; the latest request wins.
    void updateDrift();
    void onFrame(const FramePtr &frame);
    void onHistoryFrame(const RangeResultPtr &result);
    void onEvents(const EventBatchPtr &batch);
    void showFrame(const FramePtr &frame);
    // The metric drawn from the selection, its rate and the colour map; subscribes to it.
    void applyMetric();
    // Sets one of the choices of what is shown, and shows it.
    template <typename T> void setDisplayOption(T &option, T value);
    void updateAutoRange(const FramePtr &shown);
    void followFleetEvents();
    void showComparison(const FrameComparer::ResultPtr &result);
    const MetricInfo *selectedMetric() const;

    ChannelSecurity m_security;
    ProblemBoard m_problems; // every event of the stream followed, Info ones included (a throttle's end)
    TelemetryClient m_client;
    HistoryClient *m_history = nullptr;
    SummaryClient *m_summaryClient = nullptr;
    HistoryService m_historyService; // over m_history
    SummaryFetcher m_summaries; // over m_summaryClient
    // Every frame received, compressed, for replay and export; recorded in order on one worker thread (a million
    // GPUs cost tens of ms a frame). The pool is declared after the recorder so it is drained first.
    FlightRecorder m_recorder;
    QThreadPool m_recordPool;
    FrameComparer m_comparer; // reads the recorder on its worker; declared after it, so it goes first
    ReplayController *m_replay = nullptr;

    QString m_metricId;
    int m_changeWindowS = 0;
    QString m_colourMap;
    bool m_autoRange = false;
    MetricInfo m_shownMetric;
    std::optional<RateOfChange> m_rate; // set while a rate of change is shown
    FramePtr m_shownFrame;
    bool m_comparing = false;
    quint64 m_historyRequest = 0; // the QueryRange of a past frame under way, 0 for none

    qint64 m_intervalMs = 1000; // the median of the recent gaps between live samples
    qint64 m_lastLiveSampleMs = 0;
    std::vector<qint64> m_intervalGaps;
    QElapsedTimer m_newDataClock; // since the newest sample arrived

    std::vector<MetricInfo> m_metrics;
    VersionDrift m_drift;
    std::vector<Problem> m_driftProblems; // driftProblems(m_drift), unranked
    quint64 m_driftRequest = 0;
    QThreadPool m_driftPool; // computes the drift; waited for by the destructor
    FramePtr m_layerSource; // the live frame the layer frame below was made for
    FramePtr m_layerFrame;

    quint64 m_eventStream = 0; // the fleet-wide StreamEvents feeding the timeline and the wall
    std::vector<FleetEvent> m_events;
};

} // namespace fleetscope
