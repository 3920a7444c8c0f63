// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "core/framepoller.h"

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
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
//      says. Until a place is learnt (from the first frame, a phase first seen, places let go) the GPU is judged
//      against its peers as if it sat where GPUs of its slot in a chassis sit among theirs (the fleet's median for the
//      slot), in how far its peers spread around their slots' places ("no history yet"): nobody is blind while
//      learning. A place is learnt over learnSeconds of samples (begun again when the GPU moves away from it), never
//      from a sample more than placeCap of those spreads off its slot's place nor while the GPU looks odd: a GPU far
//      off its peers from the start is reported, not learnt. After a job change the GPU settles, not judged, and its
//      places are learnt afresh (kept if it is odd then). A GPU running with its peers (within that spread of its
//      slot's place) that would start an anomaly only against a place far from them (farPlace spreads) had that place
//      learnt during a fault: it is judged against its peers, and after letGoSeconds every place of it is learnt
//      afresh, rather than it being flagged for being back in line. So is a place learnt afresh that the GPU was odd
//      against from its first judged frame, nearer its peers than it says. A chassis's common departure in
//      temperature (shared air) is taken off its GPUs;
//   4. the residual is divided by how far the peers' residuals spread in this frame (1.4826 MAD, with a floor):
//      narrow while every GPU holds its place, wide while a group changes phase and each follows at its own pace.
// What is left is its score per metric; the frame's anomaly plane holds the largest. An anomaly starts when the score
// has stayed at or above startScore for persistSeconds (one sample below in a run is forgiven, one odd sample never
// alarms) and ends when it has stayed below endScore for clearSeconds. NaN (no data, not judged) is skipped
// everywhere. warm() learns from frames from before the start without judging them.
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
        double learnSeconds = 300; // a place is learnt from this long of samples (judged against the peers meanwhile)
        // A place is never learnt from a sample this many of the peers' spreads around their slots' places (1.4826
        // MAD, with the metric's floor) off its slot's place.
        float placeCap = 3.0F;
        // A place this many of those spreads off its slot's is far from the peers: a GPU running with them (within
        // one spread) that would start an anomaly only against it is judged against its peers, and after
        // letGoSeconds lets its places go.
        float farPlace = 2.5F;
        float letGoSeconds = 30;
        // An odd GPU nearer its peers than places just learnt say, from its first judged frame, for this long lets
        // them go (a fault in force while it settled, ended since).
        float relearnSeconds = 300;
        // warm(): frames from the last warmSeconds before the start, at least warmEvery apart, at most warmFrames
        // (the newest): the cost of a warm-up is bounded by warmFrames judged frames whatever the history held.
        double warmSeconds = 1800;
        double warmEvery = 10;
        size_t warmFrames = 30;
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
    // Judges a frame taken at timeSeconds (any clock, increasing): fills its anomaly plane (NaN where a GPU is not
    // judged) and appends the anomalies that started or ended.
    void judge(Frame *frame, double timeSeconds, std::vector<FleetEvent> *events);
    // Learns from frames from before the start (oldest first, at sampleTimeMs / 1000 seconds), each with the jobs of
    // `jobs` (running and ended ones) that ran at its time, as judge() would but silently: the frames are not
    // written, no event is raised, and no GPU is odd (pending or anomalous) afterwards; a GPU odd in them has not
    // learnt its place from them. A sample of them: see Options::warmSeconds. Before the first judge() only.
    void warm(const std::vector<std::shared_ptr<const Frame>> &past, const std::vector<JobInfo> &jobs);

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
    static constexpr float nan = std::numeric_limits<float>::quiet_NaN();
    static constexpr float madToSigma = 1.4826F; // a normal distribution's standard deviation per MAD
    // The median of values (reordered), which must not be empty.
    static float medianOf(std::vector<float> &values);

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
        uint16_t pendingSamples = 0;
        uint8_t missed = 0; // consecutive samples below startScore in a pending run
        uint8_t learning = 0; // settling with a usual place of its own still to be learnt
        uint8_t anomalous = 0;
        uint8_t relearn = 0; // its places are let go (learnt afresh) in the next frame
        uint8_t metric = 0; // index into judged of the metric that started it
        // It has had a reading in a judged frame: a job it is in before then is where it was first seen, not a job
        // it joined (a source whose first frame has neither data nor jobs, as remote write before its first window).
        uint8_t seenWithData = 0;
    };
    void rebuildGroups();
    void updatePhases(const std::vector<float> &util, double dt);
    // Where GPUs of each slot of a chassis sit among their peers, from a sample of the fleet's departures (after the
    // rack's offset), per kind of group; slotPlace(g) gives GPU g's (0 where too few were seen).
    void slotPlaces(const std::vector<float> &departure);
    size_t slotBucket(uint32_t gpu) const;
    float slotPlace(uint32_t gpu) const { return m_slotPlace[slotBucket(gpu)]; }
    template <typename Take> float groupMedian(const Group &group, Take take, float *spread);
    void scoreMetric(size_t k, const std::vector<float> &plane, float alpha, float fast, float dt);
    void assess(const Frame &frame, double timeSeconds, std::vector<float> *plane, std::vector<FleetEvent> *events);
    void persist(std::vector<float> *plane, double now, double dt, std::vector<FleetEvent> *events);
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
    uint32_t m_unseen = 0; // GPUs not yet seenWithData
    double m_lastTime = -1;
    // Per judged metric: per GPU where it usually sits (NaN: not yet known), its score in this frame (NaN: none),
    // and per group the median and scale of this frame.
    std::array<std::vector<float>, judged.size() * 2> m_usual; // [k * 2 + busy]
    std::array<std::vector<float>, judged.size() * 2> m_seen; // seconds of samples the place was learnt from
    std::vector<uint8_t> m_unplaced; // per GPU, bit k: metric k judged without a place of its own in this frame
    std::vector<float> m_groupLoad; // per group, the peers' median utilisation, smoothed over a minute
    std::vector<uint8_t> m_groupBusy;
    std::array<std::vector<float>, judged.size()> m_score;
    std::array<std::vector<float>, judged.size()> m_deviation; // x - median, in the metric's unit
    std::array<std::vector<float>, judged.size()> m_inLine; // seconds with its peers, against a place far from them
    std::array<std::vector<float>, judged.size()> m_median;
    std::array<std::vector<float>, judged.size()> m_scale;
    std::vector<float> m_residualScale; // per group, of the metric being scored
    std::array<std::vector<float>, judged.size()> m_lastResidualScale; // per metric and group, of the last frame
    // Per group, how far its GPUs spread from their slots' places (1.4826 MAD, with the metric's floor): what a GPU
    // without a place of its own is judged in.
    std::vector<float> m_slotScale;
    static constexpr size_t maxSlots = 16; // slots of a chassis told apart (more share the last)
    std::vector<uint8_t> m_slotOf; // per GPU
    std::vector<std::vector<float>> m_slotValues; // per bucket (slotBucket), scratch
    std::vector<float> m_slotPlace; // per bucket, of the metric being scored
    std::vector<float> m_scratch;
    std::vector<float> m_memAboveGpu; // memory temperature minus its GPU's, per GPU
    double m_lastCost = 0;
};

} // namespace fleetscope::backend
