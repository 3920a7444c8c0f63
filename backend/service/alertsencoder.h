// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/alerts.h"

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <vector>

namespace fleetscope::backend {

namespace pb = fleetscope::telemetry::v1;

// An alerts state as StreamAlerts sends it: parts of at most partBytes each (the contract's limit is 4 MiB), the first
// with the status and the counts, the last marked. An alert's GPU runs are cut at maxIncidentRuns (gpu_count stays
// true), its text at what Alertmanager's answer was bounded to already (backend/alerting).
std::vector<pb::AlertsPart> encodeAlerts(const AlertsState &state, size_t partBytes = 3U << 20U);

void encodeAlert(const AlertmanagerAlert &alert, pb::Alert *out);
void encodeSilence(const AlertmanagerSilence &silence, pb::Silence *out);

} // namespace fleetscope::backend
