// SPDX-License-Identifier: Apache-2.0
#include "app/commandline.h"
#include "app/embeddedbackend.h"
#include "widgets/heatmap/heatmapview.h"
#include "app/mainwindow.h"
#include "app/wallmode.h"

#include <QApplication>

#include <QSocketNotifier>

#include <csignal>
#include <cstdio>
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
    watchStopSignals(&app);
    const ConsoleOptions &options = cl.options;

    MainWindow window(options);
    EmbeddedBackend *embedded = nullptr;
    if (options.backend.isEmpty()) {
        embedded = new EmbeddedBackend(options.gpus, options.seed, options.simulatorArguments, &window);
        QObject::connect(embedded, &EmbeddedBackend::ready, &window, &MainWindow::connectTo);
        QObject::connect(embedded, &EmbeddedBackend::failed, &window, &MainWindow::showProblem);
        embedded->start();
    } else {
        window.connectTo(options.backend);
    }
    if (!options.screenshot.isEmpty()) {
        QObject::connect(&window, &MainWindow::screenshotDone, &app, &QApplication::exit);
        window.takeScreenshotWhenLive(options.screenshot, options.screenshotTimeoutS);
    }
    if (options.wall) {
        auto *wall = new WallMode(&window, options.playlist); // owned by the window
        wall->showOnScreen(options.screen);
    } else {
        window.show();
    }
    return QApplication::exec();
}
