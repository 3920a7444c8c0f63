// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framepoller.h"
#include "dcgm/promsample.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fleetscope::backend {

// A real fleet's jobs, from the labels dcgm-exporter puts on each GPU's series: with its Kubernetes mapping the pod
// holding the GPU (namespace, pod), with its HPC mapping the Slurm (or other) job id (hpc_job, and hpc_user in
// recent versions). The pods of one job are numbered <job>-<ordinal> (StatefulSets, indexed Jobs, JobSets,
// PyTorchJobs); they are one job, named without the ordinal, owned by the namespace. An HPC job is named and
// identified by its id, owned by its user.
//
// Only what the labels show is known: a job starts at the first poll that sees it and ends at the first that no
// longer does; jobs already running at the first poll keep that poll's time as their start, and no checkpoints are
// known. Fed by the poller's thread only.
class PrometheusJobs
{
public:
    static constexpr int64_t keepEndedMs = 3600000; // ended jobs are listed for an hour

    // A series' job: false when its labels name none.
    struct Key
    {
        std::string name;
        std::string owner;
        uint64_t id = 0;
    };
    static bool keyOf(const PromSample &labels, Key *key);
    // "train-llm-3" -> "train-llm"; a name without a numeric suffix stays as it is.
    static std::string withoutOrdinal(const std::string &pod);

    // One poll: begin, add every series (any metric's; a GPU may serve several jobs), finish.
    void begin(uint32_t gpuCount);
    void add(uint32_t gpu, const PromSample &labels);
    // Jobs seen for the first time start, jobs no longer seen end, both as events at sampleMs (none at the first
    // poll: what runs then started before it).
    void finish(int64_t sampleMs, const FleetShape &shape, std::vector<FleetEvent> *events);

    // Running jobs, then those ended in the last hour, each by start time.
    std::vector<JobInfo> jobs() const;
    // A job the GPU served at the last poll (0 when none).
    uint64_t jobOf(uint32_t gpu) const { return gpu < m_jobOfGpu.size() ? m_jobOfGpu[gpu] : 0; }
    const std::vector<uint64_t> &jobOfGpu() const { return m_jobOfGpu; }

private:
    std::map<uint64_t, Key> m_keys; // this poll's jobs by id
    std::map<uint64_t, std::vector<uint32_t>> m_gpus; // this poll's GPUs of each job, in the order added
    std::map<uint64_t, JobInfo> m_running;
    std::vector<JobInfo> m_ended; // oldest end first
    std::vector<uint64_t> m_jobOfGpu; // as of the last finished poll
    std::vector<uint64_t> m_nextJobOfGpu; // this poll's, so far
    std::vector<uint64_t> m_seen; // per GPU, this poll: a hash of the job labels last added
    bool m_first = true;
};

} // namespace fleetscope::backend
