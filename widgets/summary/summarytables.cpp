// SPDX-License-Identifier: Apache-2.0
#include "widgets/summary/summarytables.h"

#include <QHeaderView>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTableView>

namespace fleetscope {

QStandardItem *numberItem(double value, const QString &text)
{
    auto *item = new QStandardItem(text);
    item->setData(value, Qt::UserRole); // sorted on the number, shown as text
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    item->setEditable(false);
    return item;
}

QTableView *sortableTable(QStandardItemModel *model, const QString &name, QWidget *parent)
{
    auto *proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(model);
    proxy->setSortRole(Qt::UserRole);
    auto *table = new QTableView(parent);
    table->setObjectName(name);
    table->setModel(proxy);
    table->setSortingEnabled(true);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->horizontalHeader()->setStretchLastSection(true);
    table->verticalHeader()->hide();
    return table;
}

void onGpuClicked(QTableView *table, std::function<void(uint32_t)> chosen)
{
    QObject::connect(table, &QTableView::clicked, table, [table, chosen = std::move(chosen)](const QModelIndex &index) {
        bool ok = false;
        const double gpu = table->model()->index(index.row(), 0).data(Qt::UserRole).toDouble(&ok);
        if (ok && gpu >= 0 && gpu <= static_cast<double>(UINT32_MAX)) {
            chosen(static_cast<uint32_t>(gpu));
        }
    });
}

} // namespace fleetscope
