// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/alerts.h"
#include "model/fleetmodel.h"
#include "model/history.h"
#include "model/place.h"
#include "model/versiondrift.h"

#include <QString>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

// What is wrong right now: the fleet's events folded into open problems, ranked: the backend's incidents first (a
// shared cause: a cooling unit, a PDU, a leaf switch), then single GPUs' and nodes' problems by severity and blast
// radius.
namespace fleetscope {

struct Problem
{
    enum class Kind : uint8_t {
        XidBurst,
        EccDoubleBit,
        ThermalThrottle,
        PowerThrottle,
        NodeDown,
        Anomaly,
        Drift,
        Incident,
        Alert // the NOC's Alertmanager's, as the backend placed it on the fleet (model/alertproblems.h)
    };
    static constexpr int kindCount = 9;

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
    QString text; // the latest event's own words (an incident's headline)
    // An incident: the backend's, as of its latest event (open or update); null for every other kind.
    std::shared_ptr<const Incident> incident;
    uint32_t covered = 0; // an incident: the open problems of its GPUs it explains, not listed on their own
    // An alert: as the backend last served it; also an incident's own alert, the backend's FleetscopeIncident that
    // Alertmanager holds for it (model/alertproblems.h withAlerts); null otherwise. quietNote: why a suppressed one
    // is quiet, for people ("silenced by alice until 16:00: swapping the PSU"); empty while it fires.
    std::shared_ptr<const FleetAlert> alert;
    QString quietNote;
    // Several GPUs of one running job with the same kind of problem (and metric), folded into one line: the job (0:
    // not folded) and its name. gpus holds the GPUs behind it.
    uint64_t foldedJob = 0;
    QString foldedJobName;

    // From the jobs running now (ProblemBoard::open).
    std::vector<uint64_t> jobIds; // running jobs on the GPUs it hits
    std::vector<uint32_t> gpus; // the GPUs it hits: its own, its node's, or its rack's that share it (ascending)
    uint32_t gpusHit = 0; // gpus.size()
    uint32_t blastGpus = 0; // every GPU of the jobs it hits, and the GPUs it hits outside any job

    // Which problem this is across updates: the same kind at the same place (and for a burst, from the same first XID;
    // an incident by its id; a folded line by its job; an alert by its fingerprint).
    using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, QString, uint64_t, uint64_t>;
    Key key() const
    {
        const uint64_t id = incident ? incident->id : foldedJob;
        return { static_cast<int>(kind), gpu, node, rack, kind == Kind::XidBurst ? sinceMs : 0,
            kind == Kind::Alert && alert ? alert->fingerprint : metric, driftJob, id };
    }
    // An alert (or an incident whose alert) Alertmanager silenced or inhibited: listed after every problem that is
    // not (an incident after the incidents that are not).
    bool isQuietAlert() const { return alert && alert->suppressed; }
};

QString describe(Problem::Kind kind);
// The problem's own words for people: "XID burst: 79 (GPU has fallen off the bus) ×3, 48 (…)", an anomaly's reason.
QString problemSummary(const Problem &problem);
// Where it is: "r07-k03-n02 GPU 5", a node's hostname, "rack r06-k05 (21 GPUs)".
// An incident's: its domain ("cooling unit r05-crah1"); a folded line's: its job ("job finetune-11").
QString problemPlace(const Problem &problem, const Topology *topology);
// An incident that names a shared domain (a cooling unit, a PDU, a leaf switch): listed first, counted as an incident.
// A node's or a GPU's own incident (the backend's cause "node" or "gpu", no domain) is one of the single problems.
bool isSharedIncident(const Problem &problem);
// An incident's cause for a label, upper case: "COOLING", "POWER", "NETWORK", "GPU"; empty for other problems.
QString incidentCauseLabel(const Problem &problem);
// The smallest place of the topology that holds all these GPUs (ascending, within the topology): a GPU, a node, a
// rack, a row or the fleet. Where a click on a problem drills to.
Place smallestPlaceHolding(const std::vector<uint32_t> &gpus, const Topology &topology);
// The GPUs as runs [first, count), ascending: what an incident's outline is given as.
std::vector<std::pair<uint32_t, uint32_t>> gpuRuns(const std::vector<uint32_t> &gpus);

// What the problems page and the health strip count, from one list of open problems, so that both say the same:
// incidents (shared ones), and the other problems (lines), of which critical; the NOC's alerts apart, of which
// critical (firing) and silenced or inhibited.
struct ProblemTally
{
    uint32_t incidents = 0;
    uint32_t others = 0;
    uint32_t criticalIncidents = 0;
    uint32_t criticalOthers = 0;
    uint32_t alerts = 0;
    uint32_t criticalAlerts = 0; // firing, not silenced
    uint32_t quietAlerts = 0; // silenced or inhibited
};
ProblemTally tallyProblems(const std::vector<Problem> &problems);
// "2 incidents · 9 other problems (3 critical)", "No open problems"; with alerts "… · 3 alerts (1 critical, 1
// silenced)".
QString tallyText(const ProblemTally &tally);
// What a wall's banner says while a shared incident is open: the first one of the ranked problems, its cause and
// headline, and what else is open ("NETWORK · Leaf su03-l5 down: 32 GPUs lost their link · 1 more incident · 9 other
// problems"); empty when none is open. severity: the incident's.
QString leadIncidentLine(const std::vector<Problem> &ranked, const ProblemTally &tally, EventSeverity *severity);

// A job on more than one driver / VBIOS version (warning: its GPUs off the job's majority), a rack on more than one
// (information: a rollout half done, a node it missed), one problem each; unranked (rankProblems).
std::vector<Problem> driftProblems(const VersionDrift &drift);
// Fills each problem's jobs and blast radius from the running jobs (may be null), then sorts them (sortProblems).
void rankProblems(std::vector<Problem> *problems, const JobList *jobs);
// Incidents first, then critical, then by blast radius (GPUs of the jobs hit), then oldest; alerts silenced or
// inhibited after all the rest (someone is on them).
void sortProblems(std::vector<Problem> *problems);

// Folds events (oldest first) into problems: XIDs on one GPU are one burst until 3 minutes pass without one (as
// NVIDIA's fleet tools group them); a double-bit ECC error stays a problem while its event is held; a throttle, a
// node down and an anomaly (the backend's detector) last from their start to their end. The backend's incidents are
// kept by id: an open or an update sets the incident as sent (an update of an id not seen opens it), a close removes
// it.
//
// open() lists the shared incidents first (isSharedIncident). A GPU's or node's problem that one of them explains is
// not listed again: it is the incident's evidence, counted on it (Problem::covered). Explained: all its GPUs are the
// incident's or inside its domain (the backend joins a symptom there to the incident; its next update lists the GPU),
// it began no earlier than coveredLeadMs before the incident, and its kind is one the incident's cause produces
// (cooling: throttling and anomalies; power: those, nodes down and XIDs; network: anomalies, XIDs and nodes down). A
// double-bit ECC error under a cooling incident is a GPU's own fault and stays a line. A node's or a GPU's own
// incident says what the lines of its GPUs already say (an ECC error, a node down): it is listed only where no line
// covers its GPUs (a rail link's errors, a leak), among the single problems. Then several GPUs of one running job
// with the same kind of problem are folded into one line ("finetune-11: 3 GPUs with double-bit ECC").
class ProblemBoard
{
public:
    static constexpr int64_t burstSilenceMs = 3 * 60 * 1000;
    // Bounds against a backend that sends events for places without end (it is untrusted): problems held, and the
    // distinct XID codes a burst lists. Past them an event is dropped and counted.
    static constexpr size_t maxProblems = 200'000;
    static constexpr size_t maxXidCodes = 32;
    // How long before an incident's start a symptom may begin and still be the incident's (the backend folds symptoms
    // that begin together; its window is shorter).
    static constexpr int64_t coveredLeadMs = 2 * 60 * 1000;
    // The GPUs an incident's outline lists when there is no topology to bound its runs by.
    static constexpr uint32_t maxIncidentGpus = 1U << 20;

    void clear();
    void add(const FleetEvent &event);
    // The problems open at nowMs, ranked: incidents first, then critical, then by blast radius (GPUs of the jobs hit),
    // then oldest. Places and jobs from topology and jobs (either may be null: then a problem hits its own GPUs, no
    // job). With a topology, the same throttling on several GPUs of one rack (a cooling or power fault is a rack's) is
    // one problem.
    std::vector<Problem> open(int64_t nowMs, const Topology *topology, const JobList *jobs) const;
    // The GPUs with an open problem of this kind (not a node's, not an incident), ascending and each once, without
    // ranking anything.
    std::vector<uint32_t> gpusWith(Problem::Kind kind) const;
    size_t incidentCount() const { return m_incidents.size(); }
    // Events dropped for the bounds above since the last clear().
    uint64_t dropped() const { return m_dropped; }

private:
    using Key = std::tuple<int, int64_t, QString>; // kind, GPU or node, an anomaly's metric
    std::map<Key, Problem> m_problems;
    std::map<uint64_t, Problem> m_incidents; // by the backend's id
    uint64_t m_dropped = 0;
};

} // namespace fleetscope
