// SPDX-License-Identifier: Apache-2.0
#include "app/commandline.h"
#include "app/consolesession.h"
#include "app/embeddedbackend.h"
#include "app/livescreenshot.h"
#include "app/mainwindow.h"
#include "app/wallwindow.h"
#include "common/heap.h"
#include "widgets/heatmap/heatmapview.h"

#include <QApplication>
#include <QIcon>
#include <QSettings>
#include <QSocketNotifier>

#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <sys/socket.h>
#include <unistd.h>

using namespace fleetscope;

namespace {
int g_signalPipe[2] = { -1, -1 };

// SIGINT / SIGTERM end the console cleanly (and with it the embedded backend): the handler only writes a byte, the
// event loop reads it and quits.
void watchStopSignals(QApplication *app)
{
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, g_signalPipe) != 0) {
        return;
    }
    auto *notifier = new QSocketNotifier(g_signalPipe[1], QSocketNotifier::Read, app);
    QObject::connect(notifier, &QSocketNotifier::activated, app, [] { QApplication::quit(); });
    struct sigaction action = {};
    action.sa_handler = [](int) {
        const char byte = 1;
        [[maybe_unused]] const auto written = ::write(g_signalPipe[0], &byte, 1);
    };
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}
} // namespace

int main(int argc, char *argv[])
{
    heap::keepFreedMemory(); // buffers reused, not faulted in afresh page by page (common/heap.h)
    // The command line first, so that --help, --version and a bad option work without a display.
    QStringList arguments;
    for (int i = 0; i < argc; ++i) {
        arguments << QString::fromLocal8Bit(argv[i]);
    }
    const CommandLine cl = parseCommandLine(arguments);
    if (cl.exitCode >= 0) {
        std::fprintf(cl.exitCode == 0 ? stdout : stderr, "%s\n", qPrintable(cl.message));
        return cl.exitCode;
    }

    HeatmapView::requestSurfaceFormat();
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("fleetscope"));
    QApplication::setOrganizationName(QStringLiteral("Fleetscope"));
    QApplication::setApplicationVersion(QStringLiteral(FLEETSCOPE_VERSION));
    // The installed desktop entry and icon (packaging/): the window is matched to the entry, and shows the icon.
    QGuiApplication::setDesktopFileName(QStringLiteral("org.fleetscope.Fleetscope"));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("org.fleetscope.Fleetscope")));
    watchStopSignals(&app);
    ConsoleOptions options = cl.options;
    if (const QString why = applyConnectionSettings(&options, QSettings()); !why.isEmpty()) {
        std::fprintf(stderr, "fleetscope: %s\n", qPrintable(why));
        return 2;
    }

    // Declared first so that it goes last: the session's streams end before their backend does.
    std::unique_ptr<EmbeddedBackend> embedded;
    // One session (connections, recorder, replay, what is shown) under whichever window shows it.
    ConsoleSession::Options sessionOptions;
    sessionOptions.recordMinutes = options.recordMinutes;
    sessionOptions.metric = options.metric;
    sessionOptions.changeWindowS = options.changeWindowS;
    sessionOptions.autoRange = options.range == QStringLiteral("auto");
    ConsoleSession session(sessionOptions);
    std::unique_ptr<MainWindow> desk;
    std::unique_ptr<WallWindow> wall;
    LiveScreenshot *screenshot = nullptr;
    std::function<void(const QString &)> showProblem;
    if (options.wall) {
        wall = std::make_unique<WallWindow>(&session, options.playlist, options.animated);
        showProblem = [w = wall.get()](const QString &message) { w->report(message); };
        if (!options.screenshot.isEmpty()) {
            screenshot = new LiveScreenshot(
                &session, wall->heatmap(),
                [w = wall.get()] {
                    w->refresh(); // the header as of the frame drawn
                    return w->grabWithMap();
                },
                options.screenshot, options.screenshotTimeoutS, wall.get());
        }
        wall->showOnScreen(options.screen);
    } else {
        desk = std::make_unique<MainWindow>(options, &session);
        showProblem = [d = desk.get()](const QString &message) { d->showProblem(message); };
        if (!options.screenshot.isEmpty()) {
            screenshot = new LiveScreenshot(
                &session, desk->heatmap(), [d = desk.get()] { return d->grabWithMap(); }, options.screenshot,
                options.screenshotTimeoutS, desk.get());
        }
        desk->show();
    }
    if (screenshot != nullptr) {
        QObject::connect(screenshot, &LiveScreenshot::done, &app, &QApplication::exit);
    }
    if (options.backend.isEmpty()) {
        embedded = std::make_unique<EmbeddedBackend>(options.gpus, options.seed, options.simulatorArguments);
        QObject::connect(embedded.get(), &EmbeddedBackend::ready, &session, &ConsoleSession::connectTo);
        QObject::connect(embedded.get(), &EmbeddedBackend::failed, &app, showProblem);
        embedded->start();
    } else {
        session.setChannelSecurity(options.security);
        session.connectTo(options.backend);
    }
    const int code = QApplication::exec();
    // The windows go before the session they show, the embedded backend last.
    desk.reset();
    wall.reset();
    return code;
}
