// SPDX-License-Identifier: Apache-2.0
#pragma once

class QWidget;

namespace fleetscope {

// From then on, whenever the window is shown, before it is mapped: finishes the layouts Qt would redo just
// after the first paint (a QTabWidget lays itself out only once shown, and its relayout repainted the whole window
// straight after the first paint, waiting for the X server to take the first image), then paints the window into
// its backing store, so that the first paint after mapping finds the shared memory touched and the fonts, glyphs and
// style loaded. On the 2-core VMs measured, the desk's first paint went from 40-60 ms of frozen GUI thread to under
// 25 (docs/PERFORMANCE.md); the window appears as late as before. Only on X11 (xcb), where the backing store is an
// image from the start; elsewhere only the layouts.
void prepareFirstPaintOnShow(QWidget *window);

} // namespace fleetscope
