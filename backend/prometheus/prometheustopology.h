// SPDX-License-Identifier: Apache-2.0
#pragma once

// PrometheusTopology moved to dcgm/ (both the Prometheus poller and the remote-write receiver read a layout from
// dcgm-exporter's labels). Only for fuzz/fuzz_topologyfile.cpp, which another change moves to "dcgm/..."; then this
// file goes.
#include "dcgm/prometheustopology.h"
