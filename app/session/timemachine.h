// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/worker.h"
#include "model/flightrecorder.h"
#include "model/framecomparer.h"
#include "model/history.h"

#include <QObject>

namespace fleetscope {

class HistorySource;
class ReplayController;

// The session's past: every live frame recorded (the flight recorder), replay, a comparison of two recorded
// moments, and a time older than the recorder loaded from the backend's history.
//
// Threads: the GUI thread. Frames are recorded on a Worker of their own, one at a time in the order they came (a
// million GPUs cost tens of ms a frame), and read from the GUI thread under the recorder's lock; replay decodes and
// FrameComparer compares on workers of their own.
class TimeMachine : public QObject
{
    Q_OBJECT
public:
    TimeMachine(int recordMinutes, HistorySource *history, QObject *parent = nullptr);
    ~TimeMachine() override;

    const FlightRecorder &recorder() const { return m_recorder; }
    ReplayController *replay() const { return m_replay; }

    // A live frame: recorded, and shown through the replay when it is live.
    void record(const FramePtr &frame);

    // Shows the fleet (topology) at a past time: from the recorder when it holds that time, else the metric and the
    // health from the backend's history (QueryRange), while historyLoadingChanged says so. False: not connected.
    bool goToTime(qint64 timeMs, const TopologyPtr &topology, const QString &metricId);
    bool isLoadingHistory() const { return m_historyRequest != 0; }

    // Compares two recorded moments of a metric: compared() when done, unless cancelComparison() or a move of the
    // replay came first. False: nothing recorded at one of the two.
    bool compare(qint64 aMs, qint64 bMs, const QString &metricId);
    void cancelComparison() { m_comparer.cancel(); }
    bool isComputingComparison() const { return m_comparer.isBusy(); }

Q_SIGNALS:
    // A frame to show: replayed (or live through the replay), or loaded from the backend's history.
    void frameToShow(const fleetscope::FramePtr &frame);
    void compared(const fleetscope::FrameComparer::ResultPtr &result);
    void historyLoadingChanged(bool loading);
    void message(const QString &text, int timeoutMs);

private:
    void onRange(const RangeResultPtr &result);
    void stopLoading();

    HistorySource *m_history;
    TopologyPtr m_loadTopology; // the fleet the load under way is for
    quint64 m_historyRequest = 0; // the QueryRange of a past frame under way, 0 for none
    FlightRecorder m_recorder;
    FrameComparer m_comparer; // reads the recorder on its worker; declared after it, so it goes first
    ReplayController *m_replay = nullptr; // decodes from the recorder: deleted first
    Worker m_recordWorker; // writes to the recorder, every frame in order: declared last, so it goes first
};

} // namespace fleetscope
