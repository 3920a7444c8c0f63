// SPDX-License-Identifier: Apache-2.0
#include "widgets/wall/wallheader.h"

#include "widgets/wall/wallstyle.h"

#include <QDateTime>
#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>

namespace fleetscope {

using namespace wallstyle;

WallHeader::WallHeader(QWidget *parent)
    : QWidget(parent)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
}

QSize WallHeader::sizeHint() const
{
    return { 800, 80 };
}

void WallHeader::setTitle(const QString &title)
{
    if (title != m_title) {
        m_title = title;
        update();
    }
}

void WallHeader::setData(qint64 sampleMs, qint64 silentMs, bool stale)
{
    QString textNow;
    if (sampleMs <= 0) {
        textNow = tr("no data yet");
    } else {
        const QString when = QDateTime::fromMSecsSinceEpoch(sampleMs).toString(QStringLiteral("HH:mm:ss"));
        const qint64 ageS = std::max<qint64>(0, silentMs / 1000);
        textNow = stale
            ? tr("DATA %1 OLD · as of %2").arg(ageS < 120 ? tr("%1 s").arg(ageS) : tr("%1 min").arg(ageS / 60), when)
            : tr("data as of %1").arg(when);
    }
    if (textNow != m_dataText || stale != m_stale) {
        m_dataText = textNow;
        m_stale = stale;
        update();
    }
}

void WallHeader::setClock(qint64 nowMs)
{
    const QString t = QDateTime::fromMSecsSinceEpoch(nowMs).toString(QStringLiteral("HH:mm:ss"));
    if (t != m_clockText) {
        m_clockText = t;
        update();
    }
}

void WallHeader::setLineHeight(int pixels)
{
    m_lineHeight = std::max(24, pixels);
    setFixedHeight(m_lineHeight + m_lineHeight * 6 / 10);
}

void WallHeader::setStatusLine(const QString &text)
{
    if (text != m_status) {
        m_status = text;
        if (m_banner.isEmpty()) {
            update();
        }
    }
}

void WallHeader::setBanner(const QString &banner, Tone tone)
{
    if (banner != m_banner || tone != m_tone) {
        m_banner = banner;
        m_tone = tone;
        update();
    }
}

void WallHeader::setPlaylist(int pages, int current, double progress, bool paused)
{
    m_pages = pages;
    m_current = current;
    m_progress = progress;
    m_paused = paused;
    update();
}

void WallHeader::setHealth(const std::vector<HealthCount> &counts)
{
    if (counts == m_health) {
        return;
    }
    m_health = counts;
    update();
}

void WallHeader::paintEvent(QPaintEvent * /*event*/)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QRectF all = rect();
    painter.fillRect(all, background);
    const double h = std::min<double>(m_lineHeight, all.height());
    const double pad = h * 0.18;
    const double strip = std::max(4.0, h * 0.08); // the playlist strip along the bottom
    const QRectF line(pad, 0, all.width() - 2 * pad, h - strip);

    // Right: the clock, then the data time (red when stale) to its left.
    painter.setFont(sized(font(), h * 0.46, true));
    const QFontMetricsF clockMetrics(painter.font());
    const double clockWidth = clockMetrics.horizontalAdvance(QStringLiteral("00:00:00")) + pad;
    const QRectF clockRect(line.right() - clockWidth, line.top(), clockWidth, line.height());
    painter.setPen(text);
    painter.drawText(clockRect, Qt::AlignRight | Qt::AlignVCenter, m_clockText);

    painter.setFont(sized(font(), h * 0.3, m_stale));
    const QFontMetricsF dataMetrics(painter.font());
    const double dataWidth = dataMetrics.horizontalAdvance(m_dataText) + 2 * pad;
    const QRectF dataRect(
        clockRect.left() - dataWidth - pad, line.top() + h * 0.14, dataWidth, line.height() - h * 0.28);
    if (m_stale) {
        painter.setPen(Qt::NoPen);
        painter.setBrush(critical);
        painter.drawRoundedRect(dataRect, h * 0.08, h * 0.08);
        painter.setPen(Qt::white);
    } else {
        painter.setPen(dim);
    }
    painter.drawText(dataRect, Qt::AlignCenter, m_dataText);

    // Left: the page's title; the banner takes the middle.
    painter.setFont(sized(font(), h * 0.38, true));
    const QFontMetricsF titleMetrics(painter.font());
    const double titleWidth
        = std::min(titleMetrics.horizontalAdvance(m_title) + pad, dataRect.left() - line.left() - pad);
    painter.setPen(text);
    const QRectF titleRect(line.left(), line.top(), titleWidth, line.height());
    painter.drawText(titleRect, Qt::AlignLeft | Qt::AlignVCenter,
        titleMetrics.elidedText(m_title, Qt::ElideRight, titleRect.width()));

    m_healthShown = 0;
    if (m_banner.isEmpty()) {
        QRectF statusRect(pad, h, all.width() - 2 * pad, all.height() - h);
        // The health strip at the right of the second line, "● 12 critical  ● 40 warning …", as many counts as
        // fit beside a third of the line for the status; the status line takes what is left.
        if (!m_health.empty()) {
            painter.setFont(sized(font(), statusRect.height() * 0.5, true));
            const QFontMetricsF metrics(painter.font());
            const double dot = statusRect.height() * 0.32;
            std::vector<QString> labels;
            std::vector<double> widths;
            std::vector<double> captions; // the caption's width before the count, 0 for none
            double total = 0;
            for (const auto &c : m_health) {
                const QString label = QStringLiteral("%L1 %2").arg(c.count).arg(c.label);
                const double caption = c.caption.isEmpty() ? 0 : metrics.horizontalAdvance(c.caption) + pad;
                const double width = caption + dot + pad * 0.5 + metrics.horizontalAdvance(label) + 1.5 * pad;
                if (total + width > statusRect.width() * 2 / 3) {
                    break;
                }
                labels.push_back(label);
                widths.push_back(width);
                captions.push_back(caption);
                total += width;
            }
            double x = statusRect.right() - total;
            for (size_t i = 0; i < labels.size(); ++i) {
                const auto &c = m_health[i];
                const bool zero = c.count == 0;
                if (captions[i] > 0) {
                    painter.setPen(dim);
                    painter.drawText(QRectF(x + 1.5 * pad, statusRect.top(), captions[i], statusRect.height()),
                        Qt::AlignLeft | Qt::AlignVCenter, c.caption);
                }
                painter.setPen(Qt::NoPen);
                painter.setBrush(zero ? QColor(0x3a, 0x3f, 0x4a) : c.colour);
                const double cx = x + 1.5 * pad + captions[i];
                painter.drawEllipse(QRectF(cx, statusRect.center().y() - dot / 2, dot, dot));
                painter.setPen(zero ? QColor(0x70, 0x78, 0x88) : text);
                painter.drawText(QRectF(cx + dot + pad * 0.5, statusRect.top(), widths[i], statusRect.height()),
                    Qt::AlignLeft | Qt::AlignVCenter, labels[i]);
                x += widths[i];
            }
            m_healthShown = static_cast<int>(labels.size());
            statusRect.setRight(statusRect.right() - total - pad);
        }
        if (!m_status.isEmpty()) {
            painter.setFont(sized(font(), statusRect.height() * 0.42, false));
            painter.setPen(dim);
            painter.drawText(statusRect, Qt::AlignLeft | Qt::AlignVCenter,
                QFontMetricsF(painter.font()).elidedText(m_status, Qt::ElideRight, statusRect.width()));
        }
    }
    if (!m_banner.isEmpty()) {
        const QRectF bannerRect(0, h, all.width(), all.height() - h);
        painter.fillRect(bannerRect,
            m_tone == Tone::Critical      ? critical
                : m_tone == Tone::Warning ? warning
                                          : QColor(0x1f, 0x5f, 0xa8));
        double pixels = bannerRect.height() * 0.55;
        painter.setFont(sized(font(), pixels, true));
        // Smaller before elided: the whole message is worth more than its size.
        while (pixels > bannerRect.height() * 0.3
            && QFontMetricsF(painter.font()).horizontalAdvance(m_banner) > bannerRect.width() - 2 * pad) {
            pixels -= 1;
            painter.setFont(sized(font(), pixels, true));
        }
        painter.setPen(m_tone == Tone::Warning ? QColor(0x10, 0x10, 0x10) : QColor(Qt::white));
        painter.drawText(bannerRect.adjusted(pad, 0, -pad, 0), Qt::AlignCenter,
            QFontMetricsF(painter.font()).elidedText(m_banner, Qt::ElideRight, bannerRect.width() - 2 * pad));
    }

    // Bottom: one segment per page, the current one filling as its time runs out.
    if (m_pages > 0) {
        const double gap = strip;
        const double width = (all.width() - gap * (m_pages + 1)) / m_pages;
        for (int i = 0; i < m_pages; ++i) {
            const QRectF segment(gap + i * (width + gap), h - strip, width, strip * 0.7);
            painter.fillRect(segment, QColor(0x2a, 0x2f, 0x3a));
            if (i == m_current) {
                QRectF done = segment;
                done.setWidth(segment.width() * (m_paused ? 1.0 : m_progress));
                painter.fillRect(done, m_paused ? dim : QColor(0x4a, 0x9a, 0xf0));
            } else if (i < m_current) {
                painter.fillRect(segment, QColor(0x3a, 0x50, 0x70));
            }
        }
    }
}

} // namespace fleetscope
