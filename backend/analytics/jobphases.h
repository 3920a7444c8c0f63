// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "analytics/jobnames.h"
#include "analytics/jobstragglers.h"
#include "core/fleetshape.h"
#include "core/frame.h"
#include "core/framepoller.h"
#include "core/jobaccount.h"

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fleetscope::backend {

class JobLedger;

// The smallest of losses beyond maxLosses summed into one Unspecified "the rest", so that they still add up; the rest
// sorted, most first.
void capLosses(std::vector<GoodputLoss> *losses, size_t maxLosses);

// One job's account (docs/JOBS.md): its phase frame by frame, the spans and utilisation band over its life, its
// stragglers, and its GPU-time split into productive and lost per cause. The interval since the previous frame is
// charged to what the newer frame says. Not thread-safe: JobAccounting guards it.
class JobTrack
{
public:
    // Phase thresholds on the median utilisation (%) of the job's reporting GPUs (why these: docs/JOBS.md).
    static constexpr float computeFrom = 50.0F;
    static constexpr float idleBelow = 10.0F;
    // A low stretch longer than this inside compute is slow compute, not an all-reduce.
    static constexpr int64_t longestDipMs = 30 * 1000;
    // Frames further apart than this see no all-reduce dips (nor a step): a dip lasts seconds.
    static constexpr int64_t finestDipFrameMs = 5 * 1000;
    // The span before a gap in the frames charged to the phase the next frame shows: twice the job's usual frame
    // interval, at least this, at most the checkpoint limit; the rest of the gap was not watched.
    static constexpr int64_t minGapBoundMs = 10 * 1000;

    struct Context
    {
        const FleetNames &names;
        const HeldIncidents &incidents;
        JobLedger &ledger;
        std::vector<float> &scratch;
        double checkpointLimitSeconds;
    };

    JobTrack(const JobInfo &info, std::vector<uint32_t> gpus, int64_t watchedFromMs);

    const JobInfo &info() const { return m_info; }
    const std::vector<uint32_t> &gpus() const { return m_gpus; }
    bool ended() const { return m_ended; }
    int64_t endMs() const { return m_endMs; }
    // Whether the job's GPUs in a fleet of fleetGpus are still these (a real fleet's job may be resized); a GPU
    // outside the fleet is no GPU of it.
    bool sameGpus(const JobInfo &info, uint32_t fleetGpus) const;
    // Its GPUs now (of the fleet; none when it has none in it: nothing is charged then); the stragglers' records of
    // the GPUs it keeps are kept.
    void setGpus(std::vector<uint32_t> gpus);
    void setInfo(const JobInfo &info);

    void account(const Frame &frame, const Context &ctx);
    // The job ended at endMs (or vanished from the producer's list): a checkpoint under way stays one.
    void end(int64_t endMs, const Context &ctx);
    // Listed running again after it ended: it was away from its last frame, a stall (not watched when its next frame
    // is silent); its return is a restart when it was listed ended (requeued), not when it was missing from the list.
    void reopen();

    void report(JobReport *out) const;
    JobBrief brief() const;

    uint64_t seen = 0; // JobAccounting's frame count when the producer last listed it

private:
    struct Scan
    {
        uint32_t reporting = 0, offline = 0, impaired = 0, cut = 0;
        uint32_t saidOffline = 0; // of the offline, those whose health says so (the others have no values)
        int64_t offlineGpu = -1, impairedGpu = -1, cutGpu = -1;
        uint32_t offlineOnNode = 0; // of the first offline GPU's node
        float p10 = 0, median = 0, p90 = 0;
    };
    struct Subject
    {
        int64_t gpu = -1;
        int64_t node = -1;
        std::string why;
    };

    bool scan(const Frame &frame, const Context &ctx, Scan *out) const;
    Subject subjectOf(const Scan &s, const FleetNames &names) const;
    void addBand(int64_t timeMs, const Scan &s);
    void addSpan(JobPhase phase, int64_t fromMs, int64_t toMs, uint64_t incidentId, const std::string &why);
    // A loss over (fromMs, toMs], posted to the ledger's hours it covers.
    void addLoss(const GoodputLoss &key, double gpuHours, int64_t fromMs, int64_t toMs, const Context &ctx);
    void notWatched(int64_t fromMs, int64_t toMs, const Context &ctx);
    void chargeAway(int64_t fromMs, int64_t toMs, const Context &ctx);
    GoodputLoss incidentLoss(const HeldIncident &incident) const;
    void settleIdle(LossCause cause, const HeldIncident *incident, const Context &ctx);
    void idleBecomesStall(const Context &ctx);
    void restart(int64_t timeMs, const Context &ctx);
    void countDip(bool dip, int64_t timeMs, int64_t dtMs);
    double stepSeconds() const;

    JobInfo m_info;
    std::vector<uint32_t> m_gpus;
    int64_t m_watchedFromMs = 0;
    int64_t m_asOfMs = 0;
    bool m_started = false;
    bool m_ended = false;
    bool m_endListed = false; // ended with an end listed, not by missing from the list
    bool m_away = false; // reopened: the time since its last frame is yet to be charged
    int64_t m_endMs = 0;
    JobPhase m_phase = JobPhase::Unwatched;
    int64_t m_usualMs = 0; // the interval before the newest frame's: the job's usual one
    bool m_silent = false; // the newest frame had no value and no health of any of its GPUs

    double m_gpuHours = 0;
    double m_productive = 0;
    std::vector<GoodputLoss> m_losses; // by key, unordered

    // Idle together and still below the checkpoint limit: its GPU-hours by hour, charged when it ends.
    int64_t m_idleFromMs = 0;
    double m_pendingIdle = 0;
    std::vector<std::pair<int64_t, double>> m_pendingByHour;

    int64_t m_stallFromMs = 0;
    bool m_stallLostGpus = false;
    Subject m_stall;
    uint64_t m_stallIncident = 0;
    std::string m_stallIncidentWhy;
    uint32_t m_restarts = 0;
    // The last checkpoint's end (or a restart's: it resumes from one) and the productive GPU-hours then.
    bool m_checkpointSeen = false;
    int64_t m_markMs = 0;
    double m_markProductive = 0;

    int64_t m_computeMs = 0;
    int64_t m_dipMs = 0;
    bool m_inDip = false;
    int64_t m_lastDipStartMs = 0;
    std::array<float, 32> m_periods {}; // seconds between dip starts, a ring
    uint32_t m_periodCount = 0;

    JobStragglers m_stragglers;
    std::deque<JobPhaseSpan> m_spans;
    std::vector<JobBandPoint> m_band;
    uint32_t m_framesPerPoint = 1;
    struct
    {
        int64_t timeMs = 0;
        double p10 = 0, median = 0, p90 = 0, reporting = 0;
        uint32_t frames = 0;
    } m_pending;
};

} // namespace fleetscope::backend
