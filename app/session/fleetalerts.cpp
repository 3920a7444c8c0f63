// SPDX-License-Identifier: Apache-2.0
#include "app/session/fleetalerts.h"

#include <QDateTime>
#include <QThread>

#include <algorithm>

namespace fleetscope {

namespace {

// When the alerts shown were read, for people: the time today, else the date too.
QString asOf(int64_t ms, int64_t nowMs)
{
    if (ms <= 0) {
        return QStringLiteral("no alerts read yet");
    }
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(ms);
    const bool today = at.date() == QDateTime::fromMSecsSinceEpoch(nowMs).date();
    return QStringLiteral("alerts as of %1")
        .arg(at.toString(today ? QStringLiteral("HH:mm") : QStringLiteral("yyyy-MM-dd HH:mm")));
}

} // namespace

FleetAlerts::FleetAlerts(QObject *parent)
    : QObject(parent)
    , m_board(std::make_shared<AlertBoard>())
{
    connect(&m_client, &AlertsClient::boardReady, this, &FleetAlerts::onBoard);
    connect(&m_client, &AlertsClient::stateChanged, this,
        [this](AlertsClient::State state, const QString &) { onStreamState(state); });
    connect(&m_client, &AlertsClient::accessChanged, this, [this](const BackendAccess &access) {
        m_access = access;
        Q_EMIT accessChanged();
    });
    connect(&m_client, &AlertsClient::silenceDone, this, &FleetAlerts::onSilenceDone);
    connect(&m_client, &AlertsClient::errorOccurred, this, &FleetAlerts::errorOccurred);
    connect(&m_clock, &QTimer::timeout, this, &FleetAlerts::reevaluate);
    m_clock.start(1000);
    m_freshnessText = describe(inputs(), QDateTime::currentMSecsSinceEpoch());
}

FleetAlerts::~FleetAlerts() = default;

const AlertBoard &FleetAlerts::board() const
{
    return *m_board;
}

const BackendAccess &FleetAlerts::access() const
{
    return m_access;
}

FleetAlerts::Freshness FleetAlerts::freshness() const
{
    return m_freshness;
}

QString FleetAlerts::freshnessText() const
{
    return m_freshnessText;
}

void FleetAlerts::connectTo(const QString &address, const ChannelSecurity &security)
{
    Q_ASSERT(QThread::currentThread() == thread());
    // Who this console is belongs to the connection: nothing may be silenced until the new one says.
    if (m_access.role != BackendAccess::Role::Unknown || m_access.maySilence) {
        m_access = BackendAccess();
        Q_EMIT accessChanged();
    }
    m_client.start(address, security); // with the fleet setTopology last gave it
    reevaluate();
}

void FleetAlerts::setTopology(const TopologyPtr &topology)
{
    Q_ASSERT(QThread::currentThread() == thread());
    const bool other = !topology != !m_topology || (topology && topology->generation != m_topology->generation);
    m_topology = topology;
    m_client.setTopology(topology);
    if (!other || !m_seenBoard) {
        return;
    }
    // The kept state's GPUs, nodes and domains are the old fleet's: listed still, placed nowhere until the stream's
    // next state (asked for at once).
    auto board = std::make_shared<AlertBoard>(*m_board);
    for (auto &alert : board->alerts) {
        alert.gpuCount = 0;
        alert.gpuRuns.clear();
        alert.node = -1;
        alert.domain = -1;
    }
    m_board = std::move(board);
    Q_EMIT boardChanged();
}

void FleetAlerts::onBoard(const AlertBoardPtr &board)
{
    m_board = board;
    m_seenBoard = true;
    m_rejectedAtBoard = m_client.statesRejected();
    Q_EMIT boardChanged();
    reevaluate();
}

void FleetAlerts::onStreamState(AlertsClient::State state)
{
    if (state == AlertsClient::State::NotConfigured && m_seenBoard) {
        // The backend reads no Alertmanager now: what it read before is no one's to act on.
        m_board = std::make_shared<AlertBoard>();
        m_seenBoard = false;
        Q_EMIT boardChanged();
    }
    reevaluate();
}

FleetAlerts::Inputs FleetAlerts::inputs() const
{
    Inputs in;
    in.seenBoard = m_seenBoard;
    in.streamState = m_client.state();
    in.streamOpen = in.streamState == AlertsClient::State::Open;
    in.notConfigured = in.streamState == AlertsClient::State::NotConfigured;
    in.status = m_board->status;
    // Why the stream is down, without the retry's countdown (which would change the words at each retry).
    in.streamDetail
        = in.streamState == AlertsClient::State::Reconnecting ? m_client.lastError() : m_client.stateDetail();
    in.newerRefused = m_client.statesRejected() > m_rejectedAtBoard;
    in.refusedWhy = m_client.lastRejection();
    return in;
}

FleetAlerts::Freshness FleetAlerts::judge(const Inputs &in, int64_t /*nowMs*/)
{
    if (in.notConfigured || !in.seenBoard) {
        return Freshness::NotConfigured; // nothing shown, nothing called live
    }
    // The backend publishes a state when what it read or its status changes, not at each poll (AlertmanagerWatch): a
    // quiet Alertmanager keeps the last state's lastSuccessMs, and an age past three polls would call it old. What says
    // Alertmanager answers is the newest state's word on an open stream: a poll that fails publishes reachable = false.
    if (!in.streamOpen || !in.status.reachable || in.status.lastSuccessMs <= 0 || in.newerRefused) {
        return Freshness::Old;
    }
    return Freshness::Live;
}

QString FleetAlerts::describe(const Inputs &in, int64_t nowMs)
{
    switch (judge(in, nowMs)) {
    case Freshness::Live:
        return {};
    case Freshness::NotConfigured:
        if (in.notConfigured) {
            return in.streamDetail.isEmpty() ? QStringLiteral("the backend reads no Alertmanager") : in.streamDetail;
        }
        switch (in.streamState) {
        case AlertsClient::State::Idle:
            return QStringLiteral("alerts: not connected");
        case AlertsClient::State::Reconnecting:
            return QStringLiteral("alerts: no answer from the backend (%1)").arg(in.streamDetail);
        default:
            return QStringLiteral("alerts: waiting for the backend");
        }
    case Freshness::Old:
        break;
    }
    const AlertSourceStatus &s = in.status;
    const QString when = asOf(s.lastSuccessMs, nowMs);
    const int64_t age = std::max<int64_t>(0, nowMs - s.lastSuccessMs);
    if (!in.streamOpen) {
        return QStringLiteral("backend unreachable (%1): %2").arg(in.streamDetail, when);
    }
    if (in.newerRefused) {
        const QString why = in.refusedWhy.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(in.refusedWhy);
        return QStringLiteral("the backend's newest alerts could not be read%1: %2").arg(why, when);
    }
    if (!s.reachable) {
        const QString why = s.error.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(s.error);
        if (s.lastSuccessMs <= 0) {
            return QStringLiteral("Alertmanager unreachable%1: %2").arg(why, when);
        }
        return QStringLiteral("Alertmanager unreachable for %1%2: %3").arg(durationText(age), why, when);
    }
    return QStringLiteral("Alertmanager not read yet");
}

QString FleetAlerts::durationText(int64_t ms)
{
    const int64_t s = std::max<int64_t>(0, ms) / 1000;
    if (s < 60) {
        return QStringLiteral("%1 s").arg(s);
    }
    if (s < 3600) {
        return QStringLiteral("%1 min").arg(s / 60);
    }
    if (s < 2 * 86400) {
        return QStringLiteral("%1 h").arg(s / 3600);
    }
    return QStringLiteral("%1 days").arg(s / 86400);
}

void FleetAlerts::reevaluate()
{
    const Inputs in = inputs();
    const int64_t now = QDateTime::currentMSecsSinceEpoch();
    const Freshness freshness = judge(in, now);
    const QString text = describe(in, now);
    if (freshness == m_freshness && text == m_freshnessText) {
        return;
    }
    m_freshness = freshness;
    m_freshnessText = text;
    Q_EMIT freshnessChanged();
}

void FleetAlerts::createSilence(const SilenceDraft &draft)
{
    Q_ASSERT(QThread::currentThread() == thread());
    // Asked of the backend even where access() greys it out: the backend decides (its refusal is said, and who this
    // console is asked again), and a role given since the last GetAccess is not refused here on stale words.
    m_asked[m_client.createSilence(draft)] = Asked { true, QString() };
}

void FleetAlerts::expireSilence(const QString &id)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_asked[m_client.expireSilence(id)] = Asked { false, id };
}

void FleetAlerts::onSilenceDone(quint64 requestId, bool ok, const QString &message)
{
    const auto it = m_asked.find(requestId);
    if (it == m_asked.end()) {
        return;
    }
    const Asked asked = it->second;
    m_asked.erase(it);
    if (!ok) {
        Q_EMIT silenceDone(false,
            asked.create ? QStringLiteral("Silence not made: %1").arg(message)
                         : QStringLiteral("Silence %1 not expired: %2").arg(asked.silenceId, message));
        return;
    }
    Q_EMIT silenceDone(true,
        asked.create ? QStringLiteral("Silence %1 made").arg(message)
                     : QStringLiteral("Silence %1 expired").arg(asked.silenceId));
}

} // namespace fleetscope
