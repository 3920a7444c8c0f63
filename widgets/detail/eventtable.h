// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/history.h"

#include <QAbstractTableModel>

#include <vector>

namespace fleetscope {

// A GPU's or node's events, newest first, with the meaning of each XID code.
class EventTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        TimeColumn,
        KindColumn,
        SeverityColumn,
        GpuColumn,
        XidColumn,
        MeaningColumn,
        TextColumn,
        ColumnCount
    };
    // For tests and tools: the event's sequence number under this role on any column.
    static constexpr int SequenceRole = Qt::UserRole + 1;

    explicit EventTableModel(QObject *parent = nullptr);

    // Empties the table (a new selection).
    void clear();
    // Adds events (oldest first, as the backend sends them); ones already held (same sequence) are skipped.
    void append(const std::vector<FleetEvent> &events);
    // Which node a GPU index belongs to is shown as "n02 GPU 5" when known.
    void setTopology(TopologyPtr topology);

    const FleetEvent &event(int row) const { return m_events[static_cast<size_t>(row)]; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<FleetEvent> m_events; // newest first
    TopologyPtr m_topology;
};

} // namespace fleetscope
