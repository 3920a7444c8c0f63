// SPDX-License-Identifier: Apache-2.0
// Cold start by phase: the desk as main.cpp makes it (the command line's defaults, a session, MainWindow, the
// embedded backend started after the window is shown), from the process's launch to the first paint of the map that
// shows the fleet's first frame, each run a fresh process. The phases, in ms after launch: the window shown, the
// backend ready (its simulator built, listening), the topology read off the wire, decoded and handed to the GUI
// thread, the first frame read and handed over, the map's layout ready, and the first frame drawn (the first paint
// presented with the layout and a frame, after the passes ran for them). Medians of the runs, with the fastest and
// slowest. Needs a display (the map draws on the CPU where OpenGL is software):
//
//   xvfb-run -a -s "-screen 0 1920x1080x24" build/dev/bin/bench_coldstart [runs] [gpus]
//
// FLEETSCOPE_COLDSTART_PNG=FILE saves the window of the last run as drawn at that moment, to look at.
#include "app/commandline.h"
#include "app/consolesession.h"
#include "app/embeddedbackend.h"
#include "app/mainwindow.h"
#include "bench/timing.h"
#include "common/heap.h"
#include "widgets/heatmap/heatmapview.h"

#include <QApplication>
#include <QFile>
#include <QLoggingCategory>
#include <QPixmap>
#include <QProcess>
#include <QTimer>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

using namespace fleetscope;

namespace {

// The phases in the order they are printed; the client's are its debug lines (client/telemetryclient.cpp).
const std::vector<std::pair<std::string, std::string>> phases = {
    { "window shown", "" },
    { "backend ready", "" },
    { "topology read", "topology read:" },
    { "topology decoded", "topology decoded:" },
    { "topology shown", "topology shown:" },
    { "first frame read", "first frame read:" },
    { "first frame shown", "first frame shown:" },
    { "layout ready", "" },
    { "first frame drawn", "" },
};

int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int64_t g_launchNs = 0;
std::mutex g_printing;

void phase(const std::string &name, const QString &detail = {})
{
    const double ms = static_cast<double>(nowNs() - g_launchNs) / 1e6;
    std::lock_guard lock(g_printing);
    std::printf("phase\t%s\t%.1f\t%s\n", name.c_str(), ms, qPrintable(detail));
    std::fflush(stdout);
}

QtMessageHandler g_previous = nullptr;

void onMessage(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    if (context.category != nullptr && qstrcmp(context.category, "fleetscope.client") == 0) {
        for (const auto &[name, prefix] : phases) {
            if (!prefix.empty() && message.startsWith(QLatin1String(prefix.c_str()))) {
                phase(name, message.mid(static_cast<qsizetype>(prefix.size())).trimmed());
                return;
            }
        }
    }
    if (type != QtDebugMsg) {
        g_previous(type, context, message);
    }
}

// One cold start, in this process.
int once(int gpus)
{
    heap::keepFreedMemory(); // as main.cpp does, first
    QLoggingCategory::setFilterRules(QStringLiteral("fleetscope.client.debug=true"));
    g_previous = qInstallMessageHandler(onMessage);
    int argc = 1;
    char name[] = "bench_coldstart";
    char *argv[] = { name, nullptr };
    HeatmapView::requestSurfaceFormat();
    QApplication app(argc, argv);
    const CommandLine cl
        = parseCommandLine({ QStringLiteral("fleetscope"), QStringLiteral("--gpus"), QString::number(gpus) });
    if (cl.exitCode >= 0) {
        std::fprintf(stderr, "%s\n", qPrintable(cl.message));
        return 2;
    }
    const ConsoleOptions &options = cl.options;
    std::unique_ptr<EmbeddedBackend> embedded;
    ConsoleSession::Options sessionOptions;
    sessionOptions.recordMinutes = options.recordMinutes;
    sessionOptions.metric = options.metric;
    ConsoleSession session(sessionOptions);
    MainWindow window(options, &session);
    HeatmapView *view = window.heatmap();
    quint64 resolvesAtLayout = 0;
    bool layoutSeen = false;
    bool drawn = false;
    QObject::connect(view, &HeatmapView::layoutReady, &app, [&] {
        if (!layoutSeen) {
            layoutSeen = true;
            resolvesAtLayout = view->resolveCount();
            phase("layout ready");
        }
    });
    QObject::connect(view, &HeatmapView::framePresented, &app, [&] {
        // Small fleets are laid out at once and never say layoutReady.
        const bool laidOut = layoutSeen || (!view->isLayoutPending() && view->topology() != nullptr);
        if (drawn || !laidOut || view->isLayoutPending() || !view->frame()
            || view->resolveCount() <= resolvesAtLayout) {
            return;
        }
        drawn = true;
        phase("first frame drawn");
        if (const QByteArray png = qgetenv("FLEETSCOPE_COLDSTART_PNG"); !png.isEmpty()) {
            window.grabWithMap().save(QString::fromLocal8Bit(png));
        }
        QCoreApplication::quit();
    });
    window.show();
    phase("window shown");
    embedded = std::make_unique<EmbeddedBackend>(options.gpus, options.seed, options.simulatorArguments);
    QObject::connect(embedded.get(), &EmbeddedBackend::ready, &session, [&](const QString &address) {
        phase("backend ready");
        session.connectTo(address);
    });
    QObject::connect(embedded.get(), &EmbeddedBackend::failed, &app, [](const QString &why) {
        std::fprintf(stderr, "%s\n", qPrintable(why));
        QCoreApplication::exit(1);
    });
    embedded->start();
    QTimer::singleShot(120000, &app, [] { QCoreApplication::exit(1); });
    const int code = QApplication::exec();
    std::fflush(stdout);
    embedded.reset(); // its backend gone before the next run starts (it takes a while to free a million GPUs)
    // A cold start is what is measured: the windows' and the fleet's teardown is not, so it is skipped.
    std::_Exit(code);
}

std::string loadAverage()
{
    QFile file(QStringLiteral("/proc/loadavg"));
    return file.open(QIODevice::ReadOnly) ? file.readAll().split(' ').mid(0, 3).join(' ').toStdString() : "?";
}

} // namespace

int main(int argc, char *argv[])
{
    g_launchNs = nowNs();
    if (argc >= 4 && std::string(argv[1]) == "--once") {
        g_launchNs = std::stoll(argv[3]);
        return once(std::stoi(argv[2]));
    }
    QCoreApplication app(argc, argv);
    const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const int gpus = argc > 2 ? std::atoi(argv[2]) : 1048576;
    std::printf("cold start of the desk with its embedded backend, %d GPUs, %d runs; load average before: %s\n", gpus,
        runs, loadAverage().c_str());
    std::map<std::string, std::vector<double>> at;
    std::map<std::string, std::string> details;
    int failed = 0;
    for (int run = 0; run < runs; ++run) {
        QProcess child;
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        const int64_t launch = nowNs();
        child.start(QCoreApplication::applicationFilePath(),
            { QStringLiteral("--once"), QString::number(gpus), QString::number(launch) });
        if (!child.waitForFinished(180000) || child.exitCode() != 0) {
            ++failed;
            child.kill();
            child.waitForFinished();
            continue;
        }
        for (const QByteArray &line : child.readAllStandardOutput().split('\n')) {
            const QList<QByteArray> fields = line.split('\t');
            if (fields.size() >= 3 && fields[0] == "phase") {
                at[fields[1].toStdString()].push_back(fields[2].toDouble());
                if (fields.size() > 3 && !fields[3].isEmpty()) {
                    details[fields[1].toStdString()] = fields[3].toStdString();
                }
            }
        }
    }
    std::printf(
        "%-20s %9s %9s %9s   %s\n", "phase", "median", "fastest", "slowest", "(ms after launch; last run's detail)");
    for (const auto &[name, prefix] : phases) {
        const auto it = at.find(name);
        if (it == at.end()) {
            std::printf("%-20s %9s\n", name.c_str(), "-");
            continue;
        }
        const bench::Distribution d(it->second);
        std::printf("%-20s %9.0f %9.0f %9.0f   %s\n", name.c_str(), d.quantile(0.5), d.quantile(0), d.max(),
            details[name].c_str());
    }
    std::printf("load average after: %s%s\n", loadAverage().c_str(),
        failed > 0 ? (", " + std::to_string(failed) + " runs failed").c_str() : "");
    return failed > 0 ? 1 : 0;
}
