// SPDX-License-Identifier: Apache-2.0
#include "colormap.h"

#include <QFile>
#include <QHash>
#include <QTextStream>

#include <cmath>

namespace fleetscope {

QStringList ColorMap::names()
{
    return { QStringLiteral("viridis"), QStringLiteral("inferno"), QStringLiteral("cividis") };
}

ColorMap ColorMap::byName(const QString &name)
{
    static const QHash<QString, ColorMap> maps = [] {
        QHash<QString, ColorMap> all;
        for (const auto &n : names()) {
            bool ok = false;
            ColorMap map = load(n, &ok);
            Q_ASSERT_X(ok, "ColorMap", "compiled-in colour map missing or malformed");
            all.insert(n, map);
        }
        return all;
    }();
    return maps.value(name, maps.value(QStringLiteral("viridis")));
}

int ColorMap::indexFor(float t)
{
    if (!(t > 0.0F)) { // also NaN
        return 0;
    }
    if (t >= 1.0F) {
        return size - 1;
    }
    return static_cast<int>(std::floor(t * (size - 1) + 0.5F));
}

QRgb ColorMap::map(float value, float rangeMin, float rangeMax) const
{
    const float span = rangeMax - rangeMin;
    return at(indexFor(span > 0 ? (value - rangeMin) / span : 0.0F));
}

ColorMap ColorMap::load(const QString &name, bool *ok)
{
    ColorMap map;
    map.m_name = name;
    QFile file(QStringLiteral(":/colormaps/%1.txt").arg(name));
    *ok = file.open(QIODevice::ReadOnly | QIODevice::Text);
    if (!*ok) {
        return map;
    }
    QTextStream in(&file);
    int count = 0;
    while (!in.atEnd()) {
        const QString line = in.readLine().trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) {
            continue;
        }
        const auto parts = QStringView(line).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (parts.size() != 3 || count >= size) {
            *ok = false;
            return map;
        }
        map.m_table[static_cast<size_t>(count++)] = qRgb(parts[0].toInt(), parts[1].toInt(), parts[2].toInt());
    }
    *ok = count == size;
    return map;
}

} // namespace fleetscope
