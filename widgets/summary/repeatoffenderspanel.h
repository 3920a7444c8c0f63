// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/summary.h"

#include <QWidget>

class QLabel;
class QStandardItemModel;
class QTableView;

namespace fleetscope {

// The summary page's repeat offenders: the GPUs with the highest lasting score (docs/OFFENDERS.md) with its parts,
// sortable, how far failures concentrate on the worst 1 %, and the list as CSV. A click on a row emits gpuChosen.
// Threads: GUI thread only. Bounded: at most maxRepeatOffenders rows, whatever the fleet.
class RepeatOffendersPanel : public QWidget
{
    Q_OBJECT
public:
    explicit RepeatOffendersPanel(QWidget *parent = nullptr);

    // The list and share of a summary (null: none yet), GPUs named from the topology (the fleet index without one).
    void setSummary(SummaryPtr summary, TopologyPtr topology);
    QTableView *table() const { return m_table; }
    // The list as shown, SummaryReport::repeatOffendersCsv.
    QByteArray csv() const;

Q_SIGNALS:
    void gpuChosen(uint32_t gpu);

private:
    QString gpuName(uint32_t gpu) const;

    SummaryPtr m_summary;
    TopologyPtr m_topology;
    QLabel *m_share = nullptr;
    QStandardItemModel *m_model = nullptr;
    QTableView *m_table = nullptr;
};

} // namespace fleetscope
