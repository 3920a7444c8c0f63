// SPDX-License-Identifier: Apache-2.0
#include "client/historyclient.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QLoggingCategory>
#include <QThread>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <set>

Q_LOGGING_CATEGORY(lcHistory, "fleetscope.history")

namespace fleetscope {

namespace pb = fleetscope::telemetry::v1;

namespace {
constexpr auto rangeDeadline = std::chrono::seconds(30);
// A closed event range is complete once the backend has had this long past its end to send what it holds.
constexpr auto eventSettle = std::chrono::seconds(2);

QString describeStatus(const grpc::Status &status)
{
    switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
        return QStringLiteral("backend unavailable (%1)").arg(QString::fromStdString(status.error_message()));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
        return QStringLiteral("backend did not answer in time");
    default:
        return QStringLiteral("backend error %1: %2")
            .arg(static_cast<int>(status.error_code()))
            .arg(QString::fromStdString(status.error_message()));
    }
}

std::optional<FleetEvent::Kind> kindOf(pb::EventKind kind)
{
    switch (kind) {
    case pb::EVENT_KIND_XID:
        return FleetEvent::Kind::Xid;
    case pb::EVENT_KIND_ECC_DOUBLE_BIT:
        return FleetEvent::Kind::EccDoubleBit;
    case pb::EVENT_KIND_THERMAL_THROTTLE_START:
        return FleetEvent::Kind::ThermalThrottleStart;
    case pb::EVENT_KIND_THERMAL_THROTTLE_END:
        return FleetEvent::Kind::ThermalThrottleEnd;
    case pb::EVENT_KIND_POWER_THROTTLE_START:
        return FleetEvent::Kind::PowerThrottleStart;
    case pb::EVENT_KIND_POWER_THROTTLE_END:
        return FleetEvent::Kind::PowerThrottleEnd;
    case pb::EVENT_KIND_NODE_DOWN:
        return FleetEvent::Kind::NodeDown;
    case pb::EVENT_KIND_NODE_UP:
        return FleetEvent::Kind::NodeUp;
    case pb::EVENT_KIND_JOB_START:
        return FleetEvent::Kind::JobStart;
    case pb::EVENT_KIND_JOB_END:
        return FleetEvent::Kind::JobEnd;
    default:
        return std::nullopt;
    }
}

// Checks one event against the fleet; empty when it is fine.
QString checkEvent(const pb::Event &e, const Topology *topology)
{
    if (!kindOf(e.kind())) {
        return QStringLiteral("event %1 has unknown kind %2").arg(e.sequence()).arg(static_cast<int>(e.kind()));
    }
    if (e.severity() < pb::SEVERITY_INFO || e.severity() > pb::SEVERITY_CRITICAL) {
        return QStringLiteral("event %1 has unknown severity %2").arg(e.sequence()).arg(static_cast<int>(e.severity()));
    }
    if (e.gpu() < -1 || (topology && e.gpu() >= static_cast<int64_t>(topology->gpuCount))) {
        return QStringLiteral("event %1 names GPU %2, outside the fleet").arg(e.sequence()).arg(e.gpu());
    }
    if (e.node() < -1 || (topology && e.node() >= static_cast<int64_t>(topology->nodes.size()))) {
        return QStringLiteral("event %1 names node %2, outside the fleet").arg(e.sequence()).arg(e.node());
    }
    return {};
}
} // namespace

std::vector<RangeSeries> assembleRange(
    const std::vector<RawRangePart> &parts, const RangeRequest &request, uint32_t gpuCount, QStringList *problems)
{
    std::vector<RangeSeries> out;
    std::set<QString> bad;
    auto reject = [&](const QString &metric, const QString &why) {
        if (bad.insert(metric).second) {
            *problems << QStringLiteral("dropped %1 history: %2").arg(metric, why);
        }
    };
    for (const auto &part : parts) {
        const QString metric = QString::fromStdString(part.metricId);
        if (bad.count(metric)) {
            continue;
        }
        if (!request.metricIds.isEmpty() && !request.metricIds.contains(metric)) {
            reject(metric, QStringLiteral("not asked for"));
            continue;
        }
        if (part.gpus != request.gpus) {
            reject(metric, QStringLiteral("its columns are not the GPUs asked for"));
            continue;
        }
        if (gpuCount != 0
            && std::any_of(part.gpus.begin(), part.gpus.end(), [&](uint32_t g) { return g >= gpuCount; })) {
            reject(metric, QStringLiteral("names a GPU outside the fleet of %1").arg(gpuCount));
            continue;
        }
        const size_t rows = part.times.size();
        if (part.sampleTimes.size() != rows) {
            reject(metric, QStringLiteral("%1 sample times for %2 rows").arg(part.sampleTimes.size()).arg(rows));
            continue;
        }
        if (part.values.size() != rows * part.gpus.size() * sizeof(float)) {
            reject(metric,
                QStringLiteral("%1 bytes of values for %2 rows x %3 GPUs")
                    .arg(part.values.size())
                    .arg(rows)
                    .arg(part.gpus.size()));
            continue;
        }
        auto it = std::find_if(out.begin(), out.end(), [&](const RangeSeries &s) { return s.metricId == metric; });
        if (it == out.end()) {
            out.push_back({ metric, part.gpus, {}, {}, {} });
            it = out.end() - 1;
        }
        // Ascending within the part and after the rows of the previous parts.
        int64_t last = it->times.empty() ? std::numeric_limits<int64_t>::min() : it->times.back();
        bool ascending = true;
        for (const int64_t t : part.times) {
            ascending = ascending && t > last;
            last = t;
        }
        if (!ascending) {
            out.erase(it);
            reject(metric, QStringLiteral("its times are not ascending"));
            continue;
        }
        it->times.insert(it->times.end(), part.times.begin(), part.times.end());
        it->sampleTimes.insert(it->sampleTimes.end(), part.sampleTimes.begin(), part.sampleTimes.end());
        const size_t at = it->values.size();
        it->values.resize(at + rows * part.gpus.size());
        std::memcpy(it->values.data() + at, part.values.data(), part.values.size());
    }
    return out;
}

struct HistoryClient::Job
{
    quint64 id = 0;
    std::thread thread;
    grpc::ClientContext context; // TryCancel is thread-safe; everything else is the worker's
    std::atomic<bool> cancelled { false };
    // Events waiting for the owner thread: the worker appends and queues one delivery if none is queued.
    std::mutex mutex;
    std::vector<FleetEvent> pending;
    bool deliveryQueued = false;
};

HistoryClient::HistoryClient(const QString &address, QObject *parent)
    : QObject(parent)
    , m_address(address)
{
    qRegisterMetaType<RangeResultPtr>();
    qRegisterMetaType<EventBatchPtr>();
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(16 * 1024 * 1024);
    m_channel = grpc::CreateCustomChannel(address.toStdString(), grpc::InsecureChannelCredentials(), args);
}

HistoryClient::~HistoryClient()
{
    cancelAll();
    for (auto &[id, job] : m_jobs) {
        if (job->thread.joinable()) {
            job->thread.join();
        }
    }
}

void HistoryClient::setTopology(TopologyPtr topology)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_topology = std::move(topology);
}

template <typename F> void HistoryClient::post(F &&f)
{
    // Workers are joined before this object dies; Qt drops a queued call whose context object is gone.
    QMetaObject::invokeMethod(this, std::forward<F>(f), Qt::QueuedConnection);
}

std::shared_ptr<HistoryClient::Job> HistoryClient::startJob()
{
    auto job = std::make_shared<Job>();
    job->id = ++m_nextId;
    m_jobs[job->id] = job;
    return job;
}

quint64 HistoryClient::queryRange(const RangeRequest &request)
{
    Q_ASSERT(QThread::currentThread() == thread());
    auto job = startJob();
    job->context.set_deadline(std::chrono::system_clock::now() + rangeDeadline);
    job->thread = std::thread(&HistoryClient::runRange, this, job, request, m_topology);
    return job->id;
}

quint64 HistoryClient::streamEvents(const EventFilter &filter, int64_t sinceMs, int64_t untilMs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    auto job = startJob();
    if (untilMs != 0) {
        const auto until = std::chrono::system_clock::time_point(std::chrono::milliseconds(untilMs));
        job->context.set_deadline(std::max(until, std::chrono::system_clock::now()) + eventSettle);
    }
    job->thread = std::thread(&HistoryClient::runEvents, this, job, filter, sinceMs, untilMs, m_topology);
    return job->id;
}

void HistoryClient::cancel(quint64 requestId)
{
    Q_ASSERT(QThread::currentThread() == thread());
    const auto it = m_jobs.find(requestId);
    if (it != m_jobs.end() && !it->second->cancelled.exchange(true)) {
        it->second->context.TryCancel();
    }
}

void HistoryClient::cancelAll()
{
    for (const auto &[id, job] : m_jobs) {
        cancel(id);
    }
}

int HistoryClient::pendingRequests() const
{
    return static_cast<int>(m_jobs.size());
}

void HistoryClient::finishJob(quint64 id)
{
    const auto it = m_jobs.find(id);
    if (it == m_jobs.end()) {
        return;
    }
    auto job = it->second;
    m_jobs.erase(it);
    if (job->thread.joinable()) {
        job->thread.join(); // it posted this as its last act
    }
}

void HistoryClient::runRange(std::shared_ptr<Job> job, RangeRequest request, TopologyPtr topology)
{
    const quint64 id = job->id;
    auto fail = [this, id](const QString &message) {
        post([this, id, message] {
            const auto it = m_jobs.find(id);
            if (it != m_jobs.end() && !it->second->cancelled) {
                qCInfo(lcHistory, "history request %llu failed: %s", id, qPrintable(message));
                Q_EMIT requestFailed(id, message);
            }
            finishJob(id);
        });
    };
    if (request.gpus.empty()) {
        fail(QStringLiteral("no GPUs asked for"));
        return;
    }
    if (topology) {
        for (const uint32_t g : request.gpus) {
            if (g >= topology->gpuCount) {
                fail(QStringLiteral("GPU %1 is outside the fleet of %2").arg(g).arg(topology->gpuCount));
                return;
            }
        }
    }
    pb::QueryRangeRequest query;
    for (const auto &m : std::as_const(request.metricIds)) {
        query.add_metric_ids(m.toStdString());
    }
    *query.mutable_gpus() = { request.gpus.begin(), request.gpus.end() };
    query.set_from_ms(request.fromMs);
    query.set_to_ms(request.toMs);
    query.set_step_ms(request.stepMs);

    auto stub = pb::Telemetry::NewStub(m_channel);
    std::vector<RawRangePart> raw;
    {
        auto reader = stub->QueryRange(&job->context, query);
        pb::QueryRangePart part;
        while (reader->Read(&part)) {
            raw.push_back({ part.metric_id(), { part.gpus().begin(), part.gpus().end() },
                { part.sample_times_ms().begin(), part.sample_times_ms().end() },
                { part.times_ms().begin(), part.times_ms().end() }, std::move(*part.mutable_values()) });
        }
        if (const auto status = reader->Finish(); !status.ok()) {
            fail(describeStatus(status));
            return;
        }
    }
    auto result = std::make_shared<RangeResult>();
    result->requestId = id;
    result->series = assembleRange(raw, request, topology ? topology->gpuCount : 0, &result->problems);
    result->request = std::move(request);
    post([this, id, result = RangeResultPtr(std::move(result))] {
        const auto it = m_jobs.find(id);
        if (it != m_jobs.end() && !it->second->cancelled) {
            for (const auto &problem : result->problems) {
                qCWarning(lcHistory, "%s", qPrintable(problem));
                Q_EMIT errorOccurred(problem);
            }
            Q_EMIT rangeReady(result);
        }
        finishJob(id);
    });
}

void HistoryClient::deliverEvents(quint64 id)
{
    const auto it = m_jobs.find(id);
    if (it == m_jobs.end()) {
        return;
    }
    auto batch = std::make_shared<EventBatch>();
    batch->requestId = id;
    {
        std::lock_guard lock(it->second->mutex);
        batch->events = std::move(it->second->pending);
        it->second->pending.clear();
        it->second->deliveryQueued = false;
    }
    if (!it->second->cancelled && !batch->events.empty()) {
        Q_EMIT eventsReady(batch);
    }
}

void HistoryClient::runEvents(
    std::shared_ptr<Job> job, EventFilter filter, int64_t sinceMs, int64_t untilMs, TopologyPtr topology)
{
    const quint64 id = job->id;
    pb::StreamEventsRequest request;
    request.set_since_ms(sinceMs);
    auto stub = pb::Telemetry::NewStub(m_channel);
    auto reader = stub->StreamEvents(&job->context, request);
    // Returns once the backend has opened the stream (or the call has failed): see the end.
    reader->WaitForInitialMetadata();
    const bool opened = job->context.GetServerInitialMetadata().count("fleetscope-events") > 0;
    pb::Event e;
    int64_t lastTime = std::numeric_limits<int64_t>::min();
    bool reachedEnd = false;
    while (reader->Read(&e)) {
        if (const QString problem = checkEvent(e, topology.get()); !problem.isEmpty() || e.time_ms() < lastTime) {
            const QString message = problem.isEmpty()
                ? QStringLiteral("dropped event %1: its time goes backwards").arg(e.sequence())
                : QStringLiteral("dropped %1").arg(problem);
            post([this, message] { Q_EMIT errorOccurred(message); });
            continue;
        }
        lastTime = e.time_ms();
        if (untilMs != 0 && e.time_ms() > untilMs) {
            reachedEnd = true;
            job->context.TryCancel();
            break;
        }
        FleetEvent event;
        event.timeMs = e.time_ms();
        event.sequence = e.sequence();
        event.kind = *kindOf(e.kind());
        event.severity = static_cast<FleetEvent::Severity>(e.severity());
        event.gpu = e.gpu();
        event.node = e.node();
        event.jobId = e.job_id();
        event.xid = e.xid();
        event.text = QString::fromStdString(e.text());
        if (!filter.matches(event)) {
            continue;
        }
        std::lock_guard lock(job->mutex);
        job->pending.push_back(std::move(event));
        if (!job->deliveryQueued) {
            job->deliveryQueued = true;
            post([this, id] { deliverEvents(id); });
        }
    }
    const auto status = reader->Finish();
    // A closed range ends at its deadline when no event after it came: complete if the backend had opened the stream,
    // a failure if it never answered (a hung backend must not look like a quiet GPU).
    const bool complete
        = reachedEnd || (untilMs != 0 && opened && status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
    post([this, id, complete, message = describeStatus(status)] {
        const auto it = m_jobs.find(id);
        if (it != m_jobs.end() && !it->second->cancelled) {
            deliverEvents(id); // what is still pending goes before the end
            if (complete) {
                Q_EMIT requestFinished(id);
            } else {
                Q_EMIT requestFailed(id, message);
            }
        }
        finishJob(id);
    });
}

} // namespace fleetscope
