// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to client/ (and its tests and fuzz targets): the history answers' wire messages in plain types, as
// HistoryClient's calls read them on its completion-queue thread (topologydecode.h, framedecode.h and answerdecode.h
// hold the others).

#include "client/historyclient.h"
#include "common/incidentlimits.h"
#include "model/fleetmodel.h"
#include "model/history.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <QString>

#include <optional>

namespace fleetscope {

namespace pb = fleetscope::telemetry::v1;

// One StreamEvents event checked against the fleet (a known kind and severity, a GPU and node of the topology or -1;
// null topology: indices are checked for sign only) and in plain types, with a metric id of more than 64 bytes
// dropped. An incident event's incident is checked too: its runs ascending, apart and within the fleet (at most
// maxIncidentRuns), its GPU count within the fleet and at least what its runs list, at most maxIncidentJobs jobs
// listed and no more than it counts, its domain one of the topology's (null topology: not checked; whoever uses it
// checks it against theirs); an incident event without one is malformed. Nothing, and *problem set ("event 12 names GPU
// 9, outside the fleet"), when it is malformed. Whether the events' times go forwards is the stream's business.
std::optional<FleetEvent> decodeEvent(const pb::Event &event, const Topology *topology, QString *problem);

// A QueryRange part as it came, for assembleRange to check with the others; its values are moved out.
RawRangePart rawRangePart(pb::QueryRangePart *part);

} // namespace fleetscope
