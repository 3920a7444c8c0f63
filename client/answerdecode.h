// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to client/ (and its tests): the answers besides topology and frames, checked against the topology they
// were asked for: the metric catalogue (ListMetrics), jobs (ListJobs) and summaries (GetSummary).

#include "client/summaryclient.h"
#include "client/topologydecode.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

namespace fleetscope {

MetricInfo decodeMetricInfo(const pb::MetricInfo &info);

// The most metrics a catalogue may list, and the longest name, unit and DCGM field kept of one (longer ones are cut).
constexpr int maxCatalogueMetrics = 256;
constexpr int maxMetricNameLength = 80;
constexpr int maxMetricUnitLength = 16;
constexpr int maxMetricFieldLength = 64;

// The backend's metric catalogue (ListMetrics), checked entry by entry: an entry whose id is not an identifier a view
// can carry (ViewState::isIdentifier), repeats an earlier id, or has a range that is not finite is dropped, as are the
// entries past maxCatalogueMetrics; a colour map that is not an identifier is forgotten (the console's default), and
// names, units and fields are cut to their limits with control characters replaced. Each drop is one line in problems.
std::vector<MetricInfo> decodeMetricCatalogue(const pb::ListMetricsResponse &response, QStringList *problems);

// The most GPU entries a job list may hold, all its jobs together. Running jobs hold a GPU each at most once, so
// they hold at most the fleet; ended ones (the last hour's) may each have held a GPU that a later one holds, and a
// backend's answer of 4 MiB can name a GPU thousands of times over in runs (260,000 ended jobs each run over the
// whole fleet once made billions of entries, the session stuck for good). Eight times the fleet is eight jobs of the
// last hour on every GPU; small fleets may have up to 2^18 entries (1 MiB of indices), as many short jobs as a busy
// small fleet runs in an hour.
constexpr uint64_t maxJobGpuEntriesPerGpu = 8;
constexpr uint64_t minJobGpuEntriesLimit = 1U << 18U;
constexpr uint64_t maxJobGpuEntries(uint32_t gpuCount)
{
    return std::max(minJobGpuEntriesLimit, maxJobGpuEntriesPerGpu * gpuCount);
}
// The most dropped jobs described one by one in decodeJobs' error (the rest are counted).
constexpr int maxJobProblemsSaid = 10;

// One job as a list gives it, checked against a fleet of gpuCount GPUs as decodeJobs checks each (its GPUs and times;
// not against other jobs) and expanded: nullopt with *problem when that fails; the job without its account (goodput
// -1) with *problem when only the account does not hold together (a goodput outside 0..1, more stragglers than GPUs).
std::optional<Job> decodeJob(const pb::Job &job, uint32_t gpuCount, QString *problem);

// Jobs against the topology they were listed for. Every job's GPUs are checked before any is expanded, running and
// ended jobs alike: inside the topology, ascending, none twice (runs: not empty, each past the one before); and its
// times: none before the epoch, and an end, when there is one, not before the start. A job
// failing that, or a running job holding a GPU that an earlier running job holds, is dropped and described in *error
// (the rest are kept). The GPU entries looked at, kept or not, stay within maxJobGpuEntries: running jobs come first,
// then the ended ones newest first (the wire lists them by start time); those past the bound are left out, counted
// in endedJobsLeftOut or runningJobsLeftOut and said in *error, which describes at most maxJobProblemsSaid dropped
// jobs one by one. A job whose account in brief does not hold together (decodeJob) is kept without it, counted in
// *error.
JobsPtr decodeJobs(const pb::ListJobsResponse &response, const Topology &topology, QString *error);

// GetSummary's answer in plain types, checked by validateSummary (what was dropped is in problems; at most
// maxRepeatOffenders repeat offenders and maxOffenders offenders are copied, and no more rows, racks or jobs than the
// fleet rollup's GPUs, up to maxGpus; at most maxSummaryLosses losses, each as decodeLoss checks it within the fleet
// rollup's GPUs; the jobs' figures zeroed when a goodput is outside 0..1 or the hours are not finite, negative,
// productive past all or past the fleet's over the range). *failure is set when nothing of it can be shown. The
// request's id and range are left to the caller.
std::shared_ptr<Summary> decodeSummary(const pb::Summary &answer, QString *failure);

} // namespace fleetscope
