// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QSize>
#include <QString>

namespace fleetscope {

// Fixes a label's or a button's size to what it needs to show `widest`, whatever text it is given later.
//
// A widget whose size may change relays out its parents at every new text: QLayout::activate passes updateGeometry
// up to the window, a status bar reformats, a QTabWidget repaints its whole page. In a window composed with OpenGL,
// as any window holding the map is, each such pass is one more composition of the whole window (20-60 ms a time on a
// software renderer). A fixed size stops it at the widget: a new text repaints the widget alone.
template <typename Widget> void fixSizeForText(Widget *widget, const QString &widest)
{
    const QString text = widget->text();
    widget->setText(widest);
    const QSize size = widget->sizeHint();
    widget->setText(text);
    widget->setFixedSize(size);
}

} // namespace fleetscope
