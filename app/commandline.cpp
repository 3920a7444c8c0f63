// SPDX-License-Identifier: Apache-2.0
#include "app/commandline.h"

#include "model/viewstate.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSettings>

namespace fleetscope {

namespace {
// Why HOST:PORT is not one, or nothing.
QString checkHostPort(const QString &address)
{
    static const QRegularExpression hostPort(QStringLiteral("^(\\[[0-9a-fA-F:]+\\]|[A-Za-z0-9.-]+):([0-9]{1,5})$"));
    const auto match = hostPort.match(address);
    if (!match.hasMatch() || match.captured(2).toInt() < 1 || match.captured(2).toInt() > 65535) {
        return QStringLiteral("'%1' is not HOST:PORT").arg(address);
    }
    return {};
}

// Why a credentials file cannot be used, or nothing.
QString checkReadable(const QString &path)
{
    const QFileInfo info(path);
    return info.isFile() && info.isReadable() ? QString() : QStringLiteral("cannot read '%1'").arg(path);
}

// Why a set of credentials files cannot be used, naming the option or setting (prefix + name), or nothing.
QString checkSecurity(const ChannelSecurity &security, const QString &prefix)
{
    if (security.certFile.isEmpty() != security.keyFile.isEmpty()) {
        return QStringLiteral("%1cert and %1key go together (a client certificate and its key)").arg(prefix);
    }
    const bool setting = prefix.startsWith(QLatin1String("settings"));
    const std::pair<const QString *, const char *> files[]
        = { { &security.caFile, "ca" }, { &security.certFile, "cert" }, { &security.keyFile, "key" },
              { &security.tokenFile, setting ? "tokenFile" : "token-file" } };
    for (const auto &[path, name] : files) {
        if (!path->isEmpty()) {
            if (const QString why = checkReadable(*path); !why.isEmpty()) {
                return QStringLiteral("%1%2: %3").arg(prefix, QLatin1String(name), why);
            }
        }
    }
    return {};
}
} // namespace

CommandLine parseCommandLine(const QStringList &arguments)
{
    CommandLine result;
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Fleetscope: a live, GPU-rendered heatmap of a GPU fleet.\n"
                       "Without --backend it starts a simulated fleet on this machine and connects to it."));
    const QCommandLineOption help({ QStringLiteral("h"), QStringLiteral("help") }, QStringLiteral("Show this help."));
    const QCommandLineOption version(QStringLiteral("version"), QStringLiteral("Show the version."));
    const QCommandLineOption backend(QStringLiteral("backend"),
        QStringLiteral("Connect to a running fleetscope-backend at HOST:PORT."), QStringLiteral("HOST:PORT"));
    const QCommandLineOption ca(QStringLiteral("ca"),
        QStringLiteral("Trust a TLS backend whose certificate is signed by a CA in this PEM file (default with TLS: "
                       "the system's CAs)."),
        QStringLiteral("FILE"));
    const QCommandLineOption cert(QStringLiteral("cert"),
        QStringLiteral(
            "Present this client certificate (PEM) to a backend that asks for one (mutual TLS); with --key."),
        QStringLiteral("FILE"));
    const QCommandLineOption key(
        QStringLiteral("key"), QStringLiteral("The client certificate's private key (PEM)."), QStringLiteral("FILE"));
    const QCommandLineOption tokenFile(QStringLiteral("token-file"),
        QStringLiteral("Send the bearer token in FILE (its first word) with every call, over TLS; read again for "
                       "each call, so a rotated token needs no restart. Never give a token on the command line."),
        QStringLiteral("FILE"));
    const QCommandLineOption gpus(QStringLiteral("gpus"),
        QStringLiteral("GPUs in the embedded simulated fleet, 8 to 1048576 (default 10240)."), QStringLiteral("N"),
        QStringLiteral("10240"));
    const QCommandLineOption seed(QStringLiteral("seed"), QStringLiteral("Seed of the embedded simulated fleet."),
        QStringLiteral("S"), QStringLiteral("1"));
    const QCommandLineOption metric(QStringLiteral("metric"),
        QStringLiteral("Metric shown at start, e.g. gpu_temp, power, gpu_util."), QStringLiteral("ID"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
        QStringLiteral("Wait until a live frame is drawn, save the window to FILE (PNG) and exit."),
        QStringLiteral("FILE"));
    const QCommandLineOption screenshotTimeout(QStringLiteral("screenshot-timeout"),
        QStringLiteral("Seconds --screenshot waits for a live frame before failing (default 30)."), QStringLiteral("S"),
        QStringLiteral("30"));
    const QCommandLineOption scenario(QStringLiteral("scenario"),
        QStringLiteral("Embedded fleet: stage an incident (cooling-failure, cdu-failure, power-cap, pdu-trip, "
                       "leaf-down, link-flap, leak, bad-gpu, node-flap, straggler); see "
                       "fleetscope-backend --list-scenarios."),
        QStringLiteral("NAME"));
    const QCommandLineOption hardware(QStringLiteral("hardware"),
        QStringLiteral("Embedded fleet: hgx-h100 (8-GPU nodes, default) or gb200-nvl72 (racks of 18 trays of 4 GPUs, "
                       "each rack one NVLink domain)."),
        QStringLiteral("KIND"));
    const QCommandLineOption speed(QStringLiteral("speed"),
        QStringLiteral("Embedded fleet: simulated seconds per real second (default 1)."), QStringLiteral("X"));
    const QCommandLineOption history(QStringLiteral("history"),
        QStringLiteral("Embedded fleet: simulate this much past first (e.g. 6h)."), QStringLiteral("DURATION"));
    const QCommandLineOption noAnimation(QStringLiteral("no-animation"),
        QStringLiteral("Show each frame at once instead of morphing between frames (for weak display machines)."));
    const QCommandLineOption arrange(QStringLiteral("arrange"),
        QStringLiteral("Where GPUs sit on the map: floor (rows and racks as on the floor, default), compact (fleet "
                       "order, filling the window), jobs (grouped by job, idle GPUs last) or fabric (each scalable "
                       "unit a block of "
                       "its leaf switches by rail, a line each, and their ports)."),
        QStringLiteral("HOW"), QStringLiteral("floor"));
    const QCommandLineOption range(QStringLiteral("range"),
        QStringLiteral("Colour range: fixed (the metric's own, default) or auto (1st to 99th percentile of the "
                       "frame shown)."),
        QStringLiteral("HOW"), QStringLiteral("fixed"));
    const QCommandLineOption change(QStringLiteral("change"),
        QStringLiteral("Show the metric's rate of change per minute over a window of 10, 60, 300 or 900 seconds "
                       "instead of its value (heat fronts stand out)."),
        QStringLiteral("SECONDS"));
    const QCommandLineOption size(QStringLiteral("size"),
        QStringLiteral("Window size in logical pixels, e.g. 1920x1080 (default 1280x800)."), QStringLiteral("WxH"),
        QStringLiteral("1280x800"));
    const QCommandLineOption view(QStringLiteral("view"),
        QStringLiteral("Open a view string (from \"Copy view\"): place, selection, metric, colours, zoom, time."),
        QStringLiteral("STRING"));
    const QCommandLineOption record(QStringLiteral("record-minutes"),
        QStringLiteral("How far back the flight recorder keeps frames for replay, 1 to 1440 minutes (default 60; "
                       "memory grows with it, see docs/PERFORMANCE.md)."),
        QStringLiteral("M"), QStringLiteral("60"));
    const QCommandLineOption wall(QStringLiteral("wall"),
        QStringLiteral("Wall display: frameless full screen, no cursor, large type, a playlist of pages cycling on "
                       "its own (Right/Left: next/previous page, Space: pause, Ctrl+Q: quit)."));
    const QCommandLineOption screen(QStringLiteral("screen"),
        QStringLiteral("With --wall: the screen to fill, from 0 (default 0)."), QStringLiteral("N"),
        QStringLiteral("0"));
    const QCommandLineOption playlist(QStringLiteral("playlist"),
        QStringLiteral("With --wall: the pages and how long each shows, a JSON file (see "
                       "docs/wall-playlist-example.json). Default: fleet 30 s, hottest row 20 s, summary 20 s, "
                       "events 15 s, replay of the last 15 min 30 s."),
        QStringLiteral("FILE"));
    const QCommandLineOption price(QStringLiteral("price-per-gpu-hour"),
        QStringLiteral("What an idle GPU-hour costs, in USD, for the executive summary (default 2.50; a wall cannot "
                       "be asked)."),
        QStringLiteral("USD"), QStringLiteral("2.50"));
    parser.addOptions({ help, version, backend, ca, cert, key, tokenFile, gpus, seed, metric, screenshot,
        screenshotTimeout, scenario, hardware, speed, history, noAnimation, arrange, range, change, size, view, record,
        wall, screen, playlist, price });

    auto fail = [&](const QString &why) {
        result.exitCode = 2;
        result.message = QStringLiteral("fleetscope: %1\nTry 'fleetscope --help'.").arg(why);
        return result;
    };
    if (!parser.parse(arguments)) {
        return fail(parser.errorText());
    }
    if (!parser.positionalArguments().isEmpty()) {
        return fail(QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().constFirst()));
    }
    if (parser.isSet(help)) {
        result.exitCode = 0;
        // Parsed before QApplication exists, so Qt cannot know the program's name.
        result.message = parser.helpText().replace(QStringLiteral("<executable_name>"), QStringLiteral("fleetscope"));
        return result;
    }
    if (parser.isSet(version)) {
        result.exitCode = 0;
        result.message = QStringLiteral("fleetscope %1").arg(QStringLiteral(FLEETSCOPE_VERSION));
        return result;
    }
    auto &o = result.options;
    if (parser.isSet(backend)) {
        o.backend = parser.value(backend);
        if (const QString why = checkHostPort(o.backend); !why.isEmpty()) {
            return fail(QStringLiteral("--backend: %1").arg(why));
        }
    }
    o.security.caFile = parser.value(ca);
    o.security.certFile = parser.value(cert);
    o.security.keyFile = parser.value(key);
    o.security.tokenFile = parser.value(tokenFile);
    if (const QString why = checkSecurity(o.security, QStringLiteral("--")); !why.isEmpty()) {
        return fail(why);
    }
    for (const auto *option : { &gpus, &seed }) {
        o.embeddedAsked = o.embeddedAsked || parser.isSet(*option);
    }
    bool ok = false;
    o.gpus = parser.value(gpus).toInt(&ok);
    if (!ok || o.gpus < 8 || o.gpus > 1048576) {
        return fail(QStringLiteral("--gpus: '%1' is not a number from 8 to 1048576").arg(parser.value(gpus)));
    }
    o.seed = parser.value(seed).toULongLong(&ok);
    if (!ok) {
        return fail(QStringLiteral("--seed: '%1' is not a non-negative integer").arg(parser.value(seed)));
    }
    o.metric = parser.value(metric);
    o.animated = !parser.isSet(noAnimation);
    // The simulator's own options are checked by the simulator (it exits 2 with a message on a bad one).
    for (const auto *option : { &scenario, &hardware, &speed, &history }) {
        if (parser.isSet(*option)) {
            if (!o.backend.isEmpty()) {
                return fail(QStringLiteral("--%1 is for the embedded fleet; it cannot be used with --backend")
                                .arg(option->names().constFirst()));
            }
            o.simulatorArguments << QStringLiteral("--") + option->names().constFirst() << parser.value(*option);
            o.embeddedAsked = true;
        }
    }
    o.arrangement = parser.value(arrange);
    if (!QStringList {
            QStringLiteral("floor"), QStringLiteral("compact"), QStringLiteral("jobs"), QStringLiteral("fabric") }
             .contains(o.arrangement)) {
        return fail(QStringLiteral("--arrange: '%1' is not floor, compact, jobs or fabric").arg(o.arrangement));
    }
    o.range = parser.value(range);
    if (o.range != QStringLiteral("fixed") && o.range != QStringLiteral("auto")) {
        return fail(QStringLiteral("--range: '%1' is not fixed or auto").arg(o.range));
    }
    if (parser.isSet(change)) {
        o.changeWindowS = parser.value(change).toInt(&ok);
        if (!ok || !QList<int> { 10, 60, 300, 900 }.contains(o.changeWindowS)) {
            return fail(QStringLiteral("--change: '%1' is not 10, 60, 300 or 900 seconds").arg(parser.value(change)));
        }
    }
    static const QRegularExpression widthByHeight(QStringLiteral("^([0-9]{3,5})x([0-9]{3,5})$"));
    const auto sizeMatch = widthByHeight.match(parser.value(size));
    o.windowSize = QSize(sizeMatch.captured(1).toInt(), sizeMatch.captured(2).toInt());
    if (!sizeMatch.hasMatch() || o.windowSize.width() < 400 || o.windowSize.height() < 300
        || o.windowSize.width() > 16384 || o.windowSize.height() > 16384) {
        return fail(
            QStringLiteral("--size: '%1' is not WIDTHxHEIGHT from 400x300 to 16384x16384").arg(parser.value(size)));
    }
    if (parser.isSet(view)) {
        QString error;
        if (!ViewState::parse(parser.value(view), &error)) {
            return fail(QStringLiteral("--view: %1").arg(error));
        }
        o.view = parser.value(view);
    }
    // A view asked for on the command line (or a screenshot, which must not depend on the last session) wins over
    // the one the last session ended with.
    for (const auto *option : { &metric, &arrange, &range, &change, &view, &screenshot }) {
        o.restoreLastView = o.restoreLastView && !parser.isSet(*option);
    }
    o.recordMinutes = parser.value(record).toInt(&ok);
    if (!ok || o.recordMinutes < 1 || o.recordMinutes > 1440) {
        return fail(QStringLiteral("--record-minutes: '%1' is not a number of minutes from 1 to 1440")
                        .arg(parser.value(record)));
    }
    o.pricePerGpuHour = parser.value(price).toDouble(&ok);
    if (!ok || !(o.pricePerGpuHour >= 0 && o.pricePerGpuHour <= 1000)) {
        return fail(
            QStringLiteral("--price-per-gpu-hour: '%1' is not an amount from 0 to 1000").arg(parser.value(price)));
    }
    o.wall = parser.isSet(wall);
    for (const auto *option : { &screen, &playlist }) {
        if (parser.isSet(*option) && !o.wall) {
            return fail(QStringLiteral("--%1 needs --wall").arg(option->names().constFirst()));
        }
    }
    o.screen = parser.value(screen).toInt(&ok);
    if (!ok || o.screen < 0 || o.screen > 63) {
        return fail(QStringLiteral("--screen: '%1' is not a screen number from 0").arg(parser.value(screen)));
    }
    if (parser.isSet(playlist)) {
        QString error;
        auto pages = WallPlaylist::load(parser.value(playlist), &error);
        if (!pages) {
            return fail(QStringLiteral("--playlist: %1").arg(error));
        }
        o.playlist = std::move(*pages);
    }
    // The wall shows what its playlist says, not what the last session on this machine looked at.
    o.restoreLastView = o.restoreLastView && !o.wall;
    o.screenshot = parser.value(screenshot);
    o.screenshotTimeoutS = parser.value(screenshotTimeout).toInt(&ok);
    if (!ok || o.screenshotTimeoutS < 1 || o.screenshotTimeoutS > 3600) {
        return fail(QStringLiteral("--screenshot-timeout: '%1' is not a number of seconds from 1 to 3600")
                        .arg(parser.value(screenshotTimeout)));
    }
    return result;
}

QString applyConnectionSettings(ConsoleOptions *options, const QSettings &settings)
{
    auto setting = [&settings](const char *name) {
        return settings.value(QStringLiteral("connection/") + QLatin1String(name)).toString().trimmed();
    };
    if (options->backend.isEmpty() && !options->embeddedAsked) {
        const QString backend = setting("backend");
        if (!backend.isEmpty()) {
            if (const QString why = checkHostPort(backend); !why.isEmpty()) {
                return QStringLiteral("settings: connection/backend: %1").arg(why);
            }
            options->backend = backend;
        }
    }
    if (options->backend.isEmpty()) {
        return {}; // the embedded fleet needs no credentials
    }
    ChannelSecurity fromSettings = options->security;
    const std::pair<QString *, const char *> files[]
        = { { &fromSettings.caFile, "ca" }, { &fromSettings.certFile, "cert" }, { &fromSettings.keyFile, "key" },
              { &fromSettings.tokenFile, "tokenFile" } };
    for (const auto &[path, name] : files) {
        if (path->isEmpty()) {
            *path = setting(name);
        }
    }
    if (const QString why = checkSecurity(fromSettings, QStringLiteral("settings: connection/")); !why.isEmpty()) {
        return why;
    }
    options->security = fromSettings;
    return {};
}

QString checkConnection(const QString &backend, const ChannelSecurity &security)
{
    if (const QString why = checkHostPort(backend); !why.isEmpty()) {
        return QStringLiteral("backend: %1").arg(why);
    }
    return checkSecurity(security, QString());
}

void saveConnectionSettings(const QString &backend, const ChannelSecurity &security, QSettings *settings)
{
    settings->setValue(QStringLiteral("connection/backend"), backend);
    settings->setValue(QStringLiteral("connection/ca"), security.caFile);
    settings->setValue(QStringLiteral("connection/cert"), security.certFile);
    settings->setValue(QStringLiteral("connection/key"), security.keyFile);
    settings->setValue(QStringLiteral("connection/tokenFile"), security.tokenFile);
}

} // namespace fleetscope
