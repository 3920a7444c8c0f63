// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/place.h"

#include "model/fleetmodel.h"

#include <QMetaType>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace fleetscope {

struct SearchResult
{
    enum class Kind { Row, Rack, Node, Gpu, Job };

    Kind kind = Kind::Gpu;
    uint64_t id = 0; // the dense row, rack, node or GPU index; for a job, the job's id
    QString text; // what matched: hostname, serial, "GPU-…" UUID, "job 4711 name", row or rack name
    QString detail; // where it is, e.g. "GPU 3 of r01-k02-n05" or "alice, 512 GPUs, running"

    bool operator==(const SearchResult &other) const
    {
        return kind == other.kind && id == other.id && text == other.text && detail == other.detail;
    }
    // The place a row, rack, node or GPU result names; none for a job.
    std::optional<Place> place() const;
};

// Finds rows, racks, nodes, GPUs and jobs by what an engineer pastes from a ticket: a hostname, a GPU serial or
// UUID (with or without "GPU-", any case), a job id or name, a rack or row name. Built once per topology
// generation (at a million GPUs in well under a second; a worker thread may build it), refreshed cheaply when the
// jobs change; a copy shares the topology's index. Keys are kept lower-cased in sorted tables, so a prefix is a
// binary search; only names (hosts, racks, rows, jobs) are also searched inside, by a linear scan of packed text.
// Immutable once built apart from setJobs(), so one instance may be read from several threads.
class FleetSearch
{
public:
    struct Table;

    FleetSearch() = default;
    explicit FleetSearch(TopologyPtr topology, JobsPtr jobs = {});

    // Jobs of another generation than the topology are ignored.
    void setJobs(JobsPtr jobs);

    const TopologyPtr &topology() const { return m_topology; }
    const JobsPtr &jobs() const { return m_jobs; }

    // At most limit results, best first: exact matches, then prefix matches (rows, racks, nodes, jobs, then GPUs,
    // each in key order), then names that contain the text elsewhere (in fleet order). Blanks around the text are
    // ignored; case is ignored.
    std::vector<SearchResult> find(const QString &text, int limit) const;

private:
    SearchResult result(SearchResult::Kind kind, uint32_t target, bool byUuid) const;

    TopologyPtr m_topology;
    JobsPtr m_jobs;
    std::shared_ptr<const std::vector<Table>> m_topologyTables; // rows, racks, nodes, serials
    std::shared_ptr<const std::vector<uint32_t>> m_uuidOrder; // GPUs with a UUID, by UUID
    std::shared_ptr<const std::vector<Table>> m_jobTables; // job ids, job names
};

} // namespace fleetscope

Q_DECLARE_METATYPE(fleetscope::SearchResult)
