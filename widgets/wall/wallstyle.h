// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QColor>
#include <QFont>
#include <QPainter>

#include <algorithm>

// The wall's look, shared by its header and its pages: high contrast on a near-black ground, type sized in pixels.
namespace fleetscope::wallstyle {

inline const QColor background { 0x0b, 0x0d, 0x12 };
inline const QColor text { 0xf4, 0xf6, 0xfa };
inline const QColor dim { 0xc0, 0xc8, 0xd8 };
inline const QColor warning { 0xf0, 0xa0, 0x20 };
inline const QColor critical { 0xd8, 0x3a, 0x1e };

inline QFont sized(const QFont &base, double pixels, bool bold)
{
    QFont font = base;
    font.setPixelSize(std::max(8, static_cast<int>(pixels)));
    font.setBold(bold);
    return font;
}

// A board page's line height, from the page's height: about 16 rows on any wall, whatever its resolution.
inline double rowHeight(int pageHeight)
{
    return std::max(24.0, pageHeight / 17.0);
}

// The ground of a board page, painted and antialiased.
inline void beginBoard(QPainter &painter, const QRect &page)
{
    painter.setRenderHint(QPainter::Antialiasing);
    painter.fillRect(page, background);
}

} // namespace fleetscope::wallstyle
