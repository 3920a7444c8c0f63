// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/jobphase.h"

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace fleetscope {

// A job's own account as GetJob gives it (docs/JOBS.md), in plain types, every index checked against the topology
// it was decoded for (client/jobdecode.h).

// Where a job's GPU-time goes that is not computing.
enum class LossCause : uint8_t {
    Unspecified, // a summary's remainder
    Incident,
    Straggler,
    Restart,
    Checkpoint,
    Stall,
};

struct GoodputLoss
{
    LossCause cause = LossCause::Unspecified;
    double gpuHours = 0;
    uint64_t incidentId = 0; // Incident: the incident (its events' Incident id), 0 otherwise
    int64_t domain = -1; // Incident: index into the topology's domains, -1 when none
    int64_t gpu = -1; // Straggler: the GPU; Stall, Restart: the GPU whose fault stalled it; -1 when none
    int64_t node = -1; // Stall, Restart: the node that went down; -1 when none
    uint64_t jobId = 0; // a summary's: 0
    uint32_t jobs = 0; // a summary's: the jobs it cost
    QString what; // for people
};

struct JobPhaseSpan
{
    JobPhase phase = JobPhase::Unwatched;
    int64_t fromMs = 0;
    int64_t toMs = 0;
    uint64_t incidentId = 0;
    QString why;
};

// The job's GPUs' utilisation (%) at one time.
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
    uint32_t gpu = 0; // dense index, < the topology's GPU count
    float score = 0; // 1 = the threshold
    QString metricId; // "sm_clock", "gpu_util", "power" or "gpu_temp"
    float value = 0;
    float jobMedian = 0;
    float holdBack = 0; // 0..1
    int64_t sinceMs = 0;
    double gpuHoursLost = 0;
    QString reason;
};

struct JobReport
{
    quint64 requestId = 0;
    uint64_t topologyGeneration = 0; // the topology its indices were checked against
    Job job;
    int64_t asOfMs = 0;
    int64_t watchedFromMs = 0;
    double gpuHours = 0;
    double productiveGpuHours = 0;
    double goodput = 0; // 0..1
    std::vector<GoodputLoss> losses; // most first
    std::vector<Straggler> stragglers; // most holding the job back first
    std::vector<JobPhaseSpan> phases; // oldest first
    std::vector<JobBandPoint> band; // oldest first
    JobPhase phase = JobPhase::Unwatched;
    double stepSeconds = 0;
    double allReduceShare = 0;
    uint32_t restarts = 0;
    double checkpointLimitSeconds = 0;
    QStringList problems; // parts dropped as malformed, for people

    static constexpr size_t maxLosses = 64;
    static constexpr size_t maxStragglers = 64;
    static constexpr size_t maxPhaseSpans = 4096;
    static constexpr size_t maxBandPoints = 1440;
};
using JobReportPtr = std::shared_ptr<const JobReport>;

} // namespace fleetscope

Q_DECLARE_METATYPE(fleetscope::JobReportPtr)
