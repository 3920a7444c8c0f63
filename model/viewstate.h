// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>

#include <optional>

namespace fleetscope {

// Everything that makes a view, as one short text another engineer can open: "Copy view" puts it on the clipboard,
// `fleetscope --view STRING` opens it, and the console keeps the last one in QSettings. The text is versioned
// key=value pairs, each left out while it has its default, using only characters a URL carries unescaped:
//     fs1;n=20000;p=rack:37;g=3301;m=gpu_temp;t=2024-05-01T03:12:00Z;z=4.5@812.5,233;a=compact
// A view string comes from outside (a chat message, a command line), so parse() checks every field. Places, GPUs and
// the zoom's centre are dense indexes into one fleet's topology: `n`, the fleet's GPU count, lets a console opening
// the view on another fleet (grown, shrunk, another --gpus) leave them out rather than show other GPUs.
struct ViewState
{
    static constexpr int maxTextLength = 1024;
    // The ranges parse() promises and validate() checks: what the map can show, far inside what its arithmetic holds.
    // Zoom is a cell's size in logical pixels (the camera clamps it further); the centre is in layout cells, and no
    // layout comes near 2^30 cells a side, so a centre and a screen's worth of cells around it stay within an int.
    static constexpr double maxZoom = 65536;
    static constexpr double maxCentre = 1 << 30;
    static constexpr int maxIdLength = 64; // metric ids and colour map names: the longest view stays under 400 chars
    static constexpr qint64 maxTimeMs = 253402300799999; // 9999-12-31T23:59:59.999Z, the last four-digit year
    static constexpr qint64 maxFleetGpus = qint64(1) << 31; // far over what a topology may hold (wire limits)

    qint64 fleetGpus = 0; // the GPUs of the fleet that place, selectedGpu and the centre index; 0 = not said
    QString place = QStringLiteral("fleet"); // "fleet", or row/rack/node/gpu ':' dense index, e.g. "rack:37"
    int selectedGpu = -1; // dense index, -1 = none
    QString metric; // metric id, empty = the console's default
    QString colourMap; // empty = as the metric suggests
    bool live = true;
    qint64 timeMs = 0; // Unix epoch ms of the sample shown, when not live
    QString arrangement = QStringLiteral("floor"); // floor, compact, jobs or fabric
    double zoom = 0; // 0 = fitted; else the zoom factor the map uses, at most maxZoom
    double centreX = 0; // layout cell coordinates of the view's centre (when zoomed), within +-maxCentre
    double centreY = 0;
    QString range = QStringLiteral("fixed"); // fixed (the metric's own) or auto
    int changeWindowS = 0; // > 0: the rate of change over this window instead of the value

    QString toString() const;
    // Nullopt, and *error (when given) saying what is wrong, for anything toString() cannot have written.
    static std::optional<ViewState> parse(const QString &text, QString *error = nullptr);
    // Empty when the state is one toString() writes and parse() reads back; else what is wrong with it.
    QString validate() const;

    // A metric id or colour map name a view can carry: 1 to maxIdLength letters, digits, '_', '-' and '.'.
    static bool isIdentifier(const QString &text);

    bool operator==(const ViewState &other) const;
    bool operator!=(const ViewState &other) const { return !(*this == other); }
};

} // namespace fleetscope
