// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "core/framepoller.h"

#include <array>
#include <cstdint>
#include <vector>

namespace fleetscope::backend {

// Judges every GPU of each frame against its context, whatever produced the frame (docs/ANOMALY.md):
//   1. its peers: the GPUs of its job (they move together through phases), or the idle GPUs of its rack; the GPU's
//      deviation from their median, in the metric's unit (memory temperature: how far it runs above its own GPU, which
//      it follows a minute late);
//   2. its rack: a job's GPUs in one rack share that rack's inlet air, so the median deviation of the rack's job GPUs
//      is taken off each of them;
//   3. its own history: where it usually sits among its peers (a slow moving average, frozen while it looks odd),
//      taken off too. A GPU's place depends on the load (the GPU that breathes its neighbours' exhaust is hotter at
//      full power, not at idle), so it is kept for its job busy and its job idle, as the peers' median utilisation
//      says. A phase is learnt over its first 5 minutes with data, not while the GPU is odd; after a job change the
//      places are learnt afresh (kept as they were if the GPU is odd then). An odd GPU running with its peers while
//      its place says it sits far from them for relearnSeconds had that place learnt during a fault: its places are
//      taken from where it is (the other phase's learnt afresh). So had one odd from its first judged frame against
//      places just learnt, nearer its peers than they say (a fault that began as it settled and ended as it was first
//      judged). A chassis's common departure in temperature (shared air) is taken off its GPUs;
//   4. the residual is divided by how far the peers' residuals spread in this frame (1.4826 MAD, with a floor):
//      narrow while every GPU holds its place, wide while a group changes phase and each follows at its own pace.
// What is left is its score per metric; the frame's anomaly plane holds the largest. An anomaly starts when the score
// has stayed at or above startScore for persistSeconds (one sample below in a run is forgiven, one odd sample never
// alarms) and ends when it has stayed below endScore for clearSeconds. NaN (no data) is skipped everywhere.
//
// Not thread-safe: FrameSource's ticker (or a benchmark) is its only caller.
class AnomalyDetector
{
public:
    struct Options
    {
        float startScore = 5.0F;
        float endScore = 4.0F;
        double persistSeconds = 60;
        double clearSeconds = 120;
        double historySeconds = 1800; // time constant of where a GPU usually sits
        double settleSeconds = 300; // not judged for this long (with data) after joining a job or leaving one
        // An odd GPU that runs with its peers (within their spread) while its place says it sits far from them
        // (twice their spread) for this long takes where it is as its place; so does one odd, nearer its peers than
        // its place says, from its first judged frame after its places were learnt afresh.
        float relearnSeconds = 300;
        uint8_t missesAllowed = 1; // samples below startScore that do not break a run towards persistSeconds
        uint32_t minPeers = 4; // fewer GPUs with data in a group: not judged against it
        uint32_t peerSample = 255; // medians of bigger groups from this many evenly spaced members
    };
    // The metrics judged: continuous ones that peers share. Error counts, the throttle mask and the health state
    // have their own events.
    static constexpr std::array<MetricId, 5> judged
        = { MetricId::GpuTemp, MetricId::MemTemp, MetricId::Power, MetricId::GpuUtil, MetricId::SmClock };
    // Below this spread a metric's peers are taken to differ by this much anyway (idle GPUs read one value).
    static float floorOf(MetricId metric);
    // Below this spread a metric's residuals (a GPU's departure from its usual place) are taken to spread this much.
    static float residualFloorOf(MetricId metric);

    explicit AnomalyDetector(const FleetShape &shape);
    AnomalyDetector(const FleetShape &shape, const Options &options);

    // The running jobs (ended ones are skipped); cheap when they have not changed.
    void setJobs(const std::vector<JobInfo> &jobs);
    // Judges a frame taken at timeSeconds (any clock, increasing): fills its anomaly plane (NaN where a GPU has no
    // data) and appends the anomalies that started or ended.
    void judge(Frame *frame, double timeSeconds, std::vector<FleetEvent> *events);

    // Whether a GPU is in an anomaly after the last frame.
    bool anomalous(uint32_t gpu) const { return m_state[gpu].anomalous != 0; }
    // The metric that started a GPU's anomaly (meaningful while anomalous()).
    MetricId anomalyMetric(uint32_t gpu) const { return judged[m_state[gpu].metric]; }
    // The MAD (unscaled, with the floor) of a judged metric among the GPU's peers in the last frame, NaN when it was
    // not judged: what "moved by 3 MADs" is measured in.
    float peerMad(MetricId metric, uint32_t gpu) const;
    // Seconds of CPU the last judge() took.
    double lastCostSeconds() const { return m_lastCost; }

private:
    struct Group
    {
        uint64_t jobId = 0; // 0: the idle GPUs of a rack
        uint32_t first = 0; // into m_members
        uint32_t count = 0;
    };
    struct GpuState
    {
        double pendingSince = -1; // the score first reached startScore in the current run, or -1
        double quietSince = -1; // an anomalous GPU's score first fell below endScore, or -1
        double startedAt = 0;
        float settleLeft = 0; // seconds with data still to learn before it is judged
        // Seconds it must still be judged in line before places learnt afresh are confirmed as its own (> 0: not
        // yet; a fault in force while it settled, ended since, makes it odd from its first judged frame on).
        float unconfirmedLeft = 0;
        std::array<float, 2> phaseLeft {}; // the same for a phase (job idle, busy) first seen, before judged in it
        uint16_t pendingSamples = 0;
        uint8_t missed = 0; // consecutive samples below startScore in a pending run
        uint8_t learning = 0; // settling with a usual place of its own still to be learnt
        uint8_t anomalous = 0;
        uint8_t relearn = 0; // its places in the current phase are taken from where it is in the next frame
        uint8_t metric = 0; // index into judged of the metric that started it
    };
    void rebuildGroups();
    void updatePhases(const std::vector<float> &util, double dt);
    template <typename Take> float groupMedian(const Group &group, Take take, float *spread);
    void scoreMetric(size_t k, const std::vector<float> &plane, float alpha, float fast, float dt);
    void persist(Frame *frame, double now, double dt, std::vector<FleetEvent> *events);
    FleetEvent describe(uint32_t gpu, double now, bool start) const;

    const FleetShape &m_shape;
    Options m_options;
    uint64_t m_jobsSignature = 0;
    std::vector<JobInfo> m_jobs; // running
    std::vector<Group> m_groups;
    std::vector<uint32_t> m_members; // GPUs by group
    std::vector<int32_t> m_groupOf; // per GPU
    std::vector<uint32_t> m_rackOf; // per GPU
    std::vector<GpuState> m_state;
    double m_lastTime = -1;
    // Per judged metric: per GPU where it usually sits (NaN: not yet known), its score in this frame (NaN: none),
    // and per group the median and scale of this frame.
    std::array<std::vector<float>, judged.size() * 2> m_usual; // [k * 2 + busy]
    std::vector<float> m_groupLoad; // per group, the peers' median utilisation, smoothed over a minute
    std::vector<uint8_t> m_groupBusy;
    std::array<std::vector<float>, judged.size()> m_score;
    std::array<std::vector<float>, judged.size()> m_deviation; // x - median, in the metric's unit
    std::array<std::vector<float>, judged.size()> m_inLine; // seconds odd, but in line with its peers
    std::array<std::vector<float>, judged.size()> m_median;
    std::array<std::vector<float>, judged.size()> m_scale;
    std::vector<float> m_residualScale; // per group, of the metric being scored
    std::vector<float> m_scratch;
    std::vector<float> m_memAboveGpu; // memory temperature minus its GPU's, per GPU
    double m_lastCost = 0;
};

} // namespace fleetscope::backend
