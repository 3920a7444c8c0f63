// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/jobtracker.h"
#include "model/fleetmodel.h"
#include "model/place.h"
#include "model/rollup.h"

#include <QAbstractTableModel>
#include <QElapsedTimer>
#include <QTimer>

#include <algorithm>
#include <vector>

namespace fleetscope {

// The rollups of a place's children as a table: name, GPUs, mean, max, p99 and unhealthy count of the chosen metric.
// A new frame over the same children changes data in place (dataChanged), so a view keeps its selection and
// scroll; a new place, topology or metric resets. Sort through a QSortFilterProxyModel with sortRole SortRole: it
// gives numbers (and nothing for a child without values, which sorts last in ascending order).
//
// The statistics are a pass over every GPU of the place (about 16 ms at the fleet level of a million GPUs). Past
// syncRollupGpus they are computed on a worker, for a new frame and for a new place, metric or topology alike: the
// rows (names, GPU counts) are set at once, their statistics read "–" until the worker's result lands, and a result
// for rows or a frame since replaced is dropped (latest wins). Smaller fleets are computed on the calling thread.
class RollupModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, GpusColumn, MeanColumn, MaxColumn, P99Column, UnhealthyColumn, ColumnCount };
    enum Role {
        SortRole = Qt::UserRole + 1,
        PlaceRole, // fleetscope::Place of the row's child, to drill down on activation
    };

    explicit RollupModel(QObject *parent = nullptr);

    void setTopology(TopologyPtr topology);
    void setMetric(const MetricInfo &metric);
    Place place() const { return m_place; }
    const std::vector<Rollup> &rollups() const { return m_rollups; }
    // Fleets larger than this have their rollups computed on a worker thread, the newest request winning; smaller
    // ones at once.
    static constexpr uint32_t syncRollupGpus = 100'000;
    // A computation is under way on the worker, or a frame's waits for its turn.
    bool isComputing() const { return m_jobs.running() || m_framePending; }
    // Past syncRollupGpus a new frame's rollups are computed at most this often (a replay at 60x shows 20 frames a
    // second; a table of numbers changing that fast cannot be read, and each change is a repaint of the window), the
    // newest frame winning; a new place, metric or topology is computed at once.
    static constexpr int defaultFrameIntervalMs = 250;
    void setMinimumFrameInterval(int ms) { m_frameIntervalMs = std::max(0, ms); }
    // The rows are set but their statistics are not computed yet (a new place, metric or topology past
    // syncRollupGpus, until the worker's result lands).
    bool isPending() const { return m_valuesPending; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

public Q_SLOTS:
    void setPlace(fleetscope::Place place);
    void setFrame(fleetscope::FramePtr frame);

private:
    std::vector<Rollup> compute() const;
    bool computesInBackground() const { return m_topology && m_topology->gpuCount > syncRollupGpus; }
    // The rows for m_frame: new values for the same rows, or a reset when the rows changed.
    void apply(std::vector<Rollup> rollups);
    // A new frame's computation, once the interval since the last one has passed.
    void scheduleFrame();
    void computeInBackground();
    void onComputed(std::vector<Rollup> rollups);
    void recomputeWithReset();
    QString formatValue(float value) const;
    // What a cell holds before formatting: the name (QString), a count (uint) or a statistic (float, NaN: none).
    QVariant cellValue(std::size_t row, int column) const;

    TopologyPtr m_topology;
    FramePtr m_frame;
    MetricInfo m_metric;
    Place m_place;
    std::vector<Rollup> m_rollups;
    std::vector<QString> m_names; // per row, taken when the rows are set so data() never looks up the topology
    bool m_valuesPending = false; // the rows' statistics are not computed yet
    bool m_framePending = false; // a newer frame came meanwhile, or waits for the interval
    int m_frameIntervalMs = defaultFrameIntervalMs;
    QElapsedTimer m_lastStart; // when the last computation began
    QTimer m_frameTimer; // single shot: the interval has passed
    // Past syncRollupGpus, the rollups on a worker: a change of topology, place or metric starts a job at once (the
    // one under way is of the old rows, its result dropped); a frame waits for the one under way. Last member: its
    // jobs read only what they are handed, and no result is applied after it goes.
    JobTracker m_jobs;
};

} // namespace fleetscope
