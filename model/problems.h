// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/history.h"
#include "model/versiondrift.h"

#include <QString>

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

// What is wrong right now: the fleet's events folded into open problems, ranked by severity and blast radius.
namespace fleetscope {

struct Problem
{
    enum class Kind : uint8_t { XidBurst, EccDoubleBit, ThermalThrottle, PowerThrottle, NodeDown, Anomaly, Drift };
    static constexpr int kindCount = 7;

    Kind kind = Kind::XidBurst;
    EventSeverity severity = EventSeverity::Warning;
    int64_t gpu = -1; // dense index; -1 for a node's problem
    int64_t node = -1; // -1 for a rack's problem
    int64_t rack = -1; // set for a rack's problem: the same throttling on several of its GPUs, one line for them
    QString metric; // an anomaly's metric (one problem per GPU and metric)
    uint64_t driftJob = 0; // a drift problem's job (0: a rack's, rack set)
    int64_t sinceMs = 0; // its first event
    int64_t lastMs = 0; // its latest event
    std::vector<std::pair<uint32_t, uint32_t>> xids; // XID code and how many times, in the order first seen
    QString text; // the latest event's own words

    // From the jobs running now (ProblemBoard::open).
    std::vector<uint64_t> jobIds; // running jobs on the GPUs it hits
    std::vector<uint32_t> gpus; // the GPUs it hits: its own, its node's, or its rack's that share it (ascending)
    uint32_t gpusHit = 0; // gpus.size()
    uint32_t blastGpus = 0; // every GPU of the jobs it hits, and the GPUs it hits outside any job

    // Which problem this is across updates: the same kind at the same place (and for a burst, from the same first XID).
    using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, QString, uint64_t>;
    Key key() const
    {
        return { static_cast<int>(kind), gpu, node, rack, kind == Kind::XidBurst ? sinceMs : 0, metric, driftJob };
    }
};

QString describe(Problem::Kind kind);
// The problem's own words for people: "XID burst: 79 (GPU has fallen off the bus) ×3, 48 (…)", an anomaly's reason.
QString problemSummary(const Problem &problem);
// Where it is: "r07-k03-n02 GPU 5", a node's hostname, "rack r06-k05 (21 GPUs)".
QString problemPlace(const Problem &problem, const Topology *topology);

// A job on more than one driver / VBIOS version (warning: its GPUs off the job's majority), a rack on more than one
// (information: a rollout half done, a node it missed), one problem each; unranked (rankProblems).
std::vector<Problem> driftProblems(const VersionDrift &drift);
// Fills each problem's jobs and blast radius from the running jobs (may be null), then sorts them (sortProblems).
void rankProblems(std::vector<Problem> *problems, const JobList *jobs);
// Critical first, then by blast radius (GPUs of the jobs hit), then oldest.
void sortProblems(std::vector<Problem> *problems);

// Folds events (oldest first) into problems: XIDs on one GPU are one burst until 3 minutes pass without one (as
// NVIDIA's fleet tools group them); a double-bit ECC error stays a problem while its event is held; a throttle, a
// node down and an anomaly (the backend's detector) last from their start to their end.
class ProblemBoard
{
public:
    static constexpr int64_t burstSilenceMs = 3 * 60 * 1000;
    // Bounds against a backend that sends events for places without end (it is untrusted): problems held, and the
    // distinct XID codes a burst lists. Past them an event is dropped and counted.
    static constexpr size_t maxProblems = 200'000;
    static constexpr size_t maxXidCodes = 32;

    void clear();
    void add(const FleetEvent &event);
    // The problems open at nowMs, ranked: critical first, then by blast radius (GPUs of the jobs hit), then oldest.
    // Places and jobs from topology and jobs (either may be null: then a problem hits its own GPUs, no job). With a
    // topology, the same throttling on several GPUs of one rack (a cooling or power fault is a rack's) is one problem.
    std::vector<Problem> open(int64_t nowMs, const Topology *topology, const JobList *jobs) const;
    // The GPUs with an open problem of this kind (not a node's), ascending and each once, without ranking anything.
    std::vector<uint32_t> gpusWith(Problem::Kind kind) const;
    // Events dropped for the bounds above since the last clear().
    uint64_t dropped() const { return m_dropped; }

private:
    using Key = std::tuple<int, int64_t, QString>; // kind, GPU or node, an anomaly's metric
    std::map<Key, Problem> m_problems;
    uint64_t m_dropped = 0;
};

} // namespace fleetscope
