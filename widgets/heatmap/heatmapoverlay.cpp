// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapoverlay.h"

#include <QFontMetricsF>
#include <QHash>
#include <QPainter>
#include <QStaticText>

#include <algorithm>
#include <cmath>

namespace fleetscope {

namespace {
const QColor labelColour(0xc8, 0xcc, 0xd4);
const QColor chipColour(0x15, 0x17, 0x1c, 210); // the map's background, nearly opaque, behind text over cells

QRectF cellsRect(const HeatmapOverlay::Scene &scene, const QRect &cells)
{
    return { scene.originX + cells.x() * scene.cell, scene.originY + cells.y() * scene.cell, cells.width() * scene.cell,
        cells.height() * scene.cell };
}

bool onScreen(const HeatmapOverlay::Scene &scene, const QRectF &r)
{
    return r.right() >= 0 && r.bottom() >= 0 && r.left() <= scene.widget.width() && r.top() <= scene.widget.height();
}

void setPixelSize(QPainter &painter, double pixels, bool bold = false)
{
    QFont font = HeatmapOverlay::overlayFont(painter.font());
    font.setPixelSize(std::max(1, static_cast<int>(pixels)));
    font.setBold(bold);
    painter.setFont(font);
}

} // namespace

QFont HeatmapOverlay::overlayFont(QFont font)
{
    // Text drawn over the GL image gets a glyph cache in GL, kept by its font engine. A font engine shared with
    // text outside the map can outlive the GL context: Qt Charts keeps a static text item for measuring labels,
    // destroyed after main() returns, and with it the engine and the cache, whose destructor then needs a GL
    // context that is gone (a crash at exit). Without hinting, the overlay's fonts are engines of their own.
    font.setHintingPreference(QFont::PreferNoHinting);
    return font;
}

void HeatmapOverlay::paint(QPainter &painter, const Scene &scene)
{
    if (scene.layout == nullptr) {
        return;
    }
    paintDomain(painter, scene);
    paintRowLabels(painter, scene);
    if (scene.layout->rackColumnLabels.empty()) {
        paintAisleLabels(painter, scene, scene.layout->rackLabels, HeatmapLayout::rowGap);
    } else {
        paintColumnLabels(painter, scene);
    }
    paintGroupLabels(painter, scene);
    paintLineLabels(painter, scene);
    if (scene.cell >= valueCell) {
        paintValues(painter, scene);
        paintNodeLabels(painter, scene);
    }
    paintStaleBanner(painter, scene);
}

void HeatmapOverlay::paintRowLabels(QPainter &painter, const Scene &scene)
{
    // Rack names shown once per column ("k01") do not say which row a rack is in, so the row stays named: beside the
    // map when the margin holds the name, else on a chip at the left of the view, over the row's cells (as the column
    // names are pinned along the top). With rack names in every aisle ("r03-k01"), or hostnames under the GPUs, those
    // name the row instead.
    const bool racksNameTheirRow = scene.layout->rackColumnLabels.empty();
    for (const auto &label : scene.layout->rowLabels) {
        const QRectF row = cellsRect(scene, label.cells);
        if (row.height() < 9 || !onScreen(scene, row)) {
            continue;
        }
        const double s = scene.labelScale;
        setPixelSize(painter, std::clamp(row.height() * 0.45, 9.0, 28.0 * s));
        const QFontMetricsF metrics(painter.font());
        const double width = metrics.horizontalAdvance(label.text);
        painter.setPen(labelColour);
        if (row.left() >= width + 8) {
            painter.drawText(QRectF(row.left() - width - 6, row.top(), width + 2, row.height()),
                Qt::AlignRight | Qt::AlignVCenter, label.text);
            continue;
        }
        // Zoomed in far enough for the hostnames, those name the row.
        if (racksNameTheirRow || scene.cell >= valueCell) {
            continue;
        }
        const QRectF visible = row & QRectF(QPointF(0, 0), QSizeF(scene.widget));
        const QRectF chip(
            std::max(0.0, row.left()) + 2, visible.center().y() - metrics.height() / 2, width + 6, metrics.height());
        painter.fillRect(chip, chipColour);
        painter.drawText(chip, Qt::AlignCenter, label.text);
    }
}

void HeatmapOverlay::paintAisleLabels(
    QPainter &painter, const Scene &scene, const std::vector<HeatmapLayout::Label> &labels, double aisleCells)
{
    // In the aisle above the cells named: the layout leaves aisleCells there (the fitted view a top margin above the
    // first line), so the names hide no GPU.
    const double pixels = std::min(scene.cell * aisleCells * 0.8, 15.0 * scene.labelScale);
    if (pixels < 9) {
        return;
    }
    setPixelSize(painter, pixels);
    const QFontMetricsF metrics(painter.font());
    painter.setPen(labelColour);
    for (const auto &label : labels) {
        const QRectF cells = cellsRect(scene, label.cells);
        const QRectF above(cells.left(), cells.top() - metrics.height() - 1, cells.width(), metrics.height());
        if (above.top() < 0 || !onScreen(scene, above)) {
            continue;
        }
        const QString &text = metrics.horizontalAdvance(label.text) <= cells.width() ? label.text : label.shortText;
        if (!text.isEmpty() && metrics.horizontalAdvance(text) <= cells.width()) {
            painter.drawText(above, Qt::AlignLeft | Qt::AlignBottom, text);
        }
    }
}

void HeatmapOverlay::paintGroupLabels(QPainter &painter, const Scene &scene)
{
    const double aisle = scene.cell * HeatmapLayout::labelAisle;
    if (aisle * 0.8 >= 9) {
        paintAisleLabels(painter, scene, scene.layout->groupLabels, HeatmapLayout::labelAisle);
        return;
    }
    // Zoomed out, the aisle above a block (a scalable unit, a job) is too low for legible text: as a row's name goes
    // on a chip over its row when the margin cannot hold it, the block's goes on a chip from the aisle down over its
    // top-left corner, as long as that hides at most the top third of the block.
    setPixelSize(painter, 9);
    const QFontMetricsF metrics(painter.font());
    for (const auto &label : scene.layout->groupLabels) {
        const QRectF cells = cellsRect(scene, label.cells);
        const QRectF chip(cells.left(), cells.top() - aisle, 0, metrics.height());
        if (chip.bottom() - cells.top() > cells.height() / 3 || chip.top() < 0 || !onScreen(scene, cells)) {
            continue;
        }
        const QString &text = metrics.horizontalAdvance(label.text) + 4 <= cells.width() ? label.text : label.shortText;
        const double width = metrics.horizontalAdvance(text) + 4;
        if (text.isEmpty() || width > cells.width()) {
            continue;
        }
        painter.fillRect(QRectF(chip.topLeft(), QSizeF(width, chip.height())), chipColour);
        painter.setPen(labelColour);
        painter.drawText(QRectF(chip.topLeft(), QSizeF(width, chip.height())), Qt::AlignCenter, text);
    }
}

void HeatmapOverlay::paintLineLabels(QPainter &painter, const Scene &scene)
{
    // A leaf switch's name at the left end of its line (or of the view), on a chip over its first ports, once a line is
    // tall enough for legible text; the rail alone ("rail 5") where the name would hide more than a quarter of the
    // line.
    if (scene.layout->lineLabels.empty() || scene.cell < 12) {
        return;
    }
    setPixelSize(painter, std::min(scene.cell * 0.7, 13.0 * scene.labelScale));
    const QFontMetricsF metrics(painter.font());
    painter.setPen(labelColour);
    for (const auto &label : scene.layout->lineLabels) {
        const QRectF line = cellsRect(scene, label.cells);
        if (!onScreen(scene, line)) {
            continue;
        }
        const QString &text
            = metrics.horizontalAdvance(label.text) + 6 <= line.width() / 4 ? label.text : label.shortText;
        const double width = metrics.horizontalAdvance(text) + 6;
        if (text.isEmpty() || width > line.width() / 4) {
            continue;
        }
        // Pinned to the view's left edge while the line's start is scrolled off, as a row's chip is.
        const double left = std::min(std::max(line.left(), 0.0), line.right() - width);
        const QRectF chip(left, line.center().y() - metrics.height() / 2, width, metrics.height());
        painter.fillRect(chip, chipColour);
        painter.drawText(chip, Qt::AlignCenter, text);
    }
}

void HeatmapOverlay::paintColumnLabels(QPainter &painter, const Scene &scene)
{
    // Once, over the top row; with the top row scrolled off, along the top of the view (over the cells, on a chip),
    // so that the columns stay named.
    const double pixels = std::min(scene.cell * HeatmapLayout::rowGap * 0.8, 15.0 * scene.labelScale);
    if (pixels < 9) {
        return;
    }
    setPixelSize(painter, pixels);
    const QFontMetricsF metrics(painter.font());
    for (const auto &label : scene.layout->rackColumnLabels) {
        const QRectF cells = cellsRect(scene, label.cells);
        const double top = cells.top() - metrics.height() - 1;
        const QRectF above(cells.left(), std::max(0.0, top), cells.width(), metrics.height());
        if (!onScreen(scene, above) || metrics.horizontalAdvance(label.text) > cells.width()) {
            continue;
        }
        if (top < 0) {
            painter.fillRect(
                QRectF(above.left(), above.top(), metrics.horizontalAdvance(label.text) + 4, above.height()),
                chipColour);
        }
        painter.setPen(labelColour);
        painter.drawText(above, Qt::AlignLeft | Qt::AlignBottom, label.text);
    }
}

void HeatmapOverlay::paintValues(QPainter &painter, const Scene &scene)
{
    if (scene.plane == nullptr || scene.metric == nullptr || scene.colorMap == nullptr) {
        return;
    }
    const HeatmapLayout &layout = *scene.layout;
    const double cell = scene.cell;
    // Only the cells on screen.
    const int x0 = std::max(0, static_cast<int>(std::floor(-scene.originX / cell)));
    const int y0 = std::max(0, static_cast<int>(std::floor(-scene.originY / cell)));
    const int x1
        = std::min(layout.width - 1, static_cast<int>(std::ceil((scene.widget.width() - scene.originX) / cell)));
    const int y1
        = std::min(layout.height - 1, static_cast<int>(std::ceil((scene.widget.height() - scene.originY) / cell)));
    setPixelSize(painter, std::min(cell * 0.3, 18.0 * scene.labelScale));
    // Thousands of short numbers, redrawn for each frame: each text laid out once (QStaticText) and kept while the
    // font stays, instead of a layout per drawText.
    struct Laid
    {
        QFont font;
        QHash<QString, QStaticText> texts;
    };
    static thread_local Laid laid;
    if (laid.font != painter.font() || laid.texts.size() > 4096) {
        laid.font = painter.font();
        laid.texts.clear();
    }
    const QColor dark(0x10, 0x10, 0x10);
    const QColor light(0xf0, 0xf0, 0xf0);
    bool darkPen = false;
    painter.setPen(light);
    for (int y = y0; y <= y1; ++y) {
        for (int x = x0; x <= x1; ++x) {
            const int gpu = layout.gpuAt(x, y);
            if (gpu < 0 || static_cast<size_t>(gpu) >= scene.plane->values.size()) {
                continue;
            }
            const float value = scene.plane->values[static_cast<size_t>(gpu)];
            if (std::isnan(value)) {
                continue;
            }
            const QString number = QString::number(value, 'f', std::abs(value) >= 100 ? 0 : 1);
            auto found = laid.texts.find(number);
            if (found == laid.texts.end()) {
                QStaticText text(number);
                text.setTextFormat(Qt::PlainText);
                text.setPerformanceHint(QStaticText::AggressiveCaching);
                text.prepare(QTransform(), laid.font);
                found = laid.texts.insert(number, text);
            }
            const QRgb c = scene.colorMap->map(value, scene.metric->rangeMin, scene.metric->rangeMax);
            // Dark text on light colours, light on dark.
            if ((qGray(c) > 140) != darkPen) {
                darkPen = !darkPen;
                painter.setPen(darkPen ? dark : light);
            }
            // Centred in the cell, as drawText's Qt::AlignCenter.
            const QSizeF size = found->size();
            painter.drawStaticText(QPointF(scene.originX + (x + 0.5) * cell - size.width() / 2,
                                       scene.originY + (y + 0.5) * cell - size.height() / 2),
                *found);
        }
    }
}

void HeatmapOverlay::paintNodeLabels(QPainter &painter, const Scene &scene)
{
    // The hostname in a strip along the bottom of the node's cells, clear of the values in their middle.
    const double strip = scene.cell * 0.26;
    setPixelSize(painter, std::min(strip * 0.85, 14.0 * scene.labelScale));
    for (const auto &label : scene.layout->nodeLabels) {
        const QRectF node = cellsRect(scene, label.cells);
        if (!onScreen(scene, node)) {
            continue;
        }
        const QRectF r(node.left() + 1, node.bottom() - strip, node.width() - 1, strip);
        painter.fillRect(r, QColor(0x15, 0x17, 0x1c, 170));
        painter.setPen(labelColour);
        painter.drawText(r.adjusted(4, 0, -4, 0), Qt::AlignLeft | Qt::AlignVCenter, label.text);
    }
}

void HeatmapOverlay::paintDomain(QPainter &painter, const Scene &scene)
{
    if (scene.domainCells == nullptr || scene.domainCells->empty()) {
        return;
    }
    // A line around each of the domain's racks, in the aisle beside them where there is room, so that it hides no GPU
    // and reads at fleet zoom, where a GPU's own frame is under a pixel. Below a pixel a GPU a rack is a few pixels and
    // its GPUs' tint says it (heatmapscreen.frag). Four fills a rack, not a stroked rectangle: the raster engine fills
    // an aligned rectangle at once and strokes each one apart; measured at a million GPUs, a feed's 32,768 racks at a
    // pixel a GPU, the text's redraw took 6 ms more filled, 55 ms more stroked.
    if (scene.cell < 1) {
        return;
    }
    const double width = std::clamp(scene.cell * 0.5, 1.5, 3.0);
    const double apart = std::min(scene.cell * HeatmapLayout::rackGap * 0.5, 4.0) + width / 2;
    const QColor colour = QColor::fromRgb(domainColour);
    for (const QRect &cells : *scene.domainCells) {
        const QRectF r = cellsRect(scene, cells).adjusted(-apart, -apart, apart, apart);
        if (!onScreen(scene, r)) {
            continue;
        }
        painter.fillRect(QRectF(r.left(), r.top(), r.width(), width), colour);
        painter.fillRect(QRectF(r.left(), r.bottom() - width, r.width(), width), colour);
        painter.fillRect(QRectF(r.left(), r.top() + width, width, r.height() - 2 * width), colour);
        painter.fillRect(QRectF(r.right() - width, r.top() + width, width, r.height() - 2 * width), colour);
    }
}

void HeatmapOverlay::paintStaleBanner(QPainter &painter, const Scene &scene)
{
    const bool stale = !scene.staleNote.isEmpty();
    if (!stale && scene.replayNote.isEmpty()) {
        return;
    }
    // Large enough to read across a room, smaller when the note would not fit the width, elided at the last.
    const QString &note = stale ? scene.staleNote : scene.replayNote;
    double pixels = std::max(14.0, scene.widget.height() / 30);
    setPixelSize(painter, pixels, true);
    while (pixels > 11 && QFontMetricsF(painter.font()).horizontalAdvance(note) > scene.widget.width() - 16) {
        pixels -= 1;
        setPixelSize(painter, pixels, true);
    }
    const QFontMetricsF metrics(painter.font());
    const QRectF banner(0, 0, scene.widget.width(), metrics.height() + 12);
    painter.fillRect(banner, stale ? QColor(0xb0, 0x3a, 0x1e, 230) : QColor(0x1f, 0x5f, 0xa8, 230));
    painter.setPen(Qt::white);
    painter.drawText(banner, Qt::AlignCenter, metrics.elidedText(note, Qt::ElideRight, banner.width() - 16));
}

bool HeatmapOverlayCache::Key::operator==(const Key &o) const
{
    return layoutCells == o.layoutCells && layoutWidth == o.layoutWidth && widget == o.widget && dpr == o.dpr
        && originX == o.originX && originY == o.originY && cell == o.cell && plane == o.plane && metricId == o.metricId
        && rangeMin == o.rangeMin && rangeMax == o.rangeMax && colorMap == o.colorMap && staleNote == o.staleNote
        && replayNote == o.replayNote && labelScale == o.labelScale && font == o.font
        && domainRevision == o.domainRevision;
}

void HeatmapOverlayCache::update(const HeatmapOverlay::Scene &scene, double devicePixelRatio)
{
    // The values (and their colours) only matter where they are drawn: zoomed out, a new frame redraws nothing.
    const bool values = scene.cell >= HeatmapOverlay::valueCell && scene.metric != nullptr;
    const Key key { scene.layout != nullptr ? scene.layout->cells.data() : nullptr,
        scene.layout != nullptr ? scene.layout->width : 0, scene.widget, devicePixelRatio, scene.originX, scene.originY,
        scene.cell, values ? scene.plane : nullptr, values ? scene.metric->id : QString(),
        values ? scene.metric->rangeMin : 0.0F, values ? scene.metric->rangeMax : 0.0F,
        values && scene.colorMap != nullptr ? scene.colorMap->name() : QString(), scene.staleNote, scene.replayNote,
        scene.labelScale, scene.font, scene.domainRevision };
    if (key == m_key && !m_image.image().isNull()) {
        return;
    }
    m_key = key;
    ++m_revision;
    const QSize pixels = (scene.widget * devicePixelRatio).toSize().expandedTo(QSize(1, 1));
    QImage &image = m_image.reshape(pixels, QImage::Format_ARGB32_Premultiplied); // QPainter's own
    image.setDevicePixelRatio(devicePixelRatio);
    image.fill(Qt::transparent);
    {
        QPainter painter(&image);
        painter.setFont(scene.font);
        HeatmapOverlay::paint(painter, scene);
    }
    // Text sits in a few places (or nowhere, zoomed out): the renderer only covers the bounding box.
    int top = image.height();
    int bottom = -1;
    int left = image.width();
    int right = -1;
    for (int y = 0; y < image.height(); ++y) {
        const auto *line = reinterpret_cast<const quint32 *>(image.constScanLine(y));
        const auto *end = line + image.width();
        const auto *first = std::find_if(line, end, [](quint32 c) { return c != 0; });
        if (first == end) {
            continue;
        }
        const auto last = std::find_if(
            std::make_reverse_iterator(end), std::make_reverse_iterator(first), [](quint32 c) { return c != 0; });
        top = std::min(top, y);
        bottom = y;
        left = std::min(left, static_cast<int>(first - line));
        right = std::max(right, static_cast<int>(last.base() - line) - 1);
    }
    m_used = bottom >= 0 ? QRect(QPoint(left, top), QPoint(right, bottom)) : QRect();
}

} // namespace fleetscope
