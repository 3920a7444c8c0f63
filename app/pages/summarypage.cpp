// SPDX-License-Identifier: Apache-2.0
#include "app/pages/summarypage.h"

#include "app/consolesession.h"
#include "widgets/summary/summaryview.h"

#include <QDateTime>
#include <QVBoxLayout>

namespace fleetscope {

SummaryPage::SummaryPage(ConsoleSession *session, std::function<qint64()> nowMs, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_nowMs(nowMs ? std::move(nowMs) : [] { return QDateTime::currentMSecsSinceEpoch(); })
    , m_view(new SummaryView(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);

    SummaryFetcher *summaries = session->summaries();
    connect(summaries, &SummaryFetcher::fetched, m_view, &SummaryView::showFetch);
    connect(summaries, &SummaryFetcher::errorOccurred, this, &SummaryPage::errorOccurred);
    connect(m_view, &SummaryView::refreshed, this, [this] { m_fresh.start(); });
    connect(session, &ConsoleSession::topologyChanged, m_view, &SummaryView::setTopology);
    m_view->setTopology(session->topology());
    connect(session, &ConsoleSession::clientsChanged, this, [this] {
        m_fresh.invalidate(); // of the old connection
        if (m_shown) {
            refresh();
        }
    });
    connect(session, &ConsoleSession::liveFrame, this, [this] { updateRisk(false); });
    m_timer.setInterval(refreshMs);
    connect(&m_timer, &QTimer::timeout, this, &SummaryPage::refresh);
}

void SummaryPage::setShown(bool shown)
{
    m_shown = shown;
    if (!shown) {
        m_timer.stop();
        return;
    }
    if (!m_view->hasData() || !m_fresh.isValid() || m_fresh.elapsed() >= refreshMs) {
        refresh();
    }
    m_timer.start();
    updateRisk(true);
}

void SummaryPage::refresh()
{
    m_session->summaries()->refresh(m_nowMs());
}

void SummaryPage::updateRisk(bool now)
{
    if (!m_shown || (!now && m_riskClock.isValid() && m_riskClock.elapsed() < riskMs)) {
        return;
    }
    if (const FramePtr frame = m_session->latestFrame()) {
        m_riskClock.start();
        m_view->setLiveState(frame, m_session->jobs());
    }
}

} // namespace fleetscope
