// SPDX-License-Identifier: Apache-2.0
#include "model/replaycontroller.h"

#include "model/flightrecorder.h"

#include <QThread>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace fleetscope {

namespace {
constexpr qint64 none = std::numeric_limits<qint64>::min();
}

ReplayController::ReplayController(const FlightRecorder *recorder, QObject *parent)
    : QObject(parent)
    , m_recorder(recorder)
    , m_clock([] {
        return static_cast<qint64>(
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
                .count());
    })
    , m_position(recorder ? recorder->latestMs() : 0)
    , m_shownMs(none)
    , m_passedMs(none)
    , m_wantedMs(none)
    , m_worker(this)
{
    m_timer.setInterval(tickIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &ReplayController::tick);
}

void ReplayController::setClock(std::function<qint64()> monotonicMs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_clock = std::move(monotonicMs);
    // The new clock has its own epoch: carry on from where the play head is.
    m_anchorClockMs = m_clock();
    m_anchorPositionMs = m_position;
}

void ReplayController::goLive()
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_timer.stop();
    setMode(Mode::Live);
    const int64_t latest = m_recorder ? m_recorder->latestMs() : 0;
    // The live stream's newest frame may not be recorded yet (the recorder records off the GUI thread).
    if (m_lastLive && (!m_recorder || m_recorder->frameCount() == 0 || m_lastLive->sampleTimeMs >= latest)) {
        show(m_lastLive);
        setPosition(m_lastLive->sampleTimeMs);
    } else if (m_recorder && m_recorder->frameCount() > 0) {
        showRecorded(latest);
        setPosition(latest);
    }
}

void ReplayController::seek(qint64 timeMs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_recorder) {
        return;
    }
    const std::vector<int64_t> times = m_recorder->sampleTimes();
    if (times.empty()) {
        return;
    }
    m_timer.stop();
    setMode(Mode::Paused);
    const qint64 t = std::clamp<qint64>(timeMs, times.front(), times.back());
    // The sample at or before t, found without decoding anything: only a different frame is decoded.
    const auto at = std::prev(std::upper_bound(times.begin(), times.end(), t));
    showRecorded(*at);
    setPosition(t);
}

void ReplayController::play(double speed)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!(speed > 0) || !std::isfinite(speed)) {
        return;
    }
    if (m_mode == Mode::Playing) {
        tick(); // what has been played so far at the old speed
    }
    if (m_mode == Mode::Live) {
        m_speed = speed;
        return;
    }
    m_speed = speed;
    m_anchorClockMs = m_clock();
    m_anchorPositionMs = m_position;
    if (m_mode == Mode::Paused) {
        // From the frame asked for last (a decode in the background may not have shown it yet).
        m_passedMs = m_decoding ? m_wantedMs : m_shownMs;
        setMode(Mode::Playing);
        m_timer.start();
    }
}

void ReplayController::pause()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_mode == Mode::Playing) {
        tick();
    }
    if (m_mode != Mode::Paused) {
        m_timer.stop();
        setMode(Mode::Paused);
    }
}

void ReplayController::tick()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_mode != Mode::Playing || !m_recorder) {
        return;
    }
    const qint64 elapsed = m_clock() - m_anchorClockMs;
    const auto target = m_anchorPositionMs + static_cast<qint64>(std::llround(m_speed * static_cast<double>(elapsed)));
    const std::vector<int64_t> times = m_recorder->sampleTimes();
    if (times.empty()) {
        goLive();
        return;
    }
    const bool atEnd = target >= times.back();
    const qint64 position = atEnd ? times.back() : std::max(target, m_position);

    qint64 newest = none;
    for (auto it = std::upper_bound(times.begin(), times.end(), m_passedMs); it != times.end() && *it <= position;
         ++it) {
        newest = m_passedMs = *it;
        Q_EMIT samplePassed(*it);
        if (m_mode != Mode::Playing) {
            return; // a receiver paused or seeked: its choice stands
        }
    }
    if (newest != none) {
        showRecorded(newest);
    }
    setPosition(position);
    if (atEnd) {
        goLive();
    }
}

void ReplayController::onLiveFrame(const FramePtr &frame)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!frame) {
        return;
    }
    m_lastLive = frame;
    if (m_mode == Mode::Live) {
        show(frame);
        setPosition(frame->sampleTimeMs);
    }
}

void ReplayController::setMode(Mode mode)
{
    if (m_mode != mode) {
        m_mode = mode;
        Q_EMIT modeChanged(mode);
    }
}

void ReplayController::setPosition(qint64 timeMs)
{
    if (m_position != timeMs) {
        m_position = timeMs;
        Q_EMIT positionChanged(timeMs);
    }
}

void ReplayController::setBackgroundDecoding(bool background)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_background = background;
}

void ReplayController::showRecorded(int64_t sampleTimeMs)
{
    if (sampleTimeMs == m_shownMs) {
        return;
    }
    if (!m_background) {
        // Null when the recorder dropped it since sampleTimes(): nothing newer to show then.
        show(m_recorder->frameAt(sampleTimeMs));
        return;
    }
    m_wantedMs = sampleTimeMs;
    if (!m_decoding) {
        startDecode();
    } // else picked up when the decode under way finishes
}

void ReplayController::startDecode()
{
    m_decoding = true;
    const qint64 wanted = m_wantedMs;
    const FlightRecorder *recorder = m_recorder;
    // The worker goes before this object does, and nothing it has not delivered by then is delivered.
    m_worker.run([this, recorder, wanted]() -> Worker::Result {
        FramePtr frame = recorder->frameAt(wanted);
        return [this, wanted, frame = std::move(frame)] { onDecoded(wanted, frame); };
    });
}

void ReplayController::onDecoded(qint64 sampleTimeMs, const FramePtr &frame)
{
    m_decoding = false;
    if (m_mode == Mode::Live) {
        // Live again meanwhile: the live frame stands, unless this is the newest recorded one going live asked for.
        if (frame && frame->sampleTimeMs > m_shownMs
            && (!m_lastLive || frame->sampleTimeMs > m_lastLive->sampleTimeMs)) {
            show(frame);
        }
        return;
    }
    // The frame asked for last is shown; while playing forwards so is any frame on the way to it (else a decode
    // slower than the ticks would never show anything).
    const bool wanted = sampleTimeMs == m_wantedMs;
    const bool onTheWay = m_mode == Mode::Playing && frame && frame->sampleTimeMs <= m_wantedMs
        && (frame->sampleTimeMs > m_shownMs || m_shownMs > m_wantedMs); // the shown one is ahead after a seek back
    if (wanted || onTheWay) {
        show(frame);
    }
    if (!wanted && m_wantedMs != m_shownMs) {
        startDecode();
    }
}

void ReplayController::show(const FramePtr &frame)
{
    if (frame && frame->sampleTimeMs != m_shownMs) {
        m_shownMs = frame->sampleTimeMs;
        Q_EMIT frameToShow(frame);
    }
}

} // namespace fleetscope
