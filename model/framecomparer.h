// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/jobtracker.h"
#include "model/autorange.h"
#include "model/fleetmodel.h"

#include <QObject>

#include <memory>

namespace fleetscope {

class FlightRecorder;

// Compare mode's work off the GUI thread: the two recorded frames decoded and one metric's difference taken
// (model/framediff.h), with a colour range fitted to it, on a JobTracker of its own (tens of ms a frame at a million
// GPUs). The newest request wins: compared() comes for it alone, and nothing comes for a request superseded by a
// newer one or by cancel().
//
// Threads: the API and compared() belong to the object's thread; the worker reads only the recorder (which takes its
// own lock) and what it was handed. The worker goes first when this object goes (it waits for the comparison under
// way): the recorder must outlive this object.
class FrameComparer : public QObject
{
    Q_OBJECT
public:
    struct Result
    {
        quint64 request = 0;
        FramePtr diff; // null when the two moments cannot be compared; error says why
        ValueRange range; // from the 1st to the 99th percentile of the change, symmetric about zero
        int64_t olderMs = 0; // sample times of the two frames compared
        int64_t newerMs = 0;
        QString error;
    };
    using ResultPtr = std::shared_ptr<const Result>;

    explicit FrameComparer(const FlightRecorder *recorder, QObject *parent = nullptr);

    // Compares metricId between the recorded frames at or before aMs and bMs (either order); returns the request's
    // number, which compared() carries.
    quint64 compare(qint64 aMs, qint64 bMs, const QString &metricId);
    // Drops the request under way, if any.
    void cancel();
    // A request is under way (and not superseded).
    bool isBusy() const { return m_jobs.running(); }

    // The work itself, on the calling thread.
    static Result computeComparison(const FlightRecorder &recorder, qint64 aMs, qint64 bMs, const QString &metricId);

Q_SIGNALS:
    void compared(const fleetscope::FrameComparer::ResultPtr &result);

private:
    const FlightRecorder *m_recorder;
    quint64 m_request = 0; // the newest request's number
    JobTracker m_jobs; // last member, so that it goes first
};

} // namespace fleetscope
