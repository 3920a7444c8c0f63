// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QColor>
#include <QString>
#include <QStringList>

#include <array>
#include <vector>

namespace fleetscope {

// GPUs without a value (offline, no data) are drawn hatched in this grey and 55 % of it, whatever the map.
inline constexpr QRgb noDataColour = 0xff8a8f99;
// The shared domain behind an incident (a leaf switch, a PDU, a cooling unit): its GPUs framed, and its racks outlined,
// in this cyan, which no sequential map here ends in and which reads apart from an outline's white.
inline constexpr QRgb domainColour = 0xff3dd6ff;

// A 256-entry colour map, loaded from the compiled-in resources or built here. The sequential maps are perceptually
// uniform and colour-blind safe (viridis, inferno, cividis); coolwarm is Moreland's diverging map for changes, light
// grey at the centre; health is categorical, one Okabe-Ito colour per health state. The heatmap's shader samples the
// same table as a texture, so map() here gives exactly the colour the shader draws for a value.
class ColorMap
{
public:
    static constexpr int size = 256;

    enum class Kind {
        Sequential, // low to high
        Diverging, // below and above a centre value at t = 0.5
        Categorical, // category k of n at t = k / (n - 1), the table constant around each
    };

    // Falls back to viridis for an unknown name.
    static ColorMap byName(const QString &name);
    // The metric's own categories (a console layer's, MetricInfo::categories), else its colour map by name.
    static ColorMap forMetric(const MetricInfo &metric);
    static QStringList names();

    QString name() const { return m_name; }
    Kind kind() const { return m_kind; }
    // Categorical maps only (empty otherwise): the label of each category, in value order.
    const QStringList &categoryNames() const { return m_categoryNames; }
    // The colour of category k: the table at t = k / (categories - 1), what the shader draws for the value k when
    // the range is 0 .. categories - 1 (the health metric's 0..4).
    QRgb categoryColour(int k) const;
    // The first categories, those the heatmap draws in their colour: the view hatches offline and no-data GPUs
    // whatever the map (a pattern, readable without colour), so health's last two entries only complete 0..4.
    int colouredCategories() const { return m_colouredCategories; }

    QRgb at(int index) const { return m_table[static_cast<size_t>(qBound(0, index, size - 1))]; }
    // The table index the shader uses for t in [0, 1].
    static int indexFor(float t);
    QRgb map(float value, float rangeMin, float rangeMax) const;
    const std::array<QRgb, size> &table() const { return m_table; }

private:
    static ColorMap load(const QString &name, bool *ok);
    static ColorMap health();
    struct Category
    {
        QString label;
        QRgb colour;
    };
    static ColorMap categorical(const QString &name, const std::vector<Category> &categories);

    QString m_name;
    Kind m_kind = Kind::Sequential;
    QStringList m_categoryNames;
    int m_colouredCategories = 0;
    std::array<QRgb, size> m_table {};
};

} // namespace fleetscope
