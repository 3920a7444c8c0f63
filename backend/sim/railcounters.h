// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/frame.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace fleetscope::backend {

// Each GPU's rail NIC port as node-exporter's InfiniBand collector would read it: link state, link downs, symbol and
// receive errors (5-minute window counts for the frames, totals that only grow for an exporter page), transmit wait.
// Healthy links log a symbol error now and then; about 1% of links are marginal (a worn transceiver or a bent cable)
// and log far more, as real fabrics' symbol errors concentrate on a few links (docs/FAULTS.md). Background errors are
// drawn as a Poisson count for the fleet per step, so a step costs the errors, not the links.
class RailCounters
{
public:
    static constexpr double windowSeconds = 300.0;

    RailCounters(uint32_t gpuCount, uint64_t seed);

    // Background errors of a step ending at now, on links whose GPU is online (offline(gpu) false).
    template <typename Offline> void background(uint64_t stepIndex, double now, double dt, const Offline &offline);
    // Counts of a port this step.
    void count(uint32_t gpu, uint32_t linkDowns, uint32_t symbolErrors, uint32_t receiveErrors, double now);
    void setLinkUp(uint32_t gpu, bool up) { m_linkState[gpu] = up ? 1.0F : 0.0F; }
    // Transmit wait now, in % of the time. Its total integrates it every totalsEverySeconds (accumulateWait), not
    // every step: a pass over the fleet's ports a step would cost more than everything else the ports do.
    void setTransmitWait(uint32_t gpu, float percent) { m_wait[gpu] = percent; }
    void accumulateWait(double now);

    const std::vector<float> &linkState() const { return m_linkState; }
    const std::vector<float> &linkDowns() const { return m_window[0]; }
    const std::vector<float> &symbolErrors() const { return m_window[1]; }
    const std::vector<float> &receiveErrors() const { return m_window[2]; }
    const std::vector<float> &transmitWait() const { return m_wait; }
    // The totals since the start, for an exporter page (Frame::railTotals), as of now: copied at most every
    // totalsEverySeconds (the transmit wait grows every step wherever a port waits), shared by the frames between, as
    // a scrape of that interval would read them. The frames' budgets count them out (FrameSource).
    static constexpr double totalsEverySeconds = 15.0;
    std::shared_ptr<const RailCounterTotals> totals(double now) const;

private:
    void expire(double now);
    void backgroundDraws(uint64_t stepIndex, double dt, std::vector<uint32_t> *draws);

    uint64_t m_seed;
    std::vector<uint32_t> m_marginal; // GPUs whose link is marginal
    std::vector<float> m_linkState, m_wait;
    std::vector<float> m_window[3];
    std::vector<uint32_t> m_total[3];
    std::vector<uint64_t> m_waitMicroseconds;
    struct Increment
    {
        double time;
        uint32_t gpu;
        uint32_t amount;
        uint8_t counter;
    };
    std::deque<Increment> m_increments; // within the window, oldest first
    std::vector<uint32_t> m_draws; // scratch: this step's background errors, GPU and amount in turn
    mutable std::shared_ptr<const RailCounterTotals> m_totals;
    mutable double m_totalsAt = 0;
    double m_waitAt = 0; // when the transmit wait totals were last accumulated
};

template <typename Offline>
void RailCounters::background(uint64_t stepIndex, double now, double dt, const Offline &offline)
{
    expire(now);
    backgroundDraws(stepIndex, dt, &m_draws);
    for (size_t i = 0; i + 1 < m_draws.size(); i += 2) {
        if (!offline(m_draws[i])) {
            const uint32_t symbols = m_draws[i + 1];
            count(m_draws[i], 0, symbols, symbols >= 4 ? 1 : 0, now);
        }
    }
}

} // namespace fleetscope::backend
