// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/problems.h"

#include <QAbstractTableModel>

#include <unordered_map>

namespace fleetscope {

// The ranked problems as a table, filtered by kind. The dock shows two columns: the entry, a few lines that wrap in a
// narrow dock (where, what, an incident's evidence, the jobs it hits), its severity as a swatch; and how long it has
// been open. The other columns (severity, place, problem, jobs, GPUs of those jobs) say the same one fact each, for
// tests and for a wider table.
class ProblemsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        EntryColumn,
        SinceColumn,
        SeverityColumn,
        PlaceColumn,
        ProblemColumn,
        JobsColumn,
        BlastColumn,
        ColumnCount
    };

    explicit ProblemsModel(QObject *parent = nullptr);

    // Replaces the problems (ranked), as of nowMs, with the names of their places and jobs.
    void setProblems(std::vector<Problem> problems, TopologyPtr topology, JobsPtr jobs, int64_t nowMs);
    // Shows only problems of these kinds (all when empty).
    void setKindFilter(std::vector<Problem::Kind> kinds);
    const Problem *problemAt(int row) const;
    int rowOf(const Problem::Key &key) const;
    // Problems shown, and all of them before the filter.
    int shownCount() const { return static_cast<int>(m_shown.size()); }
    int totalCount() const { return static_cast<int>(m_all.size()); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The problem's own words for people: "XID burst: 79 (GPU has fallen off the bus) x3, 48 ...".
    static QString summary(const Problem &problem);
    // "r07-k03-n02 GPU 5", or the node's hostname.
    static QString placeName(const Problem &problem, const Topology *topology);
    // The entry's lines: "COOLING · cooling unit r05-crah1", the headline, the evidence, "jobs: a, b +4 · 3,072 GPUs".
    QString entryText(const Problem &problem) const;

    // A job's name by its id ("job 4711" when it is not listed).
    QString jobName(uint64_t id) const;

private:
    void refilter();
    // "finetune-11, eval-suite-1 +4 (3,072 GPUs)": at most names jobs by name.
    QString jobsText(const Problem &problem, size_t names) const;

    std::vector<Problem> m_all;
    std::vector<const Problem *> m_shown;
    std::vector<Problem::Kind> m_kinds;
    TopologyPtr m_topology;
    JobsPtr m_jobs;
    // A job's index in m_jobs by its id: a cell's job names are looked up, not searched for (a fleet of a million
    // GPUs runs thousands of jobs, and sizing a column reads hundreds of cells).
    std::unordered_map<uint64_t, std::size_t> m_jobIndex;
    int64_t m_nowMs = 0;
};

} // namespace fleetscope
