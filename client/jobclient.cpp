// SPDX-License-Identifier: Apache-2.0
#include "client/jobclient.h"

#include "client/grpcstatus.h"
#include "client/jobdecode.h"
#include "client/rpcjobs.h"
#include "client/wiretext.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QLoggingCategory>
#include <QThread>

#include <chrono>

Q_LOGGING_CATEGORY(lcJob, "fleetscope.job")

namespace fleetscope {

namespace pb = fleetscope::telemetry::v1;

JobClient::JobClient(const QString &address, QObject *parent)
    : JobClient(address, ChannelSecurity(), parent)
{ }

JobClient::JobClient(const QString &address, const ChannelSecurity &security, QObject *parent)
    : RpcClient(address, security, parent)
{
    qRegisterMetaType<JobReportPtr>();
    // A job page asks every few seconds: an answer later than this is one the next ask replaces.
    setDeadline(std::chrono::seconds(10));
    connect(&m_errors, &ErrorCoalescer::errorOccurred, this, [this](const QString &message) {
        qCWarning(lcJob, "%s", qPrintable(message));
        Q_EMIT errorOccurred(message);
    });
}

void JobClient::setTopology(TopologyPtr topology)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_topology = std::move(topology);
}

quint64 JobClient::getJob(uint64_t id, const QString &name)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_topology) {
        return jobs().reject(this,
            [this](quint64 requestId) { deliver(requestId, QStringLiteral("the fleet is not known yet"), nullptr); });
    }
    pb::GetJobRequest request;
    request.set_id(id);
    if (id == 0) {
        request.set_name(name.toStdString());
    }
    return jobs().unary<pb::GetJobRequest, pb::JobReport>(
        this, deadline(), std::move(request),
        // The call holds the channel, not the stub: the stub is needed only to issue it.
        [channel = channel()](
            grpc::ClientContext *context, const pb::GetJobRequest &request, grpc::CompletionQueue *cq) {
            return pb::Telemetry::NewStub(channel)->PrepareAsyncGetJob(context, request, cq);
        },
        [this, id, name, topology = m_topology](
            quint64 requestId, const grpc::Status &status, pb::JobReport &answer) -> std::function<void()> {
            QString failure;
            JobReportPtr report;
            if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
                // The backend's own words are the page's ("no job 4711 is running or ended within the hour").
                failure = wireText(status.error_message(), maxMessageText);
            } else if (!status.ok()) {
                failure = describeStatus(status);
            } else if (const QString wrong = jobAnswerMismatch(answer, id, name); !wrong.isEmpty()) {
                // An answer for another job (by id, or by name when asked by name) would show the wrong one.
                failure = wrong;
            } else if (auto decoded = decodeJobReport(answer, *topology, &failure)) {
                decoded->requestId = requestId;
                report = std::move(decoded);
            }
            return [this, requestId, failure, report] { deliver(requestId, failure, report); };
        });
}

void JobClient::deliver(quint64 id, const QString &failure, const JobReportPtr &report)
{
    if (!report) {
        qCInfo(lcJob, "job request %llu failed: %s", id, qPrintable(failure));
        Q_EMIT requestFailed(id, failure);
        return;
    }
    for (const auto &problem : report->problems) {
        m_errors.report(QStringLiteral("job"), problem);
    }
    Q_EMIT reportReady(report);
}

} // namespace fleetscope
