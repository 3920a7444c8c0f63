// SPDX-License-Identifier: Apache-2.0
#include "analytics/jobaccounting.h"

#include "analytics/jobledger.h"
#include "analytics/jobphases.h"

#include <algorithm>

namespace fleetscope::backend {

JobAccounting::JobAccounting(const FleetShape &shape)
    : m_names(std::make_unique<FleetNames>(shape))
    , m_incidents(std::make_unique<HeldIncidents>())
    , m_ledger(std::make_unique<JobLedger>())
{ }

JobAccounting::~JobAccounting() = default;

void JobAccounting::followIncidents(const std::vector<FleetEvent> &events)
{
    for (const FleetEvent &e : events) {
        if (e.incident == nullptr) {
            continue;
        }
        if (e.kind == FleetEvent::Kind::IncidentOpen || e.kind == FleetEvent::Kind::IncidentUpdate) {
            (*m_incidents)[e.incident->id] = { e.incident, e.text };
        } else if (e.kind == FleetEvent::Kind::IncidentClose) {
            m_incidents->erase(e.incident->id);
        }
    }
}

void JobAccounting::account(const Frame &frame, const std::vector<JobInfo> &jobs, const std::vector<FleetEvent> &events)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    const int64_t t = frame.sampleTimeMs;
    if (m_frames > 0 && t <= m_lastMs) {
        return;
    }
    followIncidents(events);
    m_ledger->advance(t);
    ++m_frames;
    const JobTrack::Context ctx { *m_names, *m_incidents, *m_ledger, m_scratch, checkpointLimitSeconds };
    for (const JobInfo &info : jobs) {
        if (info.startMs > t) {
            continue;
        }
        auto it = m_jobs.find(info.id);
        const bool ended = info.endMs != 0 && info.endMs <= t;
        if (it == m_jobs.end()) {
            if (ended) {
                continue; // never watched running: nothing to say of it
            }
            std::vector<uint32_t> gpus = info.gpuList();
            // A GPU outside the fleet is no GPU of it.
            gpus.erase(std::remove_if(gpus.begin(), gpus.end(), [this](uint32_t g) { return g >= m_names->gpuCount; }),
                gpus.end());
            if (gpus.empty()) {
                continue;
            }
            // Watched from its start when it started since the previous frame, else from this frame.
            const int64_t from = m_frames > 1 && info.startMs >= m_lastMs ? info.startMs : t;
            it = m_jobs.emplace(info.id, std::make_unique<JobTrack>(info, std::move(gpus), from)).first;
        } else if (it->second->ended() && !ended) {
            // Listed running again after it ended: the same job back (a Slurm requeue keeps its id; a poll missed).
            it->second->reopen();
        }
        if (!it->second->ended() && !it->second->sameGpus(info, m_names->gpuCount)) {
            std::vector<uint32_t> gpus = info.gpuList();
            gpus.erase(std::remove_if(gpus.begin(), gpus.end(), [this](uint32_t g) { return g >= m_names->gpuCount; }),
                gpus.end());
            // None left in the fleet: none watched (nothing charged) until some are, not the old ones still.
            it->second->setGpus(std::move(gpus));
        }
        JobTrack &track = *it->second;
        track.seen = m_frames;
        track.setInfo(info);
        if (ended) {
            track.end(info.endMs, ctx);
        } else {
            track.account(frame, ctx);
        }
    }
    // A job the producer no longer lists ended when it was last seen.
    for (auto &[id, track] : m_jobs) {
        if (track->seen != m_frames && !track->ended()) {
            track->end(m_lastMs, ctx);
        }
    }
    m_lastMs = t;
    dropEnded(t);
}

void JobAccounting::dropEnded(int64_t nowMs)
{
    for (auto it = m_jobs.begin(); it != m_jobs.end();) {
        if (it->second->ended() && nowMs - it->second->endMs() > endedHeldMs) {
            it = m_jobs.erase(it);
        } else {
            ++it;
        }
    }
}

bool JobAccounting::report(uint64_t id, const std::string &name, JobReport *out) const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    const JobTrack *found = nullptr;
    if (id != 0) {
        const auto it = m_jobs.find(id);
        found = it != m_jobs.end() ? it->second.get() : nullptr;
    } else if (!name.empty()) {
        // The running one first (the newest started of several), else the newest ended.
        for (const auto &[jobId, track] : m_jobs) {
            if (track->info().name != name) {
                continue;
            }
            if (found == nullptr) {
                found = track.get();
                continue;
            }
            const bool better = found->ended() != track->ended()
                ? !track->ended()
                : (track->ended() ? track->endMs() > found->endMs() : track->info().startMs > found->info().startMs);
            if (better) {
                found = track.get();
            }
        }
    }
    if (found == nullptr) {
        return false;
    }
    found->report(out);
    out->checkpointLimitSeconds = checkpointLimitSeconds;
    return true;
}

std::vector<JobBrief> JobAccounting::briefs() const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    std::vector<JobBrief> out;
    out.reserve(m_jobs.size());
    for (const auto &[id, track] : m_jobs) {
        out.push_back(track->brief());
    }
    return out;
}

GoodputSummary JobAccounting::between(int64_t fromMs, int64_t toMs) const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_ledger->between(fromMs, toMs);
}

} // namespace fleetscope::backend
