// SPDX-License-Identifier: Apache-2.0
#include "widgets/wall/eventsboard.h"

#include "widgets/wall/wallstyle.h"

#include <QDateTime>
#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>

namespace fleetscope {

using namespace wallstyle;

namespace {
constexpr size_t maxRows = 200; // more than any wall fits

QString age(qint64 ms)
{
    const qint64 s = std::max<qint64>(0, ms / 1000);
    if (s < 60) {
        return EventsBoard::tr("%1 s ago").arg(s);
    }
    if (s < 7200) {
        return EventsBoard::tr("%1 min ago").arg(s / 60);
    }
    return EventsBoard::tr("%1 h ago").arg(s / 3600);
}
} // namespace

EventsBoard::EventsBoard(QWidget *parent)
    : QWidget(parent)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void EventsBoard::setTopology(TopologyPtr topology)
{
    m_topology = std::move(topology);
    update();
}

EventsBoard::Active EventsBoard::activeOf(const Topology &topology, const Frame &frame)
{
    Active active;
    if (frame.topologyGeneration != topology.generation || frame.health.size() != topology.gpuCount) {
        return active;
    }
    for (const uint8_t h : frame.health) {
        if ((h & health::throttledFlag) == 0) {
            continue;
        }
        const auto state = health::stateOf(h);
        if (state == health::Warning || state == health::Critical) {
            ++active.thermal;
        } else if (state == health::Ok) {
            ++active.power;
        }
    }
    for (const auto &node : topology.nodes) {
        bool down = node.gpuCount > 0;
        for (uint32_t g = node.firstGpu; down && g < node.firstGpu + node.gpuCount; ++g) {
            down = health::stateOf(frame.health[g]) == health::Offline;
        }
        active.nodesDown += down ? 1 : 0;
    }
    return active;
}

void EventsBoard::setLiveFrame(const FramePtr &frame)
{
    const Active now = m_topology && frame ? activeOf(*m_topology, *frame) : Active {};
    if (now.thermal != m_active.thermal || now.power != m_active.power || now.nodesDown != m_active.nodesDown) {
        m_active = now;
        update();
    }
}

void EventsBoard::setEvents(const std::vector<FleetEvent> &events, qint64 nowMs)
{
    m_nowMs = nowMs;
    m_critical = 0;
    m_warnings = 0;
    m_events.clear();
    // The last hour, newest first; ends of throttling are good news and not worth a row on the wall.
    const qint64 from = nowMs - 3600 * 1000;
    for (auto it = events.rbegin(); it != events.rend() && it->timeMs >= from; ++it) {
        if (it->severity == FleetEvent::Severity::Info) {
            continue;
        }
        m_critical += it->severity == FleetEvent::Severity::Critical ? 1 : 0;
        m_warnings += it->severity == FleetEvent::Severity::Warning ? 1 : 0;
        if (m_events.size() < maxRows) {
            m_events.push_back(*it);
        }
    }
    update();
}

QString EventsBoard::where(const FleetEvent &e) const
{
    if (!m_topology) {
        return e.gpu >= 0 ? tr("GPU %1").arg(e.gpu) : tr("node %1").arg(e.node);
    }
    if (e.gpu >= 0 && static_cast<uint64_t>(e.gpu) < m_topology->gpuCount) {
        const auto &node = m_topology->nodeOf(static_cast<uint32_t>(e.gpu));
        return tr("%1 GPU %2").arg(node.hostname).arg(e.gpu - static_cast<int64_t>(node.firstGpu));
    }
    if (e.node >= 0 && static_cast<size_t>(e.node) < m_topology->nodes.size()) {
        return m_topology->nodes[static_cast<size_t>(e.node)].hostname;
    }
    return tr("fleet");
}

QString EventsBoard::what(const FleetEvent &e) const
{
    QString s = describe(e.kind);
    if (e.kind == FleetEvent::Kind::Xid) {
        const QString meaning = xidMeaningText(e.xid);
        s = meaning.isEmpty() ? tr("XID %1").arg(e.xid) : tr("XID %1 · %2").arg(e.xid).arg(meaning);
    }
    return s;
}

QStringList EventsBoard::rowTexts() const
{
    QStringList rows;
    for (const auto &e : m_events) {
        rows << QStringLiteral("%1  %2  %3")
                    .arg(QDateTime::fromMSecsSinceEpoch(e.timeMs).toString(QStringLiteral("HH:mm:ss")), where(e),
                        what(e));
    }
    return rows;
}

void EventsBoard::paintEvent(QPaintEvent * /*event*/)
{
    QPainter painter(this);
    beginBoard(painter, rect());
    const double row = rowHeight(height());
    const double pad = row * 0.35;
    double y = pad;

    // What is wrong now, as three big figures.
    const QStringList now { tr("%n GPU(s) hot and throttling", nullptr, m_active.thermal),
        tr("%n GPU(s) at the power cap", nullptr, m_active.power), tr("%n node(s) down", nullptr, m_active.nodesDown) };
    const double third = (width() - 2 * pad) / 3;
    for (int i = 0; i < 3; ++i) {
        const int count = i == 0 ? m_active.thermal : i == 1 ? m_active.power : m_active.nodesDown;
        const QRectF box(pad + i * third, y, third - pad, row * 1.2);
        painter.setPen(Qt::NoPen);
        painter.setBrush(count == 0 ? QColor(0x1b, 0x2a, 0x20) : (i == 2 ? critical : warning));
        painter.drawRoundedRect(box, row * 0.15, row * 0.15);
        painter.setPen(count == 0 ? QColor(0x8f, 0xd0, 0x9f) : (i == 2 ? QColor(Qt::white) : QColor(0x10, 0x10, 0x10)));
        // As large as fits the box: the three figures are what the room reads first.
        double pixels = row * 0.62;
        painter.setFont(sized(font(), pixels, true));
        while (pixels > row * 0.3 && QFontMetricsF(painter.font()).horizontalAdvance(now[i]) > box.width() - pad) {
            pixels -= 1;
            painter.setFont(sized(font(), pixels, true));
        }
        painter.drawText(box, Qt::AlignCenter, now[i]);
    }
    y += row * 1.2 + pad;
    painter.setFont(sized(font(), row * 0.42, false));
    painter.setPen(dim);
    painter.drawText(QRectF(pad, y, width() - 2 * pad, row * 0.7), Qt::AlignLeft | Qt::AlignVCenter,
        tr("Last hour: %1 critical, %2 warnings · newest first").arg(m_critical).arg(m_warnings));
    y += row * 0.8;

    if (m_events.empty()) {
        painter.setFont(sized(font(), row * 0.55, false));
        painter.setPen(QColor(0x8f, 0xd0, 0x9f));
        painter.drawText(QRectF(pad, y, width() - 2 * pad, row), Qt::AlignLeft | Qt::AlignVCenter,
            tr("No warnings or failures in the last hour"));
        return;
    }
    const QFont timeFont = sized(font(), row * 0.5, false);
    const QFont whereFont = sized(font(), row * 0.5, true);
    const QFont whatFont = sized(font(), row * 0.5, false);
    const double timeWidth = QFontMetricsF(timeFont).horizontalAdvance(QStringLiteral("00:00:00  000 min ago ")) + pad;
    const double whereWidth = QFontMetricsF(whereFont).horizontalAdvance(QStringLiteral("r00-k00-n00 GPU 0 ")) + pad;
    for (const auto &e : m_events) {
        if (y + row > height()) {
            break;
        }
        const QRectF line(pad, y, width() - 2 * pad, row * 0.9);
        painter.fillRect(QRectF(line.left(), line.top(), row * 0.18, line.height()),
            e.severity == FleetEvent::Severity::Critical ? critical : warning);
        double x = line.left() + row * 0.4;
        painter.setFont(timeFont);
        painter.setPen(dim);
        painter.drawText(QRectF(x, line.top(), timeWidth, line.height()), Qt::AlignLeft | Qt::AlignVCenter,
            QDateTime::fromMSecsSinceEpoch(e.timeMs).toString(QStringLiteral("HH:mm:ss")) + QStringLiteral("  ")
                + age(m_nowMs - e.timeMs));
        x += timeWidth;
        painter.setFont(whereFont);
        painter.setPen(text);
        painter.drawText(QRectF(x, line.top(), whereWidth, line.height()), Qt::AlignLeft | Qt::AlignVCenter, where(e));
        x += whereWidth;
        painter.setFont(whatFont);
        const QRectF whatRect(x, line.top(), line.right() - x, line.height());
        painter.drawText(whatRect, Qt::AlignLeft | Qt::AlignVCenter,
            QFontMetricsF(whatFont).elidedText(what(e), Qt::ElideRight, whatRect.width()));
        y += row;
    }
}

} // namespace fleetscope
