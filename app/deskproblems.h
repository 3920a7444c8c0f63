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
class MapPage;
class ProblemsModel;

// The desk's "Problems" dock: what is wrong right now, ranked by severity and blast radius, filtered by kind; live as
// events and jobs arrive (and each half minute, as bursts go quiet), the chosen problem kept chosen across updates.
// Activating one (click, Enter) shows it on the map: a GPU's problem drills to the GPU; a node's or a rack's to it,
// its GPUs outlined; the message says which.
class DeskProblems : public QWidget
{
    Q_OBJECT
public:
    DeskProblems(ConsoleSession *session, MapPage *map, QWidget *parent = nullptr);

    ProblemsModel *model() const { return m_model; }
    // Reads the session's problems again (also on its own when events or jobs change).
    void refresh();

Q_SIGNALS:
    // For the status bar: the problem shown, and where.
    void message(const QString &text, int timeoutMs);

private:
    void applyFilter();
    void choose(const QModelIndex &index);

    ConsoleSession *m_session;
    MapPage *m_map;
    ProblemsModel *m_model;
    QComboBox *m_kinds;
    QLabel *m_count;
    QTableView *m_table;
    QTimer m_clock;
};

} // namespace fleetscope
