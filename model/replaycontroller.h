// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/worker.h"
#include "model/fleetmodel.h"

#include <QObject>
#include <QTimer>

#include <cstdint>
#include <functional>

namespace fleetscope {

class FlightRecorder;

// Time travel over the flight recorder: which frame the map shows, live or from the recorded history.
//
// Live: frames from onLiveFrame() go straight to frameToShow(). Paused: the recorded frame at or before position().
// Playing: position() runs at speed times the clock; each tick shows the newest recorded frame at or before it, and
// on reaching the newest recorded frame the controller goes live.
//
// Delivery while playing: a tick that passes several frames (60x at 20 ticks a second passes three) emits
// samplePassed() for each of them, oldest first, but decodes and emits frameToShow() only for the newest, because
// the map shows one frame per repaint anyway and decoding costs tens of ms at a million GPUs. Both sequences are
// strictly increasing in sample time. frameToShow() is emitted only when the frame differs (in sample time) from the
// one shown last, so scrubbing within one second of history decodes nothing.
//
// A recorded frame may be of an older topology generation than the one the receiver holds; the receiver checks.
// GUI thread only (the recorder itself may be fed from any thread).
class ReplayController : public QObject
{
    Q_OBJECT
public:
    enum class Mode { Live, Paused, Playing };
    Q_ENUM(Mode)

    static constexpr int tickIntervalMs = 50;

    explicit ReplayController(const FlightRecorder *recorder, QObject *parent = nullptr);

    const FlightRecorder *recorder() const { return m_recorder; }
    Mode mode() const { return m_mode; }
    // The time shown: the play head, or in live the newest frame's sample time (0 before any frame).
    qint64 position() const { return m_position; }
    double speed() const { return m_speed; }
    // Sample time of the frame last given to frameToShow(), or min() before any.
    qint64 shownSampleTime() const { return m_shownMs; }

    // The monotonic clock that playing follows, in ms; QElapsedTimer unless a test sets one.
    void setClock(std::function<qint64()> monotonicMs);

public Q_SLOTS:
    void goLive();
    // Pauses at timeMs, clamped to the held history [earliest, latest]: a time before the first frame shows the first
    // frame. Does nothing while the recorder is empty.
    void seek(qint64 timeMs);
    // Plays from the position at speed (any positive finite number; the timeline offers 1, 2, 5, 10, 30, 60); while
    // playing, changes the speed from here on. In live there is nothing ahead to play: only the speed is kept.
    void play(double speed);
    // Stops the play head where the clock has brought it; in live, freezes the newest frame.
    void pause();
    // Decodes recorded frames on a worker thread (a million GPUs take tens of ms each) instead of inline: frameToShow
    // then comes from the event loop, latest wins. Off by default (deterministic for tests of the play logic).
    void setBackgroundDecoding(bool background);
    bool isDecoding() const { return m_decoding; }
    // Advances the play head to the clock's time. The internal timer calls it every tickIntervalMs while playing.
    void tick();
    // A frame from the live stream. Shown in live, otherwise only kept for going live again.
    void onLiveFrame(const fleetscope::FramePtr &frame);

Q_SIGNALS:
    void modeChanged(fleetscope::ReplayController::Mode mode);
    void positionChanged(qint64 timeMs);
    void frameToShow(const fleetscope::FramePtr &frame);
    // While playing, each recorded frame the play head passes, oldest first (see above).
    void samplePassed(qint64 sampleTimeMs);

private:
    void setMode(Mode mode);
    void setPosition(qint64 timeMs);
    // Shows the recorded frame sampled at sampleTimeMs unless it is the one shown.
    void showRecorded(int64_t sampleTimeMs);
    void show(const FramePtr &frame);
    void startDecode();
    void onDecoded(qint64 sampleTimeMs, const FramePtr &frame);

    const FlightRecorder *m_recorder;
    std::function<qint64()> m_clock;
    QTimer m_timer;
    Mode m_mode = Mode::Live;
    double m_speed = 1;
    qint64 m_position = 0;
    qint64 m_shownMs;
    // Playing: position = anchor position + speed * (clock - anchor clock), re-anchored on play and speed changes,
    // so that rounding does not pile up tick after tick.
    qint64 m_anchorClockMs = 0;
    qint64 m_anchorPositionMs = 0;
    qint64 m_passedMs; // the newest sample time samplePassed() has reported (or that was shown when play began)
    FramePtr m_lastLive;
    bool m_background = false;
    bool m_decoding = false; // a decode is under way on m_worker
    qint64 m_wantedMs; // the recorded frame to show next, when decoding in the background
    Worker m_worker; // last member, so that it goes first
};

} // namespace fleetscope
