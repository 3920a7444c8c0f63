// SPDX-License-Identifier: Apache-2.0
#include "service/telemetryservice.h"

#include "core/clock.h"
#include "service/frameencoder.h"
#include "service/jobencoder.h"
#include "service/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <unordered_map>

namespace fleetscope::backend {

using namespace std::chrono_literals;

static_assert(rangePartBytesAtMost(1, TelemetryService::maxRangeGpus) < maxMessageBytes,
    "one row of the most GPUs a query may name fits a part");

namespace {
grpc::Status invalid(std::string message)
{
    return { grpc::StatusCode::INVALID_ARGUMENT, std::move(message) };
}

// A client's string, quoted, for a status message: its start only, since the message travels in a header that
// clients limit to a few kilobytes (a megabyte of metric id, echoed whole, reached the client as a transport error).
std::string quoted(const std::string &text)
{
    constexpr size_t most = 64;
    return text.size() <= most ? fmt::format("'{}'", text)
                               : fmt::format("'{}...' ({} bytes)", text.substr(0, most), text.size());
}
} // namespace

grpc::Status TelemetryService::resolveMetrics(
    const google::protobuf::RepeatedPtrField<std::string> &ids, std::vector<MetricId> *out)
{
    // A repeated id adds nothing, so a request never costs more than the catalogue's metrics (one id named 400,000
    // times once made 400,000 planes a frame).
    std::array<bool, static_cast<size_t>(MetricId::Count)> named {};
    for (int i = 0; i < ids.size(); ++i) {
        const auto id = metricByKey(ids[i]);
        if (!id) {
            return invalid(fmt::format("unknown metric id {} in metric_ids[{}]; ListMetrics gives the {} valid ones",
                quoted(ids[i]), i, metricCatalog().size()));
        }
        if (!named[static_cast<size_t>(*id)]) {
            named[static_cast<size_t>(*id)] = true;
            out->push_back(*id);
        }
    }
    if (out->empty()) {
        *out = defaultMetrics();
    }
    return grpc::Status::OK;
}

grpc::Status TelemetryService::resolveGpus(const pb::QueryRangeRequest &request, std::vector<uint32_t> *out) const
{
    const uint32_t n = m_source.shape().gpuCount;
    if (request.gpus().empty()) {
        const uint64_t first = request.first_gpu();
        const uint64_t count = request.gpu_count() == 0 && first < n ? n - first : request.gpu_count();
        if (count == 0 || first + count > n) {
            return invalid(fmt::format("first_gpu {} + gpu_count {} is outside the fleet of {} GPUs (first_gpu must be "
                                       "below {} and first_gpu + gpu_count at most {})",
                first, request.gpu_count(), n, n, n));
        }
        out->resize(count);
        for (uint64_t i = 0; i < count; ++i) {
            (*out)[i] = static_cast<uint32_t>(first + i);
        }
    } else {
        // A GPU named again would only repeat its column.
        std::vector<bool> named(n);
        for (int i = 0; i < request.gpus_size(); ++i) {
            const uint32_t g = request.gpus(i);
            if (g >= n) {
                return invalid(fmt::format(
                    "gpus[{}] = {} is outside the fleet of {} GPUs (indices must be below {})", i, g, n, n));
            }
            if (!named[g]) {
                named[g] = true;
                out->push_back(g);
            }
        }
    }
    if (out->size() > maxRangeGpus) {
        return { grpc::StatusCode::RESOURCE_EXHAUSTED,
            fmt::format("{} GPUs is over the limit of {} GPUs per query (a row of one metric must fit a 4 MiB part); "
                        "ask for the GPUs in several queries",
                out->size(), maxRangeGpus) };
    }
    return grpc::Status::OK;
}

int64_t TelemetryService::latestAllowedMs() const
{
    return std::max(nowUnixMs(), m_source.latest()->sampleTimeMs) + clockAllowanceMs;
}

grpc::Status TelemetryService::checkRangeTimes(
    const pb::QueryRangeRequest &request, int64_t *toMs, uint64_t *rows) const
{
    // In this order no difference below can overflow: 0 <= from <= to.
    const int64_t from = request.from_ms();
    int64_t to = request.to_ms();
    const int64_t step = request.step_ms();
    if (step < 1) {
        return invalid(fmt::format("step_ms {} is below the least step, 1 ms", step));
    }
    if (from < 0) {
        return invalid(fmt::format("from_ms {} is before the Unix epoch", from));
    }
    if (to < from) {
        return invalid(fmt::format("to_ms {} is before from_ms {} (a reversed range)", to, from));
    }
    // A range reaching into the future ends at the latest time there can be data for (a console's clock a little
    // ahead of this one's still gets its charts); one that starts there is refused.
    const int64_t latest = latestAllowedMs();
    if (from > latest) {
        return invalid(fmt::format("from_ms {} is in the future: the latest time a query may name now is {} (this "
                                   "backend's clock, or its newest frame, plus {} ms)",
            from, latest, clockAllowanceMs));
    }
    to = std::min(to, latest);
    *toMs = to;
    *rows = static_cast<uint64_t>((to - from) / step) + 1;
    return grpc::Status::OK;
}

grpc::Status TelemetryService::GetTopology(grpc::ServerContext *context, const pb::GetTopologyRequest * /*request*/,
    grpc::ServerWriter<pb::TopologyPart> *writer)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "GetTopology", AccessGate::Call::Stream);
    if (!admitted.ok()) {
        return admitted.status();
    }
    const uint64_t generation = m_source.topologyGeneration();
    const auto parts = m_encodings.topology(generation, [&] {
        if (auto ahead = takeTopologyAhead(generation); ahead.valid()) {
            return ahead.get();
        }
        return encodeTopology(m_source.shape(), generation);
    });
    uint64_t number = 0;
    for (const auto &part : *parts) {
        const auto writing = m_stalls.writing(context, "GetTopology part", number++);
        if (context->IsCancelled() || !writer->Write(part)) {
            return { grpc::StatusCode::CANCELLED, "client went away while the topology was sent" };
        }
    }
    return grpc::Status::OK;
}

void TelemetryService::setTopologyAhead(uint64_t generation, std::future<SharedEncodings::TopologyParts> parts)
{
    std::lock_guard lock(m_aheadMutex);
    m_aheadGeneration = generation;
    m_ahead = std::move(parts);
}

std::future<SharedEncodings::TopologyParts> TelemetryService::takeTopologyAhead(uint64_t generation)
{
    std::lock_guard lock(m_aheadMutex);
    if (generation != m_aheadGeneration) {
        return {};
    }
    return std::move(m_ahead);
}

grpc::Status TelemetryService::ListMetrics(
    grpc::ServerContext *context, const pb::ListMetricsRequest * /*request*/, pb::ListMetricsResponse *response)
{
    const auto admitted = m_gate->admit(context, "ListMetrics", AccessGate::Call::Unary);
    if (!admitted.ok()) {
        return admitted.status();
    }
    fillMetricCatalog(response, &m_source.shape());
    return grpc::Status::OK;
}

grpc::Status TelemetryService::Subscribe(
    grpc::ServerContext *context, const pb::SubscribeRequest *request, grpc::ServerWriter<pb::FramePart> *writer)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "Subscribe", AccessGate::Call::Stream);
    if (!admitted.ok()) {
        return admitted.status();
    }
    std::vector<MetricId> metrics;
    if (auto status = resolveMetrics(request->metric_ids(), &metrics); !status.ok()) {
        return status;
    }
    if (request->topology_generation() != 0 && request->topology_generation() != m_source.topologyGeneration()) {
        return { grpc::StatusCode::FAILED_PRECONDITION,
            fmt::format("topology generation {} is stale, the current one is {}; call GetTopology again",
                request->topology_generation(), m_source.topologyGeneration()) };
    }
    const auto native = m_source.interval();
    const auto wanted = std::chrono::milliseconds(request->interval_ms());
    // Every k-th frame of the source, where k rounds the wanted interval up to a multiple of the native one.
    const auto every = static_cast<uint64_t>(std::max<int64_t>(1, (wanted + native - 1ms) / native));

    auto send = [&](const Frame &frame) {
        const uint64_t generation = m_source.topologyGeneration();
        // Shared with every subscriber of the same metrics that sends this frame now.
        const auto parts
            = m_encodings.frame(frame, metrics, generation, [&] { return encodeFrame(frame, metrics, generation); });
        for (const auto &part : *parts) {
            const auto writing = m_stalls.writing(context, "Subscribe frame", frame.sequence);
            if (!writer->Write(part)) {
                return false;
            }
        }
        return true;
    };

    std::shared_ptr<const Frame> frame;
    if (request->resume_after_sequence() != 0) {
        std::vector<std::shared_ptr<const Frame>> held;
        uint64_t heldFrom = 0;
        uint64_t heldTo = 0;
        if (!m_source.framesAfter(request->resume_after_sequence(), &held, &heldFrom, &heldTo)) {
            return { grpc::StatusCode::OUT_OF_RANGE,
                fmt::format("cannot resume after frame {}: this server holds frames {} to {}; subscribe without "
                            "resume_after_sequence for a fresh full frame",
                    request->resume_after_sequence(), heldFrom, heldTo) };
        }
        for (const auto &f : held) {
            if (!send(*f)) {
                return { grpc::StatusCode::CANCELLED, "client went away" };
            }
        }
        frame = held.empty() ? nullptr : held.back();
    } else {
        frame = m_source.latest();
        if (!send(*frame)) {
            return { grpc::StatusCode::CANCELLED, "client went away" };
        }
    }
    uint64_t sent = frame ? frame->sequence : request->resume_after_sequence();
    for (;;) {
        // The next frame at least `every` frames after the last one sent.
        std::shared_ptr<const Frame> next;
        while (!next) {
            if (context->IsCancelled()) {
                return { grpc::StatusCode::CANCELLED, "subscription cancelled" };
            }
            // A polled source whose upstream fails: say so, so the console shows why its data is getting old; it
            // resubscribes with backoff and resumes after the last frame it has.
            if (auto error = m_source.upstreamError(); !error.empty()) {
                const auto last = m_source.latest();
                return { grpc::StatusCode::UNAVAILABLE,
                    fmt::format("upstream telemetry source failing: {}; newest frame held is {} (sample time {} ms)",
                        error, last->sequence, last->sampleTimeMs) };
            }
            next = m_source.waitForFrameAfter(sent + every - 1, 200ms);
        }
        if (!send(*next)) {
            return { grpc::StatusCode::CANCELLED, "client went away" };
        }
        sent = next->sequence;
    }
}

namespace {
// The wire numbers the kinds as common/events.h does, plus one (0 is unspecified); tst_common checks every pair.
pb::EventKind toProto(FleetEvent::Kind kind)
{
    static_assert(pb::EventKind_ARRAYSIZE == eventKindCount + 1, "one wire kind per event kind");
    return static_cast<pb::EventKind>(static_cast<int>(kind) + 1);
}
} // namespace

grpc::Status TelemetryService::StreamEvents(
    grpc::ServerContext *context, const pb::StreamEventsRequest *request, grpc::ServerWriter<pb::Event> *writer)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "StreamEvents", AccessGate::Call::Stream);
    if (!admitted.ok()) {
        return admitted.status();
    }
    if (request->since_ms() < 0) {
        return invalid(fmt::format("since_ms {} is before the Unix epoch (0 means from now on)", request->since_ms()));
    }
    if (const int64_t latest = latestAllowedMs(); request->since_ms() > latest) {
        return invalid(fmt::format(
            "since_ms {} is in the future: the latest time it may name now is {}", request->since_ms(), latest));
    }
    // Says at once that the stream is open. The stream has no end of its own, so a client asking for a closed range
    // stops at a deadline; this tells "no more events by then" (it was open) from a backend that never answered.
    context->AddInitialMetadata("fleetscope-events", "open");
    writer->SendInitialMetadata();
    // Without a start time only new events are sent; with one, the held events from then on come first.
    uint64_t after = request->since_ms() == 0 ? m_source.lastEventSequence() : 0;
    const int64_t since = request->since_ms();
    while (!context->IsCancelled()) {
        for (const auto &timed : m_source.eventsAfter(since, &after, 200ms)) {
            const auto &e = timed.event;
            pb::Event out;
            out.set_time_ms(timed.timeMs);
            out.set_sequence(timed.sequence);
            out.set_kind(toProto(e.kind));
            out.set_severity(static_cast<pb::Severity>(e.severity));
            out.set_gpu(e.gpu);
            out.set_node(e.node);
            out.set_job_id(e.jobId);
            out.set_xid(e.xid);
            out.set_text(e.text);
            if (e.metric) {
                out.set_metric_id(metricCatalog()[static_cast<size_t>(*e.metric)].key);
            }
            if (e.incident) {
                encodeIncident(*e.incident, out.mutable_incident());
            }
            const auto writing = m_stalls.writing(context, "StreamEvents event", timed.sequence);
            if (!writer->Write(out)) {
                return { grpc::StatusCode::CANCELLED, "client went away" };
            }
        }
    }
    return { grpc::StatusCode::CANCELLED, "event stream cancelled" };
}

grpc::Status TelemetryService::ListJobs(
    grpc::ServerContext *context, const pb::ListJobsRequest * /*request*/, pb::ListJobsResponse *response)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "ListJobs", AccessGate::Call::Unary);
    if (!admitted.ok()) {
        return admitted.status();
    }
    const auto jobs = m_source.jobs();
    // Each job's account in brief, where the source keeps accounts and holds the job's.
    std::unordered_map<uint64_t, JobBrief> briefs;
    if (const JobAccounts *accounts = m_source.jobAccounts()) {
        for (const auto &brief : accounts->briefs()) {
            briefs.emplace(brief.id, brief);
        }
    }
    *response = encodeJobs(jobs, maxMessageBytes - (64U << 10U), [&briefs](const JobInfo &job, pb::Job *out) {
        if (const auto it = briefs.find(job.id); it != briefs.end()) {
            encodeBrief(it->second, out);
        }
    });
    return grpc::Status::OK;
}

grpc::Status TelemetryService::QueryRange(
    grpc::ServerContext *context, const pb::QueryRangeRequest *request, grpc::ServerWriter<pb::QueryRangePart> *writer)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "QueryRange", AccessGate::Call::Stream);
    if (!admitted.ok()) {
        return admitted.status();
    }
    std::vector<MetricId> metrics;
    if (auto status = resolveMetrics(request->metric_ids(), &metrics); !status.ok()) {
        return status;
    }
    std::vector<uint32_t> gpus;
    if (auto status = resolveGpus(*request, &gpus); !status.ok()) {
        return status;
    }
    uint64_t rows = 0;
    int64_t to = 0;
    if (auto status = checkRangeTimes(*request, &to, &rows); !status.ok()) {
        return status;
    }
    // times x GPUs x metrics against the limit by division, so that no product can overflow.
    if (rows > maxRangeValues / (gpus.size() * metrics.size())) {
        return { grpc::StatusCode::RESOURCE_EXHAUSTED,
            fmt::format("{} times x {} GPUs x {} metrics is over the limit of {} values per query; use a coarser "
                        "step, fewer GPUs or fewer metrics",
                rows, gpus.size(), metrics.size(), maxRangeValues) };
    }
    if (const auto *history = m_source.history()) {
        return queryUpstream(
            *history, context, metrics, std::move(gpus), request->from_ms(), to, request->step_ms(), writer);
    }
    return queryHeld(context, metrics, gpus, request->from_ms(), request->step_ms(), rows, writer);
}

grpc::Status TelemetryService::queryHeld(grpc::ServerContext *context, const std::vector<MetricId> &metrics,
    const std::vector<uint32_t> &gpus, int64_t from, int64_t step, uint64_t rows,
    grpc::ServerWriter<pb::QueryRangePart> *writer) const
{
    // Row r is the output time from + r x step (never past to_ms: no overflow) with the last held frame at or before
    // it. The times before the first frame held are left out; every later one has a frame. Rows are made a part at
    // a time, so a query's memory is a part's whatever its length, and a client that has gone is noticed between
    // parts.
    const auto frames = m_source.framesBetween(from, from + static_cast<int64_t>(rows - 1) * step);
    uint64_t firstRow = rows;
    if (!frames.empty()) {
        const int64_t first = frames.front()->sampleTimeMs;
        const int64_t after = first - std::min(first, from); // >= 0, no overflow as from >= 0
        firstRow = std::min<uint64_t>(rows, static_cast<uint64_t>(after / step + (after % step != 0 ? 1 : 0)));
    }
    const size_t rowsPerPart = rangeRowsPerPart(gpus.size());
    for (const MetricId id : metrics) {
        size_t next = 0; // frames before `next` are at or before the row's time
        uint64_t r0 = firstRow;
        // One part without rows for a metric without any, as from an upstream.
        do {
            const uint64_t r1 = std::min<uint64_t>(rows, r0 + rowsPerPart);
            auto part = rangePartHeader(id, gpus);
            std::string values(static_cast<size_t>(r1 - r0) * gpus.size() * sizeof(float), '\0');
            auto *out = reinterpret_cast<float *>(values.data());
            for (uint64_t r = r0; r < r1; ++r) {
                const int64_t t = from + static_cast<int64_t>(r) * step;
                while (next < frames.size() && frames[next]->sampleTimeMs <= t) {
                    ++next;
                }
                const Frame &frame = *frames[next - 1];
                part.add_times_ms(t);
                part.add_sample_times_ms(frame.sampleTimeMs);
                const auto &plane = frame.plane(id);
                for (const uint32_t g : gpus) {
                    *out++ = plane[g];
                }
            }
            part.set_values(std::move(values));
            const auto writing = m_stalls.writing(context, "QueryRange row", r0);
            if (context->IsCancelled() || !writer->Write(part)) {
                return { grpc::StatusCode::CANCELLED, "client went away" };
            }
            r0 = r1;
        } while (r0 < rows);
    }
    return grpc::Status::OK;
}

grpc::Status TelemetryService::queryUpstream(const HistoryProvider &history, grpc::ServerContext *context,
    const std::vector<MetricId> &metrics, std::vector<uint32_t> gpus, int64_t from, int64_t to, int64_t step,
    grpc::ServerWriter<pb::QueryRangePart> *writer) const
{
    const auto &catalog = metricCatalog();
    for (const MetricId id : metrics) {
        if (catalog[static_cast<size_t>(id)].dcgmField.empty()) {
            return { grpc::StatusCode::INVALID_ARGUMENT,
                fmt::format("metric '{}' is computed per frame by this backend and has no history upstream; ask for "
                            "the metrics it is computed from",
                    catalog[static_cast<size_t>(id)].key) };
        }
    }
    auto failed = [](const std::string &error) {
        return grpc::Status { grpc::StatusCode::UNAVAILABLE,
            fmt::format("upstream telemetry source failing: {}", error) };
    };
    HistoryProvider::Range range;
    range.fromMs = from;
    range.toMs = to;
    range.stepMs = step;
    range.gpus = std::move(gpus);
    std::vector<int64_t> times;
    std::vector<int64_t> sampleTimes;
    std::string error;
    if (!history.rangeTimes(&range, &times, &sampleTimes, &error)) {
        return failed(error);
    }
    const size_t columns = range.gpus.size();
    const size_t rowsPerPart = rangeRowsPerPart(columns);
    std::vector<float> values;
    for (const MetricId id : metrics) {
        if (context->IsCancelled()) {
            return { grpc::StatusCode::CANCELLED, "client went away" };
        }
        if (!history.rangeValues(range, id, times, &values, &error)) {
            return failed(error);
        }
        // As from held frames: whole rows per part, and one empty part for a metric without any.
        for (size_t r0 = 0; r0 < times.size() || r0 == 0; r0 += rowsPerPart) {
            auto part = rangePartHeader(id, range.gpus);
            const size_t r1 = std::min(times.size(), r0 + rowsPerPart);
            for (size_t r = r0; r < r1; ++r) {
                part.add_times_ms(times[r]);
                part.add_sample_times_ms(sampleTimes[r]);
            }
            if (r1 > r0) {
                part.set_values(
                    reinterpret_cast<const char *>(values.data() + r0 * columns), (r1 - r0) * columns * sizeof(float));
            }
            const auto writing = m_stalls.writing(context, "QueryRange row", r0);
            if (context->IsCancelled() || !writer->Write(part)) {
                return { grpc::StatusCode::CANCELLED, "client went away" };
            }
            if (times.empty()) {
                break;
            }
        }
    }
    return grpc::Status::OK;
}

grpc::Status TelemetryService::GetSummary(
    grpc::ServerContext *context, const pb::GetSummaryRequest *request, pb::Summary *response)
{
    const auto ended = m_trim.call();
    const auto admitted = m_gate->admit(context, "GetSummary", AccessGate::Call::Unary);
    if (!admitted.ok()) {
        return admitted.status();
    }
    const int64_t from = request->from_ms();
    const int64_t to = request->to_ms() == 0 ? nowUnixMs() : request->to_ms();
    if (from < 0) {
        return invalid(fmt::format("from_ms {} is before the Unix epoch", from));
    }
    if (to < from) {
        return invalid(request->to_ms() == 0
                ? fmt::format("to_ms 0 means now, {}, which is before from_ms {} (a reversed range)", to, from)
                : fmt::format("to_ms {} is before from_ms {} (a reversed range)", to, from));
    }
    const auto frames = m_source.framesBetween(from, to);
    if (frames.empty()) {
        return { grpc::StatusCode::FAILED_PRECONDITION,
            fmt::format("no frames held between {} and {}; the source's history starts later", from, to) };
    }
    // The time the frames stand for within the range: each frame until the next, the newest for one interval. A
    // range after that (in the future) holds no frame, though the newest one before it came along.
    const int64_t start = std::max(from, frames.front()->sampleTimeMs);
    const int64_t end = std::min(to, frames.back()->sampleTimeMs + m_source.interval().count());
    if (end < start || (end == start && from < to)) {
        return { grpc::StatusCode::FAILED_PRECONDITION,
            fmt::format("no frame held between {} and {}: the newest frame held is from {}, and stands until {}", from,
                to, frames.back()->sampleTimeMs, end) };
    }
    uint64_t after = 0;
    auto events = m_source.eventsAfter(from, &after, std::chrono::milliseconds(0));
    events.erase(std::remove_if(events.begin(), events.end(), [to](const TimedEvent &e) { return e.timeMs > to; }),
        events.end());
    const uint32_t top = request->top_offenders() == 0 ? 20 : std::min<uint32_t>(request->top_offenders(), 1000);
    *response = summarise(m_source.shape(), frames, events, m_source.jobs(), from, end, top);
    if (const JobAccounts *accounts = m_source.jobAccounts()) {
        encodeGoodput(accounts->between(response->from_ms(), response->to_ms()), response);
    }
    return grpc::Status::OK;
}

} // namespace fleetscope::backend
