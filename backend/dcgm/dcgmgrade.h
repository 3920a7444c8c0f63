// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/frame.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace fleetscope::backend {

// Grades the GPUs of a frame read from dcgm-exporter's fields (the Prometheus source's and the remote-write
// receiver's), as the simulator grades its own: critical at 90 °C or with a double-bit ECC error in the last five
// minutes, warning at 83 °C or with an XID; the throttled, ECC and XID flags beside. A GPU without any value
// (hasData 0) stays without data. Fills the health plane and health bytes; returns how many GPUs have no data.
size_t gradeDcgmFrame(Frame *frame, const std::vector<uint8_t> &hasData);

// A frame of gpuCount GPUs without data: every value NaN, every GPU's health no data.
std::shared_ptr<Frame> frameWithoutData(uint32_t gpuCount);

} // namespace fleetscope::backend
