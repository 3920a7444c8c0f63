// SPDX-License-Identifier: Apache-2.0
#include "analytics/jobledger.h"

#include <algorithm>
#include <functional>

namespace fleetscope::backend {

namespace {

int64_t hourOf(int64_t timeMs)
{
    return timeMs >= 0 ? timeMs / JobLedger::bucketMs : (timeMs - JobLedger::bucketMs + 1) / JobLedger::bucketMs;
}

void mergeJobs(std::vector<uint64_t> *into, const std::vector<uint64_t> &from)
{
    std::vector<uint64_t> out;
    out.reserve(into->size() + from.size());
    std::set_union(into->begin(), into->end(), from.begin(), from.end(), std::back_inserter(out));
    *into = std::move(out);
}

} // namespace

size_t LossKeyHash::operator()(const LossKey &key) const
{
    size_t h = std::hash<uint64_t>()(key.incidentId);
    const auto mix
        = [&h](uint64_t v) { h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ULL + (h << 6U) + (h >> 2U); };
    mix(static_cast<uint64_t>(key.cause));
    mix(static_cast<uint64_t>(key.domain));
    mix(static_cast<uint64_t>(key.gpu));
    mix(static_cast<uint64_t>(key.node));
    return h;
}

void addJob(std::vector<uint64_t> *jobs, uint64_t jobId)
{
    // Jobs post in the same order frame after frame: the last one is the common hit.
    if (!jobs->empty() && jobs->back() == jobId) {
        return;
    }
    const auto it = std::lower_bound(jobs->begin(), jobs->end(), jobId);
    if (it == jobs->end() || *it != jobId) {
        jobs->insert(it, jobId);
    }
}

void JobLedger::advance(int64_t nowMs)
{
    m_newestMs = std::max(m_newestMs, nowMs);
}

JobLedger::Bucket *JobLedger::bucketAt(int64_t timeMs)
{
    const int64_t hour = hourOf(timeMs);
    // Older than the ledger holds: nowhere to put it.
    if (hour + static_cast<int64_t>(bucketCount) <= hourOf(m_newestMs)) {
        return nullptr;
    }
    Bucket &bucket
        = m_buckets[static_cast<size_t>(((hour % static_cast<int64_t>(bucketCount)) + bucketCount) % bucketCount)];
    if (bucket.hour != hour) {
        if (bucket.hour > hour) {
            return nullptr;
        }
        bucket = Bucket {};
        bucket.hour = hour;
    }
    return &bucket;
}

template <typename Add> void JobLedger::spread(int64_t fromMs, int64_t toMs, Add add)
{
    if (toMs <= fromMs) {
        if (Bucket *bucket = bucketAt(toMs)) {
            add(bucket, toMs, toMs, 1.0);
        }
        return;
    }
    const auto length = static_cast<double>(toMs - fromMs);
    // Hours older than the ledger holds are skipped, not walked: a gap of weeks costs at most bucketCount parts.
    const int64_t oldest = (hourOf(m_newestMs) - static_cast<int64_t>(bucketCount) + 1) * bucketMs;
    for (int64_t from = std::max(fromMs, oldest); from < toMs;) {
        const int64_t to = std::min(toMs, (hourOf(from) + 1) * bucketMs);
        if (Bucket *bucket = bucketAt(from)) {
            add(bucket, from, to, static_cast<double>(to - from) / length);
        }
        from = to;
    }
}

void JobLedger::post(int64_t fromMs, int64_t toMs, uint64_t jobId, double gpuHours, double productiveGpuHours)
{
    spread(fromMs, toMs, [&](Bucket *bucket, int64_t from, int64_t to, double share) {
        postIn(bucket, from, to, jobId, gpuHours * share, productiveGpuHours * share);
    });
}

void JobLedger::postIn(Bucket *bucket, int64_t fromMs, int64_t toMs, uint64_t jobId, double gpuHours, double productive)
{
    const int64_t start = bucket->hour * bucketMs;
    const int64_t to = std::clamp(toMs, start, start + bucketMs);
    const int64_t from = std::clamp(fromMs, start, to);
    if (bucket->coveredToMs == 0) {
        bucket->coveredFromMs = from;
        bucket->coveredToMs = to;
    } else {
        bucket->coveredFromMs = std::min(bucket->coveredFromMs, from);
        bucket->coveredToMs = std::max(bucket->coveredToMs, to);
    }
    bucket->gpuHours += gpuHours;
    bucket->productiveGpuHours += productive;
    addJob(&bucket->jobs, jobId);
}

void JobLedger::postLoss(int64_t fromMs, int64_t toMs, uint64_t jobId, const GoodputLoss &loss, double gpuHours)
{
    if (gpuHours == 0) {
        return;
    }
    spread(fromMs, toMs,
        [&](Bucket *bucket, int64_t, int64_t, double share) { postLossIn(bucket, jobId, loss, gpuHours * share); });
}

void JobLedger::postLossIn(Bucket *bucket, uint64_t jobId, const GoodputLoss &loss, double gpuHours)
{
    const LossKey key = LossKey::of(loss);
    auto it = bucket->losses.find(key);
    if (it == bucket->losses.end()) {
        Entry entry;
        entry.loss = loss;
        entry.loss.gpuHours = 0;
        entry.loss.jobId = 0;
        it = bucket->losses.emplace(key, std::move(entry)).first;
    }
    it->second.loss.gpuHours += gpuHours;
    addJob(&it->second.jobs, jobId);
    // Pruned in halves so that a bucket with many keys is not sorted on every post.
    if (bucket->losses.size() > 2 * keepKeys) {
        prune(bucket);
    }
}

void JobLedger::prune(Bucket *bucket)
{
    const LossKey restKey;
    std::vector<std::pair<double, LossKey>> sizes;
    sizes.reserve(bucket->losses.size());
    for (const auto &[key, entry] : bucket->losses) {
        if (!(key == restKey)) {
            sizes.emplace_back(entry.loss.gpuHours, key);
        }
    }
    if (sizes.size() < keepKeys) {
        return;
    }
    // The rest entry takes one of the places kept.
    const size_t keep = keepKeys - 1;
    std::nth_element(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(keep), sizes.end(),
        [](const auto &a, const auto &b) { return a.first > b.first; });
    Entry &rest = bucket->losses[restKey];
    rest.loss.cause = LossCause::Unspecified;
    rest.loss.what = "the rest";
    for (size_t i = keep; i < sizes.size(); ++i) {
        const auto it = bucket->losses.find(sizes[i].second);
        rest.loss.gpuHours += it->second.loss.gpuHours;
        mergeJobs(&rest.jobs, it->second.jobs);
        bucket->losses.erase(it);
    }
}

GoodputSummary JobLedger::between(int64_t fromMs, int64_t toMs) const
{
    GoodputSummary out;
    if (toMs < fromMs) {
        return out;
    }
    std::vector<uint64_t> jobs;
    std::unordered_map<LossKey, Entry, LossKeyHash> losses;
    for (const Bucket &bucket : m_buckets) {
        if (bucket.hour < 0 || bucket.coveredToMs == 0) {
            continue;
        }
        // The first and the newest hour are filled only in part.
        const int64_t start = bucket.coveredFromMs;
        const int64_t end = bucket.coveredToMs;
        double share = 0;
        if (end > start) {
            const int64_t overlap = std::min(toMs, end) - std::max(fromMs, start);
            share = overlap > 0 ? static_cast<double>(overlap) / static_cast<double>(end - start) : 0.0;
        } else if (fromMs <= start && start <= toMs) {
            share = 1;
        }
        if (share <= 0) {
            continue;
        }
        out.jobGpuHours += share * bucket.gpuHours;
        out.productiveGpuHours += share * bucket.productiveGpuHours;
        mergeJobs(&jobs, bucket.jobs);
        for (const auto &[key, entry] : bucket.losses) {
            auto it = losses.find(key);
            if (it == losses.end()) {
                it = losses.emplace(key, Entry { entry.loss, {} }).first;
                it->second.loss.gpuHours = 0;
            }
            it->second.loss.gpuHours += share * entry.loss.gpuHours;
            mergeJobs(&it->second.jobs, entry.jobs);
        }
    }
    out.jobs = static_cast<uint32_t>(jobs.size());
    out.productiveGpuHours = std::max(0.0, out.productiveGpuHours);
    std::vector<GoodputLoss> all;
    all.reserve(losses.size());
    for (auto &[key, entry] : losses) {
        // Rounding leaves dust where a provisional loss was moved; a loss under a GPU-second is none.
        if (entry.loss.gpuHours * 3600.0 < 1.0) {
            continue;
        }
        entry.loss.jobs = static_cast<uint32_t>(entry.jobs.size());
        all.push_back(std::move(entry.loss));
    }
    const auto most = [](const GoodputLoss &a, const GoodputLoss &b) {
        return a.gpuHours != b.gpuHours ? a.gpuHours > b.gpuHours
                                        : static_cast<int>(a.cause) < static_cast<int>(b.cause);
    };
    std::sort(all.begin(), all.end(), most);
    if (all.size() > GoodputSummary::maxLosses) {
        // The smallest summed into one "the rest" with the hours' own rest (Unspecified), so that the losses still
        // add up and one line says what is not told apart.
        GoodputLoss rest;
        rest.what = "the rest";
        std::vector<GoodputLoss> kept;
        kept.reserve(GoodputSummary::maxLosses);
        for (GoodputLoss &loss : all) {
            if (loss.cause != LossCause::Unspecified && kept.size() + 1 < GoodputSummary::maxLosses) {
                kept.push_back(std::move(loss));
                continue;
            }
            rest.gpuHours += loss.gpuHours;
            rest.jobs = std::max(rest.jobs, loss.jobs);
        }
        kept.push_back(std::move(rest));
        std::sort(kept.begin(), kept.end(), most);
        all = std::move(kept);
    }
    out.losses = std::move(all);
    return out;
}

} // namespace fleetscope::backend
