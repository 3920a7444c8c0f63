// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framepoller.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fleetscope::backend {

// A Slurm fleet's jobs, from a Slurm exporter's node-to-job series joined with the GPUs' nodes. soperator (Nebius'
// Slurm on Kubernetes) dropped dcgm-exporter's hpc_job label for its series count and exports instead, from its own
// Slurm exporter (docs/slurm-exporter.md there):
//   slurm_node_job{job_id, node_name} 1          one series per node of each running job
//   slurm_job_info{job_id, job_name, user_name, start_time, job_state, ...} 1   one per job Slurm lists
// A job's GPUs are every GPU of the nodes it runs on (the exporter gives no GPU indices: several jobs sharing a node
// each get all of its GPUs, as soperator's own dashboards attribute them). A node_name is the node's hostname, or
// else one of the pod names dcgm-exporter's series carry on that node (soperator's Slurm nodes are pods, and its
// dashboards join exported_pod to node_name): noteAlias() learns them.
//
// Everything read is bounded and checked: label lengths, job ids, start times (a time before 2000 or more than a day
// ahead of the sample is ignored, and the first poll that saw the job gives its start), job counts. What is dropped
// is counted in report(). A job starts at the first poll that sees it (its start time Slurm's when given) and ends
// at the first that no longer does; the first poll's jobs raise no start event (they ran before it). A job seen again
// after it ended (requeued: Slurm keeps its id) runs again, listed once, keeping the start it had. Fed by one
// thread (a poller's, or a folder's under its lock).
class SlurmJobs
{
public:
    static constexpr std::string_view nodeJobSeries = "slurm_node_job";
    static constexpr std::string_view jobInfoSeries = "slurm_job_info";
    static constexpr size_t maxIdBytes = 64; // Slurm's ids are numbers, array tasks "<id>_<task>"
    static constexpr size_t maxNameBytes = 256; // a name or user longer than this is cut, at a character boundary
    static constexpr size_t maxNodeNameBytes = 253; // a DNS name's bound
    static constexpr size_t maxJobs = 65536; // far above the running jobs of any fleet; the rest are dropped
    static constexpr int64_t minStartMs = 946684800000; // 2000-01-01: an older start time is not Slurm's
    static constexpr int64_t keepEndedMs = 3600000; // ended jobs are listed for an hour, as PrometheusJobs'

    // The instant query for both series: the jobs' info only for those placed on a node (Slurm also lists pending
    // and recently finished jobs).
    static std::string query();
    // At most this many series in an answer (a few jobs per node and their info); more is refused as a whole.
    static size_t maxSeries(size_t nodes) { return nodes * 16 + 4096; }

    // One series, as read label by label (readLabel).
    struct Series
    {
        enum class Kind { Other, NodeJob, JobInfo };
        Kind kind = Kind::Other;
        std::string jobId;
        std::string nodeName;
        std::string jobName;
        std::string userName;
        std::string startTime; // Unix seconds, as text
        bool tooLong = false; // an id or node name over its bound: the series is dropped
    };
    // Reads one label of a series (__name__ gives its kind); others are ignored. Values are copied up to their bound.
    static void readLabel(std::string_view name, std::string_view value, Series *series);

    // What the last finished poll dropped, and why.
    struct Report
    {
        size_t series = 0; // read
        size_t badSeries = 0; // without a job id or node, or with an id or node name too long or unprintable
        std::string badExample;
        size_t unknownNodes = 0; // node_name neither a hostname of the fleet nor a known pod
        std::string unknownExample;
        size_t duplicateInfo = 0; // a second info series for a job: the first is kept
        size_t badStartTimes = 0; // unreadable, before 2000 or more than a day ahead: the poll's time is used
        size_t droppedJobs = 0; // past maxJobs
        size_t jobs = 0; // running, placed
    };

    // Which node a hostname is (-1: none), from the poller's topology.
    using NodeOf = std::function<int64_t(std::string_view hostname)>;

    // A pod name dcgm-exporter's series carry on this node (its exported_pod / pod): a node_name that is no hostname
    // may name it. At most a few names a node are kept; a name seen on another node moves there.
    void noteAlias(uint32_t node, std::string_view pod, size_t nodeCount);

    // One poll: begin, add every series of the answer, finish.
    void begin();
    void add(const Series &series);
    void finish(int64_t sampleMs, const FleetShape &shape, const NodeOf &nodeOf, std::vector<FleetEvent> *events);

    // Whether a Slurm job runs on this GPU's node, as of the last finished poll: its pod labels (soperator's Slurm
    // worker pods, which name the node, not a job) are then not a job of their own.
    bool claims(uint32_t gpu) const { return gpu < m_jobOfGpu.size() && m_jobOfGpu[gpu] != 0; }
    bool any() const { return !m_running.empty(); }
    // Running jobs, then those ended in the last hour, each by start time.
    std::vector<JobInfo> jobs() const;
    const std::vector<uint64_t> &jobOfGpu() const { return m_jobOfGpu; }
    const Report &report() const { return m_report; }

    // A Slurm job id as a job id: the number itself when it is one (as PrometheusJobs takes hpc_job), else a hash
    // with the top bit set (as PrometheusJobs' pod jobs), 0 when empty.
    static uint64_t idOf(std::string_view jobId);
    // The jobs of both sources: Slurm's, then the pod labels' (which the caller kept off the GPUs Slurm claims); a
    // pod job with a Slurm job's id is the same job and goes. Running first, then ended, each by start time.
    static std::vector<JobInfo> merged(std::vector<JobInfo> slurm, std::vector<JobInfo> pods);
    // Each GPU's job: Slurm's where it claims one, else the pod labels'.
    void mergedJobOfGpu(const std::vector<uint64_t> &pods, std::vector<uint64_t> *out) const;

private:
    struct Info
    {
        std::string name;
        std::string user;
        std::string startTime; // checked when the poll's time is known
    };
    void bad(const Series &series, const char *why);

    Report m_report;
    std::map<uint64_t, std::vector<std::string>> m_nodeNames; // this poll's: job -> its node names
    std::map<uint64_t, std::string> m_idText; // this poll's: job -> its id as Slurm wrote it
    std::map<uint64_t, Info> m_info; // this poll's
    std::map<std::string, uint32_t, std::less<>> m_aliases; // pod name -> node
    std::vector<std::vector<std::string>> m_aliasesOfNode;
    std::map<uint64_t, JobInfo> m_running;
    std::vector<JobInfo> m_ended; // oldest end first
    std::vector<uint64_t> m_jobOfGpu;
    bool m_first = true;
};

} // namespace fleetscope::backend
