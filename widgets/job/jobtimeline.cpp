// SPDX-License-Identifier: Apache-2.0
#include "widgets/job/jobtimeline.h"

#include "widgets/wall/wallstyle.h"

#include <QDateTime>
#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QStringBuilder>
#include <QToolTip>

#include <algorithm>
#include <array>
#include <cmath>

namespace fleetscope {

namespace {

// The latest time the timeline draws: 2100-01-01, as the decoder's bound on a job's times.
constexpr int64_t latestTimelineMs = 4102444800000;

constexpr int64_t minute = 60 * 1000;
constexpr int64_t hour = 60 * minute;

QString clock(int64_t ms, bool seconds = true)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(seconds ? QStringLiteral("HH:mm:ss") : QStringLiteral("HH:mm"));
}

QString percent(float v)
{
    return QString::number(v, 'f', 0) % QStringLiteral(" %");
}

// A mark's colour: by what it is, then how severe.
QColor markColor(const JobMark &m, bool wall)
{
    switch (m.kind) {
    case JobMark::Kind::IncidentOpen:
    case JobMark::Kind::IncidentClose:
        return { 0xd5, 0x5e, 0x00 };
    case JobMark::Kind::Alert:
        return { 0xcc, 0x79, 0xa7 };
    case JobMark::Kind::Throttle:
        return { 0xe6, 0x9f, 0x00 };
    case JobMark::Kind::Anomaly:
        return { 0x56, 0xb4, 0xe9 };
    case JobMark::Kind::NodeDown:
        return wall ? wallstyle::text : QColor(0x20, 0x20, 0x20);
    case JobMark::Kind::Xid:
    case JobMark::Kind::Ecc:
        break;
    }
    return m.severity == EventSeverity::Critical ? QColor(0xd5, 0x5e, 0x00) : QColor(0xe6, 0x9f, 0x00);
}

} // namespace

QColor jobPhaseColor(JobPhase phase)
{
    switch (phase) {
    case JobPhase::Compute:
        return { 0x00, 0x9e, 0x73 };
    case JobPhase::Checkpoint:
        return { 0x56, 0xb4, 0xe9 };
    case JobPhase::Stall:
        return { 0xd5, 0x5e, 0x00 };
    case JobPhase::Restart:
        return { 0xe6, 0x9f, 0x00 };
    case JobPhase::Ended:
        return { 0x70, 0x70, 0x70 };
    case JobPhase::Unwatched:
        break;
    }
    return { 0xb0, 0xb0, 0xb0 };
}

QString jobPhaseName(JobPhase phase)
{
    switch (phase) {
    case JobPhase::Compute:
        return JobTimeline::tr("compute");
    case JobPhase::Checkpoint:
        return JobTimeline::tr("checkpoint");
    case JobPhase::Stall:
        return JobTimeline::tr("stall");
    case JobPhase::Restart:
        return JobTimeline::tr("restart");
    case JobPhase::Ended:
        return JobTimeline::tr("ended");
    case JobPhase::Unwatched:
        break;
    }
    return JobTimeline::tr("not watched");
}

JobTimeline::JobTimeline(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("jobTimeline"));
    setCursor(Qt::CrossCursor);
}

QSize JobTimeline::sizeHint() const
{
    return { 900, 320 };
}

QSize JobTimeline::minimumSizeHint() const
{
    const qreal lh = QFontMetricsF(font()).height();
    return { 300, static_cast<int>(lh * 10) };
}

void JobTimeline::setReport(JobReportPtr report)
{
    m_report = std::move(report);
    m_fromMs = 0;
    m_toMs = 1;
    if (m_report) {
        const Job &job = m_report->job;
        // The decoder keeps times sane; clamped here too, so that no report can make the arithmetic below (the
        // span, the first tick rounded up by a step and the zone's offset) overflow int64.
        const auto sane = [](int64_t ms) { return std::clamp<int64_t>(ms, 0, latestTimelineMs); };
        m_fromMs = sane(job.startTimeMs > 0 ? job.startTimeMs : m_report->watchedFromMs);
        m_toMs = sane(job.isRunning() ? std::max(m_report->asOfMs, job.startTimeMs) : job.endTimeMs);
        if (m_toMs <= m_fromMs) {
            m_toMs = m_fromMs + 1;
        }
    }
    m_geometryStale = true;
    update();
}

void JobTimeline::setMarks(std::vector<JobMark> marks)
{
    m_marks = std::move(marks);
    std::stable_sort(
        m_marks.begin(), m_marks.end(), [](const JobMark &a, const JobMark &b) { return a.timeMs < b.timeMs; });
    update();
}

void JobTimeline::setWallMode(bool wall)
{
    m_wall = wall;
    setCursor(wall ? Qt::ArrowCursor : Qt::CrossCursor);
    m_geometryStale = true;
    update();
}

const JobTimeline::Layout &JobTimeline::layout() const
{
    if (!m_layoutStale) {
        return m_layout;
    }
    m_layoutStale = false;
    const QFontMetricsF fm(font());
    const qreal lh = fm.height();
    const qreal left = fm.horizontalAdvance(QStringLiteral("100 %")) + lh * 0.6;
    const qreal right = lh * 0.8;
    const QRectF all = QRectF(rect()).adjusted(0, lh * 0.2, 0, -lh * 0.2);
    Layout l;
    l.legend = QRectF(all.left() + left, all.top(), all.width() - left - right, lh * 1.3);
    l.marks = QRectF(l.legend.left(), l.legend.bottom() + lh * 0.2, l.legend.width(), lh * 1.2);
    l.axis = QRectF(l.legend.left(), all.bottom() - lh * 1.3, l.legend.width(), lh * 1.3);
    l.strip = QRectF(l.legend.left(), l.axis.top() - lh * 1.1, l.legend.width(), lh * 0.9);
    const qreal bandTop = l.marks.bottom() + lh * 0.4;
    l.band = QRectF(l.legend.left(), bandTop, l.legend.width(), std::max(lh, l.strip.top() - lh * 0.3 - bandTop));
    m_layout = l;
    return m_layout;
}

QRectF JobTimeline::bandRect() const
{
    return layout().band;
}

QRectF JobTimeline::markLane() const
{
    return layout().marks;
}

qreal JobTimeline::xAt(int64_t timeMs) const
{
    const QRectF band = bandRect();
    return band.left() + static_cast<double>(timeMs - m_fromMs) / static_cast<double>(m_toMs - m_fromMs) * band.width();
}

int64_t JobTimeline::timeAt(qreal x) const
{
    const QRectF band = bandRect();
    const double share = std::clamp((x - band.left()) / std::max(1.0, band.width()), 0.0, 1.0);
    return m_fromMs + static_cast<int64_t>(std::llround(share * static_cast<double>(m_toMs - m_fromMs)));
}

void JobTimeline::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::FontChange) {
        m_layoutStale = true;
        m_geometryStale = true;
    }
    QWidget::changeEvent(event);
}

void JobTimeline::resizeEvent(QResizeEvent *event)
{
    m_layoutStale = true;
    m_geometryStale = true;
    QWidget::resizeEvent(event);
}

void JobTimeline::rebuildGeometry()
{
    m_geometryStale = false;
    m_bandShape.clear();
    m_median.clear();
    if (!m_report || m_report->band.empty()) {
        return;
    }
    const QRectF band = bandRect();
    auto y = [&](float v) {
        return band.bottom() - std::clamp(std::isfinite(v) ? v : 0.0F, 0.0F, 100.0F) / 100.0 * band.height();
    };
    const auto &points = m_report->band;
    m_bandShape.reserve(static_cast<qsizetype>(points.size() * 2));
    m_median.reserve(static_cast<qsizetype>(points.size()));
    for (const JobBandPoint &p : points) {
        const qreal x = std::clamp(xAt(p.timeMs), band.left(), band.right());
        m_bandShape.append({ x, y(p.p90) });
        m_median.append({ x, y(p.median) });
    }
    for (auto it = points.rbegin(); it != points.rend(); ++it) {
        m_bandShape.append({ std::clamp(xAt(it->timeMs), band.left(), band.right()), y(it->p10) });
    }
}

void JobTimeline::paintEvent(QPaintEvent *)
{
    if (m_geometryStale) {
        rebuildGeometry();
    }
    QPainter painter(this);
    const QColor ground = m_wall ? wallstyle::background : palette().color(QPalette::Base);
    const QColor dim = m_wall ? wallstyle::dim : palette().color(QPalette::PlaceholderText);
    painter.fillRect(rect(), ground);
    painter.setFont(font());
    const Layout &l = layout();
    if (!m_report) {
        painter.setPen(dim);
        painter.drawText(l.band, Qt::AlignCenter, tr("No job shown"));
        return;
    }

    // Stalls and restarts tint the band's ground, so the dip they cause reads as theirs.
    for (const JobPhaseSpan &s : m_report->phases) {
        if (s.phase != JobPhase::Stall && s.phase != JobPhase::Restart) {
            continue;
        }
        QColor tint = jobPhaseColor(s.phase);
        tint.setAlpha(m_wall ? 60 : 40);
        const qreal x0 = std::max(l.band.left(), xAt(s.fromMs));
        const qreal x1 = std::min(l.band.right(), xAt(s.toMs));
        if (x1 > x0) {
            painter.fillRect(QRectF(x0, l.band.top(), std::max(1.0, x1 - x0), l.band.height()), tint);
        }
    }

    // The utilisation grid: 0, 50 and 100 %.
    const QFontMetricsF fm(font());
    QColor grid = dim;
    grid.setAlpha(90);
    for (const int v : { 0, 50, 100 }) {
        const qreal y = l.band.bottom() - v / 100.0 * l.band.height();
        painter.setPen(QPen(grid, 1, v == 0 ? Qt::SolidLine : Qt::DotLine));
        painter.drawLine(QPointF(l.band.left(), y), QPointF(l.band.right(), y));
        painter.setPen(dim);
        const QRectF label(0, y - fm.height() / 2, l.band.left() - fm.height() * 0.3, fm.height());
        painter.drawText(label, Qt::AlignRight | Qt::AlignVCenter, QString::number(v) % QStringLiteral(" %"));
    }

    // Measured at 1,440 points: the band filled antialiased costs 14 ms and a median stroked 1.5 px wide 27 ms; filled
    // aliased (its edges are a pixel a point anyway) and stroked as hairlines, antialiased, both under 2 ms. A thicker
    // median is hairlines side by side.
    const QColor bandInk = m_wall ? QColor(0x7f, 0xb8, 0xf0) : QColor(0x00, 0x72, 0xb2);
    QColor bandFill = bandInk;
    bandFill.setAlpha(m_wall ? 110 : 70);
    painter.setPen(Qt::NoPen);
    painter.setBrush(bandFill);
    painter.drawPolygon(m_bandShape);
    painter.setBrush(Qt::NoBrush);
    painter.setRenderHint(QPainter::Antialiasing);
    QPen medianPen(bandInk, 1);
    medianPen.setCosmetic(true);
    painter.setPen(medianPen);
    const int strokes = m_wall ? 3 : 2;
    for (int i = 0; i < strokes; ++i) {
        painter.save();
        painter.translate(0, i - (strokes - 1) / 2.0);
        painter.drawPolyline(m_median);
        painter.restore();
    }
    painter.setRenderHint(QPainter::Antialiasing, false);

    // The phases strip: neighbours of one phase drawn as one rectangle.
    const auto &spans = m_report->phases;
    for (size_t i = 0; i < spans.size();) {
        size_t j = i + 1;
        while (j < spans.size() && spans[j].phase == spans[i].phase) {
            ++j;
        }
        const qreal x0 = std::max(l.strip.left(), xAt(spans[i].fromMs));
        const qreal x1 = std::min(l.strip.right(), xAt(spans[j - 1].toMs));
        if (x1 > x0 - 1) {
            painter.fillRect(
                QRectF(x0, l.strip.top(), std::max(1.0, x1 - x0), l.strip.height()), jobPhaseColor(spans[i].phase));
        }
        i = j;
    }

    paintMarks(painter, l.marks);
    // Incidents' opening lines run down through the band, to the stall they cause.
    for (const JobMark &m : m_marks) {
        if (m.kind == JobMark::Kind::IncidentOpen) {
            QColor c = markColor(m, m_wall);
            c.setAlpha(160);
            painter.setPen(QPen(c, m_wall ? 2 : 1, Qt::DashLine));
            const qreal x = xAt(m.timeMs);
            painter.drawLine(QPointF(x, l.marks.bottom()), QPointF(x, l.strip.bottom()));
        }
    }
    paintAxis(painter, l);
    paintLegend(painter, l.legend);
}

void JobTimeline::paintMarks(QPainter &painter, const QRectF &lane) const
{
    QColor laneGround = m_wall ? wallstyle::dim : palette().color(QPalette::AlternateBase);
    laneGround.setAlpha(m_wall ? 30 : 255);
    painter.fillRect(lane, laneGround);
    painter.setRenderHint(QPainter::Antialiasing);
    const qreal w = m_wall ? 4 : 2;
    for (const JobMark &m : m_marks) {
        const qreal x = xAt(m.timeMs);
        if (x < lane.left() - w || x > lane.right() + w) {
            continue;
        }
        const QColor c = markColor(m, m_wall);
        switch (m.kind) {
        case JobMark::Kind::IncidentOpen:
        case JobMark::Kind::IncidentClose: {
            // A flag: filled when it opens, hollow when it closes.
            const qreal h = lane.height() * 0.8;
            QPainterPath flag;
            flag.moveTo(x, lane.bottom());
            flag.lineTo(x, lane.bottom() - h);
            flag.lineTo(x + h * 0.7, lane.bottom() - h * 0.75);
            flag.lineTo(x, lane.bottom() - h * 0.5);
            painter.setPen(QPen(c, w * 0.75));
            painter.setBrush(m.kind == JobMark::Kind::IncidentOpen ? QBrush(c) : QBrush(Qt::NoBrush));
            painter.drawPath(flag);
            break;
        }
        case JobMark::Kind::Alert: {
            const qreal r = lane.height() * 0.3;
            const QPointF c0(x, lane.center().y());
            const std::array<QPointF, 4> diamond { QPointF(c0.x(), c0.y() - r), QPointF(c0.x() + r, c0.y()),
                QPointF(c0.x(), c0.y() + r), QPointF(c0.x() - r, c0.y()) };
            painter.setPen(Qt::NoPen);
            painter.setBrush(c);
            painter.drawPolygon(diamond.data(), static_cast<int>(diamond.size()));
            break;
        }
        default:
            painter.fillRect(QRectF(x - w / 2, lane.top() + lane.height() * 0.15, w, lane.height() * 0.7), c);
            break;
        }
    }
    painter.setBrush(Qt::NoBrush);
    painter.setRenderHint(QPainter::Antialiasing, false);
}

void JobTimeline::paintAxis(QPainter &painter, const Layout &l) const
{
    const QFontMetricsF fm(font());
    const int64_t span = m_toMs - m_fromMs;
    const qreal labelWidth = fm.horizontalAdvance(QStringLiteral("00:00:00")) * 1.6;
    static constexpr std::array<int64_t, 14> steps { 10 * 1000, 30 * 1000, minute, 5 * minute, 10 * minute, 15 * minute,
        30 * minute, hour, 2 * hour, 3 * hour, 6 * hour, 12 * hour, 24 * hour, 7 * 24 * hour };
    int64_t step = steps.back();
    for (const int64_t s : steps) {
        if (static_cast<double>(s) / static_cast<double>(span) * l.axis.width() >= labelWidth) {
            step = s;
            break;
        }
    }
    const bool seconds = step < minute;
    const int64_t offset = static_cast<int64_t>(QDateTime::fromMSecsSinceEpoch(m_fromMs).offsetFromUtc()) * 1000;
    int64_t t = ((m_fromMs + offset + step - 1) / step) * step - offset;
    const QColor ink = m_wall ? wallstyle::dim : palette().color(QPalette::Text);
    painter.setPen(ink);
    for (int guard = 0; t <= m_toMs && guard < 200; t += step, ++guard) {
        const qreal x = xAt(t);
        painter.drawLine(QPointF(x, l.strip.bottom()), QPointF(x, l.strip.bottom() + fm.height() * 0.25));
        const QString text = clock(t, seconds);
        const qreal tw = fm.horizontalAdvance(text);
        const qreal left = std::clamp(x - tw / 2, 0.0, width() - tw);
        painter.drawText(QRectF(left, l.axis.top() + fm.height() * 0.15, tw + 1, fm.height()), Qt::AlignLeft, text);
    }
}

void JobTimeline::paintLegend(QPainter &painter, const QRectF &rect) const
{
    const QFontMetricsF fm(font());
    const qreal sw = fm.height() * 0.8;
    const qreal gap = fm.height() * 0.9;
    const QColor ink = m_wall ? wallstyle::text : palette().color(QPalette::Text);
    qreal x = rect.left();
    const qreal cy = rect.center().y();
    auto item = [&](const QString &text, auto &&drawSwatch) {
        drawSwatch(QRectF(x, cy - sw / 2, sw, sw));
        x += sw + fm.height() * 0.3;
        painter.setPen(ink);
        const qreal tw = fm.horizontalAdvance(text);
        painter.drawText(QRectF(x, rect.top(), tw + 1, rect.height()), Qt::AlignLeft | Qt::AlignVCenter, text);
        x += tw + gap;
    };
    const QColor bandInk = m_wall ? QColor(0x7f, 0xb8, 0xf0) : QColor(0x00, 0x72, 0xb2);
    item(tr("GPU utilisation p10–p90"), [&](const QRectF &r) {
        QColor fill = bandInk;
        fill.setAlpha(m_wall ? 110 : 70);
        painter.fillRect(r, fill);
    });
    item(tr("median"),
        [&](const QRectF &r) { painter.fillRect(QRectF(r.left(), r.center().y() - 1.5, r.width(), 3), bandInk); });
    for (const JobPhase phase : { JobPhase::Compute, JobPhase::Checkpoint, JobPhase::Stall, JobPhase::Restart }) {
        item(jobPhaseName(phase), [&](const QRectF &r) { painter.fillRect(r, jobPhaseColor(phase)); });
    }
    if (!m_wall) {
        item(tr("incident"), [&](const QRectF &r) {
            painter.fillRect(r.adjusted(r.width() * 0.4, 0, -r.width() * 0.4, 0), QColor(0xd5, 0x5e, 0x00));
        });
        item(tr("alert"), [&](const QRectF &r) {
            painter.fillRect(r.adjusted(r.width() * 0.2, r.height() * 0.2, -r.width() * 0.2, -r.height() * 0.2),
                QColor(0xcc, 0x79, 0xa7));
        });
    }
}

int JobTimeline::markNear(qreal x) const
{
    const qreal reach = m_wall ? 10 : 6;
    int best = -1;
    qreal bestDistance = reach + 1;
    for (size_t i = 0; i < m_marks.size(); ++i) {
        const qreal d = std::abs(xAt(m_marks[i].timeMs) - x);
        const bool better = d < bestDistance
            || (d == bestDistance && best >= 0 && m_marks[i].severity > m_marks[static_cast<size_t>(best)].severity);
        if (d <= reach && better) {
            best = static_cast<int>(i);
            bestDistance = d;
        }
    }
    return best;
}

void JobTimeline::mouseReleaseEvent(QMouseEvent *event)
{
    if (m_wall || !m_report || event->button() != Qt::LeftButton) {
        QWidget::mouseReleaseEvent(event);
        return;
    }
    const Layout &l = layout();
    const QPointF pos = event->position();
    if (pos.y() >= l.marks.top() - 2 && pos.y() <= l.marks.bottom() + 2) {
        const int i = markNear(pos.x());
        if (i >= 0) {
            const JobMark &m = m_marks[static_cast<size_t>(i)];
            if (m.incidentId != 0) {
                Q_EMIT incidentActivated(m.incidentId);
            } else if (m.gpu >= 0) {
                Q_EMIT gpuActivated(static_cast<uint32_t>(m.gpu));
            }
        }
        return;
    }
    if (pos.x() >= l.band.left() && pos.x() <= l.band.right() && pos.y() >= l.band.top()
        && pos.y() <= l.strip.bottom()) {
        Q_EMIT timeActivated(timeAt(pos.x()));
    }
}

bool JobTimeline::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QString text = tooltipAt(help->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
            event->ignore();
        } else {
            QToolTip::showText(help->globalPos(), text, this);
        }
        return true;
    }
    return QWidget::event(event);
}

QString JobTimeline::tooltipAt(const QPointF &pos) const
{
    if (!m_report) {
        return {};
    }
    const Layout &l = layout();
    if (pos.y() >= l.marks.top() - 2 && pos.y() <= l.marks.bottom() + 2) {
        const int i = markNear(pos.x());
        if (i < 0) {
            return {};
        }
        const JobMark &m = m_marks[static_cast<size_t>(i)];
        return clock(m.timeMs) % QStringLiteral("  ") % m.text;
    }
    if (pos.x() < l.band.left() || pos.x() > l.band.right()) {
        return {};
    }
    const int64_t t = timeAt(pos.x());
    if (pos.y() >= l.strip.top() && pos.y() <= l.strip.bottom()) {
        const auto &spans = m_report->phases;
        const auto it = std::upper_bound(
            spans.begin(), spans.end(), t, [](int64_t time, const JobPhaseSpan &s) { return time < s.fromMs; });
        if (it == spans.begin()) {
            return {};
        }
        const JobPhaseSpan &s = *std::prev(it);
        QString text
            = jobPhaseName(s.phase) % QStringLiteral(" ") % clock(s.fromMs) % QStringLiteral("–") % clock(s.toMs);
        if (!s.why.isEmpty()) {
            text += QStringLiteral(": ") % s.why;
        }
        return text;
    }
    if (pos.y() >= l.band.top() && pos.y() <= l.band.bottom() && !m_report->band.empty()) {
        const auto &band = m_report->band;
        auto it = std::lower_bound(
            band.begin(), band.end(), t, [](const JobBandPoint &p, int64_t time) { return p.timeMs < time; });
        if (it == band.end()) {
            it = std::prev(band.end());
        } else if (it != band.begin() && t - std::prev(it)->timeMs < it->timeMs - t) {
            it = std::prev(it);
        }
        return tr("%1  median %2 (p10 %3, p90 %4) of %5 GPUs reporting · click to replay the fleet then")
            .arg(clock(it->timeMs), percent(it->median), percent(it->p10), percent(it->p90))
            .arg(it->reporting);
    }
    return {};
}

} // namespace fleetscope
