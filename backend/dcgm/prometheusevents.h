// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "core/frame.h"

#include <cstdint>
#include <vector>

namespace fleetscope::backend {

// Fleet events read off dcgm-exporter's fields, as a poll finds them:
// - XID: DCGM_FI_DEV_XID_ERRORS is a gauge holding the last XID a GPU logged; it never resets. A change of its value
//   to a non-zero XID is an event with that XID. The same XID twice in a row leaves the gauge as it was, so it is
//   one event, not two: dcgm-exporter does not show more.
// - Double-bit ECC: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL is a counter; an increase is one event (its text says how many
//   errors). A fall is a reset (a driver reload or reboot), not an event.
// - Throttling: DCGM's clock event reasons; thermal throttling is the software or hardware thermal slowdown bit
//   (0x20, 0x40), power throttling the power cap or power brake bit (0x4, 0x80). A bit group turning on starts it,
//   turning off ends it.
// A GPU without a value keeps its last one, so a GPU back after an outage compares with what it had before it.
class PrometheusEvents
{
public:
    static constexpr uint64_t thermalReasons = 0x20U | 0x40U;
    static constexpr uint64_t powerReasons = 0x4U | 0x80U;

    // One poll's raw values per GPU, NaN where there is none. The first call only learns the values.
    void update(const std::vector<double> &xid, const std::vector<double> &dbe, const std::vector<double> &reasons,
        const FleetShape &shape, const std::vector<uint64_t> &jobOfGpu, std::vector<FleetEvent> *events);

    // The events of one change on one GPU (job 0: none known).
    static void xidChanged(const FleetShape &shape, uint32_t gpu, double before, double after, uint64_t job,
        std::vector<FleetEvent> *events);
    static void dbeIncreased(
        const FleetShape &shape, uint32_t gpu, double increase, uint64_t job, std::vector<FleetEvent> *events);
    static void reasonsChanged(const FleetShape &shape, uint32_t gpu, double before, double after, uint64_t job,
        std::vector<FleetEvent> *events);

private:
    std::vector<double> m_xid;
    std::vector<double> m_dbe;
    std::vector<double> m_reasons;
    bool m_first = true;
};

} // namespace fleetscope::backend
