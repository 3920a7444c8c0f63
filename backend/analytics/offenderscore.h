// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/frame.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fleetscope::backend {

// A lasting score per GPU for the few GPUs behind most failures (docs/OFFENDERS.md), whatever produced the frames:
// points for what a GPU logs, decayed with a half-life of days, so that a GPU that failed last week still stands out
// and one that has been quiet for a month no longer does. Per frame it
//   1. decays every GPU's parts by 2^(-dt / halfLife), dt the time since the previous frame;
//   2. adds the frame's errors: XIDs from its events (they carry the code; serious ones weigh more), double-bit ECC
//      errors, remapped rows and PCIe replays from the producer's raw counters where the frame has them (the
//      simulator: exact increments, a fall being a reset), otherwise from the 5-minute window counts of the planes
//      (a real fleet's increase(...[5m])), integrated over time: count x dt / 300 s adds up to each error once;
//   3. adds the time since the previous frame to the throttle time of the GPUs whose clock event reasons say thermal
//      or hardware slowdown or power brake (a power cap is the site's choice, not the GPU's fault);
//   4. writes the score into the frame's offender plane (NaN for a GPU without data and without a score) and the
//      top of the ranking with each GPU's parts into frame->offenders.
// NaN, infinite, negative or missing values are skipped; an event for a GPU outside the fleet is ignored; a gap
// between frames counts for at most one window (300 s). Memory: seven floats per GPU (28 MB at 1M GPUs).
//
// Not thread-safe: FrameSource's ticker (or a benchmark) is its only caller.
class OffenderScore
{
public:
    // Points per event (or per hour of throttling). Why these: docs/OFFENDERS.md.
    struct Weights
    {
        float xid = 1.0F;
        float seriousXid = 4.0F; // on top of xid: a serious XID (common/xid.h) counts 5 in all
        float eccDoubleBit = 5.0F;
        float remappedRow = 2.0F;
        float remappedRowCorrectable = 0.5F;
        float pcieReplay = 0.02F;
        float throttleHour = 0.5F;
    };
    struct Options
    {
        double halfLifeSeconds = 7 * 86400.0;
        Weights weights;
        uint32_t keep = 1000; // the entries of frame->offenders: GetSummary lists at most this many
    };
    static constexpr double windowSeconds = 300.0; // the catalogue's window counts (metriccatalog.cpp)
    // DCGM's clock event reasons counted as throttle time: hardware slowdown 0x8, thermal 0x20 and 0x40, power brake
    // 0x80.
    static constexpr uint32_t throttleReasons = 0x8U | 0x20U | 0x40U | 0x80U;

    explicit OffenderScore(uint32_t gpuCount);
    OffenderScore(uint32_t gpuCount, const Options &options);

    // Scores a frame taken at timeSeconds (any clock, increasing; an earlier time counts as no time passed) with the
    // events that happened in it.
    void update(Frame *frame, double timeSeconds, const std::vector<FleetEvent> &events);

    uint32_t gpuCount() const { return m_gpus; }
    float score(uint32_t gpu) const;
    // A GPU's score and parts as of the last update.
    RepeatOffenders::Entry entry(uint32_t gpu) const;
    // Seconds of CPU the last update took.
    double lastCostSeconds() const { return m_lastCost; }
    // The memory held per GPU.
    static constexpr size_t bytesPerGpu() { return sizeof(float) * Parts; }

private:
    enum Part : uint8_t { Xid, SeriousXid, Dbe, Remapped, RemappedCorrectable, Pcie, ThrottleSeconds, Parts };
    void addCounters(const Frame &frame, double dt);
    void addThrottle(const Frame &frame, double dt);
    void addEvents(const std::vector<FleetEvent> &events);
    std::shared_ptr<const RepeatOffenders> rank(const std::vector<float> &scores) const;

    uint32_t m_gpus;
    Options m_options;
    std::array<std::vector<float>, Parts> m_parts;
    double m_lastTime = -1;
    std::shared_ptr<const RawErrorFields> m_lastRaw; // the previous frame's counters, where it had them
    double m_lastCost = 0;
};

} // namespace fleetscope::backend
