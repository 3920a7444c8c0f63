// SPDX-License-Identifier: Apache-2.0
#include "client/summaryclient.h"

#include "client/grpcstatus.h"
#include "client/rpcjobs.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QLoggingCategory>
#include <QThread>

#include <chrono>
#include <cmath>
#include <set>

Q_LOGGING_CATEGORY(lcSummary, "fleetscope.summary")

namespace fleetscope {

namespace pb = fleetscope::telemetry::v1;

namespace {
SummaryRollup decode(const pb::Rollup &r)
{
    return { QString::fromStdString(r.name()), r.gpu_count(), r.mean_utilisation(), r.busy_gpu_hours(),
        r.idle_gpu_hours(), r.unhealthy_gpus(), r.availability(), r.failures() };
}

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
} // namespace

bool validateSummary(Summary *s)
{
    const uint32_t n = s->fleet.gpuCount;
    if (const QString why = checkRollup(s->fleet, n); !why.isEmpty() || n == 0) {
        s->problems << QStringLiteral("summary rejected: the fleet rollup is bad (%1)")
                           .arg(why.isEmpty() ? QStringLiteral("no GPUs") : why);
        return false;
    }
    if (s->fleet.failures != s->totalFailures) {
        s->problems << QStringLiteral("summary: the fleet's %1 failures differ from the total %2; using the fleet's")
                           .arg(s->fleet.failures)
                           .arg(s->totalFailures);
        s->totalFailures = s->fleet.failures;
    }
    auto filter = [&](std::vector<SummaryRollup> &list, const QString &kind) {
        std::vector<SummaryRollup> kept;
        for (auto &r : list) {
            if (const QString why = checkRollup(r, n); !why.isEmpty()) {
                s->problems << QStringLiteral("dropped %1 %2: %3").arg(kind, r.name, why);
            } else {
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
            s->problems
                << QStringLiteral("dropped offender GPU %1 (%2 failures): %3").arg(o.gpu).arg(o.failures).arg(why);
            continue;
        }
        seen.insert(o.gpu);
        sum += o.failures;
        kept.push_back(o);
    }
    s->offenders = std::move(kept);
    return true;
}

namespace {
// On a gRPC thread: the answer in plain types, checked; failure empty when it can be shown.
SummaryPtr decodeSummary(quint64 id, int64_t fromMs, int64_t toMs, const pb::Summary &answer, QString *failure)
{
    auto summary = std::make_shared<Summary>();
    summary->requestId = id;
    summary->requestedFromMs = fromMs;
    summary->requestedToMs = toMs;
    summary->fromMs = answer.from_ms();
    summary->toMs = answer.to_ms();
    summary->frames = answer.frames();
    summary->fleet = decode(answer.fleet());
    for (const auto &r : answer.rows()) {
        summary->rows.push_back(decode(r));
    }
    for (const auto &r : answer.racks()) {
        summary->racks.push_back(decode(r));
    }
    for (const auto &r : answer.jobs()) {
        summary->jobs.push_back(decode(r));
    }
    for (const auto &o : answer.offenders()) {
        summary->offenders.push_back({ o.gpu(), o.failures() });
    }
    summary->totalFailures = answer.total_failures();
    if (!validateSummary(summary.get())) {
        *failure = summary->problems.join(QStringLiteral("; "));
    }
    return summary;
}
} // namespace

SummaryClient::SummaryClient(const QString &address, QObject *parent)
    : SummaryClient(address, ChannelSecurity(), parent)
{ }

SummaryClient::SummaryClient(const QString &address, const ChannelSecurity &security, QObject *parent)
    : RpcClient(address, security, parent)
{
    qRegisterMetaType<SummaryPtr>();
}

quint64 SummaryClient::requestSummary(int64_t fromMs, int64_t toMs, uint32_t topOffenders)
{
    Q_ASSERT(QThread::currentThread() == thread());
    pb::GetSummaryRequest request;
    request.set_from_ms(fromMs);
    request.set_to_ms(toMs);
    request.set_top_offenders(topOffenders);
    // The call holds the channel, not the stub: the stub is needed only to issue it.
    const auto stub = pb::Telemetry::NewStub(channel());
    return jobs().unary<pb::GetSummaryRequest, pb::Summary>(
        this, deadline(), std::move(request),
        [&stub](grpc::ClientContext *context, const pb::GetSummaryRequest *request, pb::Summary *response,
            grpc::ClientUnaryReactor *reactor) { stub->async()->GetSummary(context, request, response, reactor); },
        [this, fromMs, toMs](quint64 id, const grpc::Status &status, pb::Summary &answer) -> std::function<void()> {
            QString failure;
            SummaryPtr summary;
            if (status.ok()) {
                summary = decodeSummary(id, fromMs, toMs, answer, &failure);
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
    for (const auto &problem : summary->problems) {
        qCWarning(lcSummary, "%s", qPrintable(problem));
        Q_EMIT errorOccurred(problem);
    }
    Q_EMIT summaryReady(summary);
}

} // namespace fleetscope
