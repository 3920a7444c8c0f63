// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/problems.h"

#include <QTimer>
#include <QWidget>

class QComboBox;
class QLabel;
class QTableView;

namespace fleetscope {

class ConsoleSession;
class ProblemsModel;

// The desk's "Problems" dock: what is wrong right now, ranked by severity and blast radius, filtered by kind; live as
// events and jobs arrive (and each half minute, as bursts go quiet), the chosen problem kept chosen across updates.
// Activating one (click, Enter) says which, for the window to drill the map to it.
class DeskProblems : public QWidget
{
    Q_OBJECT
public:
    explicit DeskProblems(ConsoleSession *session, QWidget *parent = nullptr);

    ProblemsModel *model() const { return m_model; }
    // Reads the session's problems again (also on its own when events or jobs change).
    void refresh();

Q_SIGNALS:
    // The problem, and the GPUs it hits (its GPU, or its node's).
    void problemChosen(const fleetscope::Problem &problem, const std::vector<uint32_t> &gpus);

private:
    void applyFilter();
    void choose(const QModelIndex &index);

    ConsoleSession *m_session;
    ProblemsModel *m_model;
    QComboBox *m_kinds;
    QLabel *m_count;
    QTableView *m_table;
    QTimer m_clock;
};

} // namespace fleetscope
