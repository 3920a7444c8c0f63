// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QGroupBox>

#include <vector>

QT_BEGIN_NAMESPACE
class QPushButton;
class QTableWidget;
QT_END_NAMESPACE

namespace fleetscope {

// The detail panel's jobs: those that served the subject's GPUs, newest listing first as the backend gives them, and
// "Open job page" for the chosen one (a GPU's running job until another row is chosen; a double-click opens a row's).
class DetailJobs : public QGroupBox
{
    Q_OBJECT
public:
    explicit DetailJobs(QWidget *parent = nullptr);

    // The jobs listed and the GPUs whose jobs are shown (none: an empty table); jobs of another topology are not shown.
    void setSubject(const JobsPtr &jobs, const TopologyPtr &topology, const std::vector<uint32_t> &subject);
    QTableWidget *table() const { return m_table; }
    QPushButton *openButton() const { return m_open; }
    // The job "Open job page" opens now: the chosen row's, else the subject's running one; 0 when none.
    uint64_t jobToOpen() const;

Q_SIGNALS:
    void jobPageRequested(quint64 jobId);

private:
    void updateButton();

    QTableWidget *m_table;
    QPushButton *m_open;
    std::vector<uint64_t> m_rowJobs; // the job id of each row (0: a note)
    uint64_t m_runningJob = 0; // the subject's running job, when one GPU's
};

} // namespace fleetscope
