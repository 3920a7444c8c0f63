// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to client/ (and its tests): every decoder from the wire to the plain model, for those that read them all
// (a telemetry session reads a topology, frames, the catalogue and jobs). Each checks everything within bounds that do
// not grow with what a backend claims.

#include "client/answerdecode.h" // the metric catalogue, jobs, summaries
#include "client/framedecode.h" // a frame's parts joined
#include "client/topologydecode.h" // the topology stream
