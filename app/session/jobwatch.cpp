// SPDX-License-Identifier: Apache-2.0
#include "app/session/jobwatch.h"

#include "client/jobclient.h"

#include <QThread>

namespace fleetscope {

JobWatch::JobWatch(QObject *parent)
    : QObject(parent)
{
    m_timer.setInterval(refreshMs);
    connect(&m_timer, &QTimer::timeout, this, &JobWatch::ask);
}

void JobWatch::setClient(JobClient *client)
{
    Q_ASSERT(QThread::currentThread() == thread());
    cancelAsk();
    if (m_client) {
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_client = client;
    if (client) {
        connect(client, &JobClient::reportReady, this, &JobWatch::onReport);
        connect(client, &JobClient::requestFailed, this, &JobWatch::onFailed);
    }
    if (m_watching) {
        ask(); // on the new connection at once; without one, the report is marked old
    }
}

void JobWatch::watch(uint64_t jobId, const QString &name)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (jobId != m_jobId || (jobId == 0 && name != m_name)) {
        // Another job: what is still coming for the one before is not this one's, nor is its report.
        cancelAsk();
        m_jobId = jobId;
        m_name = jobId == 0 ? name : QString();
        if (m_report) {
            m_report.reset();
            Q_EMIT reportChanged(m_report);
        }
        setProblem({});
    }
    m_watching = true;
    m_timer.start();
    cancelAsk(); // asked at once, whatever was asked before (against another fleet, say)
    ask();
}

void JobWatch::stop()
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_watching = false;
    m_timer.stop();
    cancelAsk();
}

void JobWatch::ask()
{
    if (!m_client) {
        setProblem(tr("not connected: the job's account is as the backend last gave it"));
        return;
    }
    if (m_requestId != 0) {
        return; // the ask before is still under its deadline: its answer, or its failure, comes first
    }
    m_requestId = m_client->getJob(m_jobId, m_name);
}

void JobWatch::onReport(const JobReportPtr &report)
{
    if (!report || report->requestId != m_requestId || m_requestId == 0) {
        return; // an answer for an ask this watch dropped
    }
    m_requestId = 0;
    m_report = report;
    setProblem({});
    Q_EMIT reportChanged(m_report);
}

void JobWatch::onFailed(quint64 requestId, const QString &message)
{
    if (requestId != m_requestId || m_requestId == 0) {
        return;
    }
    m_requestId = 0;
    setProblem(message);
}

void JobWatch::setProblem(const QString &problem)
{
    if (problem != m_problem) {
        m_problem = problem;
        Q_EMIT problemChanged(m_problem);
    }
}

void JobWatch::cancelAsk()
{
    if (m_requestId != 0 && m_client) {
        m_client->cancel(m_requestId);
    }
    m_requestId = 0;
}

} // namespace fleetscope
