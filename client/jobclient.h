// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/errorcoalescer.h"
#include "client/rpcclient.h"
#include "model/fleetmodel.h"
#include "model/jobreport.h"

#include <QString>

#include <cstdint>

namespace fleetscope {

// GetJob on a channel of its own to HOST:PORT (cancel, pending requests and the deadline, 10 s here: RpcClient): a
// job's account (docs/JOBS.md), checked against the fleet of the moment (client/jobdecode.h).
//
// Threads: the public API and all signals belong to the object's thread (the GUI thread). Requests are gRPC calls
// under a deadline on the client's completion-queue thread (RpcJobs), decoded there against the topology they were
// asked with; the answer comes back through a Handover carrying an immutable JobReport, and the answer of a request
// cancelled in the meantime is dropped.
class JobClient : public RpcClient
{
    Q_OBJECT
public:
    explicit JobClient(const QString &address, QObject *parent = nullptr);
    JobClient(const QString &address, const ChannelSecurity &security, QObject *parent = nullptr);

    // The fleet the answers' GPU, node and domain indices are checked against; until there is one, every request
    // fails.
    void setTopology(TopologyPtr topology);
    TopologyPtr topology() const { return m_topology; }

    // Starts a GetJob for the job with that id, or with id 0 the one of that name; answers with reportReady or
    // requestFailed, tagged with the returned id (never 0). An answer about another job than the id asked fails; a job
    // the backend does not hold fails in its words alone.
    quint64 getJob(uint64_t id, const QString &name = {});

Q_SIGNALS:
    void reportReady(const fleetscope::JobReportPtr &report);
    void requestFailed(quint64 requestId, const QString &message);
    // Parts of an answer that were dropped, for the log and status bar; at most one a second, the others of that
    // second counted in the next (ErrorCoalescer).
    void errorOccurred(const QString &message);

private:
    void deliver(quint64 id, const QString &failure, const JobReportPtr &report);

    TopologyPtr m_topology; // owner thread; each call holds the topology it was started with
    ErrorCoalescer m_errors { this };
};

} // namespace fleetscope
