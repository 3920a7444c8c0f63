// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/problems.h"

#include <QWidget>

#include <vector>

namespace fleetscope {

// The wall's problems page: what is wrong right now, in type readable across a room. Incidents first, each in two
// lines: its cause and headline large ("COOLING · Cooling unit r05-crah1 failed: 512 GPUs throttling, 6 jobs"), its
// evidence, since when and the jobs under it. Then the other problems ranked by severity and by the GPUs of the jobs
// they hit, a line each: where, what, since when, and which jobs. Painted, showing as many as fit (nobody at a wall
// can scroll); the count of those that do not fit is said. The headline counts as the health strip does
// (tallyText). The NOC's alerts are lines among them ("ALERT GpuTooHot: …"), a silenced or inhibited one dim and
// saying so ("— silenced by alice until 16:00: swapping the PSU").
class ProblemsBoard : public QWidget
{
    Q_OBJECT
public:
    explicit ProblemsBoard(QWidget *parent = nullptr);

    // The open problems, ranked (ProblemBoard::open), with the topology and jobs they were ranked with.
    void setProblems(std::vector<Problem> problems, TopologyPtr topology, JobsPtr jobs, qint64 nowMs);
    // The rows as shown: "where  what  since  jobs", an incident's "CAUSE · headline  evidence  since  jobs", for
    // tests and the wall's log.
    QStringList rowTexts() const;
    int criticalCount() const;
    // The headline: "2 incidents · 9 other problems (3 critical)".
    QString headline() const;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    QString jobsText(const Problem &problem) const;
    QString evidenceText(const Problem &problem) const;
    QString sinceText(const Problem &problem) const;
    // What a line says: the problem's words; an alert's marked as one, with who silenced it, until when and why.
    QString whatText(const Problem &problem) const;

    std::vector<Problem> m_problems;
    TopologyPtr m_topology;
    JobsPtr m_jobs;
    qint64 m_nowMs = 0;
};

} // namespace fleetscope
