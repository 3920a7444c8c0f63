// SPDX-License-Identifier: Apache-2.0
#include "client/historydecode.h"

#include "client/topologydecode.h"
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

bool isIncidentKind(FleetEvent::Kind kind)
{
    return kind == FleetEvent::Kind::IncidentOpen || kind == FleetEvent::Kind::IncidentUpdate
        || kind == FleetEvent::Kind::IncidentClose;
}

// An incident event's incident, checked against the fleet (null topology: against the most GPUs a fleet may have,
// and its domain for sign only). Null and *problem set when it is malformed.
std::shared_ptr<const Incident> decodeIncident(const pb::Incident &in, const Topology *topology, QString *problem)
{
    const uint64_t gpus = topology ? topology->gpuCount : maxGpus;
    if (static_cast<size_t>(in.gpu_runs_size()) > maxIncidentRuns
        || static_cast<size_t>(in.job_ids_size()) > maxIncidentJobs) {
        *problem = QStringLiteral("lists %1 GPU runs and %2 jobs (at most %3 and %4)")
                       .arg(in.gpu_runs_size())
                       .arg(in.job_ids_size())
                       .arg(maxIncidentRuns)
                       .arg(maxIncidentJobs);
        return nullptr;
    }
    if (in.gpu_count() > gpus || static_cast<uint64_t>(in.job_ids_size()) > in.job_count()) {
        *problem = QStringLiteral("claims %1 GPUs of %2 and %3 jobs, %4 of them listed")
                       .arg(in.gpu_count())
                       .arg(gpus)
                       .arg(in.job_count())
                       .arg(in.job_ids_size());
        return nullptr;
    }
    if (in.has_domain() && topology && in.domain() >= topology->domains.size()) {
        *problem = QStringLiteral("names domain %1 of a table of %2").arg(in.domain()).arg(topology->domains.size());
        return nullptr;
    }
    auto incident = std::make_shared<Incident>();
    incident->gpuRuns.reserve(static_cast<size_t>(in.gpu_runs_size()));
    uint64_t next = 0; // past the run before
    uint64_t listed = 0;
    for (const auto &run : in.gpu_runs()) {
        const uint64_t end = uint64_t { run.first() } + run.count();
        if (run.count() == 0 || run.first() < next || end > gpus) {
            *problem = QStringLiteral("lists GPUs %1 + %2, not after the run before or past the fleet's %3")
                           .arg(run.first())
                           .arg(run.count())
                           .arg(gpus);
            return nullptr;
        }
        incident->gpuRuns.emplace_back(run.first(), run.count());
        next = end;
        listed += run.count();
    }
    // The runs may be cut short; the count stays true, so it is at least what they list.
    if (listed > in.gpu_count()) {
        *problem = QStringLiteral("lists %1 GPUs but claims %2").arg(listed).arg(in.gpu_count());
        return nullptr;
    }
    incident->id = in.id();
    incident->startMs = in.start_ms();
    incident->domain = in.has_domain() ? int64_t { in.domain() } : -1;
    incident->cause = wireText(in.cause(), maxNameText);
    incident->evidence = wireText(in.evidence(), maxMessageText);
    incident->gpuCount = in.gpu_count();
    incident->jobs.assign(in.job_ids().begin(), in.job_ids().end());
    incident->jobCount = in.job_count();
    return incident;
}
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
    std::shared_ptr<const Incident> incident;
    if (isIncidentKind(*kind)) {
        if (!e.has_incident()) {
            *problem = QStringLiteral("event %1 is an incident's without the incident").arg(e.sequence());
            return std::nullopt;
        }
        QString why;
        incident = decodeIncident(e.incident(), topology, &why);
        if (!incident) {
            *problem = QStringLiteral("event %1's incident %2 %3").arg(e.sequence()).arg(e.incident().id()).arg(why);
            return std::nullopt;
        }
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
    event.incident = std::move(incident);
    return event;
}

RawRangePart rawRangePart(pb::QueryRangePart *part)
{
    return { part->metric_id(), { part->gpus().begin(), part->gpus().end() },
        { part->sample_times_ms().begin(), part->sample_times_ms().end() },
        { part->times_ms().begin(), part->times_ms().end() }, std::move(*part->mutable_values()) };
}

} // namespace fleetscope
