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

    auto frame = m_source.latest();
    for (;;) {
        if (frame) {
            for (const auto &part : encodeFrame(*frame, metrics, m_source.topologyGeneration())) {
                if (!writer->Write(part)) {
                    return { grpc::StatusCode::CANCELLED, "client went away" };
                }
            }
        }
        const uint64_t sent = frame ? frame->sequence : 0;
        const uint64_t wantedAfter = sent + every - 1;
        do {
            if (context->IsCancelled()) {
                return { grpc::StatusCode::CANCELLED, "subscription cancelled" };
            }
            frame = m_source.waitForFrameAfter(wantedAfter, 200ms);
        } while (!frame);
    }
}

} // namespace fleetscope::backend
