// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

#include <functional>

namespace fleetscope {

class ConsoleSession;
class SummaryView;

// The executive summary as the desk and the wall both show it, wired once to the session: the fleet (offenders by
// name), the day's and week's summaries and their trends from the session's SummaryFetcher, capacity at risk from
// the live frame and the jobs. It asks only while shown (setShown): when shown with nothing yet, with what it shows
// five minutes old or from another connection, and every five minutes while it stays shown; capacity at risk (a pass
// over every GPU) every few seconds.
class SummaryPage : public QWidget
{
    Q_OBJECT
public:
    static constexpr int refreshMs = 5 * 60 * 1000;
    static constexpr int riskMs = 5000;

    // nowMs: the wall clock the summaries end at (tests give their own); empty: this machine's.
    explicit SummaryPage(ConsoleSession *session, std::function<qint64()> nowMs = {}, QWidget *parent = nullptr);

    SummaryView *view() const { return m_view; }
    // Whether the page is what its window shows now.
    void setShown(bool shown);
    bool isShownNow() const { return m_shown; }

Q_SIGNALS:
    // The day's or the week's summary could not be had.
    void errorOccurred(const QString &message);

private:
    void refresh();
    void updateRisk(bool now);

    ConsoleSession *m_session;
    std::function<qint64()> m_nowMs;
    SummaryView *m_view;
    bool m_shown = false;
    QElapsedTimer m_fresh; // since the view last got an answer; invalid: never, or from another connection
    QElapsedTimer m_riskClock; // since capacity at risk was last computed
    QTimer m_timer; // refreshes while shown
};

} // namespace fleetscope
