// SPDX-License-Identifier: Apache-2.0
#include "model/framecomparer.h"

#include "model/flightrecorder.h"
#include "model/framediff.h"

#include <QThread>

#include <algorithm>

namespace fleetscope {

FrameComparer::FrameComparer(const FlightRecorder *recorder, QObject *parent)
    : QObject(parent)
    , m_recorder(recorder)
{
    qRegisterMetaType<ResultPtr>();
}

FrameComparer::Result FrameComparer::computeComparison(
    const FlightRecorder &recorder, qint64 aMs, qint64 bMs, const QString &metricId)
{
    Result result;
    const FramePtr older = recorder.frameAt(std::min(aMs, bMs));
    const FramePtr newer = recorder.frameAt(std::max(aMs, bMs));
    if (!older || !newer) {
        result.error = tr("Nothing recorded at one of the two times");
        return result;
    }
    result.olderMs = older->sampleTimeMs;
    result.newerMs = newer->sampleTimeMs;
    QString error;
    result.diff = difference(*newer, *older, metricId, &error);
    if (!result.diff) {
        result.error = tr("Cannot compare: %1").arg(error);
        return result;
    }
    result.range = robustRange(result.diff->planes[0].values, 0.01, 0.99, true);
    return result;
}

quint64 FrameComparer::compare(qint64 aMs, qint64 bMs, const QString &metricId)
{
    Q_ASSERT(QThread::currentThread() == thread());
    const quint64 request = ++m_request;
    m_jobs.start(
        [recorder = m_recorder, request, aMs, bMs, metricId](const JobTracker::Ticket &) {
            auto result = std::make_shared<Result>(computeComparison(*recorder, aMs, bMs, metricId));
            result->request = request;
            return ResultPtr(std::move(result));
        },
        [this](const ResultPtr &result) { Q_EMIT compared(result); });
    return request;
}

void FrameComparer::cancel()
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_jobs.cancel();
}

} // namespace fleetscope
