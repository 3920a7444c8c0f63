// SPDX-License-Identifier: Apache-2.0
#include "app/session/livefeed.h"

#include "model/versiondrift.h"

#include <algorithm>

namespace fleetscope {

namespace {
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
} // namespace

LiveFeed::LiveFeed(QObject *parent)
    : QObject(parent)
{
    connect(&m_client, &TelemetryClient::stateChanged, this, &LiveFeed::stateChanged);
    connect(&m_client, &TelemetryClient::topologyChanged, this, &LiveFeed::topologyChanged);
    connect(&m_client, &TelemetryClient::metricsChanged, this, &LiveFeed::metricsChanged);
    connect(&m_client, &TelemetryClient::jobsChanged, this, &LiveFeed::jobsChanged);
    connect(&m_client, &TelemetryClient::frameReady, this, &LiveFeed::onFrame);
    connect(&m_client, &TelemetryClient::errorOccurred, this, &LiveFeed::errorOccurred);
}

void LiveFeed::connectTo(const QString &address, const ChannelSecurity &security, const QString &firstMetric)
{
    // Another metric waits for the catalogue, which says whether the backend has it.
    if (m_client.state() == TelemetryClient::State::Idle && subscribedMetrics({}).contains(firstMetric)) {
        m_client.setMetrics(subscribedMetrics(firstMetric));
    }
    m_client.start(address, security);
}

void LiveFeed::subscribe(const QString &shownId)
{
    m_client.setMetrics(subscribedMetrics(shownId));
}

void LiveFeed::onFrame(const FramePtr &frame)
{
    if (frame->sampleTimeMs > m_lastSampleMs) {
        const bool afterOutage = m_lastSampleMs > 0 && isStale();
        if (m_lastSampleMs > 0 && !afterOutage) {
            m_intervalGaps.push_back(std::clamp<qint64>(frame->sampleTimeMs - m_lastSampleMs, 100, 60000));
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
    m_lastSampleMs = std::max<qint64>(m_lastSampleMs, frame->sampleTimeMs);
    Q_EMIT frameArrived(frame);
}

bool LiveFeed::isStale() const
{
    // Old data must never look fresh: past three intervals without a new sample it is stale.
    return m_lastSampleMs > 0 && static_cast<double>(msSinceNewData()) > 3.0 * static_cast<double>(m_intervalMs);
}

} // namespace fleetscope
