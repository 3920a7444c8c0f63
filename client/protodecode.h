// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to client/ (and its tests): turns wire messages into the plain model, checking everything.

#include "client/summaryclient.h"
#include "model/fleetmodel.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <memory>
#include <optional>
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

// Jobs against the topology they were listed for. A job naming a GPU outside the topology, or a GPU twice, or a GPU
// that another running job already holds, is dropped and described in *error (the rest are kept).
JobsPtr decodeJobs(const pb::ListJobsResponse &response, const Topology &topology, QString *error);

// GetSummary's answer in plain types, checked by validateSummary (what was dropped is in problems; at most
// maxRepeatOffenders repeat offenders are copied). *failure is set when nothing of it can be shown. The request's id
// and range are left to the caller.
std::shared_ptr<Summary> decodeSummary(const pb::Summary &answer, QString *failure);

// Reassembles the parts of a frame into one Frame for a given topology. Feed parts in the order received; a part
// that does not fit (wrong plane length, another GPU count, parts out of order, unknown encoding) drops the frame
// being assembled and reports why, and the next frame starts clean.
class FrameAssembler
{
public:
    explicit FrameAssembler(TopologyPtr topology);

    struct Result
    {
        FramePtr frame; // set when this part completed a frame
        QString error; // set when this part was rejected
    };
    Result add(const pb::FramePart &part);

private:
    QString check(const pb::FramePart &part) const;

    TopologyPtr m_topology;
    std::shared_ptr<Frame> m_building;
    uint32_t m_nextPart = 0;
    uint32_t m_covered = 0;
};

} // namespace fleetscope
