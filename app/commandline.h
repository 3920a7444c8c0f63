// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/channelsecurity.h"
#include "model/wallplaylist.h"

#include <QSize>
#include <QString>
#include <QStringList>

class QSettings;

namespace fleetscope {

struct ConsoleOptions
{
    QString backend; // HOST:PORT; empty = start the embedded simulator backend
    ChannelSecurity security; // --ca, --cert, --key, --token-file: paths, never the secrets
    bool embeddedAsked = false; // an option of the embedded fleet was given (--gpus, --seed, --scenario, ...)
    int gpus = 10240; // size of the embedded fleet
    quint64 seed = 1;
    QStringList simulatorArguments; // --scenario, --hardware, --speed, --history, passed to the embedded backend
    QString metric; // initial metric id; empty = the backend's first default
    QString screenshot; // save a PNG once a live frame is drawn, then exit
    int screenshotTimeoutS = 30;
    bool animated = true;
    QString arrangement = QStringLiteral("floor"); // floor, compact, jobs or fabric
    QString range = QStringLiteral("fixed"); // fixed (the metric's own) or auto (1st to 99th percentile)
    QSize windowSize { 1280, 800 }; // logical pixels
    int changeWindowS = 0; // > 0: show the metric's rate of change over this window instead of its value
    QString view; // a view string (--view), checked
    int recordMinutes = 60; // how far back the flight recorder keeps frames
    bool restoreLastView = true; // no view given on the command line: start where the last session ended
    double pricePerGpuHour = 2.50; // the executive summary's cost of idle GPU-hours, USD
    bool wall = false; // --wall: full screen wall display cycling a playlist
    int screen = 0; // --screen: which screen the wall fills
    std::vector<WallPage> playlist = WallPlaylist::defaultPages(); // --playlist FILE, checked
};

struct CommandLine
{
    ConsoleOptions options;
    int exitCode = -1; // >= 0: exit now with this code (help, version, bad option)
    QString message; // printed before exiting: to stdout for code 0, stderr otherwise
};

CommandLine parseCommandLine(const QStringList &arguments);

// The connection from the settings ([connection] backend, ca, cert, key, tokenFile), for what the command line left
// unsaid, so that a wall starts with no command line: the backend when none is given and no option of the embedded
// fleet asks for it; each credentials file when not given. Empty when all is well, else what is wrong with a value.
QString applyConnectionSettings(ConsoleOptions *options, const QSettings &settings);
// Why a backend address and credentials files cannot be used (naming the field), or nothing.
QString checkConnection(const QString &backend, const ChannelSecurity &security);
// Saves them as the settings applyConnectionSettings reads.
void saveConnectionSettings(const QString &backend, const ChannelSecurity &security, QSettings *settings);

} // namespace fleetscope
