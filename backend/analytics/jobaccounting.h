// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "core/frame.h"
#include "core/framepoller.h"
#include "core/jobaccount.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace fleetscope::backend {

class JobTrack;
class JobLedger;
struct FleetNames;
struct HeldIncident;

// The fleet's job accounting (docs/JOBS.md): from every frame judged, each running job's phase (compute with its
// all-reduce dips, checkpoint, stall, restart), its stragglers ranked, its utilisation band, and where its GPU-time
// went (productive, or lost per cause and subject); and an hourly ledger of the fleet's jobs over the last 8 days for
// GetSummary. FleetAnalytics owns it and feeds it after the incident folder, so a frame's incident events are among
// those it is handed. Threads: account() from the source's ticker only; report(), briefs() and between() from any
// thread at the same time; one mutex guards everything below it.
class JobAccounting final : public JobAccounts
{
public:
    // Idle together longer than this is a stall, not a checkpoint: a checkpoint of a large model to parallel storage
    // takes tens of seconds (the simulator's 45 s); twice the longest one plausible leaves room without hiding a hang.
    static constexpr double checkpointLimitSeconds = 120;
    // An ended job's account is held this long after its end (as ListJobs holds it), then dropped.
    static constexpr int64_t endedHeldMs = 3600 * 1000;

    explicit JobAccounting(const FleetShape &shape);
    ~JobAccounting() override;
    JobAccounting(const JobAccounting &) = delete;
    JobAccounting &operator=(const JobAccounting &) = delete;

    // Accounts one frame (frames in time order; an older or repeated one is ignored) with the producer's jobs as of
    // it and the events judged with it (the incident folder's among them).
    void account(const Frame &frame, const std::vector<JobInfo> &jobs, const std::vector<FleetEvent> &events);

    bool report(uint64_t id, const std::string &name, JobReport *out) const override;
    std::vector<JobBrief> briefs() const override;
    GoodputSummary between(int64_t fromMs, int64_t toMs) const override;

private:
    void followIncidents(const std::vector<FleetEvent> &events);
    void dropEnded(int64_t nowMs);

    std::unique_ptr<const FleetNames> m_names;
    mutable std::mutex m_mutex;
    uint64_t m_frames = 0; // frames accounted
    int64_t m_lastMs = 0;
    std::unordered_map<uint64_t, std::unique_ptr<JobTrack>> m_jobs;
    std::unique_ptr<std::map<uint64_t, HeldIncident>> m_incidents; // open ones, by id
    std::unique_ptr<JobLedger> m_ledger;
    std::vector<float> m_scratch; // reused frame after frame
};

} // namespace fleetscope::backend
