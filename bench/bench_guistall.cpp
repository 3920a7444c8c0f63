// SPDX-License-Identifier: Apache-2.0
// How long the GUI thread stops, as a user of the desk would feel it: the lateness of a 1 ms timer (each firing's
// gap beyond 1 ms is time the event loop could not run), while the whole console (MainWindow over a session, the
// real client, a real backend process) starts at 1,048,576 GPUs, changes arrangement, is resized, replays at 60x
// and compares two moments. Per phase: p99 and maximum lateness, and how much of it was the map's own paints. With
// `bare`, the floor under those figures instead: a bare Qt window of the same size shown and resized alike (Qt and the
// X server alone: a window's first show and a resize that reallocates its backing store cost what they cost on the
// machine; run it on a fresh X server too, as the X server's first touch of its screen is part of a first show):
//
//   xvfb-run -a -s "-screen 0 1920x1080x24" build/dev/bin/bench_guistall [gpus] [nopaint]
//   xvfb-run -a -s "-screen 0 1920x1080x24" build/dev/bin/bench_guistall bare
//
// With `nopaint` the map is hidden once the first frame is drawn: everything else the GUI thread does (decoding
// hand-over, rollups, layouts, replay, comparison) is measured without the GL paints, which on a software renderer
// dominate.
//
// With BENCH_GUISTALL_TRACE=MS set, every event the GUI thread spent longer than MS ms on is printed to stderr with its
// receiver, its type, the widgets it painted, how much of it the GUI thread ran, waited for a core or slept (the rest),
// its page faults, and its start and end on CLOCK_MONOTONIC (perf record -k CLOCK_MONOTONIC
// uses the same clock, so the samples inside a stall can be picked out of `perf script`).
#include "app/consolesession.h"
#include "app/embeddedbackend.h"
#include "app/mainwindow.h"
#include "common/heap.h"
#include "model/flightrecorder.h"
#include "model/replaycontroller.h"
#include "widgets/heatmap/heatmapview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEvent>
#include <QLabel>
#include <QMainWindow>
#include <QMenuBar>
#include <QOpenGLWidget>
#include <QStatusBar>
#include <QTableWidget>
#include <QTime>
#include <QTimer>
#include <QToolBar>

#include <QThread>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace fleetscope;

namespace {

double monotonicMs()
{
    timespec t {};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// The GUI thread's own CPU time and minor page faults so far.
// The rest of a stall it either waited for a core (the scheduler's run delay) or slept (blocked on something).
struct ThreadUsage
{
    double cpuMs = 0;
    double waitedMs = 0;
    long faults = 0;
};

ThreadUsage threadUsage()
{
    rusage usage {};
    getrusage(RUSAGE_THREAD, &usage);
    ThreadUsage result { static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3
            + static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3,
        0, usage.ru_minflt };
    // /proc/thread-self/schedstat: time on a core, time waiting on a run queue, timeslices (ns, ns, count).
    if (FILE *file = std::fopen("/proc/thread-self/schedstat", "r")) {
        unsigned long long ran = 0;
        unsigned long long waited = 0;
        if (std::fscanf(file, "%llu %llu", &ran, &waited) == 2) {
            result.waitedMs = static_cast<double>(waited) / 1e6;
        }
        std::fclose(file);
    }
    return result;
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
        const ThreadUsage before = threadUsage();
        const double start = monotonicMs();
        const QEvent::Type type = event->type(); // the event may be gone after delivery
        const bool result = QApplication::notify(receiver, event);
        const double end = monotonicMs();
        --m_depth;
        if (end - start > m_thresholdMs) {
            const ThreadUsage after = threadUsage();
            const QObject *parent = receiver->parent();
            std::fprintf(stderr,
                "STALL %.1f ms (on a core %.1f ms, waiting for one %.1f ms, %ld page faults) [%.3f, %.3f] event %d to "
                "%s '%s' (parent %s) painted: %s\n",
                end - start, after.cpuMs - before.cpuMs, after.waitedMs - before.waitedMs, after.faults - before.faults,
                start, end, static_cast<int>(type), receiver->metaObject()->className(),
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
        if (map != nullptr) {
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
        }
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

const QSize windowSize(1900, 1040);
const QSize resizes[] = { QSize(1200, 800), QSize(1600, 1000), windowSize };

// The floor under the console's figures on this machine: Qt and the X server alone. A window of the console's size
// with a menu bar, a toolbar, a table and a status bar whose clock changes ten times a second (as the console's
// labels do), shown and resized as the console is below, before anything else runs.
void measureBareWindow()
{
    QMainWindow window;
    window.resize(windowSize);
    window.menuBar()->addMenu(QStringLiteral("File"));
    window.addToolBar(QStringLiteral("tools"))->addAction(QStringLiteral("action"));
    auto *table = new QTableWidget(40, 12, &window);
    for (int row = 0; row < 40; ++row) {
        for (int column = 0; column < 12; ++column) {
            table->setItem(row, column, new QTableWidgetItem(QString::number(row * column)));
        }
    }
    window.setCentralWidget(table);
    auto *clock = new QLabel(&window);
    window.statusBar()->addPermanentWidget(clock);
    QTimer tick;
    QObject::connect(&tick, &QTimer::timeout, clock, [clock] { clock->setText(QTime::currentTime().toString()); });
    tick.start(100);
    StallMeter meter(nullptr);
    window.show();
    run(3000);
    meter.report("bare Qt window: shown, 3 s");
    meter.reset();
    for (const QSize size : resizes) {
        act("resize bare window", [&] { window.resize(size); });
        run(2000);
    }
    meter.report("bare Qt window: resize x3");
}

} // namespace

int main(int argc, char *argv[])
{
    heap::keepFreedMemory(); // as the console does (common/heap.h)
    HeatmapView::requestSurfaceFormat();
    TracingApplication app(argc, argv);
    if (argc > 1 && std::string(argv[1]) == "bare") {
        std::printf("GUI-thread lateness of a 1 ms timer, a bare Qt window of 1900x1040 (ms)\n");
        std::printf("%-34s %8s %9s %9s %9s\n", "phase", "samples", "p50", "p99", "max");
        measureBareWindow(); // no map: its columns stay 0
        return 0;
    }
    const int gpus = argc > 1 ? std::atoi(argv[1]) : 1048576;
    ConsoleOptions options;
    options.gpus = gpus;
    options.restoreLastView = false;
    options.windowSize = windowSize;
    std::printf("GUI-thread lateness of a 1 ms timer at %d GPUs, window 1900x1040 (ms)%s\n", gpus,
        argc > 2 && std::string(argv[2]) == "nopaint" ? ", map hidden after the first frame" : "");
    std::printf(
        "%-34s %8s %9s %9s %9s %7s %9s %9s\n", "phase", "samples", "p50", "p99", "max", "paints", "map avg", "map max");
    MainWindow window(options);
    window.show();
    StallMeter meter(window.heatmap());
    EmbeddedBackend backend(gpus, 1, { QStringLiteral("--interval-ms"), QStringLiteral("1000") });
    QObject::connect(&backend, &EmbeddedBackend::ready, &window, &MainWindow::connectTo);
    backend.start();

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
    for (const QSize size : resizes) {
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
