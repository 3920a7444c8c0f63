// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framepoller.h"
#include "core/metriccatalog.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fleetscope::backend {

// A job's own account, in plain types (GetJob's JobReport, the contract's words: docs/JOBS.md). Kept by the fleet's
// job accounting (analytics/jobaccounting.h) from every frame the source publishes; served by the telemetry service.

// What a job is doing, from its GPUs' telemetry.
enum class JobPhase : uint8_t {
    Unwatched, // before the backend saw it, or no GPU of it reported
    Compute, // busy together, all-reduce dips included
    Checkpoint, // every GPU idle together, briefly (up to the checkpoint limit)
    Stall, // idle past a checkpoint's length, or held by GPUs offline, impaired or cut off
    Restart, // starting again after a stall that lost GPUs, until they compute together again
    Ended,
};

// Where a job's GPU-time goes that is not computing.
enum class LossCause : uint8_t {
    Unspecified, // a summary's remainder ("the rest")
    Incident, // stalled or slowed while an incident hit its GPUs
    Straggler, // a GPU slower than its peers set the pace
    Restart, // work since the last checkpoint redone, and the restart itself
    Checkpoint,
    Stall, // stalled with no incident to blame
};

struct GoodputLoss
{
    LossCause cause = LossCause::Unspecified;
    double gpuHours = 0;
    uint64_t incidentId = 0; // Incident: the incident
    int64_t domain = -1; // Incident: the domain it names; -1 when none
    int64_t gpu = -1; // Straggler: the GPU; Stall, Restart: the GPU whose fault stalled it
    int64_t node = -1; // Stall, Restart: the node that went down
    uint64_t jobId = 0; // a job's: its job; a summary's: 0
    uint32_t jobs = 0; // a summary's: the jobs it cost
    std::string what; // for people
};

struct JobPhaseSpan
{
    JobPhase phase = JobPhase::Unwatched;
    int64_t fromMs = 0;
    int64_t toMs = 0;
    uint64_t incidentId = 0; // a stall's incident, 0 when none
    std::string why; // a stall's or restart's, for people
};

// The job's GPUs' utilisation (%) at one time: 10th, 50th and 90th percentile of those reporting.
struct JobBandPoint
{
    int64_t timeMs = 0;
    float p10 = 0;
    float median = 0;
    float p90 = 0;
    uint32_t reporting = 0;
};

struct Straggler
{
    uint32_t gpu = 0;
    float score = 0; // 1 = the threshold; the ranking's key
    MetricId metric = MetricId::SmClock; // SmClock, GpuUtil, Power or GpuTemp
    float value = 0; // its mean over the window
    float jobMedian = 0; // the job's median over the same frames
    float holdBack = 0; // the share of the job's pace it costs now, 0..1
    int64_t sinceMs = 0;
    double gpuHoursLost = 0;
    std::string reason;
};

struct JobReport
{
    JobInfo job;
    int64_t asOfMs = 0;
    int64_t watchedFromMs = 0;
    double gpuHours = 0;
    double productiveGpuHours = 0;
    double goodput = 0; // 0..1
    std::vector<GoodputLoss> losses; // most first, at most maxLosses
    std::vector<Straggler> stragglers; // most holding it back first, at most maxStragglers
    std::vector<JobPhaseSpan> phases; // oldest first, at most maxPhaseSpans
    std::vector<JobBandPoint> band; // oldest first, at most maxBandPoints
    JobPhase phase = JobPhase::Unwatched;
    double stepSeconds = 0; // period of the all-reduce dips, 0 when none seen
    double allReduceShare = 0; // of compute time, 0..1
    uint32_t restarts = 0;
    double checkpointLimitSeconds = 0;

    static constexpr size_t maxLosses = 64;
    static constexpr size_t maxStragglers = 64;
    static constexpr size_t maxPhaseSpans = 4096;
    static constexpr size_t maxBandPoints = 1440;
};

// A job's account in brief, for ListJobs.
struct JobBrief
{
    uint64_t id = 0;
    double goodput = 0;
    JobPhase phase = JobPhase::Unwatched;
    uint32_t stragglerCount = 0;
};

// Jobs' goodput over a time range, for GetSummary.
struct GoodputSummary
{
    uint32_t jobs = 0; // jobs that ran in the range; 0: no goodput to say
    double jobGpuHours = 0;
    double productiveGpuHours = 0;
    std::vector<GoodputLoss> losses; // summed over jobs by cause and subject, most first, at most maxLosses
    static constexpr size_t maxLosses = 100;
};

// What the service asks of the fleet's job accounting. Thread-safe: called from any number of gRPC threads while the
// source's ticker updates it.
class JobAccounts
{
public:
    virtual ~JobAccounts() = default;
    // The account of the job with that id (or, with id 0, that name: the running one first, else the newest ended);
    // false when none is held.
    virtual bool report(uint64_t id, const std::string &name, JobReport *out) const = 0;
    // Every job held, in brief.
    virtual std::vector<JobBrief> briefs() const = 0;
    // The jobs' goodput and losses within [fromMs, toMs].
    virtual GoodputSummary between(int64_t fromMs, int64_t toMs) const = 0;
};

} // namespace fleetscope::backend
