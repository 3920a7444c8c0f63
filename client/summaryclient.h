// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/errorcoalescer.h"
#include "client/rpcclient.h"
#include "model/summary.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <vector>

namespace fleetscope {

// Checks a decoded summary and drops what does not hold together, describing each drop in summary->problems: rollups
// with more GPUs than the fleet, a utilisation outside 0..100 %, an availability outside 0..1, negative or
// non-finite hours, or more unhealthy GPUs than GPUs; offenders outside the fleet, without failures, out of order or
// repeated; and offenders whose failures add up to more than the total; repeat offenders outside the fleet, repeated,
// past the first maxRepeatOffenders or with a non-finite or negative score or part; a failure share outside 0..1 (0
// then); unit hours that are not finite, negative, more than the fleet's GPU-hours over the range or fewer than their
// stranded part, and more healthy units than units (all unit figures zeroed then). Rows, racks and jobs each share the
// fleet (rows and racks divide it, running jobs hold distinct GPUs): a list's rollups past the fleet's GPUs in number
// or in GPUs added up are dropped. At most maxSummaryProblems problems are described, the rest counted. Returns false
// when the fleet rollup itself is bad or claims more GPUs than a topology may (nothing of the summary can be trusted
// then).
bool validateSummary(Summary *summary);

// GetSummary on a channel of its own to HOST:PORT (cancel, pending requests and the deadline: RpcClient).
//
// Threads: the public API and all signals belong to the object's thread (the GUI thread). Requests are gRPC calls
// under a deadline on the client's completion-queue thread (RpcJobs), decoded there; the answer comes back through a
// Handover carrying an immutable Summary, and the answer of a request cancelled in the meantime is dropped.
class SummaryClient : public RpcClient
{
    Q_OBJECT
public:
    explicit SummaryClient(const QString &address, QObject *parent = nullptr);
    SummaryClient(const QString &address, const ChannelSecurity &security, QObject *parent = nullptr);

    // Starts a GetSummary over [fromMs, toMs) (toMs 0: now) listing up to topOffenders failing GPUs (0: the backend's
    // default, at most 1000); answers with summaryReady or requestFailed, tagged with the returned id (never 0).
    quint64 requestSummary(int64_t fromMs, int64_t toMs, uint32_t topOffenders = 0);

Q_SIGNALS:
    void summaryReady(const fleetscope::SummaryPtr &summary);
    void requestFailed(quint64 requestId, const QString &message);
    // Bad input that was dropped, for the log and status bar; at most one a second, the others of that second counted
    // in the next (ErrorCoalescer).
    void errorOccurred(const QString &message);

private:
    void deliver(quint64 id, const QString &failure, const SummaryPtr &summary);

    ErrorCoalescer m_errors { this };
};

} // namespace fleetscope
