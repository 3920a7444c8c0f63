// SPDX-License-Identifier: Apache-2.0
// Time travel: the replay controller over a flight recorder of synthetic frames (driven by a test clock, never by
// sleeps), the timeline bar's clicks, and compare mode's frame difference. Every expectation is derived from the
// synthetic frames: frame i is sampled at t0 + i s and holds i * 10 + gpu, with a NaN at GPU i % gpuCount.
#include "model/flightrecorder.h"
#include "model/framediff.h"
#include "model/replaycontroller.h"
#include "widgets/timeline/timelinebar.h"

#include <QAbstractButton>
#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QTest>

#include <cmath>
#include <limits>

using namespace fleetscope;

namespace {

constexpr float noValue = std::numeric_limits<float>::quiet_NaN();
constexpr int64_t t0 = 1'700'000'000'000; // Unix ms
constexpr int frameCount = 120;
constexpr uint32_t gpuCount = 8;
const QString metric = QStringLiteral("gpu_temp");

float expectedValue(int index, uint32_t gpu)
{
    return gpu == static_cast<uint32_t>(index) % gpuCount ? noValue : static_cast<float>(index * 10 + int(gpu));
}

FramePtr syntheticFrame(int index)
{
    auto f = std::make_shared<Frame>();
    f->sequence = static_cast<uint64_t>(index) + 1;
    f->sampleTimeMs = t0 + int64_t(index) * 1000;
    f->topologyGeneration = 1;
    f->health.assign(gpuCount, health::Ok);
    MetricPlane plane { metric, {} };
    for (uint32_t g = 0; g < gpuCount; ++g) {
        plane.values.push_back(expectedValue(index, g));
    }
    f->planes.push_back(std::move(plane));
    return f;
}

// The frame's index, or -1 (with a failure message) when it is not exactly synthetic frame (its time's) index.
int indexOf(const FramePtr &frame)
{
    if (!frame) {
        qWarning("null frame");
        return -1;
    }
    const int64_t offset = frame->sampleTimeMs - t0;
    const int index = static_cast<int>(offset / 1000);
    const MetricPlane *plane = frame->plane(metric);
    if (offset % 1000 != 0 || !plane || plane->values.size() != gpuCount) {
        qWarning("not a synthetic frame");
        return -1;
    }
    for (uint32_t g = 0; g < gpuCount; ++g) {
        const float want = expectedValue(index, g);
        const float got = plane->values[g];
        if (std::isnan(want) != std::isnan(got) || (!std::isnan(want) && want != got)) {
            qWarning("frame %d, GPU %u: %g, expected %g", index, g, double(got), double(want));
            return -1;
        }
    }
    return index;
}

int64_t timeOf(int index)
{
    return t0 + int64_t(index) * 1000;
}

std::vector<int> shownIndices(const QSignalSpy &spy)
{
    std::vector<int> out;
    for (const auto &args : spy) {
        out.push_back(indexOf(args.at(0).value<FramePtr>()));
    }
    return out;
}

std::vector<int> passedIndices(const QSignalSpy &spy)
{
    std::vector<int> out;
    for (const auto &args : spy) {
        const qint64 t = args.at(0).toLongLong();
        out.push_back((t - t0) % 1000 == 0 ? static_cast<int>((t - t0) / 1000) : -1);
    }
    return out;
}

} // namespace

class TestTimeline : public QObject
{
    Q_OBJECT

private:
    FlightRecorder m_recorder;
    qint64 m_now = 0; // the test clock

    void useTestClock(ReplayController &c)
    {
        c.setClock([this] { return m_now; });
    }

private Q_SLOTS:
    void initTestCase()
    {
        for (int i = 0; i < frameCount; ++i) {
            QVERIFY(m_recorder.record(syntheticFrame(i)));
        }
        QCOMPARE(m_recorder.earliestMs(), timeOf(0));
        QCOMPARE(m_recorder.latestMs(), timeOf(frameCount - 1));
    }

    void seekShowsRecordedFrame()
    {
        ReplayController c(&m_recorder);
        QCOMPARE(c.mode(), ReplayController::Mode::Live);
        QSignalSpy shown(&c, &ReplayController::frameToShow);
        QSignalSpy modes(&c, &ReplayController::modeChanged);

        c.seek(timeOf(37));
        QCOMPARE(c.mode(), ReplayController::Mode::Paused);
        QCOMPARE(modes.size(), 1);
        QCOMPARE(c.position(), timeOf(37));
        QCOMPARE(shownIndices(shown), std::vector<int>({ 37 }));

        // Between frames: the frame at or before, and nothing new while it stays the same frame.
        c.seek(timeOf(37) + 999);
        QCOMPARE(c.position(), timeOf(37) + 999);
        QCOMPARE(shown.size(), 1);
        c.seek(timeOf(38) + 500);
        QCOMPARE(shownIndices(shown), std::vector<int>({ 37, 38 }));
        c.seek(timeOf(12) + 1);
        QCOMPARE(shownIndices(shown), std::vector<int>({ 37, 38, 12 }));

        // Before the first frame: clamped to it, so dragging off the left end shows the oldest frame.
        c.seek(t0 - 5000);
        QCOMPARE(c.position(), timeOf(0));
        QCOMPARE(shownIndices(shown).back(), 0);
        // After the newest: paused on it, not live.
        c.seek(timeOf(frameCount + 50));
        QCOMPARE(c.position(), timeOf(frameCount - 1));
        QCOMPARE(shownIndices(shown).back(), frameCount - 1);
        QCOMPARE(c.mode(), ReplayController::Mode::Paused);
        QCOMPARE(modes.size(), 1);
    }

    // In the background (as the console runs it): seek returns before anything is decoded, a burst of seeks shows
    // the last one asked for (latest wins), playing shows frames in increasing order, and going live drops a decode
    // still under way.
    void backgroundDecodingLatestWins()
    {
        ReplayController c(&m_recorder);
        c.setBackgroundDecoding(true);
        useTestClock(c);
        QSignalSpy shown(&c, &ReplayController::frameToShow);
        c.seek(timeOf(37));
        QCOMPARE(shown.size(), 0); // nothing decoded on the caller's thread
        QVERIFY(c.isDecoding());
        c.seek(timeOf(40));
        c.seek(timeOf(12));
        QTRY_VERIFY(!c.isDecoding());
        QVERIFY(!shown.isEmpty());
        QCOMPARE(shownIndices(shown).back(), 12); // the last asked for, whatever came before
        QVERIFY(shown.size() <= 2); // at most the one already under way, then the latest

        // Play straight after a seek back, before its decode has landed: play starts from the frame asked for, not
        // from the later one still shown.
        c.seek(timeOf(60));
        QTRY_VERIFY(!c.isDecoding());
        c.seek(timeOf(20));
        QVERIFY(c.isDecoding());
        shown.clear();
        c.play(10);
        for (int step = 0; step < 20; ++step) {
            m_now += 100; // a second of recording per tick at 10x
            c.tick();
            QTRY_VERIFY(!c.isDecoding()); // each tick's decode lands before the next, as at a slow speed
        }
        QTRY_VERIFY(!c.isDecoding());
        const std::vector<int> played = shownIndices(shown);
        QVERIFY(played.size() >= 10); // 20 s of recording passed at 10x: frames all along, not only at the end
        QCOMPARE(played.front(), 20);
        QVERIFY(std::is_sorted(played.begin(), played.end()));
        QVERIFY(std::adjacent_find(played.begin(), played.end()) == played.end());

        c.seek(timeOf(3));
        c.goLive();
        shown.clear();
        QTRY_VERIFY(!c.isDecoding());
        QCoreApplication::processEvents();
        for (const int index : shownIndices(shown)) {
            QVERIFY2(index != 3, "a decode finished after going live was shown");
        }
        QCOMPARE(c.mode(), ReplayController::Mode::Live);
    }

    void playDeliversInOrderAtSpeed_data()
    {
        QTest::addColumn<double>("speed");
        QTest::addColumn<int>("start");
        QTest::newRow("1x") << 1.0 << 5;
        QTest::newRow("2x") << 2.0 << 5;
        QTest::newRow("10x") << 10.0 << 10;
        QTest::newRow("30x") << 30.0 << 10;
        QTest::newRow("60x") << 60.0 << 10;
    }

    void playDeliversInOrderAtSpeed()
    {
        QFETCH(double, speed);
        QFETCH(int, start);
        ReplayController c(&m_recorder);
        useTestClock(c);
        c.seek(timeOf(start) + 300); // off the second: the play head keeps its offset
        QSignalSpy shown(&c, &ReplayController::frameToShow);
        QSignalSpy passed(&c, &ReplayController::samplePassed);
        c.play(speed);
        QCOMPARE(c.mode(), ReplayController::Mode::Playing);

        constexpr int tickMs = 100;
        constexpr int ticks = 15; // 90 s at 60x from frame 10: not yet at the end
        int lastIndex = start;
        for (int k = 1; k <= ticks; ++k) {
            shown.clear();
            passed.clear();
            m_now += tickMs;
            c.tick();
            const auto position = timeOf(start) + 300 + static_cast<qint64>(std::llround(k * tickMs * speed));
            QCOMPARE(c.position(), position);
            const int index = static_cast<int>((position - t0) / 1000);
            std::vector<int> expectedPassed;
            for (int i = lastIndex + 1; i <= index; ++i) {
                expectedPassed.push_back(i);
            }
            QCOMPARE(passedIndices(passed), expectedPassed);
            QCOMPARE(shownIndices(shown), index > lastIndex ? std::vector<int>({ index }) : std::vector<int>());
            if (speed == 10.0) {
                QCOMPARE(index, lastIndex + 1); // the example: one new frame per 100 ms tick
            }
            if (speed == 60.0) {
                QCOMPARE(index, lastIndex + 6);
            }
            lastIndex = index;
        }
        QCOMPARE(c.mode(), ReplayController::Mode::Playing);
    }

    void speedChangeCarriesOnFromThePlayHead()
    {
        ReplayController c(&m_recorder);
        useTestClock(c);
        c.seek(timeOf(20));
        c.play(10);
        for (int k = 0; k < 3; ++k) {
            m_now += 100;
            c.tick();
        }
        QCOMPARE(c.position(), timeOf(23));
        m_now += 50; // half a tick at 10x before the change: 0.5 s
        c.play(60);
        QCOMPARE(c.position(), timeOf(23) + 500);
        QCOMPARE(c.speed(), 60.0);
        m_now += 100;
        c.tick();
        QCOMPARE(c.position(), timeOf(29) + 500);
    }

    void pauseStops()
    {
        ReplayController c(&m_recorder);
        useTestClock(c);
        c.seek(timeOf(40));
        c.play(10);
        m_now += 100;
        c.tick();
        m_now += 40;
        c.pause(); // takes the play head to the clock's time first
        QCOMPARE(c.mode(), ReplayController::Mode::Paused);
        QCOMPARE(c.position(), timeOf(41) + 400);

        QSignalSpy shown(&c, &ReplayController::frameToShow);
        QSignalSpy positions(&c, &ReplayController::positionChanged);
        QSignalSpy passed(&c, &ReplayController::samplePassed);
        m_now += 5000;
        c.tick();
        QCOMPARE(c.position(), timeOf(41) + 400);
        QCOMPARE(shown.size(), 0);
        QCOMPARE(positions.size(), 0);
        QCOMPARE(passed.size(), 0);

        // Playing again starts from the pause, not from where the clock went meanwhile.
        c.play(10);
        m_now += 100;
        c.tick();
        QCOMPARE(c.position(), timeOf(42) + 400);
        QCOMPARE(shownIndices(shown), std::vector<int>({ 42 }));
    }

    void reachingTheEndGoesLive()
    {
        ReplayController c(&m_recorder);
        useTestClock(c);
        c.seek(timeOf(115));
        QSignalSpy shown(&c, &ReplayController::frameToShow);
        QSignalSpy passed(&c, &ReplayController::samplePassed);
        QSignalSpy modes(&c, &ReplayController::modeChanged);
        c.play(60);
        m_now += 50; // 3 s: frame 118, still playing
        c.tick();
        QCOMPARE(c.mode(), ReplayController::Mode::Playing);
        m_now += 100; // would be 124 s: past the newest frame
        c.tick();
        QCOMPARE(passedIndices(passed), std::vector<int>({ 116, 117, 118, 119 }));
        QCOMPARE(shownIndices(shown), std::vector<int>({ 118, 119 }));
        QCOMPARE(c.mode(), ReplayController::Mode::Live);
        QCOMPARE(c.position(), timeOf(frameCount - 1));
        QCOMPARE(modes.size(), 2);
        QCOMPARE(modes.at(1).at(0).value<ReplayController::Mode>(), ReplayController::Mode::Live);

        // Live again: live frames pass straight through.
        c.onLiveFrame(syntheticFrame(frameCount));
        QCOMPARE(shownIndices(shown).back(), frameCount);
        QCOMPARE(c.position(), timeOf(frameCount));
    }

    void liveFramesOnlyInLive()
    {
        ReplayController c(&m_recorder);
        useTestClock(c);
        QSignalSpy shown(&c, &ReplayController::frameToShow);
        c.onLiveFrame(syntheticFrame(120));
        QCOMPARE(shownIndices(shown), std::vector<int>({ 120 }));
        QCOMPARE(c.position(), timeOf(120));

        c.seek(timeOf(5));
        c.onLiveFrame(syntheticFrame(121));
        c.play(10);
        c.onLiveFrame(syntheticFrame(122));
        QCOMPARE(shownIndices(shown), std::vector<int>({ 120, 5 }));
        QCOMPARE(c.position(), timeOf(5));

        // Going live shows the newest live frame at once rather than at the next one.
        c.goLive();
        QCOMPARE(c.mode(), ReplayController::Mode::Live);
        QCOMPARE(shownIndices(shown), std::vector<int>({ 120, 5, 122 }));
        QCOMPARE(c.position(), timeOf(122));

        // Pausing in live freezes the map.
        c.pause();
        QCOMPARE(c.mode(), ReplayController::Mode::Paused);
        c.onLiveFrame(syntheticFrame(123));
        QCOMPARE(shown.size(), 3);
        QCOMPARE(c.position(), timeOf(122));
    }

    void badSpeedsAreRefused()
    {
        ReplayController c(&m_recorder);
        c.seek(timeOf(3));
        c.play(0);
        c.play(-2);
        c.play(std::numeric_limits<double>::infinity());
        c.play(std::nan(""));
        QCOMPARE(c.mode(), ReplayController::Mode::Paused);
    }

    void timerDrivesPlayback()
    {
        ReplayController c(&m_recorder);
        useTestClock(c);
        c.seek(timeOf(50));
        c.play(60);
        m_now += 500; // 30 s; the internal timer, not the test, calls tick()
        QTRY_COMPARE_WITH_TIMEOUT(c.position(), timeOf(80), 5000);
        c.pause();
    }

    void barClickSeeksToFraction()
    {
        ReplayController c(&m_recorder);
        TimelineBar bar(&c);
        bar.resize(900, bar.sizeHint().height());
        bar.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bar));
        QCOMPARE(bar.earliestMs(), timeOf(0));
        QCOMPARE(bar.latestMs(), timeOf(frameCount - 1));
        QSignalSpy shown(&c, &ReplayController::frameToShow);

        QWidget *track = bar.track();
        const double span = double(timeOf(frameCount - 1) - t0);
        for (const double f : { 0.25, 0.5, 0.8 }) {
            const int x = static_cast<int>(std::lround(f * track->width()));
            QTest::mouseClick(track, Qt::LeftButton, {}, QPoint(x, track->height() / 2));
            QCOMPARE(c.mode(), ReplayController::Mode::Paused);
            // Within 2% of the span: the bar's ends sit a knob's half-width in from the widget's.
            const double expected = double(t0) + f * span;
            QVERIFY2(std::abs(double(c.position()) - expected) < 0.02 * span,
                qPrintable(QStringLiteral("at %1: %2 s, expected %3 s")
                               .arg(f)
                               .arg(double(c.position() - t0) / 1000)
                               .arg((expected - double(t0)) / 1000)));
            QCOMPARE(indexOf(shown.last().at(0).value<FramePtr>()), int((c.position() - t0) / 1000));
        }

        // A drag keeps seeking.
        const int from = track->width() / 10;
        QTest::mousePress(track, Qt::LeftButton, {}, QPoint(from, track->height() / 2));
        const qint64 pressed = c.position();
        QTest::mouseMove(track, QPoint(track->width() * 9 / 10, track->height() / 2));
        QTest::mouseRelease(track, Qt::LeftButton, {}, QPoint(track->width() * 9 / 10, track->height() / 2));
        QVERIFY(c.position() > pressed + qint64(0.7 * span));
    }

    void barButtons()
    {
        ReplayController c(&m_recorder);
        TimelineBar bar(&c);
        bar.resize(900, bar.sizeHint().height());
        bar.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bar));
        auto *live = bar.findChild<QAbstractButton *>(QStringLiteral("liveButton"));
        auto *play = bar.findChild<QAbstractButton *>(QStringLiteral("playButton"));
        auto *speed = bar.findChild<QComboBox *>(QStringLiteral("speedCombo"));
        QVERIFY(live && play && speed);
        QVERIFY(live->isChecked());

        c.seek(timeOf(30));
        QVERIFY(!live->isChecked());
        speed->setCurrentIndex(speed->findData(30.0));
        QTest::mouseClick(play, Qt::LeftButton);
        QCOMPARE(c.mode(), ReplayController::Mode::Playing);
        QCOMPARE(c.speed(), 30.0);
        QTest::mouseClick(play, Qt::LeftButton);
        QCOMPARE(c.mode(), ReplayController::Mode::Paused);

        QSignalSpy shown(&c, &ReplayController::frameToShow);
        QTest::mouseClick(live, Qt::LeftButton);
        QCOMPARE(c.mode(), ReplayController::Mode::Live);
        QVERIFY(live->isChecked());
        QCOMPARE(shownIndices(shown), std::vector<int>({ frameCount - 1 }));
        // Clicking LIVE while live keeps it live (and lit).
        QTest::mouseClick(live, Qt::LeftButton);
        QVERIFY(live->isChecked());
        QCOMPARE(c.mode(), ReplayController::Mode::Live);
    }

    // A new time, every frame and every tick of a replay, changes the labels and not the bar's layout: a layout pass
    // goes up to the window, which on a software renderer is one more composition of the whole window.
    void newTimesDoNotRelayOutTheBar()
    {
        ReplayController c(&m_recorder);
        TimelineBar bar(&c);
        bar.resize(900, bar.sizeHint().height());
        bar.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bar));
        c.seek(timeOf(30)); // paused: a change of mode changes the buttons, and may lay the bar out again
        QCoreApplication::processEvents();
        struct LayoutRequests : QObject
        {
            int count = 0;
            bool eventFilter(QObject *, QEvent *event) override
            {
                count += event->type() == QEvent::LayoutRequest ? 1 : 0;
                return false;
            }
        } requests;
        bar.installEventFilter(&requests);
        auto *end = bar.findChild<QLabel *>(QStringLiteral("endLabel"));
        auto *position = bar.findChild<QLabel *>(QStringLiteral("positionLabel"));
        QVERIFY(end && position);
        const QString endBefore = end->text();
        const QString positionBefore = position->text();
        c.seek(timeOf(45)); // another time, same mode
        bar.setRange(timeOf(0), timeOf(0) + 7'261'000);
        QVERIFY(end->text() != endBefore);
        QVERIFY(position->text() != positionBefore);
        QCoreApplication::processEvents();
        QCOMPARE(requests.count, 0);
    }

    void clickingAMarkerSeeksToIt()
    {
        ReplayController c(&m_recorder);
        TimelineBar bar(&c);
        bar.resize(900, bar.sizeHint().height());
        bar.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bar));
        const qint64 xid = timeOf(37) + 400;
        const qint64 throttle = timeOf(80) + 700;
        FleetEvent e;
        e.timeMs = xid;
        e.severity = FleetEvent::Severity::Critical;
        e.text = QStringLiteral("XID 79 on GPU 3");
        std::vector<TimelineMarker> markers = TimelineBar::markersFrom({ e });
        markers.push_back({ throttle, FleetEvent::Severity::Warning, QStringLiteral("thermal throttle") });
        bar.setEvents(markers);
        QCOMPARE(bar.events().size(), size_t(2));

        QWidget *track = bar.track();
        const int y = track->height() / 2;
        // Two pixels off the marker: without snapping that would be about 0.3 s away from it.
        QTest::mouseClick(track, Qt::LeftButton, {}, QPoint(bar.xForTime(xid) + 2, y));
        QCOMPARE(c.position(), xid);
        QCOMPARE(indexOf(c.recorder()->frameAt(c.shownSampleTime())), 37);
        QTest::mouseClick(track, Qt::LeftButton, {}, QPoint(bar.xForTime(throttle) - 2, y));
        QCOMPARE(c.position(), throttle);
        QCOMPARE(c.shownSampleTime(), timeOf(80));
        // Far from both: the time under the pointer.
        const int x = bar.xForTime(timeOf(60));
        QTest::mouseClick(track, Qt::LeftButton, {}, QPoint(x, y));
        QCOMPARE(c.position(), bar.timeAtX(x));
        QVERIFY(std::abs(c.position() - timeOf(60)) < 1000);
    }

    void compareMarkers()
    {
        ReplayController c(&m_recorder);
        TimelineBar bar(&c);
        bar.resize(900, bar.sizeHint().height());
        bar.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bar));
        auto *compare = bar.findChild<QAbstractButton *>(QStringLiteral("compareButton"));
        QVERIFY(compare);
        QSignalSpy requested(&bar, &TimelineBar::compareRequested);
        QSignalSpy cleared(&bar, &TimelineBar::compareCleared);
        QWidget *track = bar.track();
        const int y = track->height() / 2;
        const int xa = bar.xForTime(timeOf(20));
        const int xb = bar.xForTime(timeOf(90));

        QTest::mouseClick(compare, Qt::LeftButton);
        QVERIFY(compare->isChecked());
        QTest::mouseClick(track, Qt::LeftButton, {}, QPoint(xa, y));
        QCOMPARE(bar.compareA(), std::optional<qint64>(bar.timeAtX(xa)));
        QVERIFY(!bar.compareB());
        QCOMPARE(requested.size(), 0);
        QTest::mouseClick(track, Qt::LeftButton, {}, QPoint(xb, y));
        QCOMPARE(requested.size(), 1);
        QCOMPARE(requested.at(0).at(0).toLongLong(), bar.timeAtX(xa));
        QCOMPARE(requested.at(0).at(1).toLongLong(), bar.timeAtX(xb));
        QVERIFY(std::abs(bar.timeAtX(xb) - timeOf(90)) < 1000);
        // Picking times does not move the play head.
        QCOMPARE(c.mode(), ReplayController::Mode::Live);

        QTest::mouseClick(compare, Qt::LeftButton);
        QVERIFY(!compare->isChecked());
        QCOMPARE(cleared.size(), 1);
        QVERIFY(!bar.compareA() && !bar.compareB());
    }

    void differenceByDerivation()
    {
        Frame newer;
        newer.sequence = 9;
        newer.sampleTimeMs = timeOf(50);
        newer.topologyGeneration = 4;
        newer.health = { health::Ok, health::Warning, health::Critical, health::Ok, health::Offline };
        newer.planes.push_back({ metric, { 71.5F, noValue, 60, 40, -3 } });
        newer.planes.push_back({ QStringLiteral("power"), { 1, 2, 3, 4, 5 } });
        Frame older;
        older.sequence = 3;
        older.sampleTimeMs = timeOf(20);
        older.topologyGeneration = 4;
        older.health.assign(5, health::Ok);
        older.planes.push_back({ QStringLiteral("power"), { 0, 0, 0, 0, 0 } });
        older.planes.push_back({ metric, { 70, 55, noValue, 45, -3 } });

        QString error;
        const FramePtr d = difference(newer, older, metric, &error);
        QVERIFY2(d, qPrintable(error));
        QCOMPARE(d->sampleTimeMs, newer.sampleTimeMs);
        QCOMPARE(d->sequence, newer.sequence);
        QCOMPARE(d->topologyGeneration, uint64_t(4));
        QCOMPARE(d->health, newer.health);
        QCOMPARE(d->planes.size(), size_t(1));
        QCOMPARE(d->planes[0].metricId, QStringLiteral("gpu_temp:diff"));
        const auto &v = d->planes[0].values;
        QCOMPARE(v.size(), size_t(5));
        QCOMPARE(v[0], 1.5F);
        QVERIFY(std::isnan(v[1]));
        QVERIFY(std::isnan(v[2]));
        QCOMPARE(v[3], -5.0F);
        QCOMPARE(v[4], 0.0F);

        // Recorded frames through the recorder, as compare mode takes them.
        const FramePtr fromRecorder
            = difference(*m_recorder.frameAt(timeOf(50)), *m_recorder.frameAt(timeOf(20)), metric);
        QVERIFY(fromRecorder);
        for (uint32_t g = 0; g < gpuCount; ++g) {
            const float want = expectedValue(50, g) - expectedValue(20, g);
            const float got = fromRecorder->planes[0].values[g];
            QCOMPARE(std::isnan(got), std::isnan(want));
            if (!std::isnan(want)) {
                QCOMPARE(got, 300.0F);
            }
        }
    }

    void differenceRejectsMismatches()
    {
        Frame a;
        a.topologyGeneration = 2;
        a.health.assign(3, health::Ok);
        a.planes.push_back({ metric, { 1, 2, 3 } });

        Frame fewer = a;
        fewer.health.assign(2, health::Ok);
        fewer.planes[0].values = { 1, 2 };
        QString error;
        QVERIFY(!difference(a, fewer, metric, &error));
        QVERIFY(error.contains(QStringLiteral("GPU count")));

        Frame otherGeneration = a;
        otherGeneration.topologyGeneration = 3;
        error.clear();
        QVERIFY(!difference(otherGeneration, a, metric, &error));
        QVERIFY(error.contains(QStringLiteral("topology generation")));

        error.clear();
        QVERIFY(!difference(a, a, QStringLiteral("power"), &error));
        QVERIFY(error.contains(QStringLiteral("power")));

        Frame shortPlane = a;
        shortPlane.planes[0].values = { 1, 2 };
        error.clear();
        QVERIFY(!difference(a, shortPlane, metric, &error));
        QVERIFY(!error.isEmpty());

        QVERIFY(difference(a, a, metric, &error));
        QVERIFY(error.isEmpty());
    }

    void differenceMetricDescription()
    {
        MetricInfo base;
        base.id = metric;
        base.name = QStringLiteral("GPU temperature");
        base.unit = QStringLiteral("°C");
        base.colourMap = QStringLiteral("inferno");
        base.rangeMin = 20;
        base.rangeMax = 100;
        const MetricInfo info = differenceMetric(base, 12.5F);
        QCOMPARE(info.id, QStringLiteral("gpu_temp:diff"));
        QCOMPARE(info.name, QStringLiteral("GPU temperature change A→B"));
        QCOMPARE(info.unit, base.unit);
        QCOMPARE(info.colourMap, QStringLiteral("coolwarm"));
        QCOMPARE(info.rangeMin, -12.5F);
        QCOMPARE(info.rangeMax, 12.5F);
        const MetricInfo fallback = differenceMetric(base, 0);
        QCOMPARE(fallback.rangeMax, 5.0F); // a sixteenth of 80
        QCOMPARE(fallback.rangeMin, -5.0F);
    }
};

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
