// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/problems.h"

#include <QWidget>

#include <vector>

namespace fleetscope {

// The wall's problems page: what is wrong right now, ranked by severity and by the GPUs of the jobs it hits, in type
// readable across a room: where, what, since when, and which jobs. Painted, showing as many as fit (nobody at a wall
// can scroll); the count of those that do not fit is said.
class ProblemsBoard : public QWidget
{
    Q_OBJECT
public:
    explicit ProblemsBoard(QWidget *parent = nullptr);

    // The open problems, ranked (ProblemBoard::open), with the topology and jobs they were ranked with.
    void setProblems(std::vector<Problem> problems, TopologyPtr topology, JobsPtr jobs, qint64 nowMs);
    // The rows as shown: "where  what  since  jobs", for tests and the wall's log.
    QStringList rowTexts() const;
    int criticalCount() const;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    QString jobsText(const Problem &problem) const;
    QString sinceText(const Problem &problem) const;

    std::vector<Problem> m_problems;
    TopologyPtr m_topology;
    JobsPtr m_jobs;
    qint64 m_nowMs = 0;
};

} // namespace fleetscope
