// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/jobreport.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

#include <cstdint>

namespace fleetscope {

class JobClient;

// The job page's data (docs/JOBS.md): one job's account, asked of the backend (GetJob) when a job is watched and
// again every refreshMs while it is, each answer checked against the session's topology. The session owns one, over
// its client of the moment; the job page and a wall's job page read it.
//
// Threads: the object's thread only (the client's). Watching another job drops the answers still coming for the one
// before.
class JobWatch : public QObject
{
    Q_OBJECT
public:
    static constexpr int refreshMs = 5000;

    explicit JobWatch(QObject *parent = nullptr);
    // How often a watched job is asked again (tests ask more often than refreshMs).
    void setRefreshInterval(int ms) { m_timer.setInterval(ms); }

    // The client asked; not owned. Null: nothing is asked (the report stays as it was, marked old).
    void setClient(JobClient *client);
    // Watches the job with that id, or with id 0 the one of that name ("job:train-llm-192"). Asks at once.
    void watch(uint64_t jobId, const QString &name = {});
    // Stops asking; the report is kept.
    void stop();
    bool isWatching() const { return m_watching; }
    uint64_t jobId() const { return m_jobId; }
    QString jobName() const { return m_name; }

    // The newest report of the job watched, or null before the first answer (or after watching another job).
    JobReportPtr report() const { return m_report; }
    // Why there is no fresh report, for people ("no job 4711 is running or ended within the hour", "backend
    // unavailable: ..."); empty while the last ask was answered.
    QString problem() const { return m_problem; }

Q_SIGNALS:
    void reportChanged(const fleetscope::JobReportPtr &report);
    void problemChanged(const QString &problem);

private:
    void ask();
    void onReport(const JobReportPtr &report);
    void onFailed(quint64 requestId, const QString &message);
    void setProblem(const QString &problem);
    void cancelAsk();

    QPointer<JobClient> m_client;
    QTimer m_timer;
    bool m_watching = false;
    uint64_t m_jobId = 0;
    QString m_name;
    quint64 m_requestId = 0; // the ask in flight, 0 when none
    JobReportPtr m_report;
    QString m_problem;
};

} // namespace fleetscope
