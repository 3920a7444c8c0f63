// SPDX-License-Identifier: Apache-2.0
#include "widgets/navigation/rolluptable.h"

#include "widgets/navigation/rollupmodel.h"

#include <QHeaderView>
#include <QSortFilterProxyModel>

namespace fleetscope {

RollupTable::RollupTable(RollupModel *model, QWidget *parent)
    : QTableView(parent)
{
    m_sort = new QSortFilterProxyModel(this);
    m_sort->setSourceModel(model);
    m_sort->setSortRole(RollupModel::SortRole);
    setModel(m_sort);
    setSortingEnabled(true);
    sortByColumn(3, Qt::DescendingOrder); // the hottest first
    setSelectionBehavior(QAbstractItemView::SelectRows);
    verticalHeader()->hide();
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // Fitted to at most 32 rows, those in view first: every frame changes the values, and laying out the text of
    // every row of the fleet's place each time held the GUI thread for 25 ms at a million GPUs.
    horizontalHeader()->setResizeContentsPrecision(32);
    setToolTip(tr("Double-click or Enter opens a place"));
    connect(this, &QTableView::activated, this, [this](const QModelIndex &index) {
        const QVariant place = m_sort->data(index, RollupModel::PlaceRole);
        if (place.canConvert<Place>()) {
            Q_EMIT placeActivated(place.value<Place>());
        }
    });
}

} // namespace fleetscope
