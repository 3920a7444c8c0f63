// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QFont>

#include <algorithm>
#include <cmath>

namespace fleetscope {

// The font made `factor` times larger, whether it is sized in points or (as on a wall) in pixels.
inline QFont scaledFont(QFont font, double factor)
{
    if (font.pixelSize() > 0) {
        font.setPixelSize(std::max(1, static_cast<int>(std::lround(font.pixelSize() * factor))));
    } else {
        font.setPointSizeF(std::max(1.0, font.pointSizeF() * factor));
    }
    return font;
}

} // namespace fleetscope
