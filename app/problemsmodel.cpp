// SPDX-License-Identifier: Apache-2.0
#include "app/problemsmodel.h"

#include "model/alertproblems.h"

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

QString ProblemsModel::jobName(uint64_t id) const
{
    const auto found = m_jobIndex.find(id);
    const Job *job = found != m_jobIndex.end() ? &m_jobs->jobs[found->second] : nullptr;
    return job != nullptr && !job->name.isEmpty() ? job->name : QStringLiteral("job %1").arg(id);
}

QString ProblemsModel::jobsText(const Problem &p, size_t names) const
{
    if (p.jobIds.empty()) {
        return tr("no running job");
    }
    QStringList shown;
    for (size_t i = 0; i < p.jobIds.size() && i < names; ++i) {
        shown << jobName(p.jobIds[i]);
    }
    QString text = shown.join(QStringLiteral(", "));
    if (p.jobIds.size() > static_cast<size_t>(shown.size())) {
        text += tr(" +%1").arg(p.jobIds.size() - static_cast<size_t>(shown.size()));
    }
    return tr("%1 (%L2 GPUs)").arg(text).arg(p.blastGpus);
}

QString ProblemsModel::entryText(const Problem &p) const
{
    QStringList lines;
    const QString place = placeName(p, m_topology.get());
    if (p.kind == Problem::Kind::Incident) {
        lines << QStringLiteral("%1%2 · %3")
                     .arg(incidentCauseLabel(p),
                         !p.isQuietAlert()                 ? QString()
                             : p.alert->silencedBy.empty() ? tr(" (inhibited)")
                                                           : tr(" (silenced)"),
                         place);
        lines << summary(p);
        if (p.isQuietAlert()) { // its alert, the backend's in Alertmanager: who is on it
            lines << p.quietNote;
        }
        QString evidence = p.incident ? p.incident->evidence : QString();
        if (p.covered > 0) {
            evidence += (evidence.isEmpty() ? QString() : QStringLiteral(" ")) //
                + tr("(%L1 of its GPUs' problems folded in here)").arg(p.covered);
        }
        if (!evidence.isEmpty()) {
            lines << evidence;
        }
        lines << (p.gpusHit == 1 ? tr("1 GPU hit · jobs: %1").arg(jobsText(p, 2))
                                 : tr("%L1 GPUs hit · jobs: %2").arg(p.gpusHit).arg(jobsText(p, 2)));
    } else if (p.kind == Problem::Kind::Alert) {
        // "ALERT · r01-k03-n02 GPU 5", its name and summary, its description, and why it is quiet or the jobs it hits.
        const QString label = !p.isQuietAlert() ? tr("ALERT")
            : p.alert->silencedBy.empty()       ? tr("ALERT (inhibited)")
                                                : tr("ALERT (silenced)");
        lines << QStringLiteral("%1 · %2").arg(label, place);
        lines << summary(p);
        const QString description = p.alert ? p.alert->annotation(QStringLiteral("description")) : QString();
        if (!description.isEmpty() && description != p.text) {
            lines << (description.size() > 240 ? description.left(239) + QStringLiteral("…") : description);
        }
        if (p.isQuietAlert()) {
            lines << p.quietNote;
        } else if (!p.gpus.empty()) {
            lines << tr("jobs: %1").arg(jobsText(p, 2));
        }
    } else {
        lines << place << summary(p);
        // A job's own line (its GPUs folded, its versions drifting) names the job already.
        const uint64_t own = p.foldedJob != 0 ? p.foldedJob : p.driftJob;
        if (!(p.jobIds.size() == 1 && p.jobIds[0] == own)) {
            lines << tr("jobs: %1").arg(jobsText(p, 2));
        }
    }
    return lines.join(QLatin1Char('\n'));
}

QVariant ProblemsModel::data(const QModelIndex &index, int role) const
{
    const Problem *p = index.isValid() ? problemAt(index.row()) : nullptr;
    if (p == nullptr || index.column() < 0 || index.column() >= ColumnCount) {
        return {};
    }
    const QColor severityColour = p->severity == EventSeverity::Info // a rollout under way: blue, not amber
        ? QColor(0x4a, 0x90, 0xd9)
        : p->severity == EventSeverity::Critical ? QColor(0xd9, 0x53, 0x4f) : QColor(0xe0, 0x9a, 0x20);
    if (role == Qt::ForegroundRole && index.column() == SeverityColumn) {
        return severityColour;
    }
    if (role == Qt::DecorationRole && index.column() == EntryColumn) {
        return p->isQuietAlert() ? QColor(0x90, 0x90, 0x90) : severityColour; // someone is on it: grey
    }
    if (role == Qt::ForegroundRole && p->isQuietAlert()) {
        return QColor(0x80, 0x80, 0x80);
    }
    if (role == Qt::BackgroundRole && isSharedIncident(*p)) { // an incident stands out from the lines under it
        QColor tint = severityColour;
        tint.setAlpha(40);
        return tint;
    }
    if (role == Qt::TextAlignmentRole && index.column() == BlastColumn) {
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::TextAlignmentRole && index.column() == EntryColumn) {
        return QVariant::fromValue(Qt::AlignLeft | Qt::AlignTop);
    }
    if (role == Qt::ToolTipRole) {
        switch (index.column()) {
        case EntryColumn: {
            // Everything, whatever the dock's width: the severity, every job's name, the GPUs behind a folded line.
            QString tip = describe(p->severity) + QLatin1Char('\n') + entryText(*p);
            if (p->jobIds.size() > 2) {
                tip += QLatin1Char('\n') + tr("jobs: %1").arg(jobsText(*p, 50));
            }
            if (p->foldedJob != 0 && m_topology) {
                QStringList gpus;
                for (size_t i = 0; i < p->gpus.size() && i < 16; ++i) {
                    Problem one;
                    one.gpu = p->gpus[i];
                    gpus << placeName(one, m_topology.get());
                }
                tip += QLatin1Char('\n')
                    + tr("GPUs: %1%2")
                          .arg(gpus.join(QStringLiteral(", ")),
                              p->gpus.size() > 16 ? tr(" and %1 more").arg(p->gpus.size() - 16) : QString());
            }
            if (!p->text.isEmpty() && p->text != summary(*p) && !p->alert) {
                tip += QLatin1Char('\n') + p->text;
            }
            if (p->alert) { // every label, as Alertmanager holds them, and where its runbook is
                QStringList labels;
                for (const auto &l : p->alert->labels) {
                    labels << QStringLiteral("%1=%2").arg(l.name, l.value);
                }
                tip += QLatin1Char('\n') + tr("labels: %1").arg(labels.join(QStringLiteral(", ")));
                if (const QUrl runbook = runbookUrl(*p->alert); runbook.isValid()) {
                    tip += QLatin1Char('\n') + tr("runbook: %1").arg(runbook.toString());
                }
            }
            return tip;
        }
        case ProblemColumn:
            return p->text;
        case SinceColumn:
            if (p->sinceMs <= 0) {
                return tr("open since a time not known");
            }
            return tr("open since %1")
                .arg(QDateTime::fromMSecsSinceEpoch(p->sinceMs).toString(QStringLiteral("HH:mm:ss")));
        default:
            return {};
        }
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (static_cast<Column>(index.column())) {
    case EntryColumn:
        return entryText(*p);
    case SeverityColumn:
        return describe(p->severity);
    case ProblemColumn:
        return summary(*p);
    case PlaceColumn:
        return placeName(*p, m_topology.get());
    case JobsColumn: {
        QStringList names;
        for (uint64_t id : p->jobIds) {
            names << jobName(id);
        }
        return names.isEmpty() ? QStringLiteral("—") : names.join(QStringLiteral(", "));
    }
    case BlastColumn:
        return QLocale().toString(p->blastGpus);
    case SinceColumn: {
        if (p->sinceMs <= 0) {
            return QStringLiteral("—"); // not known (a drift found in the topology, not in an event)
        }
        const qint64 minutes = std::max<qint64>(0, (m_nowMs - p->sinceMs) / 60000);
        return minutes < 60 ? tr("%1 min").arg(minutes) : tr("%1 h %2 min").arg(minutes / 60).arg(minutes % 60);
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
        = { "problem", "open for", "severity", "where", "what", "jobs hit", "GPUs in them" };
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

} // namespace fleetscope
