// SPDX-License-Identifier: Apache-2.0
#include "widgets/navigation/rollupmodel.h"

#include <QLocale>
#include <QThread>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetscope {

RollupModel::RollupModel(QObject *parent)
    : QAbstractTableModel(parent)
{
    qRegisterMetaType<Place>();
    m_frameTimer.setSingleShot(true);
    connect(&m_frameTimer, &QTimer::timeout, this, [this] {
        if (m_framePending && !m_jobs.running()) {
            computeInBackground();
        }
    });
}

void RollupModel::setTopology(TopologyPtr topology)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_topology = std::move(topology);
    if (!m_topology || !m_place.isValid(*m_topology)) {
        m_place = Place::fleet();
    }
    recomputeWithReset();
}

void RollupModel::setMetric(const MetricInfo &metric)
{
    m_metric = metric;
    recomputeWithReset();
}

void RollupModel::setPlace(Place place)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_topology || !place.isValid(*m_topology)) {
        return;
    }
    if (place == m_place) {
        return;
    }
    m_place = place;
    recomputeWithReset();
}

void RollupModel::setFrame(FramePtr frame)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_frame = std::move(frame);
    if (computesInBackground()) {
        scheduleFrame();
        return;
    }
    apply(compute());
}

void RollupModel::scheduleFrame()
{
    const qint64 since = m_lastStart.isValid() ? m_lastStart.elapsed() : m_frameIntervalMs;
    if (!m_jobs.running() && since >= m_frameIntervalMs) {
        computeInBackground();
        return;
    }
    m_framePending = true; // the newest frame when the one under way is done or the interval has passed
    if (!m_jobs.running() && !m_frameTimer.isActive()) {
        m_frameTimer.start(static_cast<int>(m_frameIntervalMs - since));
    }
}

void RollupModel::computeInBackground()
{
    if (!m_topology) {
        return;
    }
    m_framePending = false;
    m_frameTimer.stop();
    m_lastStart.start();
    // The job reads only what it was handed (shared, immutable); a later start drops its result.
    m_jobs.start([topology = m_topology, place = m_place, frame = m_frame, metric = m_metric.id](
                     const JobTracker::Ticket &) { return computeRollups(*topology, place, frame.get(), metric); },
        [this](std::vector<Rollup> rollups) { onComputed(std::move(rollups)); });
}

void RollupModel::onComputed(std::vector<Rollup> rollups)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_valuesPending = false;
    apply(std::move(rollups));
    if (m_framePending) {
        scheduleFrame(); // a newer frame: in its turn
    }
}

void RollupModel::apply(std::vector<Rollup> rollups)
{
    const bool sameRows = rollups.size() == m_rollups.size()
        && std::equal(rollups.begin(), rollups.end(), m_rollups.begin(),
            [](const Rollup &a, const Rollup &b) { return a.place == b.place; });
    if (!sameRows) {
        // Only a topology that changed under the model gets here; setTopology would have reset already.
        beginResetModel();
        m_rollups = std::move(rollups);
        m_names.clear();
        for (const Rollup &r : m_rollups) {
            m_names.push_back(r.place.listText(*m_topology));
        }
        endResetModel();
        return;
    }
    m_rollups = std::move(rollups);
    if (!m_rollups.empty()) {
        Q_EMIT dataChanged(index(0, GpusColumn), index(rowCount() - 1, ColumnCount - 1));
    }
}

std::vector<Rollup> RollupModel::compute() const
{
    if (!m_topology) {
        return {};
    }
    return computeRollups(*m_topology, m_place, m_frame.get(), m_metric.id);
}

void RollupModel::recomputeWithReset()
{
    m_jobs.cancel(); // rollups under way are of the old rows
    beginResetModel();
    const bool background = computesInBackground() && m_frame;
    // Past syncRollupGpus the rows come at once without statistics (a pass over the children, not their GPUs), and
    // the worker fills them in.
    m_rollups = background ? computeRollups(*m_topology, m_place, nullptr, 0, nullptr, 0) : compute();
    m_valuesPending = background;
    m_names.clear();
    m_names.reserve(m_rollups.size());
    for (const Rollup &r : m_rollups) {
        m_names.push_back(r.place.listText(*m_topology));
    }
    endResetModel();
    // The first column is named after the children's level, and the values after the metric's unit.
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (background) {
        computeInBackground();
    }
}

int RollupModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rollups.size());
}

int RollupModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString RollupModel::formatValue(float value) const
{
    if (std::isnan(value)) {
        return QStringLiteral("–");
    }
    return QLocale().toString(value, 'f', 1);
}

QVariant RollupModel::cellValue(std::size_t row, int column) const
{
    const Rollup &r = m_rollups[row];
    switch (column) {
    case NameColumn:
        return m_names[row];
    case GpusColumn:
        return r.gpuCount;
    case MeanColumn:
        return r.mean;
    case MaxColumn:
        return r.max;
    case P99Column:
        return r.p99;
    case UnhealthyColumn:
        return r.unhealthy;
    default:
        return {};
    }
}

QVariant RollupModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const auto row = static_cast<std::size_t>(index.row());
    const Rollup &r = m_rollups[row];
    const int column = index.column();
    const bool statistic = column >= MeanColumn && column <= P99Column;
    if (m_valuesPending && (statistic || column == UnhealthyColumn)
        && (role == Qt::DisplayRole || role == SortRole || role == Qt::ToolTipRole)) {
        // Not computed yet: no value rather than a made-up one (an unhealthy count of 0).
        return role == Qt::DisplayRole ? QVariant(formatValue(std::numeric_limits<float>::quiet_NaN())) : QVariant();
    }
    switch (role) {
    case Qt::DisplayRole: {
        const QVariant value = cellValue(row, column);
        if (statistic) {
            return formatValue(value.toFloat());
        }
        return column == NameColumn ? value : QVariant(QLocale().toString(value.toUInt()));
    }
    case SortRole:
        if (statistic) {
            // No value is an empty QVariant, not NaN: NaN compares false with everything, which breaks sorting.
            const float v = cellValue(row, column).toFloat();
            return std::isnan(v) ? QVariant() : QVariant(static_cast<double>(v));
        }
        return cellValue(row, column);
    case Qt::ToolTipRole:
        if (statistic && r.valueCount < r.gpuCount) {
            return tr("from the %1 of %2 GPUs that have a value").arg(r.valueCount).arg(r.gpuCount);
        }
        if (column == P99Column && r.p99Sampled) {
            return tr("estimated from an even sample of %1 GPUs").arg(rollupExactQuantileLimit);
        }
        return {};
    case Qt::TextAlignmentRole:
        return column == NameColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                    : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case PlaceRole:
        return QVariant::fromValue(r.place);
    default:
        return {};
    }
}

QVariant RollupModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= ColumnCount) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    const QString unit = m_metric.unit.isEmpty() ? QString() : QStringLiteral(" (") % m_metric.unit % u')';
    switch (section) {
    case NameColumn:
        return m_topology && m_place.level != Place::Level::Gpu
            ? levelName(static_cast<Place::Level>(static_cast<int>(m_place.level) + 1))
            : tr("name");
    case GpusColumn:
        return tr("GPUs");
    case MeanColumn:
        return QString(tr("mean") % unit);
    case MaxColumn:
        return QString(tr("max") % unit);
    case P99Column:
        return QString(tr("p99") % unit);
    case UnhealthyColumn:
        return tr("unhealthy");
    }
    return {};
}

} // namespace fleetscope
