// SPDX-License-Identifier: Apache-2.0
#include "commandline.h"
#include "embeddedbackend.h"
#include "mainwindow.h"

#include <QApplication>
#include <QSurfaceFormat>

#include <cstdio>

using namespace fleetscope;

int main(int argc, char *argv[])
{
    // Core profile 3.3 on desktop GL (ES 3.0 where Qt picks GLES); the heatmap's shaders need it.
    QSurfaceFormat format;
    format.setVersion(3, 3);
    format.setProfile(QSurfaceFormat::CoreProfile);
    QSurfaceFormat::setDefaultFormat(format);

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

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("fleetscope"));
    QApplication::setOrganizationName(QStringLiteral("Fleetscope"));
    QApplication::setApplicationVersion(QStringLiteral(FLEETSCOPE_VERSION));
    const ConsoleOptions &options = cl.options;

    MainWindow window(options);
    EmbeddedBackend *embedded = nullptr;
    if (options.backend.isEmpty()) {
        embedded = new EmbeddedBackend(options.gpus, options.seed, &window);
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
    window.show();
    return QApplication::exec();
}
