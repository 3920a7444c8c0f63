// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/jobreport.h"

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace fleetscope {

// One GetSummary rollup: the fleet, a row, a rack or a running job.
struct SummaryRollup
{
    QString name;
    uint32_t gpuCount = 0;
    double meanUtilisation = 0; // percent, over online GPU samples
    double busyGpuHours = 0;
    double idleGpuHours = 0;
    uint32_t unhealthyGpus = 0; // warning, critical or offline at the end of the range
    double availability = 0; // fraction of GPU-time online, 0..1
    uint64_t failures = 0; // XID and double-bit ECC events
};

struct SummaryOffender
{
    uint32_t gpu = 0; // dense index
    uint64_t failures = 0;
};

// A GPU's lasting repeat-offender score and its parts (decayed counts, 7-day half-life: docs/OFFENDERS.md).
struct SummaryRepeatOffender
{
    uint32_t gpu = 0; // dense index
    double score = 0;
    double xids = 0; // every XID, serious ones too
    double seriousXids = 0;
    double eccDoubleBit = 0;
    double remappedRows = 0; // for uncorrectable errors
    double remappedRowsCorrectable = 0;
    double pcieReplays = 0;
    double throttleHours = 0;
};

// The most repeat offenders a summary keeps (the backend lists at most as many), and the most offenders: a request's
// top_offenders is at most as many too.
constexpr size_t maxRepeatOffenders = 1000;
constexpr size_t maxOffenders = 1000;
// The most problems a summary describes one by one; the rest are counted in a last line. A 16 MiB answer can hold
// millions of bad entries of a few bytes each, each a line of a hundred characters once described.
constexpr int maxSummaryProblems = 50;

// Capacity lost in schedulable units (an HGX node, an NVL72 rack) over the summary's range.
struct SummaryUnitHours
{
    double lostGpuHours = 0; // all GPUs of units not fully healthy, integrated over time
    double strandedGpuHours = 0; // of those, on the units' healthy GPUs
    uint32_t units = 0; // 0: the backend did not say (an older one)
    uint32_t healthyUnitsAtEnd = 0;
};

// GetSummary's answer in plain types. The backend gives aggregates over one range only, no time series.
struct Summary
{
    quint64 requestId = 0;
    int64_t requestedFromMs = 0;
    int64_t requestedToMs = 0;
    int64_t fromMs = 0; // the held range actually covered
    int64_t toMs = 0;
    uint32_t frames = 0;
    SummaryRollup fleet;
    std::vector<SummaryRollup> rows;
    std::vector<SummaryRollup> racks;
    std::vector<SummaryRollup> jobs;
    std::vector<SummaryOffender> offenders; // most failures first
    uint64_t totalFailures = 0;
    std::vector<SummaryRepeatOffender> repeatOffenders; // highest lasting score first, as of the range's end
    double topPercentFailureShare = 0; // of the decayed failures, the share the worst 1 % of GPUs carry, 0..1
    SummaryUnitHours unitHours;
    // Jobs' goodput over the range (docs/JOBS.md); jobsAccounted 0: none said (no job ran, or an older backend).
    uint32_t jobsAccounted = 0;
    double goodput = 0; // 0..1
    double jobGpuHours = 0;
    double productiveGpuHours = 0;
    std::vector<GoodputLoss> losses; // GPU-hours lost by cause and subject, summed over jobs, most first
    QStringList problems; // parts dropped as malformed, for people
};
using SummaryPtr = std::shared_ptr<const Summary>;

} // namespace fleetscope

Q_DECLARE_METATYPE(fleetscope::SummaryPtr)
