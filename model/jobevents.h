// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/alerts.h"
#include "model/fleetmodel.h"
#include "model/history.h"

#include <cstddef>
#include <cstdint>
#include <vector>

// What of the fleet's events and alerts hit one job (its page's timeline and list): pure, on any thread.
namespace fleetscope {

// The events that hit the job within its life (from its start to its end, or without end while it runs): those on
// one of its GPUs, those naming it, a node's own (node down) on a node that holds one of its GPUs when topology is
// given, and an incident's whose GPU runs meet its GPUs. Oldest first (time, then sequence); the newest `limit` kept.
// The job's GPU list is not trusted to be sorted.
std::vector<FleetEvent> jobEvents(
    const Job &job, const std::vector<FleetEvent> &events, const Topology *topology = nullptr, size_t limit = 2000);

// An alert placed on the job's GPUs: the alert's index in the board and the first of the job's GPUs it names.
struct JobAlert
{
    size_t index = 0;
    uint32_t gpu = 0;
};
// The board's alerts whose GPU runs meet the job's GPUs, in the board's order, the first `limit`.
std::vector<JobAlert> jobAlerts(const Job &job, const AlertBoard &board, size_t limit = 500);

} // namespace fleetscope
