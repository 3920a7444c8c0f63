// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

// How much of an incident an incident event carries, for both sides: the backend's encoder cuts an incident's lists to
// these (backend/service/frameencoder.cpp), the console refuses an event past them (client/historydecode.cpp). Every
// open, update and close carries the incident whole, to every console and into the event history, so each must stay
// small whatever the domain: 4,096 ascending GPU runs are about 40 KiB on the wire and draw every GPU of any domain
// short of a spine plane or a feed (a leaf's GPUs are one run per node: 32 on HGX, 144 on NVL72; a cooling unit's or a
// PDU's are a few racks' whole); 256 jobs name every job of a cooling unit's 512 GPUs at 2 GPUs a job. Past them the
// event still says how many GPUs and jobs it hit (gpu_count, job_count).
namespace fleetscope {

constexpr size_t maxIncidentRuns = 4096;
constexpr size_t maxIncidentJobs = 256;

} // namespace fleetscope
