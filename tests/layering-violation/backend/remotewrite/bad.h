// SPDX-License-Identifier: Apache-2.0
// Not compiled: tst_layering_catches must name this include (remote write takes nothing from the Prometheus poller).
#pragma once
#include "prometheus/prometheussource.h"
