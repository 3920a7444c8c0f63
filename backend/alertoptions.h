// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "backendoptions.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace fleetscope::backend {

// The Alertmanager options (--alertmanager-*), bound to o.alertmanager.
void addAlertmanagerOptions(CLI::App &app, BackendOptions &o);
// Their checks across options; empty when they hold together.
std::string checkAlertmanagerOptions(const BackendOptions &o);
// What is valid but unsafe about them, for the start's warnings.
void warnAboutAlertmanager(const BackendOptions &o, std::vector<std::string> *warnings);

} // namespace fleetscope::backend
