// SPDX-License-Identifier: Apache-2.0
#include "client/telemetryclient.h"

#include "client/grpcstatus.h"
#include "client/protodecode.h"
#include "jobs/background.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QDateTime>
#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QThread>

#include <chrono>
#include <future>

Q_LOGGING_CATEGORY(lcClient, "fleetscope.client")

namespace fleetscope {

namespace {
constexpr int initialBackoffMs = 500;
constexpr int maxBackoffMs = 10000;
constexpr auto topologyDeadline = std::chrono::seconds(20);
constexpr auto unaryDeadline = std::chrono::seconds(5);
// How long a stream's status may take to come once Read() has stopped (it is there at once when the stream ended).
constexpr auto finishGrace = std::chrono::seconds(2);
// How far ahead of this machine's clock a frame may be stamped: clocks disagree by seconds, a backend's by minutes when
// it is badly set; a frame stamped further ahead would make every later, correct frame look old (never newer than
// it: stale for good, and refused by the flight recorder), so it is dropped.
constexpr int64_t maxClockAheadMs = 5 * 60 * 1000;

// Read() stops at the end of a stream and also at a part that does not parse, after which a backend may go on
// streaming: Finish() would then wait for an end that a live stream never reaches, and the session would never
// reconnect. So Finish() runs beside a watch: a status that has not come within finishGrace means the stream is still
// open after a part that could not be read; the call is cancelled and that is the reason given.
template <typename Reader> grpc::Status finishStream(Reader &reader, grpc::ClientContext &context)
{
    auto finishing = std::async(std::launch::async, [&reader] { return reader.Finish(); });
    if (finishing.wait_for(finishGrace) == std::future_status::ready) {
        return finishing.get();
    }
    context.TryCancel();
    finishing.wait();
    return grpc::Status(grpc::StatusCode::DATA_LOSS, "the backend sent a part that could not be read");
}

} // namespace

TelemetryClient::TelemetryClient(QObject *parent)
    : QObject(parent)
    , m_errors(this)
    , m_handover(this)
{
    qRegisterMetaType<TopologyPtr>();
    qRegisterMetaType<FramePtr>();
    qRegisterMetaType<JobsPtr>();
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, &TelemetryClient::startSession);
    // The sessions' errors come coalesced (a backend sending only bad parts would otherwise post one each): logged and
    // said here, at most once per kind per second.
    connect(&m_errors, &ErrorCoalescer::errorOccurred, this, [this](const QString &message) {
        qCWarning(lcClient, "%s", qPrintable(message));
        Q_EMIT errorOccurred(message);
    });
}

TelemetryClient::~TelemetryClient()
{
    stop();
}

void TelemetryClient::start(const QString &address, const ChannelSecurity &security)
{
    Q_ASSERT(QThread::currentThread() == thread());
    stop();
    m_address = address;
    m_security = security;
    m_backoffMs = initialBackoffMs;
    startSession();
}

void TelemetryClient::stop()
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_retryTimer.stop();
    stopSession();
    if (m_state != State::Idle) {
        setState(State::Idle, QStringLiteral("stopped"));
    }
}

void TelemetryClient::setMetrics(const QStringList &metricIds)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (metricIds == m_metricIds) {
        return;
    }
    m_metricIds = metricIds;
    if (m_state == State::Live || m_state == State::Connecting) {
        stopSession();
        startSession();
    }
}

void TelemetryClient::setState(State state, const QString &detail)
{
    if (state == m_state && detail == m_stateDetail) {
        return;
    }
    m_state = state;
    m_stateDetail = detail;
    Q_EMIT stateChanged(state, detail);
}

template <typename F> void TelemetryClient::post(F &&f)
{
    // The workers are always joined before this object dies, so m_handover is there; what it still holds then is
    // dropped with it.
    m_handover.post(std::forward<F>(f));
}

void TelemetryClient::startSession()
{
    Q_ASSERT(QThread::currentThread() == thread());
    stopSession();
    const quint64 session = ++m_session;
    if (m_state != State::Reconnecting) {
        setState(State::Connecting, QStringLiteral("connecting to %1…").arg(m_address));
    }
    std::vector<std::string> metrics;
    for (const auto &id : std::as_const(m_metricIds)) {
        metrics.push_back(id.toStdString());
    }
    // Resume after the last frame we have, so that the frames missed while away are sent (if still held).
    const uint64_t resumeAfter = m_latest ? m_latest->sequence : 0;
    const uint64_t generation = m_latest ? m_latest->topologyGeneration : 0;
    m_worker = std::thread(&TelemetryClient::runSession, this, session, m_address.toStdString(), m_security,
        m_keepalive, std::move(metrics), generation, resumeAfter);
    m_jobsWorker
        = std::thread(&TelemetryClient::runJobsPoll, this, session, m_address.toStdString(), m_security, m_jobsPollMs);
}

void TelemetryClient::stopSession()
{
    if (!m_worker.joinable() && !m_jobsWorker.joinable()) {
        return;
    }
    {
        std::lock_guard lock(m_cancelMutex);
        m_cancelled = true;
        for (const auto &context : { m_context, m_jobsContext }) {
            if (context) {
                context->TryCancel();
            }
        }
    }
    m_sessionChanged.notify_all();
    if (m_worker.joinable()) {
        m_worker.join();
    }
    if (m_jobsWorker.joinable()) {
        m_jobsWorker.join();
    }
    std::lock_guard lock(m_cancelMutex);
    m_cancelled = false;
    m_topologyPosted = false;
    m_sessionTopology.reset();
    m_context.reset();
    m_jobsContext.reset();
}

void TelemetryClient::onSessionEnded(quint64 session, const QString &why, bool wasLive)
{
    if (session != m_session) {
        return;
    }
    stopSession(); // joins the finished worker
    if (wasLive) {
        m_backoffMs = initialBackoffMs;
    }
    // ±20% jitter so that a wall of consoles does not reconnect in lock-step after an outage.
    const double jitter = 0.8 + 0.4 * QRandomGenerator::global()->generateDouble();
    const int delay = static_cast<int>(m_backoffMs * jitter);
    m_backoffMs = std::min(maxBackoffMs, m_backoffMs * 2);
    qCInfo(lcClient, "session to %s ended: %s; retrying in %d ms", qPrintable(m_address), qPrintable(why), delay);
    setState(State::Reconnecting,
        QStringLiteral("%1: %2; retrying in %3 s").arg(m_address, why).arg(QString::number(delay / 1000.0, 'f', 1)));
    m_retryTimer.start(delay);
}

void TelemetryClient::postFrame(quint64 session, FramePtr frame)
{
    std::lock_guard lock(m_pendingMutex);
    m_pending = std::move(frame);
    if (!m_deliveryQueued) {
        m_deliveryQueued = true;
        post([this, session] { deliverPendingFrame(session); });
    }
}

void TelemetryClient::deliverPendingFrame(quint64 session)
{
    FramePtr frame;
    {
        std::lock_guard lock(m_pendingMutex);
        frame = std::move(m_pending);
        m_deliveryQueued = false;
    }
    if (session != m_session || !frame || !m_topology || frame->topologyGeneration != m_topology->generation) {
        return;
    }
    const bool first = !m_latest;
    m_latest = frame;
    if (!first) {
        Q_EMIT frameReady(frame);
        return;
    }
    QElapsedTimer receivers;
    receivers.start();
    Q_EMIT frameReady(frame);
    qCDebug(lcClient, "first frame shown: its receivers took %lld ms", static_cast<long long>(receivers.elapsed()));
}

void TelemetryClient::runSession(quint64 session, std::string address, ChannelSecurity security, Keepalive keepalive,
    std::vector<std::string> metrics, uint64_t lastGeneration, uint64_t resumeAfter)
{
    runThisThreadInBackground(); // below the GUI thread (jobs/background.h)
    namespace pb = fleetscope::telemetry::v1;
    auto newContext = [this](std::optional<std::chrono::seconds> deadline) -> std::shared_ptr<grpc::ClientContext> {
        auto context = std::make_shared<grpc::ClientContext>();
        if (deadline) {
            context->set_deadline(std::chrono::system_clock::now() + *deadline);
        }
        std::lock_guard lock(m_cancelMutex);
        if (m_cancelled) {
            return nullptr;
        }
        m_context = context;
        return context;
    };
    auto end = [this, session](const QString &why, bool wasLive) {
        post([this, session, why, wasLive] { onSessionEnded(session, why, wasLive); });
    };

    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(maxReceiveMessageBytes);
    // Notice a backend that vanished without closing the connection (a pulled cable, a frozen VM).
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive.timeMs);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, keepalive.timeoutMs);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    // Go on probing however long the stream is quiet: gRPC stops a client's pings after two without data by default,
    // and a dead connection to a backend whose frames come seldom (a long scrape interval) would never be noticed.
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    QString channelError;
    auto channel = createChannel(address, security, args, &channelError);
    if (!channel) {
        end(channelError, false);
        return;
    }
    auto stub = pb::Telemetry::NewStub(channel);
    // A refusal of the credentials or the connection said as what is wrong, else what the status says.
    auto describeStatus = [&security](const grpc::Status &status) { return describeCall(status, security); };

    // Topology.
    auto context = newContext(topologyDeadline);
    if (!context) {
        return;
    }
    // The parts are checked as they come against what the header's GPU count can need (TopologyCollector): a stream
    // past that is cut at once, not read for the 20 s of the deadline into memory.
    auto collector = std::make_unique<TopologyCollector>(); // held until the first frame is read (below)
    QString error;
    // The way to a session's first frame, phase by phase, at debug level:
    // QT_LOGGING_RULES="fleetscope.client.debug=true" says where a cold start of a large fleet spends its time
    // (bench_coldstart reads these lines).
    QElapsedTimer phase;
    phase.start();
    {
        auto reader = stub->GetTopology(context.get(), pb::GetTopologyRequest());
        pb::TopologyPart part;
        bool refused = false;
        while (!refused && reader->Read(&part)) {
            refused = !collector->add(std::move(part), &error);
            part.Clear();
        }
        if (refused) {
            context->TryCancel();
        }
        const auto status = finishStream(*reader, *context);
        if (!status.ok() && !refused) {
            end(describeStatus(status), false);
            return;
        }
    }
    qCDebug(lcClient, "topology read: %zu parts, %llu bytes in %lld ms", collector->parts(),
        static_cast<unsigned long long>(collector->bytes()), static_cast<long long>(phase.restart()));
    TopologyPtr topology = collector->finish(&error);
    if (topology) {
        qCDebug(lcClient, "topology decoded: %u GPUs in %lld ms", topology->gpuCount,
            static_cast<long long>(phase.restart()));
    }
    if (!topology) {
        m_errors.report(QStringLiteral("topology"), QStringLiteral("rejected topology: %1").arg(error));
        end(QStringLiteral("the backend sent an inconsistent topology"), false);
        return;
    }
    post([this, session, topology] {
        if (session != m_session) {
            return;
        }
        if (!m_topology || m_topology->generation != topology->generation) {
            m_topology = topology;
            m_latest.reset();
            m_jobs.reset(); // they named GPUs of the old topology
            QElapsedTimer receivers;
            receivers.start();
            Q_EMIT topologyChanged(topology);
            qCDebug(
                lcClient, "topology shown: its receivers took %lld ms", static_cast<long long>(receivers.elapsed()));
        }
    });
    {
        // Jobs name GPUs of this topology: the jobs worker starts listing once it is queued ahead of them.
        std::lock_guard lock(m_cancelMutex);
        m_topologyPosted = true;
        m_sessionTopology = topology;
    }
    m_sessionChanged.notify_all();
    if (topology->generation != lastGeneration) {
        resumeAfter = 0; // another fleet layout: its sequences mean nothing to us
    }

    // Metric catalogue.
    context = newContext(unaryDeadline);
    if (!context) {
        return;
    }
    pb::ListMetricsResponse catalogue;
    if (const auto status = stub->ListMetrics(context.get(), pb::ListMetricsRequest(), &catalogue); !status.ok()) {
        end(describeStatus(status), false);
        return;
    }
    QStringList problems;
    std::vector<MetricInfo> infos = decodeMetricCatalogue(catalogue, &problems);
    for (const QString &problem : problems) {
        qCWarning(lcClient, "metric catalogue: %s", qPrintable(problem));
    }
    if (!problems.isEmpty()) {
        const QString more
            = problems.size() > 3 ? QStringLiteral(" (and %1 more)").arg(problems.size() - 3) : QString();
        m_errors.report(QStringLiteral("catalogue"),
            QStringLiteral("metric catalogue: %1%2").arg(problems.mid(0, 3).join(QStringLiteral("; ")), more));
    }
    post([this, session, infos = std::move(infos)] {
        if (session == m_session) {
            m_metrics = infos;
            Q_EMIT metricsChanged();
        }
    });

    // Frames. A resume the server cannot honour (OUT_OF_RANGE) is retried at once as a fresh subscription.
    bool live = false;
    for (;;) {
        context = newContext(std::nullopt);
        if (!context) {
            return;
        }
        pb::SubscribeRequest request;
        for (const auto &m : metrics) {
            request.add_metric_ids(m);
        }
        request.set_topology_generation(topology->generation);
        request.set_resume_after_sequence(resumeAfter);
        auto reader = stub->Subscribe(context.get(), request);
        phase.restart();
        // Each part must carry exactly the planes subscribed to (the backend's default set when none are named).
        FrameAssembler assembler(topology, metrics);
        pb::FramePart part;
        while (reader->Read(&part)) {
            auto result = assembler.add(part);
            if (!result.error.isEmpty()) {
                ++m_framesRejected;
                m_errors.report(QStringLiteral("frame"), QStringLiteral("dropped a frame: %1").arg(result.error));
                continue;
            }
            if (!result.frame) {
                continue;
            }
            // Compared without a difference, which a time near the int64 range's ends would overflow; a time before
            // the epoch is no sample's.
            const int64_t sampleMs = result.frame->sampleTimeMs;
            const int64_t nowMs = QDateTime::currentMSecsSinceEpoch();
            if (sampleMs < 0 || sampleMs > nowMs + maxClockAheadMs) {
                ++m_framesRejected;
                const QString error = sampleMs < 0
                    ? QStringLiteral("frame %1 is stamped %2 ms, before the epoch")
                          .arg(result.frame->sequence)
                          .arg(sampleMs)
                    : QStringLiteral("frame %1 is stamped %2 s ahead of this console's clock (at most %3 s); check "
                                     "the backend's clock")
                          .arg(result.frame->sequence)
                          .arg((sampleMs - nowMs) / 1000)
                          .arg(maxClockAheadMs / 1000);
                m_errors.report(QStringLiteral("frame"), QStringLiteral("dropped a frame: %1").arg(error));
                continue;
            }
            ++m_framesReceived;
            if (!live) {
                live = true;
                qCDebug(lcClient, "first frame read: %u GPUs, %zu planes, %lld ms after subscribing",
                    topology->gpuCount, result.frame->planes.size(), static_cast<long long>(phase.elapsed()));
                post([this, session, address, tls = security.tls()] {
                    if (session == m_session) {
                        m_backoffMs = initialBackoffMs;
                        setState(State::Live,
                            QStringLiteral("live from %1%2")
                                .arg(QString::fromStdString(address), tls ? QStringLiteral(" (TLS)") : QString()));
                    }
                });
            }
            postFrame(session, std::move(result.frame));
            // The topology's wire parts go once the first frame is on its way too: freeing them (two million strings
            // at a million GPUs, 150 ms on an idle core) held up the way to it.
            collector.reset();
        }
        const auto status = finishStream(*reader, *context);
        if (status.error_code() == grpc::StatusCode::OUT_OF_RANGE && resumeAfter != 0) {
            qCInfo(lcClient, "cannot resume: %s; subscribing afresh", status.error_message().c_str());
            resumeAfter = 0;
            continue;
        }
        end(describeStatus(status), live);
        return;
    }
}

void TelemetryClient::runJobsPoll(quint64 session, std::string address, ChannelSecurity security, int intervalMs)
{
    runThisThreadInBackground(); // below the GUI thread (jobs/background.h)
    namespace pb = fleetscope::telemetry::v1;
    QString channelError;
    auto channel = createChannel(address, security, grpc::ChannelArguments(), &channelError);
    if (!channel) {
        return; // the live stream's session says why
    }
    auto stub = pb::Telemetry::NewStub(channel);
    auto describeStatus = [&security](const grpc::Status &status) { return describeCall(status, security); };
    TopologyPtr topology; // this session's: jobs are decoded against it here, off the owner's thread
    {
        std::unique_lock lock(m_cancelMutex);
        m_sessionChanged.wait(lock, [this] { return m_cancelled || m_topologyPosted; });
        topology = m_sessionTopology;
    }
    // The listing last handed over, as bytes: an unchanged one (most of them) is neither decoded nor handed over.
    std::string lastListing;
    for (;;) {
        auto context = std::make_shared<grpc::ClientContext>();
        context->set_deadline(std::chrono::system_clock::now() + unaryDeadline);
        {
            std::lock_guard lock(m_cancelMutex);
            if (m_cancelled) {
                return;
            }
            m_jobsContext = context;
        }
        auto response = std::make_shared<pb::ListJobsResponse>();
        const auto status = stub->ListJobs(context.get(), pb::ListJobsRequest(), response.get());
        std::string listing;
        if (status.ok() && topology && response->SerializeToString(&listing) && listing != lastListing) {
            // Decoding thousands of jobs over a million GPUs, and the receivers' work after, is tens of ms: decoded
            // here, and handed over only when something changed.
            lastListing = std::move(listing);
            QString error;
            JobsPtr jobs = decodeJobs(*response, *topology, &error);
            post([this, session, jobs, error] {
                if (session != m_session || !m_topology || jobs->topologyGeneration != m_topology->generation) {
                    return;
                }
                if (!error.isEmpty()) {
                    m_errors.report(QStringLiteral("jobs"), error);
                }
                m_jobs = jobs;
                Q_EMIT jobsChanged(m_jobs);
            });
        } else if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) {
            // The frame stream notices and reports an unreachable backend; a failed listing only waits for the next.
            qCInfo(lcClient, "listing jobs failed: %s", qPrintable(describeStatus(status)));
        }
        std::unique_lock lock(m_cancelMutex);
        if (m_sessionChanged.wait_for(lock, std::chrono::milliseconds(intervalMs), [this] { return m_cancelled; })) {
            return;
        }
    }
}

} // namespace fleetscope
