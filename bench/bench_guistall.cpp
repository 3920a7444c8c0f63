// SPDX-License-Identifier: Apache-2.0
// How long the GUI thread stops, as a user of the desk would feel it: the lateness of a 1 ms timer (each firing's
// gap beyond 1 ms is time the event loop could not run), while the whole console (MainWindow over a session, the
// real client, a real backend process) starts at 1,048,576 GPUs, changes arrangement, is resized, replays at 60x
// and compares two moments. Per phase: p99 and maximum lateness, and how much of it was the map's own paints
// (paintGL runs on the GUI thread; under a software renderer it is the big part). Needs a display with OpenGL:
//
//   xvfb-run -a -s "-screen 0 1920x1080x24" build/dev/bin/bench_guistall [gpus] [nopaint]
//
// With `nopaint` the map is hidden once the first frame is drawn: everything else the GUI thread does (decoding
// hand-over, rollups, layouts, replay, comparison) is measured without the GL paints, which on a software renderer
// dominate.
//
// With BENCH_GUISTALL_TRACE=MS set, every event the GUI thread spent longer than MS ms on is printed to stderr with its
// receiver, its type, the widgets it painted and its start and end on CLOCK_MONOTONIC (perf record -k CLOCK_MONOTONIC
// uses the same clock, so the samples inside a stall can be picked out of `perf script`).
#include "app/consolesession.h"
#include "app/embeddedbackend.h"
#include "app/mainwindow.h"
#include "model/flightrecorder.h"
#include "model/replaycontroller.h"
#include "widgets/heatmap/heatmapview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEvent>
#include <QOpenGLWidget>
#include <QTimer>

#include <QThread>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

using namespace fleetscope;

namespace {

double monotonicMs()
{
    timespec t {};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double traceThresholdMs()
{
    static const double threshold
        = std::getenv("BENCH_GUISTALL_TRACE") ? std::atof(std::getenv("BENCH_GUISTALL_TRACE")) : 0;
    return threshold;
}

// Runs a user's action, which the benchmark calls directly (outside any event), and names it when it is long.
void act(const char *what, const std::function<void()> &action)
{
    const double start = monotonicMs();
    action();
    const double end = monotonicMs();
    if (traceThresholdMs() > 0 && end - start > traceThresholdMs()) {
        std::fprintf(
            stderr, "STALL %.1f ms [%.3f, %.3f] event 0 to action:%s '' (parent -)\n", end - start, start, end, what);
    }
}

// Times the outermost event the GUI thread delivers and names the long ones.
class TracingApplication : public QApplication
{
public:
    TracingApplication(int &argc, char **argv)
        : QApplication(argc, argv)
        , m_thresholdMs(traceThresholdMs())
    { }
    bool notify(QObject *receiver, QEvent *event) override
    {
        if (m_thresholdMs <= 0 || QThread::currentThread() != thread()) {
            return QApplication::notify(receiver, event);
        }
        if (m_depth > 0) {
            if (event->type() == QEvent::Paint && m_painted.size() < 400) {
                m_painted += QByteArray(receiver->metaObject()->className()) + ' ';
            }
            return QApplication::notify(receiver, event);
        }
        m_painted.clear();
        ++m_depth;
        const double start = monotonicMs();
        const QEvent::Type type = event->type(); // the event may be gone after delivery
        const bool result = QApplication::notify(receiver, event);
        const double end = monotonicMs();
        --m_depth;
        if (end - start > m_thresholdMs) {
            const QObject *parent = receiver->parent();
            std::fprintf(stderr, "STALL %.1f ms [%.3f, %.3f] event %d to %s '%s' (parent %s) painted: %s\n",
                end - start, start, end, static_cast<int>(type), receiver->metaObject()->className(),
                qPrintable(receiver->objectName()), parent ? parent->metaObject()->className() : "-",
                m_painted.constData());
        }
        return result;
    }

private:
    double m_thresholdMs;
    int m_depth = 0;
    QByteArray m_painted; // the widgets painted within the outermost event
};

// Samples the event loop's lateness with a precise 1 ms timer, and times the map's paints.
class StallMeter : public QObject
{
public:
    explicit StallMeter(HeatmapView *map)
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            const qint64 now = m_clock.nsecsElapsed();
            if (m_last > 0) {
                m_late.push_back(std::max(0.0, static_cast<double>(now - m_last) / 1e6 - 1.0));
            }
            m_last = now;
        });
        // From the map's paint event (on OpenGL its child surface's: paintGL renders into its framebuffer there) to
        // the window's swap or flush after composing it: the map's whole cost on the GUI thread for one repaint.
        map->installEventFilter(this);
        if (auto *gl = map->findChild<QOpenGLWidget *>()) {
            gl->installEventFilter(this);
        }
        connect(map, &HeatmapView::framePresented, this, [this] {
            if (m_paintStart > 0) {
                m_paints.push_back(static_cast<double>(m_clock.nsecsElapsed() - m_paintStart) / 1e6);
                m_paintStart = 0;
            }
        });
        m_clock.start();
        m_timer.start();
    }
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Paint && m_paintStart == 0) {
            m_paintStart = m_clock.nsecsElapsed();
        }
        return QObject::eventFilter(watched, event);
    }
    void reset()
    {
        m_late.clear();
        m_paints.clear();
        m_last = 0;
    }
    void report(const char *phase) const
    {
        std::vector<double> late = m_late;
        std::sort(late.begin(), late.end());
        auto at = [&late](double q) {
            return late.empty()
                ? 0.0
                : late[std::min(late.size() - 1, static_cast<size_t>(q * static_cast<double>(late.size() - 1) + 0.5))];
        };
        double paintMax = 0;
        double paintSum = 0;
        for (double p : m_paints) {
            paintMax = std::max(paintMax, p);
            paintSum += p;
        }
        std::printf("%-34s %8zu %9.1f %9.1f %9.1f %7zu %9.1f %9.1f\n", phase, late.size(), at(0.5), at(0.99),
            late.empty() ? 0.0 : late.back(), m_paints.size(),
            m_paints.empty() ? 0.0 : paintSum / static_cast<double>(m_paints.size()), paintMax);
        std::fflush(stdout);
        if (traceThresholdMs() > 0) {
            std::fprintf(stderr, "PHASE END %.3f %s\n", monotonicMs(), phase);
        }
    }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = 0;
    qint64 m_paintStart = 0;
    std::vector<double> m_late;
    std::vector<double> m_paints;
};

// Runs the event loop until done() or timeoutMs.
bool waitFor(const std::function<bool()> &done, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    while (!done() && clock.elapsed() < timeoutMs) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return done();
}

void run(int ms)
{
    waitFor([] { return false; }, ms);
}

} // namespace

int main(int argc, char *argv[])
{
    HeatmapView::requestSurfaceFormat();
    TracingApplication app(argc, argv);
    const int gpus = argc > 1 ? std::atoi(argv[1]) : 1048576;
    ConsoleOptions options;
    options.gpus = gpus;
    options.restoreLastView = false;
    options.windowSize = QSize(1900, 1040);
    MainWindow window(options);
    window.show();
    StallMeter meter(window.heatmap());
    EmbeddedBackend backend(gpus, 1, { QStringLiteral("--interval-ms"), QStringLiteral("1000") });
    QObject::connect(&backend, &EmbeddedBackend::ready, &window, &MainWindow::connectTo);
    backend.start();
    std::printf("GUI-thread lateness of a 1 ms timer at %d GPUs, window 1900x1040 (ms)%s\n", gpus,
        argc > 2 && std::string(argv[2]) == "nopaint" ? ", map hidden after the first frame" : "");
    std::printf(
        "%-34s %8s %9s %9s %9s %7s %9s %9s\n", "phase", "samples", "p50", "p99", "max", "paints", "map avg", "map max");

    // Start: from the window shown to 10 s after the first frame drawn (topology, layout, textures, search index).
    if (!waitFor([&] { return window.heatmap()->frame() != nullptr; }, 180000)) {
        std::fprintf(stderr, "bench_guistall: no frame arrived\n");
        return 1;
    }
    const bool noPaint = argc > 2 && std::string(argv[2]) == "nopaint";
    if (noPaint) {
        act("hide", [&] { window.heatmap()->hide(); });
    }
    run(10000);
    meter.report("start (to first frame + 10 s)");

    meter.reset();
    run(10000);
    meter.report("steady, live (10 s)");

    meter.reset();
    for (const char *arrangement : { "compact", "jobs", "floor" }) {
        ViewState view = window.currentView();
        view.arrangement = QString::fromLatin1(arrangement);
        act("openView", [&] { window.openView(view); });
        run(3000);
    }
    meter.report("arrangement x3 (3 s each)");

    meter.reset();
    for (const QSize size : { QSize(1200, 800), QSize(1600, 1000), QSize(1900, 1040) }) {
        act("resize", [&] { window.resize(size); });
        run(2000);
    }
    meter.report("resize x3 (2 s each)");

    ConsoleSession *session = window.session();
    waitFor([&] { return session->recorder().frameCount() >= 30; }, 120000);
    meter.reset();
    act("seek", [&] { session->replay()->seek(session->recorder().earliestMs()); });
    act("play", [&] { session->replay()->play(60); });
    waitFor([&] { return session->replay()->mode() == ReplayController::Mode::Live; }, 20000);
    meter.report("replay at 60x to live");

    meter.reset();
    act("compare", [&] { session->compare(session->recorder().earliestMs(), session->recorder().latestMs()); });
    run(3000);
    act("clearComparison", [&] { session->clearComparison(); });
    run(2000);
    meter.report("compare two moments, clear");
    return 0;
}
