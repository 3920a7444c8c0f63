// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/telemetryclient.h"

#include <QElapsedTimer>
#include <QObject>
#include <QStringList>

#include <vector>

namespace fleetscope {

// The session's live feed: the stream from the backend (topology, catalogue, jobs, frames) and how fresh it is.
// Staleness is judged by this machine's monotonic clock since the last newer sample arrived, never by comparing the
// backend's sample times with this machine's wall clock (they may disagree, and either may step).
//
// Threads: the GUI thread, as the client's signals.
class LiveFeed : public QObject
{
    Q_OBJECT
public:
    explicit LiveFeed(QObject *parent = nullptr);

    // Connects to HOST:PORT. The first connection subscribes to firstMetric's frames from the start when it is one
    // of the defaults (changing the subscription once the catalogue came would restart the stream).
    void connectTo(const QString &address, const ChannelSecurity &security, const QString &firstMetric);
    // What the stream carries: the metric shown (unless it is a layer of the console's own) and the health-relevant
    // defaults, so that a switch back is instant.
    void subscribe(const QString &shownId);

    TopologyPtr topology() const { return m_client.topology(); }
    JobsPtr jobs() const { return m_client.jobs(); }
    FramePtr latestFrame() const { return m_client.latestFrame(); }
    const std::vector<MetricInfo> &metrics() const { return m_client.metrics(); }
    QString address() const { return m_client.address(); }
    TelemetryClient::State state() const { return m_client.state(); }
    QString stateDetail() const { return m_client.stateDetail(); }

    // The newest live sample and the stream's interval (the median of the recent gaps between samples, leaving out
    // the gap across an outage); stale past three intervals without a newer sample.
    qint64 lastSampleMs() const { return m_lastSampleMs; }
    qint64 intervalMs() const { return m_intervalMs; }
    bool isStale() const;
    qint64 msSinceNewData() const { return m_newDataClock.isValid() ? m_newDataClock.elapsed() : 0; }

Q_SIGNALS:
    void stateChanged(fleetscope::TelemetryClient::State state, const QString &detail);
    void topologyChanged(const fleetscope::TopologyPtr &topology);
    void metricsChanged();
    void jobsChanged(const fleetscope::JobsPtr &jobs);
    // Every live frame as it arrives, after staleness was updated.
    void frameArrived(const fleetscope::FramePtr &frame);
    void errorOccurred(const QString &message);

private:
    void onFrame(const FramePtr &frame);

    TelemetryClient m_client;
    qint64 m_intervalMs = 1000;
    qint64 m_lastSampleMs = 0;
    std::vector<qint64> m_intervalGaps;
    QElapsedTimer m_newDataClock; // since the newest sample arrived
};

} // namespace fleetscope
