// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QString>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace fleetscope {

struct FlightRecorderOptions
{
    // How each stored plane is turned into bytes before zstd: against the reference frame's plane, per value.
    enum class Delta : uint8_t {
        Xor, // bits XOR the reference's bits
        IntegerDelta, // (bits - reference bits) as a zig-zag integer: carries in the mantissa stay small
    };
    // Which frame a delta frame is taken against.
    enum class Reference : uint8_t {
        Previous, // the frame before: smallest deltas, a seek decodes up to keyframeInterval frames
        Keyframe, // its group's keyframe: a seek decodes at most two frames
    };

    std::chrono::milliseconds retention = std::chrono::hours(1); // of sample time, back from the latest frame
    size_t memoryCapBytes = size_t(1) << 30; // compressed bytes; the oldest frames go first; 0 = no cap
    uint32_t keyframeInterval = 16; // frames per group (a keyframe and the deltas that refer to it)
    int zstdLevel = 1;
    // Store planes of decimal values (whole units, tenths, ..., thousandths) as integers; see flightrecorder.cpp.
    bool decimal = true;
    Delta delta = Delta::IntegerDelta;
    Reference reference = Reference::Keyframe;
};

// The client's flight recorder: recent frames held losslessly compressed in memory, so that scrubbing and replay
// work at once and while the backend is unreachable. frameAt() gives back the recorded frame bit for bit (float bits
// including NaN payloads and negative zero, health bytes, sequence, sample time, generation, metric ids).
//
// Each plane is stored as the per-value delta against a reference frame, byte-shuffled into four lanes (so the rarely
// changing high bytes compress apart from the noisy low ones), then zstd. The delta is of the float bits, or, for a
// plane whose values all lie on a decimal grid (whole °C, whole %, milliwatts, as DCGM reports), of the integers on
// that grid. Every keyframeInterval frames, and whenever the frame's shape changes (topology generation, GPU count,
// metric ids), a keyframe is stored against nothing. Frames of an older topology generation stay until retention or the
// memory cap drops them: a caller showing one must check frame->topologyGeneration against the topology it holds.
//
// Frames are dropped in whole groups, oldest first, once the group's newest frame is older than the latest frame
// minus retention, or while the compressed size is over the cap (the newest group always stays). Frames older than
// latest - retention that still wait in a partly expired group are not reported by any accessor.
//
// Threads: record() encodes without holding the lock that readers take and is meant to run off the GUI thread
// (tens of ms per frame at a million GPUs, see docs/PERFORMANCE.md); calls to record() are serialised among
// themselves. All const members may be called from any thread at any time; frameAt() decodes outside the lock.
class FlightRecorder
{
public:
    struct MetricStats
    {
        QString metricId;
        size_t compressedBytes = 0;
        size_t values = 0;
    };

    explicit FlightRecorder(FlightRecorderOptions options = {});
    ~FlightRecorder();
    FlightRecorder(const FlightRecorder &) = delete;
    FlightRecorder &operator=(const FlightRecorder &) = delete;

    const FlightRecorderOptions &options() const { return m_options; }

    // Stores the frame. Returns false, storing nothing, for null, for a frame whose sample time is not after the
    // latest recorded one (a replayed or duplicated frame, a backend restarted with its clock behind), and for a
    // frame whose planes are not all health.size() long.
    bool record(const FramePtr &frame);
    // Forgets everything.
    void clear();

    // The recorded frame at or before timeMs, rebuilt exactly; null when there is none within retention.
    FramePtr frameAt(int64_t timeMs) const;
    // The sample times held, oldest first.
    std::vector<int64_t> sampleTimes() const;
    size_t frameCount() const;
    // Sample time of the oldest / newest frame held; 0 when empty.
    int64_t earliestMs() const;
    int64_t latestMs() const;

    // Compressed bytes held, including per-frame bookkeeping, and the number of plane values they stand for
    // (health bytes are counted in the bytes, not as values).
    size_t compressedBytes() const;
    size_t storedValues() const;
    // Per metric id, over the frames held: what its planes take compressed, and how many values.
    std::vector<MetricStats> metricStats() const;
    size_t healthBytes() const;

private:
    struct Encoded;
    using EncodedPtr = std::shared_ptr<const Encoded>;
    struct Encoder;

    size_t firstVisibleLocked() const;
    void dropExpiredLocked();
    static FramePtr decode(const Encoded &enc, const Frame *reference, FlightRecorderOptions::Delta delta);

    const FlightRecorderOptions m_options;

    // Owned by whichever thread is in record(): the reference frames and the zstd context.
    std::mutex m_recordMutex;
    std::unique_ptr<Encoder> m_encoder;

    // Guards everything below; held only briefly (never while compressing or decompressing).
    mutable std::mutex m_mutex;
    std::deque<EncodedPtr> m_frames;
    size_t m_bytes = 0;
    size_t m_values = 0;
    // The last frame frameAt() rebuilt, so that stepping through a group does not decode its keyframe every time.
    mutable EncodedPtr m_cachedEncoded;
    mutable FramePtr m_cachedFrame;
};

} // namespace fleetscope
