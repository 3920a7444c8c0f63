// SPDX-License-Identifier: Apache-2.0
#include "app/problemsmodel.h"

#include <QColor>
#include <QDateTime>
#include <QLocale>

#include <algorithm>

namespace fleetscope {

ProblemsModel::ProblemsModel(QObject *parent)
    : QAbstractTableModel(parent)
{ }

void ProblemsModel::setProblems(std::vector<Problem> problems, TopologyPtr topology, JobsPtr jobs, int64_t nowMs)
{
    beginResetModel();
    m_all = std::move(problems);
    m_topology = std::move(topology);
    if (jobs != m_jobs) {
        m_jobIndex.clear();
        if (jobs) {
            m_jobIndex.reserve(jobs->jobs.size());
            for (std::size_t i = 0; i < jobs->jobs.size(); ++i) {
                m_jobIndex.emplace(jobs->jobs[i].id, i); // the first of a repeated id, as a search would find
            }
        }
    }
    m_jobs = std::move(jobs);
    m_nowMs = nowMs;
    refilter();
    endResetModel();
}

void ProblemsModel::setKindFilter(std::vector<Problem::Kind> kinds)
{
    beginResetModel();
    m_kinds = std::move(kinds);
    refilter();
    endResetModel();
}

void ProblemsModel::refilter()
{
    m_shown.clear();
    for (const auto &p : m_all) {
        if (m_kinds.empty() || std::find(m_kinds.begin(), m_kinds.end(), p.kind) != m_kinds.end()) {
            m_shown.push_back(&p);
        }
    }
}

const Problem *ProblemsModel::problemAt(int row) const
{
    return row >= 0 && row < static_cast<int>(m_shown.size()) ? m_shown[static_cast<size_t>(row)] : nullptr;
}

int ProblemsModel::rowOf(const Problem::Key &key) const
{
    for (size_t i = 0; i < m_shown.size(); ++i) {
        if (m_shown[i]->key() == key) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

int ProblemsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_shown.size());
}

int ProblemsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString ProblemsModel::summary(const Problem &p)
{
    return problemSummary(p);
}

QString ProblemsModel::placeName(const Problem &p, const Topology *topology)
{
    return problemPlace(p, topology);
}

QVariant ProblemsModel::data(const QModelIndex &index, int role) const
{
    const Problem *p = index.isValid() ? problemAt(index.row()) : nullptr;
    if (p == nullptr || index.column() < 0 || index.column() >= ColumnCount) {
        return {};
    }
    if (role == Qt::ForegroundRole && index.column() == SeverityColumn) {
        if (p->severity == EventSeverity::Info) {
            return QColor(0x4a, 0x90, 0xd9); // information (a rollout under way): blue, not the warnings' amber
        }
        return p->severity == EventSeverity::Critical ? QColor(0xd9, 0x53, 0x4f) : QColor(0xe0, 0x9a, 0x20);
    }
    if (role == Qt::TextAlignmentRole && index.column() == BlastColumn) {
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::ToolTipRole && index.column() == ProblemColumn) {
        return p->text;
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (static_cast<Column>(index.column())) {
    case SeverityColumn:
        return describe(p->severity);
    case ProblemColumn:
        return summary(*p);
    case PlaceColumn:
        return placeName(*p, m_topology.get());
    case JobsColumn: {
        QStringList names;
        for (uint64_t id : p->jobIds) {
            const auto found = m_jobIndex.find(id);
            const Job *job = found != m_jobIndex.end() ? &m_jobs->jobs[found->second] : nullptr;
            names << (job != nullptr && !job->name.isEmpty() ? job->name : QStringLiteral("job %1").arg(id));
        }
        return names.isEmpty() ? QStringLiteral("—") : names.join(QStringLiteral(", "));
    }
    case BlastColumn:
        return QLocale().toString(p->blastGpus);
    case SinceColumn: {
        const qint64 minutes = std::max<qint64>(0, (m_nowMs - p->sinceMs) / 60000);
        return QStringLiteral("%1 (%2 min)")
            .arg(QDateTime::fromMSecsSinceEpoch(p->sinceMs).toString(QStringLiteral("HH:mm:ss")))
            .arg(minutes);
    }
    case ColumnCount:
        break;
    }
    return {};
}

QVariant ProblemsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char *const names[ColumnCount]
        = { "severity", "where", "problem", "since", "jobs hit", "GPUs in them" };
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

} // namespace fleetscope
