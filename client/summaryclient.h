// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/errorcoalescer.h"
#include "client/rpcclient.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <vector>

namespace fleetscope {

// One GetSummary rollup: the fleet, a row, a rack or a running job.
struct SummaryRollup
{
    QString name;
    uint32_t gpuCount = 0;
    double meanUtilisation = 0; // percent, over online GPU samples
    double busyGpuHours = 0;
    double idleGpuHours = 0;
    uint32_t unhealthyGpus = 0; // warning, critical or offline at the end of the range
    double availability = 0; // fraction of GPU-time online, 0..1
    uint64_t failures = 0; // XID and double-bit ECC events
};

struct SummaryOffender
{
    uint32_t gpu = 0; // dense index
    uint64_t failures = 0;
};

// A GPU's lasting repeat-offender score and its parts (decayed counts, 7-day half-life: docs/OFFENDERS.md).
struct SummaryRepeatOffender
{
    uint32_t gpu = 0; // dense index
    double score = 0;
    double xids = 0; // every XID, serious ones too
    double seriousXids = 0;
    double eccDoubleBit = 0;
    double remappedRows = 0; // for uncorrectable errors
    double remappedRowsCorrectable = 0;
    double pcieReplays = 0;
    double throttleHours = 0;
};

// The most repeat offenders a summary keeps (the backend lists at most as many), and the most offenders: a request's
// top_offenders is at most as many too.
constexpr size_t maxRepeatOffenders = 1000;
constexpr size_t maxOffenders = 1000;
// The most problems a summary describes one by one; the rest are counted in a last line. A 16 MiB answer can hold
// millions of bad entries of a few bytes each, each a line of a hundred characters once described.
constexpr int maxSummaryProblems = 50;

// Capacity lost in schedulable units (an HGX node, an NVL72 rack) over the summary's range.
struct SummaryUnitHours
{
    double lostGpuHours = 0; // all GPUs of units not fully healthy, integrated over time
    double strandedGpuHours = 0; // of those, on the units' healthy GPUs
    uint32_t units = 0; // 0: the backend did not say (an older one)
    uint32_t healthyUnitsAtEnd = 0;
};

// GetSummary's answer in plain types. The backend gives aggregates over one range only, no time series.
struct Summary
{
    quint64 requestId = 0;
    int64_t requestedFromMs = 0;
    int64_t requestedToMs = 0;
    int64_t fromMs = 0; // the held range actually covered
    int64_t toMs = 0;
    uint32_t frames = 0;
    SummaryRollup fleet;
    std::vector<SummaryRollup> rows;
    std::vector<SummaryRollup> racks;
    std::vector<SummaryRollup> jobs;
    std::vector<SummaryOffender> offenders; // most failures first
    uint64_t totalFailures = 0;
    std::vector<SummaryRepeatOffender> repeatOffenders; // highest lasting score first, as of the range's end
    double topPercentFailureShare = 0; // of the decayed failures, the share the worst 1 % of GPUs carry, 0..1
    SummaryUnitHours unitHours;
    QStringList problems; // parts dropped as malformed, for people
};
using SummaryPtr = std::shared_ptr<const Summary>;

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

Q_DECLARE_METATYPE(fleetscope::SummaryPtr)
