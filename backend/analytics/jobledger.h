// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/jobaccount.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace fleetscope::backend {

// What a loss is charged to: its cause and subject (an incident and its domain, a GPU, a node). Two losses with the
// same key are one line of a job's account or of the fleet's ledger.
struct LossKey
{
    LossCause cause = LossCause::Unspecified;
    uint64_t incidentId = 0;
    int64_t domain = -1;
    int64_t gpu = -1;
    int64_t node = -1;

    static LossKey of(const GoodputLoss &loss)
    {
        return { loss.cause, loss.incidentId, loss.domain, loss.gpu, loss.node };
    }
    bool operator==(const LossKey &other) const
    {
        return cause == other.cause && incidentId == other.incidentId && domain == other.domain && gpu == other.gpu
            && node == other.node;
    }
};

struct LossKeyHash
{
    size_t operator()(const LossKey &key) const;
};

// The fleet's jobs hour by hour over the last 8 days, for GetSummary's goodput over a day or a week: per hour the
// jobs' GPU-hours, the productive ones, and the losses by key with the jobs each cost. Bounded: at most keepKeys keys
// an hour (the smallest summed into one Unspecified "the rest"), 192 hours. Not thread-safe: JobAccounting guards it.
class JobLedger
{
public:
    static constexpr int64_t bucketMs = 3600 * 1000;
    static constexpr size_t bucketCount = 8 * 24;
    static constexpr size_t keepKeys = 1000;

    // The newest frame's time: hours 8 days older are let go.
    void advance(int64_t nowMs);
    // A job's GPU-hours of the interval (fromMs, toMs], and the productive ones of them (negative: work found lost,
    // to be redone), spread evenly over the hours the interval covers (an interval of hours, a gap in the telemetry,
    // is not piled into its last hour); an empty interval goes to toMs's hour.
    void post(int64_t fromMs, int64_t toMs, uint64_t jobId, double gpuHours, double productiveGpuHours);
    // A loss of a job over (fromMs, toMs], spread as post() spreads; the loss's gpuHours are ignored for gpuHours (its
    // what is kept with the key when new).
    void postLoss(int64_t fromMs, int64_t toMs, uint64_t jobId, const GoodputLoss &loss, double gpuHours);
    // The sums over the hours overlapping [fromMs, toMs], an hour prorated by the share of the time it covers (from
    // its first interval's start to its last's end, within the hour) that lies in the range.
    GoodputSummary between(int64_t fromMs, int64_t toMs) const;

private:
    struct Entry
    {
        GoodputLoss loss; // gpuHours the sum
        std::vector<uint64_t> jobs; // ascending
    };
    struct Bucket
    {
        int64_t hour = -1; // timeMs / bucketMs; -1 unused
        int64_t coveredFromMs = 0; // the time its intervals cover, within the hour
        int64_t coveredToMs = 0;
        double gpuHours = 0;
        double productiveGpuHours = 0;
        std::vector<uint64_t> jobs; // ascending
        std::unordered_map<LossKey, Entry, LossKeyHash> losses;
    };

    Bucket *bucketAt(int64_t timeMs);
    // Calls add(bucket, from, to, share) for each hour's part of (fromMs, toMs] the ledger holds.
    template <typename Add> void spread(int64_t fromMs, int64_t toMs, Add add);
    void postIn(Bucket *bucket, int64_t fromMs, int64_t toMs, uint64_t jobId, double gpuHours, double productive);
    void postLossIn(Bucket *bucket, uint64_t jobId, const GoodputLoss &loss, double gpuHours);
    static void prune(Bucket *bucket);

    std::array<Bucket, bucketCount> m_buckets;
    int64_t m_newestMs = 0;
};

// Adds a job to an ascending list of ids once.
void addJob(std::vector<uint64_t> *jobs, uint64_t jobId);

} // namespace fleetscope::backend
