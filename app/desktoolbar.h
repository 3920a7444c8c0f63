// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QToolBar>

class QComboBox;

namespace fleetscope {

class ConsoleSession;
class HeatmapView;

// The desk's controls for what the map shows: metric, value or change per minute, colour map, range, arrangement
// and, zoomed out, worst GPU or mean per pixel. The session holds the choices; the boxes follow it (a view string or
// a playlist page may change them too).
class DeskToolbar : public QToolBar
{
    Q_OBJECT
public:
    DeskToolbar(ConsoleSession *session, HeatmapView *map, QWidget *parent = nullptr);

    QComboBox *metricBox() const { return m_metricBox; }
    // The boxes from the session's choices, the catalogue and the map's arrangement, without echoing them back.
    void syncFromSession();

private:
    ConsoleSession *m_session;
    HeatmapView *m_map;
    QComboBox *m_metricBox = nullptr;
    QComboBox *m_showBox = nullptr;
    QComboBox *m_colourBox = nullptr;
    QComboBox *m_rangeBox = nullptr;
    QComboBox *m_arrangeBox = nullptr;
};

} // namespace fleetscope
