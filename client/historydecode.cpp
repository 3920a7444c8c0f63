// SPDX-License-Identifier: Apache-2.0
#include "client/historydecode.h"

#include "client/wiretext.h"

#include <utility>

namespace fleetscope {

namespace {
// The wire's numbers are EventKind's plus one, 0 being unspecified (common/events.h; tst_common holds the two enums
// together).
std::optional<FleetEvent::Kind> kindOf(pb::EventKind kind)
{
    const int index = static_cast<int>(kind) - 1;
    if (index < 0 || index >= eventKindCount) {
        return std::nullopt;
    }
    return static_cast<FleetEvent::Kind>(index);
}

// A metric id names a catalogue entry: anything longer than this is not one (the backend is untrusted).
constexpr size_t maxMetricIdBytes = 64;
} // namespace

std::optional<FleetEvent> decodeEvent(const pb::Event &e, const Topology *topology, QString *problem)
{
    const auto kind = kindOf(e.kind());
    if (!kind) {
        *problem = QStringLiteral("event %1 has unknown kind %2").arg(e.sequence()).arg(static_cast<int>(e.kind()));
        return std::nullopt;
    }
    if (e.severity() < pb::SEVERITY_INFO || e.severity() > pb::SEVERITY_CRITICAL) {
        *problem
            = QStringLiteral("event %1 has unknown severity %2").arg(e.sequence()).arg(static_cast<int>(e.severity()));
        return std::nullopt;
    }
    if (e.gpu() < -1 || (topology && e.gpu() >= static_cast<int64_t>(topology->gpuCount))) {
        *problem = QStringLiteral("event %1 names GPU %2, outside the fleet").arg(e.sequence()).arg(e.gpu());
        return std::nullopt;
    }
    if (e.node() < -1 || (topology && e.node() >= static_cast<int64_t>(topology->nodes.size()))) {
        *problem = QStringLiteral("event %1 names node %2, outside the fleet").arg(e.sequence()).arg(e.node());
        return std::nullopt;
    }
    FleetEvent event;
    event.timeMs = e.time_ms();
    event.sequence = e.sequence();
    event.kind = *kind;
    event.severity = static_cast<FleetEvent::Severity>(e.severity());
    event.gpu = e.gpu();
    event.node = e.node();
    event.jobId = e.job_id();
    event.xid = e.xid();
    event.text = wireText(e.text(), maxMessageText);
    if (e.metric_id().size() <= maxMetricIdBytes) {
        event.metric = QString::fromStdString(e.metric_id());
    }
    return event;
}

RawRangePart rawRangePart(pb::QueryRangePart *part)
{
    return { part->metric_id(), { part->gpus().begin(), part->gpus().end() },
        { part->sample_times_ms().begin(), part->sample_times_ms().end() },
        { part->times_ms().begin(), part->times_ms().end() }, std::move(*part->mutable_values()) };
}

} // namespace fleetscope
