// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QList>

class QAction;

namespace fleetscope {

class BreadcrumbBar;
class MainWindow;

// The desk's menus by desktop convention: File (connect, the exports, quit), View (copy view, the map or the executive
// summary, the docks, whose toggles are given), Go (up, back, forward, whole fleet, find, live; back and forward are
// the breadcrumbs' own actions) and Help (every keyboard shortcut, About with the backend's version).
void addDeskMenus(MainWindow *window, BreadcrumbBar *breadcrumbs, const QList<QAction *> &dockToggles);

} // namespace fleetscope
