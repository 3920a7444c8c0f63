// SPDX-License-Identifier: Apache-2.0
#include "colorlegend.h"

#include <QPainter>

namespace fleetscope {

ColorLegend::ColorLegend(QWidget *parent)
    : QWidget(parent)
    , m_map(ColorMap::byName(QStringLiteral("viridis")))
{
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void ColorLegend::setMetric(const MetricInfo &metric, const ColorMap &map)
{
    m_metric = metric;
    m_map = map;
    update();
}

QSize ColorLegend::sizeHint() const
{
    return { 360, fontMetrics().height() + 18 };
}

void ColorLegend::paintEvent(QPaintEvent * /*event*/)
{
    QPainter p(this);
    const QFontMetrics fm = fontMetrics();
    const QString low = QString::number(m_metric.rangeMin, 'g', 4);
    const QString high = QString::number(m_metric.rangeMax, 'g', 4) + QLatin1Char(' ') + m_metric.unit;
    const int lowWidth = fm.horizontalAdvance(low) + 8;
    const int highWidth = fm.horizontalAdvance(high) + 8;
    const QRect bar(lowWidth, 4, std::max(10, width() - lowWidth - highWidth), height() - 8);
    for (int x = 0; x < bar.width(); ++x) {
        const int index = x * (ColorMap::size - 1) / std::max(1, bar.width() - 1);
        p.fillRect(QRect(bar.left() + x, bar.top(), 1, bar.height()), QColor::fromRgb(m_map.at(index)));
    }
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(0, 0, lowWidth - 4, height()), Qt::AlignRight | Qt::AlignVCenter, low);
    p.drawText(QRect(bar.right() + 5, 0, highWidth, height()), Qt::AlignLeft | Qt::AlignVCenter, high);
}

} // namespace fleetscope
