// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>

#include <array>

namespace fleetscope {

// A 256-entry colour map, perceptually uniform and colour-blind safe (viridis, inferno, cividis), loaded from the
// compiled-in resources. The heatmap's shader samples the same table as a texture, so map() here gives exactly the
// colour the shader draws for a value.
class ColorMap
{
public:
    static constexpr int size = 256;

    // Falls back to viridis for an unknown name.
    static ColorMap byName(const QString &name);
    static QStringList names();

    QString name() const { return m_name; }
    QRgb at(int index) const { return m_table[static_cast<size_t>(qBound(0, index, size - 1))]; }
    // The table index the shader uses for t in [0, 1].
    static int indexFor(float t);
    QRgb map(float value, float rangeMin, float rangeMax) const;
    const std::array<QRgb, size> &table() const { return m_table; }

private:
    static ColorMap load(const QString &name, bool *ok);

    QString m_name;
    std::array<QRgb, size> m_table {};
};

} // namespace fleetscope
