// SPDX-License-Identifier: Apache-2.0
#include "client/alertsclient.h"

#include "client/alertsdecode.h"
#include "client/grpcstatus.h"
#include "client/rpcjobs.h"
#include "common/keepalive.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDateTime>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QThread>

#include <algorithm>
#include <mutex>
#include <utility>

Q_LOGGING_CATEGORY(lcAlerts, "fleetscope.alerts")

namespace fleetscope {

namespace {

// How long a connection may go without a word from the backend before it is probed, and how long the answer may take
// (as the live stream's, TelemetryClient::Keepalive): states come only when something changes, and a backend gone
// without closing the connection would otherwise leave the stream open for good.
constexpr int keepaliveTimeMs = 10000;
constexpr int keepaliveTimeoutMs = 5000;

// A silence call's end for people: the backend's own words, said with what they mean to someone silencing.
QString describeSilenceCall(const grpc::Status &status, const ChannelSecurity &security, int deadlineMs)
{
    const QString said = wireText(status.error_message(), maxMessageText);
    switch (status.error_code()) {
    case grpc::StatusCode::PERMISSION_DENIED:
        return QStringLiteral("not allowed: %1")
            .arg(said.isEmpty() ? QStringLiteral("this console is a viewer") : said);
    case grpc::StatusCode::INVALID_ARGUMENT:
        return QStringLiteral("refused by the backend: %1").arg(said);
    case grpc::StatusCode::FAILED_PRECONDITION:
        return QStringLiteral("the backend reads no Alertmanager: %1").arg(said);
    case grpc::StatusCode::NOT_FOUND:
        return QStringLiteral("no such silence: %1").arg(said);
    case grpc::StatusCode::DEADLINE_EXCEEDED:
        return QStringLiteral("no answer within %1 s: it may or may not have been done; look again in a moment")
            .arg(QString::number(deadlineMs / 1000.0));
    case grpc::StatusCode::UNAVAILABLE: {
        const QString refusal = describeRefusal(status, security);
        return refusal.isEmpty() ? QStringLiteral("unavailable (the backend or its Alertmanager): %1").arg(said)
                                 : refusal;
    }
    default:
        return describeCall(status, security);
    }
}

} // namespace

// One StreamAlerts: the parts are joined and decoded here, on the completion-queue thread; each state completed
// replaces the one waiting for the owner thread, which is woken once (latest wins).
class AlertsClient::StreamCall final : public RpcJobs::Stream<pb::AlertsPart>
{
public:
    StreamCall(AlertsClient *client, std::shared_ptr<grpc::Channel> channel, TopologyPtr topology)
        : Stream(*client->m_jobs, client, std::nullopt)
        , m_client(client)
        , m_channel(std::move(channel))
        , m_security(client->m_security)
        , m_assembler(std::move(topology))
    { }

private:
    struct Pending
    {
        std::mutex mutex; // guards the two below, between the completion-queue thread and the owner thread
        AlertBoardPtr board;
        bool queued = false;
    };

    std::unique_ptr<grpc::ClientAsyncReader<pb::AlertsPart>> issue(
        grpc::ClientContext *context, grpc::CompletionQueue *cq) override
    {
        return pb::Telemetry::NewStub(m_channel)->PrepareAsyncStreamAlerts(context, pb::StreamAlertsRequest(), cq);
    }

    void onRead(pb::AlertsPart &part) override
    {
        if (!m_opened) {
            m_opened = true;
            deliver([client = m_client, id = id()] { client->onStreamOpened(id); });
        }
        auto result = m_assembler.add(part, QDateTime::currentMSecsSinceEpoch());
        if (!result.error.isEmpty()) {
            // Reported from here (the client waits for its calls before its coalescer goes): a backend sending only
            // bad states posts no more than one error a second.
            m_client->m_errors.report(QStringLiteral("alerts"), result.error);
            deliver([client = m_client, why = result.error] {
                ++client->m_statesRejected;
                client->m_lastRejection = why;
            });
        }
        if (!result.board) {
            return;
        }
        std::lock_guard lock(m_pending->mutex);
        m_pending->board = std::move(result.board);
        if (!m_pending->queued) {
            m_pending->queued = true;
            deliver([client = m_client, id = id(), pending = m_pending] {
                AlertBoardPtr board;
                {
                    std::lock_guard lock(pending->mutex);
                    board = std::move(pending->board);
                    pending->board.reset();
                    pending->queued = false;
                }
                if (board && id == client->m_stream) {
                    client->m_board = board;
                    Q_EMIT client->boardReady(board);
                }
            });
        }
    }

    void onDone(const grpc::Status &status) override
    {
        const QString why = describeCall(status, m_security);
        finish([client = m_client, id = id(), code = static_cast<int>(status.error_code()), why, opened = m_opened] {
            client->onStreamEnded(id, code, why, opened);
        });
    }

    AlertsClient *m_client;
    std::shared_ptr<grpc::Channel> m_channel; // the call holds the channel, not the stub
    ChannelSecurity m_security; // the connection's, for its end's words
    AlertsAssembler m_assembler;
    bool m_opened = false;
    std::shared_ptr<Pending> m_pending = std::make_shared<Pending>();
};

AlertsClient::AlertsClient(QObject *parent)
    : QObject(parent)
    , m_jobs(std::make_unique<RpcJobs>())
{
    qRegisterMetaType<AlertBoardPtr>();
    qRegisterMetaType<BackendAccess>();
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, &AlertsClient::follow);
    connect(&m_errors, &ErrorCoalescer::errorOccurred, this, [this](const QString &message) {
        qCWarning(lcAlerts, "%s", qPrintable(message));
        Q_EMIT errorOccurred(message);
    });
}

AlertsClient::~AlertsClient()
{
    // The stream reports to m_errors from the completion-queue thread and reads m_security there: its calls end first.
    m_jobs.reset();
}

void AlertsClient::start(const QString &address, const ChannelSecurity &security)
{
    Q_ASSERT(QThread::currentThread() == thread());
    stop();
    m_address = address;
    m_security = security;
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(maxReceiveMessageBytes);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, std::max(keepalive::minTimeMs, keepaliveTimeMs));
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, keepaliveTimeoutMs);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    m_channelError.clear();
    m_channel = createChannel(address.toStdString(), security, args, &m_channelError);
    if (!m_channel) {
        // No call may go out without the credentials asked for (a file unreadable): said, and tried again on the
        // backoff as any failure, so that a file put right is read.
        m_channel = grpc::CreateChannel(
            "unix:/nonexistent/fleetscope-credentials-unreadable", grpc::InsecureChannelCredentials());
    }
    m_backoffMs = m_backoff.initialMs;
    follow();
}

void AlertsClient::stop()
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_retryTimer.stop();
    m_jobs->cancelAll();
    m_stream = 0;
    m_accessCall = 0;
    m_accessKnown = false;
    // Silences asked of the connection that goes are said to have gone with it: their answers are dropped now.
    const std::set<quint64> calls = std::exchange(m_silenceCalls, {});
    for (const quint64 id : calls) {
        Q_EMIT silenceDone(id, false, QStringLiteral("cancelled: the connection to the backend was replaced"));
    }
    if (m_state != State::Idle) {
        setState(State::Idle, QStringLiteral("stopped"));
    }
}

void AlertsClient::setTopology(TopologyPtr topology)
{
    Q_ASSERT(QThread::currentThread() == thread());
    const bool other = !topology != !m_topology || (topology && topology->generation != m_topology->generation);
    m_topology = std::move(topology);
    if (other && m_stream != 0) {
        // The state under way was decoded against the old fleet: the backend sends its latest at once on a new stream.
        m_jobs->cancel(m_stream);
        m_stream = 0;
        follow();
    }
}

void AlertsClient::setState(State state, const QString &detail)
{
    if (state == m_state && detail == m_stateDetail) {
        return;
    }
    m_state = state;
    m_stateDetail = detail;
    Q_EMIT stateChanged(state, detail);
}

void AlertsClient::follow()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_address.isEmpty()) {
        return;
    }
    m_retryTimer.stop();
    if (m_stream != 0) {
        m_jobs->cancel(m_stream);
    }
    if (!m_accessKnown) {
        fetchAccess();
    }
    if (m_state != State::Reconnecting && m_state != State::NotConfigured) {
        setState(State::Connecting, QStringLiteral("asking %1 for alerts…").arg(m_address));
    }
    m_stream = m_jobs->start(new StreamCall(this, m_channel, m_topology));
}

void AlertsClient::fetchAccess()
{
    if (m_accessCall != 0) {
        return; // asked already on this connection
    }
    auto channel = m_channel;
    const ChannelSecurity security = m_security;
    m_accessCall = m_jobs->unary<pb::GetAccessRequest, pb::Access>(
        this, m_callDeadline, pb::GetAccessRequest(),
        [channel](grpc::ClientContext *context, const pb::GetAccessRequest &request, grpc::CompletionQueue *cq) {
            return pb::Telemetry::NewStub(channel)->PrepareAsyncGetAccess(context, request, cq);
        },
        [this, security](quint64 id, const grpc::Status &status, pb::Access &answer) -> std::function<void()> {
            const bool ok = status.ok();
            const BackendAccess access = ok ? decodeAccess(answer) : BackendAccess();
            const QString why = ok ? QString() : describeCall(status, security);
            return [this, id, ok, access, why] {
                if (id != m_accessCall) {
                    return;
                }
                m_accessCall = 0;
                if (!ok) {
                    // Asked again with the next attempt at the stream; until then nothing may be silenced.
                    qCInfo(lcAlerts, "GetAccess failed: %s", qPrintable(why));
                    return;
                }
                m_accessKnown = true;
                m_access = access;
                Q_EMIT accessChanged(m_access);
            };
        });
}

void AlertsClient::onStreamOpened(quint64 call)
{
    if (call != m_stream) {
        return;
    }
    m_backoffMs = m_backoff.initialMs;
    setState(State::Open, QStringLiteral("alerts from %1").arg(m_address));
}

void AlertsClient::onStreamEnded(quint64 call, int code, const QString &why, bool opened)
{
    if (call != m_stream) {
        return;
    }
    m_stream = 0;
    const auto status = static_cast<grpc::StatusCode>(code);
    if (status == grpc::StatusCode::FAILED_PRECONDITION || status == grpc::StatusCode::UNIMPLEMENTED) {
        // No Alertmanager behind this backend (or a backend from before alerts): asked again now and then, as it may
        // be restarted with one.
        m_nextRetryMs = m_backoff.notConfiguredMs;
        setState(State::NotConfigured,
            status == grpc::StatusCode::UNIMPLEMENTED ? QStringLiteral("the backend serves no alerts (an older one)")
                                                      : QStringLiteral("the backend reads no Alertmanager"));
        m_retryTimer.start(m_nextRetryMs);
        return;
    }
    // Who this console is is asked again of whatever answers next (another backend may be behind the address).
    m_accessKnown = false;
    if (opened) {
        m_backoffMs = m_backoff.initialMs;
    }
    // ±20% jitter so that a wall of consoles does not come back in lock-step.
    const double jitter = 0.8 + 0.4 * QRandomGenerator::global()->generateDouble();
    m_nextRetryMs = static_cast<int>(m_backoffMs * jitter);
    m_backoffMs = std::min(m_backoff.maxMs, m_backoffMs * 2);
    const QString reason = m_channelError.isEmpty() ? why : m_channelError;
    m_lastError = reason;
    qCInfo(lcAlerts, "alerts stream from %s ended: %s; again in %d ms", qPrintable(m_address), qPrintable(reason),
        m_nextRetryMs);
    setState(State::Reconnecting,
        QStringLiteral("%1; again in %2 s").arg(reason, QString::number(m_nextRetryMs / 1000.0, 'f', 1)));
    m_retryTimer.start(m_nextRetryMs);
}

void AlertsClient::onSilenceAnswered(quint64 call, bool ok, bool denied, const QString &message)
{
    m_silenceCalls.erase(call);
    if (denied && m_accessKnown) {
        // The backend's word on who this console is may have changed since it was asked (a token file rewritten):
        // asked again, so that what is greyed out follows.
        m_accessKnown = false;
        fetchAccess();
    }
    Q_EMIT silenceDone(call, ok, message);
}

quint64 AlertsClient::refuseCall(const QString &message)
{
    return m_jobs->reject(this, [this, message](quint64 id) {
        m_silenceCalls.erase(id);
        Q_EMIT silenceDone(id, false, message);
    });
}

quint64 AlertsClient::createSilence(const SilenceDraft &draft)
{
    Q_ASSERT(QThread::currentThread() == thread());
    quint64 id = 0;
    if (m_address.isEmpty()) {
        id = refuseCall(QStringLiteral("not connected to a backend"));
    } else {
        auto channel = m_channel;
        const ChannelSecurity security = m_security;
        const int deadlineMs = static_cast<int>(m_callDeadline.count());
        id = m_jobs->unary<pb::CreateSilenceRequest, pb::Silence>(
            this, m_callDeadline, encodeSilenceDraft(draft),
            [channel](
                grpc::ClientContext *context, const pb::CreateSilenceRequest &request, grpc::CompletionQueue *cq) {
                return pb::Telemetry::NewStub(channel)->PrepareAsyncCreateSilence(context, request, cq);
            },
            [this, security, deadlineMs](
                quint64 call, const grpc::Status &status, pb::Silence &answer) -> std::function<void()> {
                const bool ok = status.ok();
                const bool denied = status.error_code() == grpc::StatusCode::PERMISSION_DENIED;
                const QString message
                    = ok ? wireText(answer.id(), maxNameText) : describeSilenceCall(status, security, deadlineMs);
                return [this, call, ok, denied, message] { onSilenceAnswered(call, ok, denied, message); };
            });
    }
    m_silenceCalls.insert(id);
    return id;
}

quint64 AlertsClient::expireSilence(const QString &silenceId)
{
    Q_ASSERT(QThread::currentThread() == thread());
    quint64 id = 0;
    if (m_address.isEmpty()) {
        id = refuseCall(QStringLiteral("not connected to a backend"));
    } else {
        auto channel = m_channel;
        const ChannelSecurity security = m_security;
        const int deadlineMs = static_cast<int>(m_callDeadline.count());
        pb::ExpireSilenceRequest request;
        request.set_id(silenceId.toStdString());
        id = m_jobs->unary<pb::ExpireSilenceRequest, pb::ExpireSilenceResponse>(
            this, m_callDeadline, std::move(request),
            [channel](grpc::ClientContext *context, const pb::ExpireSilenceRequest &r, grpc::CompletionQueue *cq) {
                return pb::Telemetry::NewStub(channel)->PrepareAsyncExpireSilence(context, r, cq);
            },
            [this, security, deadlineMs](
                quint64 call, const grpc::Status &status, pb::ExpireSilenceResponse &) -> std::function<void()> {
                const bool ok = status.ok();
                const bool denied = status.error_code() == grpc::StatusCode::PERMISSION_DENIED;
                const QString message = ok ? QString() : describeSilenceCall(status, security, deadlineMs);
                return [this, call, ok, denied, message] { onSilenceAnswered(call, ok, denied, message); };
            });
    }
    m_silenceCalls.insert(id);
    return id;
}

} // namespace fleetscope
