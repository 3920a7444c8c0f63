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
class ProblemsBoard;
class ProblemsModel;

// What is wrong right now, ranked by severity and blast radius, as the desk and the wall show it, wired once to the
// session: read again as events, jobs or the fleet change, and with time (bursts go quiet, durations grow): every 5 s
// on the wall, every 30 s on the desk, while the page is shown.
//
// The desk's look (its "Problems" dock): a table filtered by kind, the chosen problem kept chosen across updates;
// activating one (click, Enter) shows it on the map: a GPU's problem drills to the GPU; a node's or a rack's to it,
// its GPUs outlined; the message says which. The wall's: a board in type readable across a room, warnings and worse
// only (information, a rack half way through a driver rollout, stays on the desk); nobody points at it.
class ProblemsPage : public QWidget
{
    Q_OBJECT
public:
    enum class Look { Desk, Wall };
    // map: where a chosen problem is shown (the desk's look only).
    ProblemsPage(ConsoleSession *session, Look look, MapPage *map = nullptr, QWidget *parent = nullptr);

    // The desk's table (null on the wall) and the wall's board (null on the desk).
    ProblemsModel *model() const { return m_model; }
    ProblemsBoard *board() const { return m_board; }
    // Whether the page is seen now: shown, it reads the problems at once and then follows them; hidden, it stops.
    // The desk's dock is shown from the start, the wall's page only while it is on the wall.
    void setShown(bool shown);
    // Reads the session's problems again.
    void refresh();

Q_SIGNALS:
    // For the status bar: the problem shown, and where.
    void message(const QString &text, int timeoutMs);

private:
    void applyFilter();
    void choose(const QModelIndex &index);

    void makeTable();

    ConsoleSession *m_session;
    MapPage *m_map;
    bool m_shown = false;
    ProblemsModel *m_model = nullptr;
    QComboBox *m_kinds = nullptr;
    QLabel *m_count = nullptr;
    QTableView *m_table = nullptr;
    ProblemsBoard *m_board = nullptr;
    QTimer m_clock;
};

} // namespace fleetscope
