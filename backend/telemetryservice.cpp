// SPDX-License-Identifier: Apache-2.0
#include "telemetryservice.h"

#include "frameencoder.h"

#include <fmt/format.h>

namespace fleetscope::backend {

using namespace std::chrono_literals;

grpc::Status TelemetryService::GetTopology(grpc::ServerContext *context, const pb::GetTopologyRequest * /*request*/,
    grpc::ServerWriter<pb::TopologyPart> *writer)
{
    for (const auto &part : encodeTopology(m_source.shape(), m_source.topologyGeneration())) {
        if (context->IsCancelled() || !writer->Write(part)) {
            return { grpc::StatusCode::CANCELLED, "client went away while the topology was sent" };
        }
    }
    return grpc::Status::OK;
}

grpc::Status TelemetryService::ListMetrics(
    grpc::ServerContext * /*context*/, const pb::ListMetricsRequest * /*request*/, pb::ListMetricsResponse *response)
{
    fillMetricCatalog(response);
    return grpc::Status::OK;
}

grpc::Status TelemetryService::Subscribe(
    grpc::ServerContext *context, const pb::SubscribeRequest *request, grpc::ServerWriter<pb::FramePart> *writer)
{
    std::vector<MetricId> metrics;
    for (const auto &key : request->metric_ids()) {
        const auto id = metricByKey(key);
        if (!id) {
            return { grpc::StatusCode::INVALID_ARGUMENT,
                fmt::format("unknown metric id '{}'; ListMetrics gives the valid ones", key) };
        }
        metrics.push_back(*id);
    }
    if (metrics.empty()) {
        metrics = defaultMetrics();
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

    auto send = [&](const SimFrame &frame) {
        for (const auto &part : encodeFrame(frame, metrics, m_source.topologyGeneration())) {
            if (!writer->Write(part)) {
                return false;
            }
        }
        return true;
    };

    std::shared_ptr<const SimFrame> frame;
    if (request->resume_after_sequence() != 0) {
        std::vector<std::shared_ptr<const SimFrame>> held;
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
        std::shared_ptr<const SimFrame> next;
        while (!next) {
            if (context->IsCancelled()) {
                return { grpc::StatusCode::CANCELLED, "subscription cancelled" };
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
pb::EventKind toProto(FleetEvent::Kind kind)
{
    switch (kind) {
    case FleetEvent::Kind::Xid:
        return pb::EVENT_KIND_XID;
    case FleetEvent::Kind::EccDoubleBit:
        return pb::EVENT_KIND_ECC_DOUBLE_BIT;
    case FleetEvent::Kind::ThermalThrottleStart:
        return pb::EVENT_KIND_THERMAL_THROTTLE_START;
    case FleetEvent::Kind::ThermalThrottleEnd:
        return pb::EVENT_KIND_THERMAL_THROTTLE_END;
    case FleetEvent::Kind::PowerThrottleStart:
        return pb::EVENT_KIND_POWER_THROTTLE_START;
    case FleetEvent::Kind::PowerThrottleEnd:
        return pb::EVENT_KIND_POWER_THROTTLE_END;
    case FleetEvent::Kind::NodeDown:
        return pb::EVENT_KIND_NODE_DOWN;
    case FleetEvent::Kind::NodeUp:
        return pb::EVENT_KIND_NODE_UP;
    case FleetEvent::Kind::JobStart:
        return pb::EVENT_KIND_JOB_START;
    case FleetEvent::Kind::JobEnd:
        return pb::EVENT_KIND_JOB_END;
    }
    return pb::EVENT_KIND_UNSPECIFIED;
}
} // namespace

grpc::Status TelemetryService::StreamEvents(
    grpc::ServerContext *context, const pb::StreamEventsRequest *request, grpc::ServerWriter<pb::Event> *writer)
{
    const int64_t nowMs
        = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count();
    if (request->since_ms() > nowMs + 60000) {
        return { grpc::StatusCode::INVALID_ARGUMENT,
            fmt::format("since_ms {} is in the future (now is {})", request->since_ms(), nowMs) };
    }
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
            if (!writer->Write(out)) {
                return { grpc::StatusCode::CANCELLED, "client went away" };
            }
        }
    }
    return { grpc::StatusCode::CANCELLED, "event stream cancelled" };
}

grpc::Status TelemetryService::ListJobs(
    grpc::ServerContext * /*context*/, const pb::ListJobsRequest * /*request*/, pb::ListJobsResponse *response)
{
    for (const auto &job : m_source.jobs()) {
        auto *out = response->add_jobs();
        out->set_id(job.id);
        out->set_name(job.name);
        out->set_owner(job.owner);
        for (uint32_t g = job.firstGpu; g < job.firstGpu + job.gpuCount; ++g) {
            out->add_gpus(g);
        }
        out->set_start_time_ms(job.startMs);
        out->set_last_checkpoint_ms(job.lastCheckpointMs);
        out->set_end_time_ms(job.endMs);
    }
    return grpc::Status::OK;
}

} // namespace fleetscope::backend
