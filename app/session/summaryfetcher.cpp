// SPDX-License-Identifier: Apache-2.0
#include "app/session/summaryfetcher.h"

#include <QThread>

#include <algorithm>

namespace fleetscope {

namespace {
constexpr int64_t hourMs = 3600LL * 1000;
constexpr int64_t dayMs = 24 * hourMs;
} // namespace

SummaryFetcher::SummaryFetcher(QObject *parent)
    : QObject(parent)
{ }

void SummaryFetcher::setClient(SummaryClient *client)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_client) {
        for (const quint64 id : m_pending) {
            m_client->cancel(id);
        }
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_client = client;
    m_pending.clear();
    if (client) {
        connect(client, &SummaryClient::summaryReady, this, &SummaryFetcher::onSummary);
        connect(client, &SummaryClient::requestFailed, this, &SummaryFetcher::onFailed);
    }
}

void SummaryFetcher::refresh(int64_t nowMs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_client) {
        return;
    }
    for (const quint64 id : m_pending) {
        m_client->cancel(id); // superseded
    }
    m_pending.clear();
    m_trendIds.clear();
    m_next = {};
    m_dayId = m_client->requestSummary(nowMs - dayMs, nowMs, maxSummaryOffenders);
    m_weekId = m_client->requestSummary(nowMs - 7 * dayMs, nowMs, maxSummaryOffenders);
    m_pending = { m_dayId, m_weekId };
    for (int i = 0; i < dayBuckets; ++i) {
        const int64_t end = nowMs - i * hourMs;
        const quint64 id = m_client->requestSummary(end - hourMs, end, 1);
        m_trendIds[id] = false;
        m_pending.insert(id);
    }
    for (int i = 0; i < weekBuckets; ++i) {
        const int64_t end = nowMs - i * dayMs;
        const quint64 id = m_client->requestSummary(end - dayMs, end, 1);
        m_trendIds[id] = true;
        m_pending.insert(id);
    }
}

void SummaryFetcher::onSummary(const SummaryPtr &summary)
{
    const quint64 id = summary->requestId;
    if (!m_pending.count(id)) {
        return;
    }
    if (id == m_dayId) {
        m_next.day = summary;
    } else if (id == m_weekId) {
        m_next.week = summary;
    } else if (const auto it = m_trendIds.find(id); it != m_trendIds.end()) {
        (it->second ? m_next.weekTrend : m_next.dayTrend).push_back(summaryTrendPoint(*summary));
    }
    settle(id);
}

void SummaryFetcher::onFailed(quint64 id, const QString &message)
{
    if (!m_pending.count(id)) {
        return;
    }
    // A trend bucket before the held history fails (FAILED_PRECONDITION) and is simply left out.
    if (id == m_dayId || id == m_weekId) {
        Q_EMIT errorOccurred(tr("summary unavailable: %1").arg(message));
    }
    settle(id);
}

void SummaryFetcher::settle(quint64 id)
{
    m_pending.erase(id);
    if (!m_pending.empty()) {
        return;
    }
    auto byTime = [](const SummaryTrendPoint &a, const SummaryTrendPoint &b) { return a.endMs < b.endMs; };
    std::sort(m_next.dayTrend.begin(), m_next.dayTrend.end(), byTime);
    std::sort(m_next.weekTrend.begin(), m_next.weekTrend.end(), byTime);
    const SummaryFetch result = std::move(m_next);
    m_next = {};
    Q_EMIT fetched(result);
}

} // namespace fleetscope
