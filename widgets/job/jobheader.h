// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/jobreport.h"

#include <QWidget>

class QLabel;
class QToolButton;

namespace fleetscope {

// The job page's head: who the job is and what it does now on the left, its goodput as a big number on the right.
class JobHeader : public QWidget
{
    Q_OBJECT
public:
    explicit JobHeader(QWidget *parent = nullptr);

    void setReport(const JobReportPtr &report);
    void setWallMode(bool wall);

Q_SIGNALS:
    void closeRequested();

private:
    QLabel *m_title;
    QLabel *m_facts;
    QLabel *m_stats;
    QLabel *m_goodput;
    QLabel *m_hours;
    QToolButton *m_close;
    bool m_wall = false;
};

} // namespace fleetscope
