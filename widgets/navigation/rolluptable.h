// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/place.h"

#include <QTableView>

class QSortFilterProxyModel;

namespace fleetscope {

class RollupModel;

// The rollups of the current place as a table: one line per child with its GPUs, mean, max, 99th percentile and
// unhealthy count, sortable by any column (the hottest first); double-click or Enter opens a child.
class RollupTable : public QTableView
{
    Q_OBJECT
public:
    explicit RollupTable(RollupModel *model, QWidget *parent = nullptr);

Q_SIGNALS:
    void placeActivated(fleetscope::Place place);

private:
    QSortFilterProxyModel *m_sort = nullptr;
};

} // namespace fleetscope
