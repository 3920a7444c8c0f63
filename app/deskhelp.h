// SPDX-License-Identifier: Apache-2.0
#pragma once

class QMenuBar;
class QWidget;

namespace fleetscope {

class ConsoleSession;

// Help > Keyboard shortcuts: every shortcut of the menus, and the map's keys that no menu lists.
void showKeyboardShortcuts(QWidget *parent, QMenuBar *menus);
// Help > About: the console's version, the backend it shows and the version that backend names.
void showAbout(QWidget *parent, const ConsoleSession &session);

} // namespace fleetscope
