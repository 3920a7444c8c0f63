// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "analytics/domainindex.h"
#include "core/fleetshape.h"
#include "core/framepoller.h"
#include "core/incident.h"

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace fleetscope::backend {

// Folds the symptoms of each frame into incidents, one per cause (docs/INCIDENTS.md):
//   1. every GPU's symptoms as of the frame: down (NodeDown or health Offline), throttling for heat or power
//      (ThrottleReasons, or the throttle events where the plane has no value), its rail link down or its errors
//      climbing, a leak, its coolant warming, an anomaly, a serious XID or a double-bit ECC error;
//   2. a symptom that begins on a GPU inside an open incident's domain joins it; any other waits, with those that
//      begin within foldSeconds of the first, and is then folded: of the domains of the kinds that can cause it, the
//      one holding the most of them among those where enough of its GPUs show it (Options: minShare, a cooling
//      domain's coolingMinShare, any leak), the smaller on a tie; again for what is left. What no domain explains is
//      its node's own incident (cause "node"; "gpu" when one GPU), never folded with another node's;
//   3. an incident opens with IncidentOpen, says what changed (its GPUs, jobs, severity) with IncidentUpdate at most
//      every minUpdateSeconds and at least every refreshSeconds, and closes with IncidentClose once none of its GPUs
//      has shown its symptoms for clearSeconds. A domain incident takes over the node incidents inside it.
// Linear in GPUs per frame; memory a few bytes per GPU plus the open incidents (at most maxOpen; singles beyond are
// counted in dropped(), never opened).
//
// Not thread-safe: FrameSource's ticker (through FleetAnalytics) or a benchmark is its only caller.
// Its parts: step 1 in incidentsymptoms.cpp, the fold of step 2 in incidentfold.cpp, the incidents' life in
// incidentfolder.cpp, what they say in incidentwords.cpp; each GPU's domains in DomainIndex.
class IncidentFolder
{
public:
    struct Options
    {
        double foldSeconds = 10; // onsets this close to the first are folded together
        double clearSeconds = 120; // an incident closes once its symptoms have been gone this long
        double minUpdateSeconds = 10;
        double refreshSeconds = 300; // an open incident is sent whole at least this often
        double errorSymptomSeconds = 60; // how long a serious XID or double-bit ECC error counts as a symptom
        // Of a domain's GPUs that show the symptom for it to be named, with at least minGpus on minNodes nodes. Heat
        // reaches a cooling unit's racks one after another (a front along the row) and its first GPUs throttle a
        // minute or more before most do, so a few percent will do; a leak is the coolant's whatever its size.
        double minShare = 0.5;
        double coolingMinShare = 0.03;
        // Or as many nodes of it that began to throttle for heat within coolingRecentSeconds (throttling comes and goes
        // as a GPU's clock drops and it cools): a heat front's first GPUs, one per node (the hottest slot), long
        // before a share does.
        uint32_t coolingRecentNodes = 4;
        double coolingRecentSeconds = 300;
        uint32_t minGpus = 3;
        uint32_t minNodes = 2;
        float coolantRiseC = 5; // supply above its own slow average
        double coolantLearnSeconds = 1800;
        float linkDownsPerWindow = 2; // RailLinkDowns in its 5-minute window: a flapping link
        float symbolErrorsPerWindow = 1000;
        uint32_t criticalJobs = 3; // an incident hitting this many jobs is critical whatever it is
        uint32_t maxOpen = 4096;
        uint32_t maxPending = 1U << 18U;
    };

    // The symptoms of a GPU, bits.
    enum Symptom : uint16_t {
        Down = 1U << 0U,
        Thermal = 1U << 1U,
        PowerBrake = 1U << 2U,
        LinkDown = 1U << 3U,
        LinkErrors = 1U << 4U,
        Leak = 1U << 5U,
        CoolantWarm = 1U << 6U,
        Anomalous = 1U << 7U,
        GpuError = 1U << 8U,
    };
    static constexpr int symptomCount = 9;

    explicit IncidentFolder(const FleetShape &shape);
    IncidentFolder(const FleetShape &shape, const Options &options);

    // Folds the frame's symptoms, with the events that came with it (producer's and analytics' so far), and appends
    // the incidents' events. now: the frame's sample time, seconds.
    void judge(const Frame &frame, const std::vector<JobInfo> &jobs, double now, std::vector<FleetEvent> *events);

    size_t openCount() const { return m_openCount; }
    // Onsets and node incidents left out because maxPending or maxOpen was reached.
    uint64_t dropped() const { return m_dropped; }
    // What it holds beyond its per-GPU state: pending onsets and open incidents' members, in bytes.
    size_t heldBytes() const;
    // A GPU's symptoms as of the last frame (tests, the benchmark).
    uint16_t symptoms(uint32_t gpu) const { return gpu < m_cur.size() ? m_cur[gpu] : 0; }

private:
    static constexpr uint32_t none = std::numeric_limits<uint32_t>::max();
    static constexpr uint32_t kindBit(DomainKind kind) { return 1U << static_cast<uint32_t>(kind); }

    // A kind of cause: the symptoms that open it, the domain kinds that can cause them, the symptoms that join it.
    struct CauseClass
    {
        uint16_t opens;
        uint32_t kinds; // bit per DomainKind
        uint16_t joins;
    };
    enum ClassIndex { LeakClass, CoolingClass, PowerClass, NetworkClass, GpuClass };
    static const std::array<CauseClass, 5> classes;

    struct Pending
    {
        uint32_t gpu;
        uint16_t bits;
        double time;
    };
    // An incident's members that show its symptoms: per symptom, nodes braked, down and leaking, racks, and the
    // most a member's coolant supply is above its own average.
    struct Counts
    {
        std::array<uint32_t, symptomCount> bySymptom {};
        uint32_t active = 0, nodesBraked = 0, nodesDown = 0, nodesLeaking = 0, racks = 0;
        float coolantRise = 0;
        uint32_t of(Symptom symptom) const;
        void raise(const Counts &other);
    };
    struct Open
    {
        bool used = false;
        bool fresh = true; // not yet announced
        uint16_t seen = 0; // every symptom its members have shown while it is open
        uint64_t id = 0;
        int64_t domain = -1;
        int cls = 0;
        int64_t node = -1; // a node's incident
        uint16_t joins = 0;
        double start = 0;
        double clearedSince = -1;
        double lastSent = 0;
        double lastJobsAt = -1e300;
        std::vector<uint32_t> members;
        bool membersDirty = false;
        std::string firstText; // a node incident's first event text
        std::string openEvidence; // what was seen when it was folded ("within 4 s; no other leaf did")
        Counts now; // as of this frame
        Counts peak; // the most each reached while it was open: what people are told it hit
        std::vector<std::pair<uint64_t, uint32_t>> jobs; // id, GPUs hit
        EventSeverity sentSeverity = EventSeverity::Info;
        uint32_t sentGpus = 0;
        size_t sentJobs = 0;
    };

    void readEvents(const std::vector<FleetEvent> &events, size_t count, double now);
    void scan(const Frame &frame, double now);
    void joinOrWait(double now, std::vector<FleetEvent> *out);
    void fold(double now, std::vector<FleetEvent> *out);
    void foldClass(int cls, double now, std::vector<FleetEvent> *out);
    bool explains(int cls, uint32_t domain) const;
    uint32_t trippedOf(uint32_t a, uint32_t b);
    std::string corded(const std::vector<uint32_t> &nodes) const;
    uint32_t openSlot();
    void absorb(uint16_t bits, std::vector<FleetEvent> *out, double now);
    uint32_t domainIncidentOf(uint32_t gpu, uint16_t bits) const;
    bool mayTake(uint32_t slot, uint32_t gpu) const;
    void adopt(uint32_t slot, uint32_t gpu, std::vector<FleetEvent> *out, double now);
    void release(uint32_t slot);
    void close(uint32_t slot, double now, std::vector<FleetEvent> *out, const std::string &why);
    void tally(Open &o);
    void publish(double now, const std::vector<JobInfo> &jobs, std::vector<FleetEvent> *out);
    void countJobs(Open &o, const std::vector<JobInfo> &jobs);
    EventSeverity severityOf(const Open &o) const;
    std::shared_ptr<Incident> describe(const Open &o) const;
    std::string headline(const Open &o) const;
    std::string evidence(const Open &o) const;
    FleetEvent eventOf(const Open &o, EventKind kind, double now, std::shared_ptr<const Incident> incident) const;

    const FleetShape &m_shape;
    Options m_options;
    uint32_t m_gpus;
    DomainIndex m_index; // each GPU's domains, and each domain's GPU count
    // Per GPU.
    std::vector<uint16_t> m_cur, m_prev, m_eventBits;
    std::vector<int32_t> m_owner; // open incident slot, or -1
    std::vector<float> m_coolantBase; // allocated when the coolant plane first has a value
    std::vector<float> m_heatSince; // when each GPU last began to throttle for heat, seconds after m_epoch
    double m_epoch = -1;
    std::vector<uint8_t> m_nodeDown;
    std::vector<std::pair<uint32_t, double>> m_errorUntil; // GPUs with a GPU error symptom, until when
    // The frame's onsets (reused), those waiting to be folded, and when the first of them began.
    std::vector<Pending> m_onsets, m_pending;
    double m_pendingSince = -1;
    // The first event text of a GPU or a node (key | nodeKey) since the pending onsets began, for node incidents.
    static constexpr uint32_t nodeKey = 1U << 31U;
    std::unordered_map<uint32_t, std::string> m_textOf;
    const float *m_supply = nullptr; // the frame's coolant supply plane while it is judged, or null
    double m_lastNow = -1;
    // Per domain, reused by each fold.
    std::vector<uint32_t> m_pend, m_symp, m_sympNodes, m_lastNode, m_recentNodes, m_lastRecentNode;
    std::vector<double> m_pendFirst, m_pendLast;
    std::vector<int32_t> m_domainSlot; // the open incident naming a domain, or -1
    std::vector<uint32_t> m_bucketStart, m_bucketFill, m_bucket; // the waiting onsets by domain, as indices of m_left
    std::vector<Pending> m_left;
    std::vector<uint8_t> m_done;
    std::vector<uint32_t> m_toldNodes; // the nodes corded to one PDU alone that told the fold which one tripped
    std::vector<Open> m_open;
    std::vector<uint32_t> m_freeSlots;
    std::unordered_map<uint32_t, uint32_t> m_nodeIncident; // node -> slot of its open node incident
    size_t m_openCount = 0;
    uint64_t m_nextId = 1;
    uint64_t m_dropped = 0;
    bool m_first = true;
};

} // namespace fleetscope::backend
