// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to client/ (and its tests): turns wire messages into the plain model, checking everything.

#include "client/summaryclient.h"
#include "model/fleetmodel.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fleetscope {

namespace pb = fleetscope::telemetry::v1;

// The most GPUs a topology may claim (the contract's limit), so a garbage count cannot make us allocate gigabytes.
constexpr uint32_t maxGpus = 1U << 20U;
// A floor plan's bounds: a side of at most 2^20 cells, and at most this many cells per GPU (plus 2^20 for small
// fleets). A real floor needs about 1.5 (aisles included).
constexpr uint64_t maxFloorPlanSide = 1U << 20U;
constexpr uint64_t maxFloorPlanCellsPerGpu = 16;

// Builds a Topology from all the parts of one GetTopology stream. Returns null and sets error when the parts do not
// form a consistent fleet (ranges not contiguous, indices out of range, parts missing).
TopologyPtr decodeTopology(const std::vector<pb::TopologyPart> &parts, QString *error);

// What one GetTopology stream may bring, from what its header's gpu_count can need: the stream is read for up to 20 s,
// and without these a backend could send parts until memory ran out before decodeTopology saw any of them. Nodes hold
// at least one GPU each, and every part after the first holds a node (the backend's encoder puts 4,096 in each), so
// a stream of N GPUs has at most N nodes and N + 1 parts. Racks and rows stand on a floor plan of bounded cells and
// sides (each rack in a cell of its own). Bytes: a simulated fleet's node with its GPUs' UUIDs and serials is about
// 500 bytes for 8 GPUs, about 70 a GPU, and names past their cut (wiretext.h) are legal but useless: 256 bytes a GPU,
// and 16 MiB for any fleet, leave room for long names on small fleets and are about 260 MB at a million GPUs.
constexpr uint64_t maxTopologyBytesPerGpu = 256;
constexpr uint64_t minTopologyBytesLimit = 16U << 20U;
constexpr uint64_t maxTopologyBytes(uint32_t gpuCount)
{
    return minTopologyBytesLimit + maxTopologyBytesPerGpu * gpuCount;
}

// Gathers the parts of one GetTopology stream as they are read, checking each against the bounds above as it comes
// (the first part's gpu_count fixes them), so that a stream past them is cut at once; finish() then decodes them.
class TopologyCollector
{
public:
    // Takes the next part as read. False, with *error set, when it passes what the header allows (or comes out of
    // order, or the first part is no header): the stream is to be cut, and finish() refuses the topology.
    bool add(pb::TopologyPart &&part, QString *error);
    // decodeTopology over the parts taken; null with *error set when a part was refused or they do not form a fleet.
    TopologyPtr finish(QString *error);

    size_t parts() const { return m_parts.size(); }
    uint64_t bytes() const { return m_bytes; }

private:
    std::vector<pb::TopologyPart> m_parts;
    QString m_refused; // why a part was refused; nothing is taken after one
    uint32_t m_gpuCount = 0; // the header's
    uint32_t m_partCount = 0; // the header's
    uint64_t m_generation = 0; // the header's
    uint64_t m_bytes = 0;
    uint64_t m_nodes = 0;
    uint64_t m_nodeGpus = 0; // the GPUs the nodes so far hold
    uint64_t m_racks = 0;
    uint64_t m_rows = 0;
};

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

// Jobs against the topology they were listed for. Every job's GPUs are checked before any is expanded, running and
// ended jobs alike: inside the topology, ascending, none twice (runs: not empty, each past the one before); and its
// times: none before the epoch, and an end, when there is one, not before the start. A job
// failing that, or a running job holding a GPU that an earlier running job holds, is dropped and described in *error
// (the rest are kept). The GPU entries looked at, kept or not, stay within maxJobGpuEntries: running jobs come first,
// then the ended ones newest first (the wire lists them by start time); those past the bound are left out, counted
// in endedJobsLeftOut or runningJobsLeftOut and said in *error, which describes at most maxJobProblemsSaid dropped
// jobs one by one.
JobsPtr decodeJobs(const pb::ListJobsResponse &response, const Topology &topology, QString *error);

// GetSummary's answer in plain types, checked by validateSummary (what was dropped is in problems; at most
// maxRepeatOffenders repeat offenders and maxOffenders offenders are copied, and no more rows, racks or jobs than the
// fleet rollup's GPUs, up to maxGpus). *failure is set when nothing of it can be shown. The request's id and range are
// left to the caller.
std::shared_ptr<Summary> decodeSummary(const pb::Summary &answer, QString *failure);

// Planes of a frame allocated for the whole fleet at its first part: up to this many values (64 MiB, a million GPUs
// at 16 metrics). A frame of more (the backend's default set is the backend's choice) grows as its parts bring values,
// so that what is allocated is never more than what arrived (twice, for 16-bit planes), whatever the parts claim.
constexpr uint64_t maxPlaneValuesUpFront = uint64_t { 16 } * maxGpus;

// Reassembles the parts of a frame into one Frame for a given topology. Feed parts in the order received; a part
// that does not fit (wrong plane length, another GPU count, parts out of order, unknown encoding, planes other than
// those subscribed) drops the frame being assembled and reports why, and the next frame starts clean.
//
// Every part covers at least one GPU (so a frame has at most as many parts as the fleet has GPUs) and carries the same
// planes, each once: nothing a part claims is multiplied by the fleet's size unchecked (a part of no GPU with a million
// empty planes passed every check once, and its first part sized a million planes to the fleet: tens of GB from 4 MB
// on the wire).
class FrameAssembler
{
public:
    // subscribed: the metric ids the subscription named (repeats count once); every part carries exactly these planes,
    // in any order. Empty: the backend's default set, which the console does not know; then the first part's planes
    // (distinct ids a view can carry, at most maxCatalogueMetrics of them) are what the frame's other parts carry.
    explicit FrameAssembler(TopologyPtr topology, std::vector<std::string> subscribed = {});

    struct Result
    {
        FramePtr frame; // set when this part completed a frame
        QString error; // set when this part was rejected
    };
    Result add(const pb::FramePart &part);

private:
    QString check(const pb::FramePart &part) const;
    QString checkPlanes(const pb::FramePart &part) const;
    void reset();

    TopologyPtr m_topology;
    std::vector<std::string> m_subscribed; // distinct; empty: the default set
    std::shared_ptr<Frame> m_building;
    std::vector<std::string> m_planeIds; // of the frame being built, in its planes' order, as the wire spells them
    uint32_t m_nextPart = 0;
    uint32_t m_partCount = 0; // of the frame being built
    uint32_t m_covered = 0;
};

} // namespace fleetscope
