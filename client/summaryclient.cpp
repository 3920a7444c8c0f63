// SPDX-License-Identifier: Apache-2.0
#include "client/summaryclient.h"

#include "client/answerdecode.h"
#include "client/grpcstatus.h"
#include "client/rpcjobs.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QLoggingCategory>
#include <QThread>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

Q_LOGGING_CATEGORY(lcSummary, "fleetscope.summary")

namespace fleetscope {

namespace pb = fleetscope::telemetry::v1;

namespace {
// The problems of one summary: the first maxSummaryProblems said, the rest counted.
class Notes
{
public:
    explicit Notes(Summary *summary)
        : m_summary(summary)
    { }
    ~Notes()
    {
        if (m_more > 0) {
            m_summary->problems << QStringLiteral("and %1 more problems like these").arg(m_more);
        }
    }
    Notes(const Notes &) = delete;
    Notes &operator=(const Notes &) = delete;

    Notes &operator<<(const QString &problem)
    {
        if (m_summary->problems.size() < maxSummaryProblems) {
            m_summary->problems << problem;
        } else {
            ++m_more;
        }
        return *this;
    }

private:
    Summary *m_summary;
    quint64 m_more = 0;
};

// Empty when the rollup holds together for a fleet of fleetGpus GPUs.
QString checkRollup(const SummaryRollup &r, uint32_t fleetGpus)
{
    if (r.gpuCount > fleetGpus) {
        return QStringLiteral("%1 GPUs, more than the fleet's %2").arg(r.gpuCount).arg(fleetGpus);
    }
    if (!std::isfinite(r.meanUtilisation) || r.meanUtilisation < 0 || r.meanUtilisation > 100) {
        return QStringLiteral("utilisation %1 % is outside 0..100").arg(r.meanUtilisation);
    }
    if (!std::isfinite(r.availability) || r.availability < 0 || r.availability > 1) {
        return QStringLiteral("availability %1 is outside 0..1").arg(r.availability);
    }
    if (!std::isfinite(r.busyGpuHours) || !std::isfinite(r.idleGpuHours) || r.busyGpuHours < 0
        || r.idleGpuHours < -1e-9) {
        return QStringLiteral("busy %1 / idle %2 GPU-hours are not valid").arg(r.busyGpuHours).arg(r.idleGpuHours);
    }
    if (r.unhealthyGpus > r.gpuCount) {
        return QStringLiteral("%1 unhealthy GPUs of %2").arg(r.unhealthyGpus).arg(r.gpuCount);
    }
    return {};
}
void validateRepeatOffenders(Summary *s, uint32_t n, Notes &notes)
{
    if (s->repeatOffenders.size() > maxRepeatOffenders) {
        notes << QStringLiteral("dropped %1 repeat offenders past the first %2")
                     .arg(s->repeatOffenders.size() - maxRepeatOffenders)
                     .arg(maxRepeatOffenders);
        s->repeatOffenders.resize(maxRepeatOffenders);
    }
    std::vector<SummaryRepeatOffender> kept;
    std::set<uint32_t> seen;
    for (const auto &o : s->repeatOffenders) {
        const double parts[] = { o.score, o.xids, o.seriousXids, o.eccDoubleBit, o.remappedRows,
            o.remappedRowsCorrectable, o.pcieReplays, o.throttleHours };
        QString why;
        if (o.gpu >= n) {
            why = QStringLiteral("outside the fleet of %1").arg(n);
        } else if (std::any_of(
                       std::begin(parts), std::end(parts), [](double v) { return !std::isfinite(v) || v < 0; })) {
            why = QStringLiteral("a score or count that is negative or not a number");
        } else if (seen.count(o.gpu)) {
            why = QStringLiteral("listed twice");
        }
        if (!why.isEmpty()) {
            notes << QStringLiteral("dropped repeat offender GPU %1 (score %2): %3").arg(o.gpu).arg(o.score).arg(why);
            continue;
        }
        seen.insert(o.gpu);
        kept.push_back(o);
    }
    s->repeatOffenders = std::move(kept);
    if (!std::isfinite(s->topPercentFailureShare) || s->topPercentFailureShare < 0 || s->topPercentFailureShare > 1) {
        notes
            << QStringLiteral("dropped the worst 1 %'s failure share %1: outside 0..1").arg(s->topPercentFailureShare);
        s->topPercentFailureShare = 0;
    }
}

void validateUnitHours(Summary *s, uint32_t n, Notes &notes)
{
    const auto &u = s->unitHours;
    // Every GPU of the fleet lost for the whole range is the most there can be (a little slack for rounding).
    const double rangeHours = static_cast<double>(std::max<int64_t>(0, s->toMs - s->fromMs)) / 3.6e6;
    const double most = static_cast<double>(n) * rangeHours * (1 + 1e-9) + 1e-9;
    QString why;
    if (!std::isfinite(u.lostGpuHours) || !std::isfinite(u.strandedGpuHours) || u.lostGpuHours < 0
        || u.strandedGpuHours < 0) {
        why = QStringLiteral("GPU-hours negative or not a number");
    } else if (u.lostGpuHours > most) {
        why = QStringLiteral("more than the fleet's %1 GPU-hours over the range").arg(most);
    } else if (u.strandedGpuHours > u.lostGpuHours) {
        why = QStringLiteral("more stranded GPU-hours than lost");
    } else if (u.units > n || u.healthyUnitsAtEnd > u.units) {
        why = QStringLiteral("%1 healthy of %2 units in a fleet of %3 GPUs")
                  .arg(u.healthyUnitsAtEnd)
                  .arg(u.units)
                  .arg(n);
    }
    if (!why.isEmpty()) {
        notes << QStringLiteral("dropped the GPU-hours lost in units (%1 lost, %2 stranded): %3")
                     .arg(u.lostGpuHours)
                     .arg(u.strandedGpuHours)
                     .arg(why);
        s->unitHours = {};
    }
}
} // namespace

bool validateSummary(Summary *s)
{
    Notes notes(s);
    const uint32_t n = s->fleet.gpuCount;
    if (const QString why = checkRollup(s->fleet, n); !why.isEmpty() || n == 0 || n > maxGpus) {
        notes << QStringLiteral("summary rejected: the fleet rollup is bad (%1)")
                     .arg(!why.isEmpty() ? why
                             : n == 0
                             ? QStringLiteral("no GPUs")
                             : QStringLiteral("%1 GPUs, more than a topology may have (%2)").arg(n).arg(maxGpus));
        return false;
    }
    if (s->fleet.failures != s->totalFailures) {
        notes << QStringLiteral("summary: the fleet's %1 failures differ from the total %2; using the fleet's")
                     .arg(s->fleet.failures)
                     .arg(s->totalFailures);
        s->totalFailures = s->fleet.failures;
    }
    // Rows and racks divide the fleet, running jobs hold distinct GPUs: a list holds no more rollups than the fleet
    // has GPUs, nor more GPUs added up.
    auto filter = [&](std::vector<SummaryRollup> &list, const QString &kind) {
        std::vector<SummaryRollup> kept;
        uint64_t gpus = 0;
        for (auto &r : list) {
            QString why = checkRollup(r, n);
            if (why.isEmpty() && (kept.size() >= n || gpus + r.gpuCount > n)) {
                why = QStringLiteral("past the fleet's %1 GPUs, which the %2s share").arg(n).arg(kind);
            }
            if (!why.isEmpty()) {
                notes << QStringLiteral("dropped %1 %2: %3").arg(kind, r.name, why);
            } else {
                gpus += r.gpuCount;
                kept.push_back(std::move(r));
            }
        }
        list = std::move(kept);
    };
    filter(s->rows, QStringLiteral("row"));
    filter(s->racks, QStringLiteral("rack"));
    filter(s->jobs, QStringLiteral("job"));

    std::vector<SummaryOffender> kept;
    std::set<uint32_t> seen;
    uint64_t sum = 0;
    for (const auto &o : s->offenders) {
        QString why;
        if (o.gpu >= n) {
            why = QStringLiteral("outside the fleet of %1").arg(n);
        } else if (o.failures == 0) {
            why = QStringLiteral("no failures");
        } else if (!kept.empty() && o.failures > kept.back().failures) {
            why = QStringLiteral("out of order");
        } else if (seen.count(o.gpu)) {
            why = QStringLiteral("listed twice");
        } else if (sum + o.failures > s->totalFailures) {
            why = QStringLiteral("more failures than the total %1").arg(s->totalFailures);
        }
        if (!why.isEmpty()) {
            notes << QStringLiteral("dropped offender GPU %1 (%2 failures): %3").arg(o.gpu).arg(o.failures).arg(why);
            continue;
        }
        seen.insert(o.gpu);
        sum += o.failures;
        kept.push_back(o);
    }
    s->offenders = std::move(kept);
    validateRepeatOffenders(s, n, notes);
    validateUnitHours(s, n, notes);
    return true;
}

SummaryClient::SummaryClient(const QString &address, QObject *parent)
    : SummaryClient(address, ChannelSecurity(), parent)
{ }

SummaryClient::SummaryClient(const QString &address, const ChannelSecurity &security, QObject *parent)
    : RpcClient(address, security, parent)
{
    qRegisterMetaType<SummaryPtr>();
    connect(&m_errors, &ErrorCoalescer::errorOccurred, this, [this](const QString &message) {
        qCWarning(lcSummary, "%s", qPrintable(message));
        Q_EMIT errorOccurred(message);
    });
}

quint64 SummaryClient::requestSummary(int64_t fromMs, int64_t toMs, uint32_t topOffenders)
{
    Q_ASSERT(QThread::currentThread() == thread());
    pb::GetSummaryRequest request;
    request.set_from_ms(fromMs);
    request.set_to_ms(toMs);
    request.set_top_offenders(topOffenders);
    return jobs().unary<pb::GetSummaryRequest, pb::Summary>(
        this, deadline(), std::move(request),
        // The call holds the channel, not the stub: the stub is needed only to issue it.
        [channel = channel()](
            grpc::ClientContext *context, const pb::GetSummaryRequest &request, grpc::CompletionQueue *cq) {
            return pb::Telemetry::NewStub(channel)->PrepareAsyncGetSummary(context, request, cq);
        },
        [this, fromMs, toMs](quint64 id, const grpc::Status &status, pb::Summary &answer) -> std::function<void()> {
            QString failure;
            SummaryPtr summary;
            if (status.ok()) {
                auto decoded = decodeSummary(answer, &failure);
                decoded->requestId = id;
                decoded->requestedFromMs = fromMs;
                decoded->requestedToMs = toMs;
                summary = std::move(decoded);
            } else {
                failure = describeStatus(status);
            }
            return [this, id, failure, summary] { deliver(id, failure, summary); };
        });
}

void SummaryClient::deliver(quint64 id, const QString &failure, const SummaryPtr &summary)
{
    if (!failure.isEmpty()) {
        qCInfo(lcSummary, "summary request %llu failed: %s", id, qPrintable(failure));
        Q_EMIT requestFailed(id, failure);
        return;
    }
    // An answer can list a problem for each of thousands of rollups and offenders: said coalesced, not one by one.
    for (const auto &problem : summary->problems) {
        m_errors.report(QStringLiteral("summary"), problem);
    }
    Q_EMIT summaryReady(summary);
}

} // namespace fleetscope
