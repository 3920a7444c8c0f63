// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/summaryclient.h"
#include "widgets/summary/summaryfigures.h"

#include <QObject>
#include <QPointer>

#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace fleetscope {

// Asks GetSummary for what the summary page shows and assembles the answers. GetSummary gives aggregates over one
// range, not time series, so the trend lines take one call per bucket: the last day in hourly buckets and the last
// week in daily ones, with the day and the week themselves 2 + 24 + 7 calls, all in flight together on the client's
// channel. A bucket the backend holds no frame for fails and is left out. The session owns one, over its client of the
// moment; the summary views are handed what it fetched.
//
// Threads: the object's thread only (the client's). A refresh cancels the one before it, whose answers are dropped.
class SummaryFetcher : public QObject
{
    Q_OBJECT
public:
    static constexpr int dayBuckets = 24; // one an hour
    static constexpr int weekBuckets = 7; // one a day

    explicit SummaryFetcher(QObject *parent = nullptr);

    // The client asked; not owned. Null: refresh() does nothing.
    void setClient(SummaryClient *client);
    // Asks for the day and week ending at nowMs and for their trend buckets; fetched() once all have answered.
    void refresh(int64_t nowMs);
    bool isFetching() const { return !m_pending.empty(); }

Q_SIGNALS:
    void fetched(const fleetscope::SummaryFetch &result);
    // The day's or the week's summary could not be had.
    void errorOccurred(const QString &message);

private:
    void onSummary(const SummaryPtr &summary);
    void onFailed(quint64 id, const QString &message);
    void settle(quint64 id);

    QPointer<SummaryClient> m_client;
    // The refresh in flight: its request ids, what each is for, and what has come so far.
    quint64 m_dayId = 0;
    quint64 m_weekId = 0;
    std::map<quint64, bool> m_trendIds; // id -> is a week bucket
    std::set<quint64> m_pending;
    SummaryFetch m_next;
};

} // namespace fleetscope
