// SPDX-License-Identifier: Apache-2.0
// The simulator's jobs each step: what each is doing (computing at its slowest GPU's pace, checkpointing, stalled and
// why, restarting), their checkpoints and restarts, and the ground truth of where their GPU-time went.
#include "sim/simulator.h"

#include "core/determinism.h"

#include <algorithm>
#include <cmath>

namespace fleetscope::backend {

using namespace determinism;

namespace {
constexpr double checkpointSeconds = 45.0; // a checkpoint's write, as inCheckpoint has it
// Loading the checkpoint after a restart: the job's GPUs start again, read it and warm up (drawn per restart).
constexpr double minRestartSeconds = 120.0;
constexpr double maxRestartSeconds = 300.0;
} // namespace

int64_t Simulator::domainFaultOf(uint32_t gpu, bool link) const
{
    // The domain faults in force whose effect this is: a leaf down cuts a GPU's link; a PDU trip or a leak powers a
    // node off. Few are in force at once, and this is asked only of stalled jobs.
    const double t = nowSeconds();
    using Kind = InjectedFaults::DomainFault::Kind;
    std::vector<uint32_t> serving;
    for (const auto &f : m_injected.domainFaults()) {
        if (f.onsetSeconds > t || f.endSeconds <= t) {
            continue;
        }
        if (link && f.kind == Kind::LeafDown && gpu < m_shape.gpuLinks.size()
            && m_shape.gpuLinks[gpu].leaf == f.domain) {
            return f.domain;
        }
        if (!link && (f.kind == Kind::PduTrip || f.kind == Kind::Leak)) {
            if (serving.empty()) {
                serving = m_shape.domainsOfGpu(gpu);
            }
            if (std::find(serving.begin(), serving.end(), f.domain) != serving.end()) {
                return f.domain;
            }
        }
    }
    return -1;
}

JobTruth::StallLoss Simulator::stallCause(const Job &job) const
{
    using Cause = JobTruth::StallCause;
    JobTruth::StallLoss s;
    // A node down first (it costs a restart), then an impaired GPU, then a link down.
    for (uint32_t n = job.firstNode; n < job.firstNode + job.nodeCount; ++n) {
        if (m_faults.nodeDown(n)) {
            const uint32_t gpu = m_shape.nodes[n].firstGpu;
            s.domain = domainFaultOf(gpu, false);
            s.cause = s.domain >= 0 ? Cause::Domain : Cause::NodeDown;
            s.node = n;
            return s;
        }
    }
    const uint32_t first = m_shape.nodes[job.firstNode].firstGpu;
    const auto &last = m_shape.nodes[job.firstNode + job.nodeCount - 1];
    for (uint32_t g = first; g < last.firstGpu + last.gpuCount; ++g) {
        if (m_faults.gpuImpaired(g)) {
            s.cause = Cause::GpuImpaired;
            s.gpu = g;
            s.node = m_shape.nodeOfGpu[g];
            return s;
        }
    }
    for (uint32_t g = first; g < last.firstGpu + last.gpuCount; ++g) {
        if (m_domainFaults.linkDown(g)) {
            s.domain = domainFaultOf(g, true);
            s.cause = s.domain >= 0 ? Cause::Domain : Cause::LinkDown;
            s.gpu = g;
            s.node = m_shape.nodeOfGpu[g];
            return s;
        }
    }
    return s;
}

void Simulator::accountJobs(const std::vector<float> &jobDrag, const std::vector<int64_t> &slowGpu)
{
    using State = JobTruth::State;
    const double t = nowSeconds();
    const double dt = m_lastDt;
    // Before the first step (the constructor's settling) nothing is accounted: no time has passed.
    const bool account = m_step > 0;
    m_jobState.assign(m_jobs.size(), State::Compute);
    for (size_t j = 0; j < m_jobs.size(); ++j) {
        Job &job = m_jobs[j];
        const uint32_t first = m_shape.nodes[job.firstNode].firstGpu;
        const auto &last = m_shape.nodes[job.firstNode + job.nodeCount - 1];
        const uint32_t gpus = last.firstGpu + last.gpuCount - first;
        JobTruth::Step step;
        if (m_jobStalled[j] != 0) {
            step.state = State::Stall;
            step.stall = stallCause(job);
            job.stalled = true;
            // A GPU that went offline lost its state: the job restarts from its checkpoint when the stall ends.
            job.lostGpus = job.lostGpus || step.stall.cause == JobTruth::StallCause::NodeDown
                || (step.stall.cause == JobTruth::StallCause::Domain && step.stall.node >= 0 && step.stall.gpu < 0);
        } else {
            if (job.stalled) {
                job.stalled = false;
                job.runningSinceSeconds = t;
                if (job.lostGpus || job.restarting) {
                    // A restart (again, if one was under way): load the last checkpoint, redo what followed it.
                    job.lostGpus = false;
                    job.restarting = true;
                    const double u = unit(hash(m_seed, SaltRestart, job.id, job.restarts));
                    job.restartUntilSeconds = t + minRestartSeconds + (maxRestartSeconds - minRestartSeconds) * u;
                    ++job.restarts;
                    if (account) {
                        m_truth.record(job.id, gpus, job.startSeconds, 0, step); // known to the truth before it moves
                        m_truth.restarted(job.id);
                    }
                }
            }
            if (job.restarting && t >= job.restartUntilSeconds) {
                job.restarting = false;
                job.fromRestart = true;
                job.cadenceFromSeconds = job.runningSinceSeconds = job.restartUntilSeconds;
            }
            if (job.restarting) {
                step.state = State::Restart;
            } else {
                // The last checkpoint whose write ended by now, if the job ran through all of it.
                const double age = t - job.cadenceFromSeconds - checkpointSeconds;
                const double k = age >= 0 ? std::floor(age / job.checkpointEverySeconds) : -1;
                const double begun = job.cadenceFromSeconds + k * job.checkpointEverySeconds;
                if (k >= 1 && begun >= job.runningSinceSeconds
                    && (std::isnan(job.lastCheckpointSeconds) || begun > job.lastCheckpointSeconds)) {
                    job.lastCheckpointSeconds = begun;
                    if (account) {
                        m_truth.checkpointed(job.id);
                    }
                }
                if (inCheckpoint(job, t)) {
                    step.state = State::Checkpoint;
                } else {
                    step.pace = jobDrag[j];
                    step.slowGpu = slowGpu[j];
                }
            }
        }
        m_jobState[j] = step.state;
        if (account) {
            m_truth.record(job.id, gpus, job.startSeconds, dt, step);
        }
    }
    if (account) {
        m_truth.endStep(t);
    }
}

} // namespace fleetscope::backend
