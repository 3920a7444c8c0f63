// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace fleetscope::backend {

// Ground truth for job accounting, for tests and benchmarks only (never served): where each job's GPU-time went, as
// the simulator knows it, accumulated each step with the step's length. A job's GPU-seconds are productive (computing
// at full pace, work later redone excluded) or lost: to checkpoints, to stalls (and what stalled it), to restarts
// (loading the checkpoint, and the work since it redone) and to stragglers (the pace a slow GPU cost, and which GPU).
// productive + every loss == GPU-time, per job. Jobs that ended within the last hour are kept, as the simulator keeps
// them. And every straggler episode: a slow GPU within one job, from when it slowed (or joined the job) to its repair
// (or the job's end).
class JobTruth
{
public:
    // What stalled a job.
    enum class StallCause : uint8_t {
        NodeDown, // a node of the job went down (node: which)
        GpuImpaired, // a serious error impaired a GPU (gpu: which)
        LinkDown, // a GPU's rail link went down (gpu: which)
        Domain, // a shared domain's fault: a leaf switch down, a PDU trip (domain: FleetShape::domains' index)
    };
    struct StallLoss
    {
        StallCause cause = StallCause::NodeDown;
        int64_t gpu = -1;
        int64_t node = -1;
        int64_t domain = -1;
        double gpuSeconds = 0;
    };
    struct StragglerLoss
    {
        uint32_t gpu = 0;
        double gpuSeconds = 0;
    };
    struct Account
    {
        uint64_t jobId = 0;
        uint32_t gpuCount = 0;
        double startSeconds = 0;
        double endSeconds = std::numeric_limits<double>::infinity(); // infinity while it runs
        double gpuSeconds = 0; // its GPUs' time since the simulator began accounting it
        double productive = 0;
        double checkpoint = 0;
        double stall = 0; // the sum of stalls
        double restart = 0; // restartLoading + rework
        double restartLoading = 0;
        double rework = 0;
        double straggler = 0; // the sum of stragglers
        std::vector<StallLoss> stalls; // one per (cause, gpu, node, domain), in order of first loss
        std::vector<StragglerLoss> stragglers; // one per GPU, in order of first loss
        uint32_t restarts = 0;
        double sinceCheckpoint = 0; // productive GPU-seconds since the last completed checkpoint (a restart's rework)

        double lost() const { return checkpoint + stall + restart + straggler; }
        double goodput() const { return gpuSeconds > 0 ? productive / gpuSeconds : 0; }
    };

    enum class StragglerKind : uint8_t { Clock, Link };
    struct Episode
    {
        uint32_t gpu = 0;
        uint64_t jobId = 0;
        double startSeconds = 0;
        double endSeconds = std::numeric_limits<double>::infinity(); // infinity while it lasts
        float drop = 0; // the share of the pace it costs, 0..1
        StragglerKind kind = StragglerKind::Clock;
    };

    // What a job did in one step.
    enum class State : uint8_t { Compute, Checkpoint, Stall, Restart };
    struct Step
    {
        State state = State::Compute;
        float pace = 1; // Compute: share of full pace, 0..1
        int64_t slowGpu = -1; // Compute below full pace: the GPU setting it
        StallLoss stall; // Stall: what stalled it (gpuSeconds unused)
    };

    // A job's step of dt seconds ending at now.
    void record(uint64_t jobId, uint32_t gpuCount, double startSeconds, double dt, const Step &step);
    // A checkpoint completed: a later restart redoes only what follows.
    void checkpointed(uint64_t jobId);
    // The job restarts: its productive work since the last checkpoint becomes rework.
    void restarted(uint64_t jobId);
    void ended(uint64_t jobId, double now);
    // A slow GPU within a job this step (called each step for each); episodes not seen in a step end then.
    void slowGpu(uint32_t gpu, uint64_t jobId, float drop, StragglerKind kind, double now);
    // Ends the episodes not seen since the last call, and forgets jobs ended over an hour ago.
    void endStep(double now);

    // Running jobs and those ended within the hour, by id.
    const std::map<uint64_t, Account> &accounts() const { return m_accounts; }
    const Account *account(uint64_t jobId) const;
    // Every episode so far, in order of start.
    const std::vector<Episode> &episodes() const { return m_episodes; }

private:
    struct Open
    {
        size_t episode;
        bool seen;
    };
    static uint64_t openKey(uint32_t gpu, StragglerKind kind) { return (uint64_t(gpu) << 1U) | uint64_t(kind); }

    std::map<uint64_t, Account> m_accounts;
    std::vector<Episode> m_episodes;
    std::map<uint64_t, Open> m_open; // per (gpu, kind): its open episode
};

} // namespace fleetscope::backend
