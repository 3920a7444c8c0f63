// SPDX-License-Identifier: Apache-2.0
#include "client/historyclient.h"

#include "client/answerdecode.h"
#include "client/grpcstatus.h"
#include "client/historydecode.h"
#include "client/rpcjobs.h"

#include <fleetscope/telemetry/v1/telemetry.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <QLoggingCategory>
#include <QThread>

#include <algorithm>
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
// A closed event range is complete once the backend has had this long past its end to send what it holds.
constexpr auto eventSettle = std::chrono::seconds(2);
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
        if (it == out.end() && out.size() >= static_cast<size_t>(maxCatalogueMetrics)) {
            // Only a request for the default set gets here (named metrics are checked above): no more than a
            // catalogue lists, so that each part's look-up stays short.
            reject(metric, QStringLiteral("more metrics than the %1 a catalogue may list").arg(maxCatalogueMetrics));
            continue;
        }
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
        if (!part.values.empty()) { // a metric without rows comes as one part without values (memcpy from null: UB)
            std::memcpy(it->values.data() + at, part.values.data(), part.values.size());
        }
    }
    return out;
}

// One QueryRange: the parts are gathered as they come and checked together at the end.
class HistoryClient::RangeCall final : public RpcJobs::Stream<pb::QueryRangePart>
{
public:
    RangeCall(HistoryClient *client, std::chrono::milliseconds deadline, RangeRequest request, TopologyPtr topology)
        : Stream(client->jobs(), client, deadline)
        , m_client(client)
        , m_channel(client->channel())
        , m_request(std::move(request))
        , m_topology(std::move(topology))
    {
        for (const auto &m : std::as_const(m_request.metricIds)) {
            m_query.add_metric_ids(m.toStdString());
        }
        *m_query.mutable_gpus() = { m_request.gpus.begin(), m_request.gpus.end() };
        m_query.set_from_ms(m_request.fromMs);
        m_query.set_to_ms(m_request.toMs);
        m_query.set_step_ms(m_request.stepMs);
        // Bytes the request can be answered with: a float per metric, GPU and row (an empty list: the backend's
        // default set, at most 64 here), and two times per row.
        const double rows = m_request.stepMs > 0
            ? static_cast<double>(m_request.toMs - m_request.fromMs) / static_cast<double>(m_request.stepMs) + 2
            : 2;
        const double metrics = m_request.metricIds.isEmpty() ? 64 : m_request.metricIds.size();
        const double expected = metrics * std::max(rows, 0.0) * (4.0 * static_cast<double>(m_request.gpus.size()) + 16);
        m_limit = static_cast<size_t>(std::min(2 * expected + 16.0 * (1 << 20), 1e12));
        // Parts: a metric's rows come in parts of a row at least, and a metric without rows in one part. Bytes alone
        // let parts of a dozen bytes each (a metric id and the GPUs, no rows) come in their millions, a couple of
        // hundred bytes each once read.
        m_partLimit = static_cast<size_t>(std::min(metrics * (std::max(rows, 0.0) + 1), 1e9));
    }

private:
    std::unique_ptr<grpc::ClientAsyncReader<pb::QueryRangePart>> issue(
        grpc::ClientContext *context, grpc::CompletionQueue *cq) override
    {
        return pb::Telemetry::NewStub(m_channel)->PrepareAsyncQueryRange(context, m_query, cq);
    }

    void onRead(pb::QueryRangePart &part) override
    {
        // The answer cannot hold more than the request asked for: past twice that (and 16 MiB of slack for the
        // parts' own fields) a backend is streaming without end, and the call is cut before memory runs out.
        m_received += part.ByteSizeLong();
        ++m_parts;
        if (m_received > m_limit || m_parts > m_partLimit) {
            m_overflow = m_received > m_limit
                ? QStringLiteral("the backend sent more than %1 bytes for this range; the answer was dropped")
                      .arg(m_limit)
                : QStringLiteral("the backend sent more than the %1 parts this range can take; the answer was dropped")
                      .arg(m_partLimit);
            stop();
            return;
        }
        m_raw.push_back(rawRangePart(&part));
    }

    void onDone(const grpc::Status &status) override
    {
        HistoryClient *client = m_client;
        const quint64 requestId = id();
        if (!m_overflow.isEmpty() || !status.ok()) {
            const QString message = !m_overflow.isEmpty() ? m_overflow : describeStatus(status);
            finish([client, requestId, message] {
                qCInfo(lcHistory, "history request %llu failed: %s", requestId, qPrintable(message));
                Q_EMIT client->requestFailed(requestId, message);
            });
            return;
        }
        auto result = std::make_shared<RangeResult>();
        result->requestId = requestId;
        result->series = assembleRange(m_raw, m_request, m_topology ? m_topology->gpuCount : 0, &result->problems);
        result->request = std::move(m_request);
        finish([client, result = RangeResultPtr(std::move(result))] {
            for (const auto &problem : result->problems) {
                client->m_errors.report(QStringLiteral("range"), problem);
            }
            Q_EMIT client->rangeReady(result);
        });
    }

    HistoryClient *m_client;
    std::shared_ptr<grpc::Channel> m_channel; // the call holds the channel, not the stub
    RangeRequest m_request;
    TopologyPtr m_topology;
    pb::QueryRangeRequest m_query;
    std::vector<RawRangePart> m_raw;
    size_t m_received = 0; // bytes of parts read
    size_t m_limit = 0;
    size_t m_parts = 0; // parts read
    size_t m_partLimit = 0;
    QString m_overflow; // why the call was cut, when it was
};

// One StreamEvents. Events wait in a buffer shared with the owner thread; the completion-queue thread appends and
// queues one delivery if none is queued, so that a burst reaches the receiver as one batch.
class HistoryClient::EventsCall final : public RpcJobs::Stream<pb::Event>
{
public:
    struct Buffer
    {
        std::mutex mutex; // guards the two below, between the completion-queue thread and the owner thread
        std::vector<FleetEvent> pending;
        bool deliveryQueued = false;
    };

    EventsCall(HistoryClient *client, std::optional<std::chrono::milliseconds> deadline, EventFilter filter,
        int64_t sinceMs, int64_t untilMs, TopologyPtr topology)
        : Stream(client->jobs(), client, deadline)
        , m_client(client)
        , m_channel(client->channel())
        , m_filter(filter)
        , m_untilMs(untilMs)
        , m_topology(std::move(topology))
    {
        m_query.set_since_ms(sinceMs);
    }

private:
    std::unique_ptr<grpc::ClientAsyncReader<pb::Event>> issue(
        grpc::ClientContext *context, grpc::CompletionQueue *cq) override
    {
        return pb::Telemetry::NewStub(m_channel)->PrepareAsyncStreamEvents(context, m_query, cq);
    }

    void onRead(pb::Event &message) override
    {
        QString problem;
        auto event = decodeEvent(message, m_topology.get(), &problem);
        if (!event || event->timeMs < m_lastTime) {
            const QString text = event
                ? QStringLiteral("dropped event %1: its time goes backwards").arg(event->sequence)
                : QStringLiteral("dropped %1").arg(problem);
            // Here, on the completion-queue thread: a stream of nothing but bad events once posted each one's error
            // to the GUI thread. The client waits for its calls before its coalescer goes (~HistoryClient).
            m_client->m_errors.report(QStringLiteral("event"), text);
            return;
        }
        m_lastTime = event->timeMs;
        if (m_untilMs != 0 && event->timeMs > m_untilMs) {
            m_reachedEnd = true;
            stop(); // no further read: onDone follows
            return;
        }
        if (m_filter.matches(*event)) {
            std::lock_guard lock(m_buffer->mutex);
            if (m_buffer->pending.size() >= maxPendingEvents) {
                // The receiver has not taken the events for that long: a backend sending faster than the console
                // can take them would otherwise fill memory. What is pending is delivered, and the stream fails.
                m_flooded = true;
                stop();
                return;
            }
            m_buffer->pending.push_back(std::move(*event));
            if (!m_buffer->deliveryQueued) {
                m_buffer->deliveryQueued = true;
                deliver([client = m_client, id = id(), buffer = m_buffer] { deliverEvents(client, id, *buffer); });
            }
        }
    }

    void onDone(const grpc::Status &status) override
    {
        // The backend opens the stream with this in its headers, which the end of the call has received by now (or
        // never will). A closed range ends at its deadline when no event after it came: complete if the backend had
        // opened the stream, a failure if it never answered (a hung backend must not look like a quiet GPU).
        const bool opened = context()->GetServerInitialMetadata().count("fleetscope-events") > 0;
        const bool complete = !m_flooded
            && (m_reachedEnd
                || (m_untilMs != 0 && opened && status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED));
        const QString message = m_flooded
            ? QStringLiteral("the backend sent more than %1 events before the console could take them; the stream was "
                             "cut")
                  .arg(maxPendingEvents)
            : describeStatus(status);
        finish([client = m_client, id = id(), buffer = m_buffer, complete, message] {
            deliverEvents(client, id, *buffer); // what is still pending goes before the end
            if (complete) {
                Q_EMIT client->requestFinished(id);
            } else {
                Q_EMIT client->requestFailed(id, message);
            }
        });
    }

    // Owner thread.
    static void deliverEvents(HistoryClient *client, quint64 id, Buffer &buffer)
    {
        auto batch = std::make_shared<EventBatch>();
        batch->requestId = id;
        {
            std::lock_guard lock(buffer.mutex);
            batch->events = std::move(buffer.pending);
            buffer.pending.clear();
            buffer.deliveryQueued = false;
        }
        if (!batch->events.empty()) {
            Q_EMIT client->eventsReady(batch);
        }
    }

    HistoryClient *m_client;
    std::shared_ptr<grpc::Channel> m_channel;
    EventFilter m_filter;
    int64_t m_untilMs = 0;
    TopologyPtr m_topology;
    pb::StreamEventsRequest m_query;
    int64_t m_lastTime = std::numeric_limits<int64_t>::min();
    bool m_reachedEnd = false;
    bool m_flooded = false; // cut: maxPendingEvents were waiting for the receiver
    std::shared_ptr<Buffer> m_buffer = std::make_shared<Buffer>();
};

HistoryClient::HistoryClient(const QString &address, QObject *parent)
    : HistoryClient(address, ChannelSecurity(), parent)
{ }

HistoryClient::HistoryClient(const QString &address, const ChannelSecurity &security, QObject *parent)
    : RpcClient(address, security, parent)
{
    qRegisterMetaType<RangeResultPtr>();
    qRegisterMetaType<EventBatchPtr>();
    connect(&m_errors, &ErrorCoalescer::errorOccurred, this, [this](const QString &message) {
        qCWarning(lcHistory, "%s", qPrintable(message));
        Q_EMIT errorOccurred(message);
    });
}

HistoryClient::~HistoryClient()
{
    stopCalls(); // the events calls report to m_errors from the completion-queue thread
}

void HistoryClient::setTopology(TopologyPtr topology)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_topology = std::move(topology);
}

template <typename F> quint64 HistoryClient::refuse(F message)
{
    return jobs().reject(this, [this, message = std::move(message)](quint64 id) {
        qCInfo(lcHistory, "history request %llu failed: %s", id, qPrintable(message));
        Q_EMIT requestFailed(id, message);
    });
}

quint64 HistoryClient::queryRange(const RangeRequest &request)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (request.gpus.empty()) {
        return refuse(QStringLiteral("no GPUs asked for"));
    }
    if (m_topology) {
        for (const uint32_t g : request.gpus) {
            if (g >= m_topology->gpuCount) {
                return refuse(QStringLiteral("GPU %1 is outside the fleet of %2").arg(g).arg(m_topology->gpuCount));
            }
        }
    }
    return jobs().start(new RangeCall(this, deadline(), request, m_topology));
}

quint64 HistoryClient::streamEvents(const EventFilter &filter, int64_t sinceMs, int64_t untilMs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    std::optional<std::chrono::milliseconds> deadline;
    if (untilMs != 0) {
        const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch());
        deadline = std::max(std::chrono::milliseconds(untilMs) - now, std::chrono::milliseconds(0)) + eventSettle;
    }
    return jobs().start(new EventsCall(this, deadline, filter, sinceMs, untilMs, m_topology));
}

} // namespace fleetscope
