// SPDX-License-Identifier: Apache-2.0
// For the suites that check a window painted before it is mapped (app/firstpaint.h).
#pragma once

#include "tests/widgets/heatmap/heatmaptesting.h"

#include <QBackingStore>
#include <QImage>
#include <QPaintDevice>
#include <QString>
#include <QWidget>

namespace fleetscope::firstpainttesting {

// Whether the window's backing store, right after show() and before any event, holds what the window draws (its
// pixels against a grab, all but 2 % alike: a clock may tick between the two); why not, else empty.
inline QString storeHoldsTheWindow(QWidget &window)
{
    QPaintDevice *device = window.backingStore()->paintDevice();
    if (device == nullptr || device->devType() != QInternal::Image) {
        return QStringLiteral("no image to paint into yet");
    }
    const QImage stored = static_cast<QImage *>(device)->copy();
    const QImage drawn = window.grab().toImage();
    const int differing = heatmaptesting::differingPixels(stored, drawn);
    if (differing < 0) {
        return QStringLiteral("the store is %1x%2, the window %3x%4")
            .arg(stored.width())
            .arg(stored.height())
            .arg(drawn.width())
            .arg(drawn.height());
    }
    if (differing >= stored.width() * stored.height() / 50) {
        return QStringLiteral("%1 pixels differ").arg(differing);
    }
    return {};
}

} // namespace fleetscope::firstpainttesting
