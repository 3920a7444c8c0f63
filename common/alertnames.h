// SPDX-License-Identifier: Apache-2.0
#pragma once

// The alert names the backend posts its own findings to Alertmanager under (--alertmanager-send), which the console
// recognises when they come back among the NOC's alerts (a FleetscopeIncident alert is its incident's: docs/ALERTS.md).
namespace fleetscope {

inline constexpr const char *incidentAlertName = "FleetscopeIncident";
inline constexpr const char *anomalyAlertName = "FleetscopeAnomaly";

} // namespace fleetscope
