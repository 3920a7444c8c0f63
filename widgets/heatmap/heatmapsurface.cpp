// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapsurface.h"

#include "widgets/heatmap/heatmapoverlay.h"
#include "widgets/style/fontscale.h"

#include <QPainter>

namespace fleetscope {

void HeatmapSurface::paintPlaceholder(QPainter &painter, const QRect &rect, const QFont &font, const QString &text)
{
    painter.fillRect(rect, QColor::fromRgb(backgroundColour));
    painter.setPen(QColor(0xc8, 0xcc, 0xd4));
    painter.setFont(scaledFont(HeatmapOverlay::overlayFont(font), 1.6));
    painter.drawText(rect, Qt::AlignCenter, text);
}

} // namespace fleetscope
