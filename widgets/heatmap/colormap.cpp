// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/colormap.h"

#include <QFile>
#include <QHash>
#include <QTextStream>

#include <cmath>

namespace fleetscope {

QStringList ColorMap::names()
{
    return { QStringLiteral("viridis"), QStringLiteral("inferno"), QStringLiteral("cividis"),
        QStringLiteral("coolwarm"), QStringLiteral("health") };
}

ColorMap ColorMap::byName(const QString &name)
{
    static const QHash<QString, ColorMap> maps = [] {
        QHash<QString, ColorMap> all;
        for (const auto &n : names()) {
            if (n == QLatin1String("health")) {
                all.insert(n, health());
                continue;
            }
            bool ok = false;
            ColorMap map = load(n, &ok);
            Q_ASSERT_X(ok, "ColorMap", "compiled-in colour map missing or malformed");
            map.m_kind = n == QLatin1String("coolwarm") ? Kind::Diverging : Kind::Sequential;
            all.insert(n, map);
        }
        return all;
    }();
    return maps.value(name, maps.value(QStringLiteral("viridis")));
}

QRgb ColorMap::categoryColour(int k) const
{
    const auto last = static_cast<int>(m_categoryNames.size()) - 1;
    if (last < 1) {
        return at(0);
    }
    return at(indexFor(static_cast<float>(qBound(0, k, last)) / static_cast<float>(last)));
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

// The health states of fleetmodel.h's health::State, 0 OK .. 4 no data, over the range 0..4. OK, warning and
// critical are Okabe-Ito bluish green, orange and vermillion (Okabe & Ito, "Color Universal Design", 2008), told
// apart with every common colour-vision deficiency; adjacent severities also differ in lightness by 12 L* or more,
// so they read in grey. Offline and no data are greys rather than Okabe-Ito black, which would vanish into the
// view's near-black background: a darker grey for a GPU known to be down, a light one for a GPU we know nothing of.
ColorMap ColorMap::health()
{
    ColorMap map = categorical(QStringLiteral("health"),
        { { QStringLiteral("OK"), qRgb(0x00, 0x9e, 0x73) }, { QStringLiteral("Warning"), qRgb(0xe6, 0x9f, 0x00) },
            { QStringLiteral("Critical"), qRgb(0xd5, 0x5e, 0x00) },
            { QStringLiteral("Offline"), qRgb(0x59, 0x59, 0x59) },
            { QStringLiteral("No data"), qRgb(0xbf, 0xbf, 0xbf) } });
    map.m_colouredCategories = 3; // OK, Warning, Critical; offline and no data are hatched
    return map;
}

ColorMap ColorMap::categorical(const QString &name, const std::vector<Category> &categories)
{
    ColorMap map;
    map.m_name = name;
    map.m_kind = Kind::Categorical;
    map.m_colouredCategories = static_cast<int>(categories.size());
    for (const auto &c : categories) {
        map.m_categoryNames << c.label;
    }
    if (categories.empty()) {
        map.m_table.fill(noDataColour);
        return map;
    }
    // Piecewise constant: entry i holds the category nearest to t = i / 255, rounded as indexFor rounds, so the
    // shader's lookup for t = k / last lands on category k and a value between two categories takes the nearer.
    const int last = std::max(1, static_cast<int>(categories.size()) - 1);
    for (int i = 0; i < size; ++i) {
        const int category = std::min((2 * i * last + (size - 1)) / (2 * (size - 1)), last);
        map.m_table[static_cast<size_t>(i)]
            = categories[static_cast<size_t>(std::min<int>(category, static_cast<int>(categories.size()) - 1))].colour;
    }
    return map;
}

ColorMap ColorMap::forMetric(const MetricInfo &metric)
{
    if (metric.categories.isEmpty()) {
        return byName(metric.colourMap);
    }
    if (metric.colourMap == QLatin1String("alerts") && metric.categories.size() == 5) {
        // The alert layer's (model/alertlayer.h): no alert the calm ground, silenced reddish purple, then Okabe-Ito's
        // sky blue, orange and vermillion as health's warning and critical are, so that severity reads the same.
        return categorical(metric.colourMap,
            { { metric.categories[0], qRgb(0x4a, 0x6c, 0x8c) }, { metric.categories[1], qRgb(0xcc, 0x79, 0xa7) },
                { metric.categories[2], qRgb(0x56, 0xb4, 0xe9) }, { metric.categories[3], qRgb(0xe6, 0x9f, 0x00) },
                { metric.categories[4], qRgb(0xd5, 0x5e, 0x00) } });
    }
    // A layer's categories, most common first: the first a calm steel blue so that the usual reads as the ground,
    // then Okabe-Ito's colours, told apart with every common colour-vision deficiency; the eighth, light grey, is
    // where the rarest share one category.
    static const std::array<QRgb, 8> palette { qRgb(0x4a, 0x6c, 0x8c), qRgb(0xe6, 0x9f, 0x00), qRgb(0x56, 0xb4, 0xe9),
        qRgb(0xcc, 0x79, 0xa7), qRgb(0xf0, 0xe4, 0x42), qRgb(0x00, 0x9e, 0x73), qRgb(0xd5, 0x5e, 0x00),
        qRgb(0xdd, 0xdd, 0xdd) };
    std::vector<Category> categories;
    for (qsizetype k = 0; k < metric.categories.size() && k < static_cast<qsizetype>(palette.size()); ++k) {
        categories.push_back({ metric.categories[k], palette[static_cast<size_t>(k)] });
    }
    return categorical(metric.colourMap, categories);
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
