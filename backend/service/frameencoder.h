// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "common/incidentlimits.h"
#include "core/fleetshape.h"
#include "core/frame.h"
#include "core/framepoller.h"
#include "core/metriccatalog.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <functional>
#include <vector>

namespace fleetscope::backend {

namespace pb = fleetscope::telemetry::v1;

// The contract's limit on any one message; the server is built to refuse sending more.
constexpr size_t maxMessageBytes = 4U << 20U;
// At most this many GPUs per FramePart: 32,768 x (27 metrics x 4 bytes + 1 health byte) is 3.4 MiB with every metric
// of the catalogue (a subscriber's metrics are distinct), under the 4 MiB limit, with room for two more metrics; the
// default set's four make 0.8 MiB.
constexpr uint32_t maxGpusPerFramePart = 32768;
// Nodes per TopologyPart; a node with its GPUs' UUIDs and serials is about 500 bytes on the wire, so a part stays
// near 2 MiB.
constexpr uint32_t maxNodesPerTopologyPart = 4096;

std::vector<pb::FramePart> encodeFrame(const Frame &frame, const std::vector<MetricId> &metrics,
    uint64_t topologyGeneration, uint32_t maxGpusPerPart = maxGpusPerFramePart);

std::vector<pb::TopologyPart> encodeTopology(
    const FleetShape &shape, uint64_t generation, uint32_t maxNodesPerPart = maxNodesPerTopologyPart);

// A QueryRangePart of `rows` rows of `columns` GPUs takes at most this many bytes on the wire: the metric id and
// field headers, its GPU list (at most 5 bytes an index) and per row the values (4 bytes a GPU) and two times (at
// most 10 bytes each).
constexpr size_t rangePartBytesAtMost(size_t rows, size_t columns)
{
    return 128 + columns * 5 + rows * (columns * 4 + 20);
}
// Rows per QueryRangePart of `columns` GPUs: as many as keep the part near 2 MiB, at least one.
size_t rangeRowsPerPart(size_t columns);
// A QueryRangePart's header: the metric and the GPUs of its columns.
pb::QueryRangePart rangePartHeader(MetricId metric, const std::vector<uint32_t> &gpus);

// ListJobs' answer. Each job's GPUs go as a list or as runs, whichever is smaller on the wire; the jobs keep the
// source's order (running first, then ended, each by start time). Jobs that would take the answer past maxBytes are
// left out and counted in it: ended ones first, the oldest first; running ones only when the running alone pass it,
// the newest first.
// An incident event's incident; its GPUs and jobs cut to what a console needs to draw and name them (gpu_count and
// job_count stay true): common/incidentlimits.h.
using fleetscope::maxIncidentJobs;
using fleetscope::maxIncidentRuns;
void encodeIncident(const Incident &incident, pb::Incident *out);

// account, when given, adds to each job what the backend's job accounting says of it (goodput, phase) before the
// answer is measured.
pb::ListJobsResponse encodeJobs(const std::vector<JobInfo> &jobs, size_t maxBytes = maxMessageBytes - (64U << 10U),
    const std::function<void(const JobInfo &, pb::Job *)> &account = {});
// One job as ListJobs gives it (GetJob's JobReport.job too).
void encodeJob(const JobInfo &job, pb::Job *out);

// The catalogue; a simulated fleet of GPUs that draw more than the catalogue's range suggests (GB200, 1,200 W)
// widens its power range.
void fillMetricCatalog(pb::ListMetricsResponse *response, const FleetShape *shape = nullptr);

} // namespace fleetscope::backend
