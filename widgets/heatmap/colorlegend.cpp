// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/colorlegend.h"

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

void ColorLegend::setDomainNote(const QString &note)
{
    m_domainNote = note;
    update();
}

QSize ColorLegend::sizeHint() const
{
    return { 360, fontMetrics().height() + 18 };
}

void ColorLegend::paintEvent(QPaintEvent * /*event*/)
{
    QPainter p(this);
    const int keyLeft = paintDomainKey(p, paintNoDataKey(p));
    if (m_map.kind() == ColorMap::Kind::Categorical && !m_map.categoryNames().isEmpty()) {
        paintSwatches(p, keyLeft);
    } else {
        paintBar(p, keyLeft);
    }
}

int ColorLegend::paintNoDataKey(QPainter &p)
{
    const QString label = tr("no data / offline");
    const int side = height() - 8;
    const int textWidth = fontMetrics().horizontalAdvance(label) + 4;
    const QRect swatch(width() - textWidth - side - 6, 4, side, side);
    // The shader's hatching: diagonal stripes 3 pixels wide, the grey and the grey at 55 %.
    QImage hatch(swatch.size(), QImage::Format_RGB32);
    for (int y = 0; y < hatch.height(); ++y) {
        for (int x = 0; x < hatch.width(); ++x) {
            const bool dark = ((x + y) / 3) % 2 == 1;
            const QColor base = QColor::fromRgb(noDataColour);
            hatch.setPixel(x, y,
                dark ? qRgb(static_cast<int>(base.red() * 0.55), static_cast<int>(base.green() * 0.55),
                    static_cast<int>(base.blue() * 0.55))
                     : base.rgb());
        }
    }
    p.drawImage(swatch.topLeft(), hatch);
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(swatch.right() + 6, 0, textWidth, height()), Qt::AlignLeft | Qt::AlignVCenter, label);
    return swatch.left() - 16;
}

int ColorLegend::paintDomainKey(QPainter &p, int right)
{
    if (m_domainNote.isEmpty()) {
        return right;
    }
    // At most half the legend: the colour bar keeps the rest.
    const int side = height() - 8;
    const int textWidth = std::min(fontMetrics().horizontalAdvance(m_domainNote) + 4, std::max(0, right / 2 - side));
    const QRect swatch(right - textWidth - side - 6, 4, side, side);
    p.fillRect(swatch, palette().color(QPalette::Window));
    p.setPen(QPen(QColor::fromRgb(domainColour), 2));
    p.drawRect(swatch.adjusted(1, 1, -1, -1));
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(swatch.right() + 6, 0, textWidth, height()), Qt::AlignLeft | Qt::AlignVCenter,
        fontMetrics().elidedText(m_domainNote, Qt::ElideRight, textWidth));
    return swatch.left() - 16;
}

void ColorLegend::paintBar(QPainter &p, int right)
{
    const QFontMetrics fm = fontMetrics();
    const QString low = QString::number(m_metric.rangeMin, 'g', 4);
    const QString high = QString::number(m_metric.rangeMax, 'g', 4) + QLatin1Char(' ') + m_metric.unit;
    const int lowWidth = fm.horizontalAdvance(low) + 8;
    const int highWidth = fm.horizontalAdvance(high) + 8;
    const QRect bar(lowWidth, 4, std::max(10, right - lowWidth - highWidth), height() - 8);
    for (int x = 0; x < bar.width(); ++x) {
        const int index = x * (ColorMap::size - 1) / std::max(1, bar.width() - 1);
        p.fillRect(QRect(bar.left() + x, bar.top(), 1, bar.height()), QColor::fromRgb(m_map.at(index)));
    }
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(0, 0, lowWidth - 4, height()), Qt::AlignRight | Qt::AlignVCenter, low);
    p.drawText(QRect(bar.right() + 5, 0, highWidth, height()), Qt::AlignLeft | Qt::AlignVCenter, high);

    if (m_map.kind() == ColorMap::Kind::Diverging) {
        // The centre is where the map turns from one hue to the other, the value a change is measured from; it sits
        // on the map's light grey, so dark text reads whatever the palette.
        const float centreValue = (m_metric.rangeMin + m_metric.rangeMax) / 2;
        const QString centre = QString::number(centreValue == 0 ? 0.0F : centreValue, 'g', 4); // no "-0"
        const int middle = bar.left() + bar.width() / 2;
        const int centreWidth = fm.horizontalAdvance(centre) + 8;
        p.setPen(QColor(0x20, 0x20, 0x20));
        p.drawLine(middle, bar.top(), middle, bar.top() + 2);
        p.drawLine(middle, bar.bottom() - 2, middle, bar.bottom());
        p.drawText(QRect(middle - centreWidth / 2, bar.top(), centreWidth, bar.height()), Qt::AlignCenter, centre);
    }
}

void ColorLegend::paintSwatches(QPainter &p, int right)
{
    const QStringList &labels = m_map.categoryNames();
    const int count = std::max(1, m_map.colouredCategories());
    const int slot = std::min(right / count, 220);
    const int side = height() - 8;
    for (int k = 0; k < count; ++k) {
        const QRect swatch(k * slot + 4, 4, side, side);
        p.fillRect(swatch, QColor::fromRgb(m_map.categoryColour(k)));
        p.setPen(palette().color(QPalette::WindowText));
        const QRect text(swatch.right() + 6, 0, std::max(0, slot - side - 10), height());
        p.drawText(
            text, Qt::AlignLeft | Qt::AlignVCenter, fontMetrics().elidedText(labels[k], Qt::ElideRight, text.width()));
    }
}

} // namespace fleetscope
