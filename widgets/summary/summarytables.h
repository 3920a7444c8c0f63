// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>

#include <cstdint>
#include <functional>

class QStandardItem;
class QStandardItemModel;
class QTableView;
class QWidget;

namespace fleetscope {

// The summary page's tables: read-only, sorted on the number behind each cell (Qt::UserRole) rather than its text.

// A right-aligned cell showing text and sorted on value.
QStandardItem *numberItem(double value, const QString &text);
// A table over model through a sorting proxy; named for tests and styles.
QTableView *sortableTable(QStandardItemModel *model, const QString &name, QWidget *parent);
// Calls chosen with the GPU of a clicked row, read from column 0's Qt::UserRole (the fleet index the row was filled
// with); rows without one are ignored.
void onGpuClicked(QTableView *table, std::function<void(uint32_t)> chosen);

} // namespace fleetscope
