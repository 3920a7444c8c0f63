// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/alertsclient.h"
#include "model/alerts.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <cstdint>
#include <map>

namespace fleetscope {

// The NOC's alerts and silences as the backend serves them (StreamAlerts), who this console is to the backend
// (GetAccess), and the silences it asks the backend to make or end (CreateSilence, ExpireSilence). Followed again for
// each connection; the last board is kept while the stream is down, marked as old (freshness()).
//
// Threads: the GUI thread; the client's calls run on its own threads and come back through a Handover.
class FleetAlerts : public QObject
{
    Q_OBJECT
public:
    explicit FleetAlerts(QObject *parent = nullptr);
    ~FleetAlerts() override;

    // What the backend last said, whole (empty before the first state, and when it reads no Alertmanager).
    const AlertBoard &board() const;
    const BackendAccess &access() const;

    enum class Freshness : uint8_t {
        NotConfigured, // the backend reads no Alertmanager (or has not said yet)
        Live, // the stream is open and Alertmanager answered within three poll intervals
        Old, // what is shown is the last state read: the stream is down or Alertmanager does not answer
    };
    Freshness freshness() const;
    // For people, when not Live: "Alertmanager unreachable for 2 min (connection refused): alerts as of 14:02".
    QString freshnessText() const;

    // Asks the backend to make or end a silence; silenceDone says how it went (the error's words when it did not).
    void createSilence(const SilenceDraft &draft);
    void expireSilence(const QString &id);

    // Follows HOST:PORT's alerts (the session's connectTo), again for another address. The board is kept, as old,
    // until the new connection's first state.
    void connectTo(const QString &address, const ChannelSecurity &security);
    // The fleet the alerts are placed within (the live feed's). Another generation: the kept board's placements are
    // dropped (they index the old fleet), and the stream is followed again for one against it.
    void setTopology(const TopologyPtr &topology);
    // The stream itself, for the status bar: its state and words.
    AlertsClient::State streamState() const { return m_client.state(); }
    QString streamDetail() const { return m_client.stateDetail(); }

    // The rule, for any time: what the backend last said (board: seen at all, status), whether the stream is open now,
    // whether the backend said it reads no Alertmanager. Live: the stream is open and its newest state says the last
    // poll was answered (the backend publishes a state when a poll fails, not at each poll that reads the same, so
    // lastSuccessMs is not the last poll's and is not aged against three intervals). The words count the time since
    // lastSuccessMs, the backend's as given, each second (freshnessChanged when they change).
    struct Inputs
    {
        bool seenBoard = false;
        bool streamOpen = false;
        bool notConfigured = false;
        AlertSourceStatus status;
        QString streamDetail; // why the stream is down, when it is
        AlertsClient::State streamState = AlertsClient::State::Idle;
        // A state newer than the board was sent and refused (a count that lies, runs off the fleet, too large): the
        // board shown is not the backend's newest, so it is old whatever it says.
        bool newerRefused = false;
        QString refusedWhy;
    };
    static Freshness judge(const Inputs &in, int64_t nowMs);
    static QString describe(const Inputs &in, int64_t nowMs);
    // "45 s", "2 min", "3 h", "2 days"
    static QString durationText(int64_t ms);

Q_SIGNALS:
    void boardChanged();
    void accessChanged();
    void freshnessChanged();
    void silenceDone(bool ok, const QString &message);
    // A state the backend sent that was dropped as bad (the log, the status bar).
    void errorOccurred(const QString &message);

private:
    Inputs inputs() const;
    void reevaluate();
    void onBoard(const AlertBoardPtr &board);
    void onStreamState(AlertsClient::State state);
    void onSilenceDone(quint64 requestId, bool ok, const QString &message);

    AlertsClient m_client;
    AlertBoardPtr m_board; // never null: an empty board before the first state
    bool m_seenBoard = false;
    quint64 m_rejectedAtBoard = 0; // the client's states refused, as of the board shown
    TopologyPtr m_topology; // the fleet m_board's placements index (the client's states come decoded against it)
    BackendAccess m_access;
    Freshness m_freshness = Freshness::NotConfigured;
    QString m_freshnessText;
    QTimer m_clock; // re-judges freshness each second: it turns old without a word from the backend
    struct Asked
    {
        bool create = true;
        QString silenceId; // expire's
    };
    std::map<quint64, Asked> m_asked; // silence calls under way
};

} // namespace fleetscope
