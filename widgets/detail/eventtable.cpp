// SPDX-License-Identifier: Apache-2.0
#include "widgets/detail/eventtable.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>

#include <algorithm>
#include <array>
#include <unordered_set>

namespace fleetscope {

EventTableModel::EventTableModel(QObject *parent)
    : QAbstractTableModel(parent)
{ }

void EventTableModel::clear()
{
    if (m_events.empty()) {
        return;
    }
    beginResetModel();
    m_events.clear();
    endResetModel();
}

void EventTableModel::setTopology(TopologyPtr topology)
{
    m_topology = std::move(topology);
    if (!m_events.empty()) {
        Q_EMIT dataChanged(index(0, GpuColumn), index(rowCount() - 1, GpuColumn));
    }
}

void EventTableModel::append(const std::vector<FleetEvent> &events)
{
    std::unordered_set<uint64_t> held;
    for (const auto &e : m_events) {
        held.insert(e.sequence);
    }
    std::vector<FleetEvent> fresh;
    for (const auto &e : events) {
        if (held.insert(e.sequence).second) {
            fresh.push_back(e);
        }
    }
    if (fresh.empty()) {
        return;
    }
    // The backend sends oldest first and never goes back in time: new events go on top, newest first.
    std::reverse(fresh.begin(), fresh.end());
    beginInsertRows({}, 0, static_cast<int>(fresh.size()) - 1);
    m_events.insert(m_events.begin(), fresh.begin(), fresh.end());
    endInsertRows();
}

int EventTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_events.size());
}

int EventTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant EventTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const FleetEvent &e = m_events[static_cast<size_t>(index.row())];
    if (role == SequenceRole) {
        return QVariant::fromValue<qulonglong>(e.sequence);
    }
    if (role == Qt::ForegroundRole && index.column() == SeverityColumn) {
        switch (e.severity) {
        case FleetEvent::Severity::Critical:
            return QBrush(QColor(0xc6, 0x28, 0x28));
        case FleetEvent::Severity::Warning:
            return QBrush(QColor(0xb2, 0x6a, 0x00));
        case FleetEvent::Severity::Info:
            return {};
        }
    }
    if (role == Qt::ToolTipRole && index.column() == TextColumn) {
        return e.text;
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (index.column()) {
    case TimeColumn:
        return QDateTime::fromMSecsSinceEpoch(e.timeMs).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    case KindColumn:
        return describe(e.kind);
    case SeverityColumn:
        return describe(e.severity);
    case GpuColumn:
        if (e.gpu < 0) {
            return QStringLiteral("—");
        }
        if (m_topology && e.gpu < static_cast<int64_t>(m_topology->gpuCount)) {
            const auto gpu = static_cast<uint32_t>(e.gpu);
            return QStringLiteral("%1 (GPU %2)").arg(e.gpu).arg(gpu - m_topology->nodeOf(gpu).firstGpu);
        }
        return QString::number(e.gpu);
    case XidColumn:
        return e.xid != 0 ? QVariant(e.xid) : QVariant();
    case MeaningColumn:
        if (e.xid == 0) {
            return {};
        }
        if (const QString meaning = xidMeaningText(e.xid); !meaning.isEmpty()) {
            return meaning;
        }
        return QStringLiteral("unknown XID");
    case TextColumn:
        return e.text;
    default:
        return {};
    }
}

QVariant EventTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    // In Column's order.
    static const std::array<QString, ColumnCount> titles { QStringLiteral("Time"), QStringLiteral("Event"),
        QStringLiteral("Severity"), QStringLiteral("GPU"), QStringLiteral("XID"), QStringLiteral("Meaning"),
        QStringLiteral("Detail") };
    return section >= 0 && section < ColumnCount ? QVariant(titles[static_cast<size_t>(section)]) : QVariant();
}

} // namespace fleetscope
