// SPDX-License-Identifier: Apache-2.0
// Seeds for what a person writes for the console: view strings (Copy view) and the wall's playlist file.
#include "fuzz/seeds.h"
#include "model/viewstate.h"
#include "model/wallplaylist.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <string>
#include <vector>

namespace {

using fleetscope::fuzz::seeds::readText;
using fleetscope::fuzz::seeds::sourceDir;
using fleetscope::fuzz::seeds::write;

// --- viewstring: the text, as ViewState::toString() writes it (Copy view) and as a person pastes it.

std::vector<fleetscope::ViewState> sampleViews()
{
    using fleetscope::ViewState;
    ViewState incident; // the header's example
    incident.place = QStringLiteral("rack:37");
    incident.fleetGpus = 20000;
    incident.selectedGpu = 3301;
    incident.metric = QStringLiteral("gpu_temp");
    incident.live = false;
    incident.timeMs = 1714533120000; // 2024-05-01T03:12:00Z
    incident.arrangement = QStringLiteral("compact");
    incident.zoom = 4.5;
    incident.centreX = 812.5;
    incident.centreY = 233;
    ViewState everything = incident;
    everything.place = QStringLiteral("node:131071");
    everything.fleetGpus = 1048576;
    everything.selectedGpu = 1048575;
    everything.metric = QStringLiteral("power_usage");
    everything.colourMap = QStringLiteral("coolwarm");
    everything.timeMs = 1714533120123;
    everything.arrangement = QStringLiteral("jobs");
    everything.zoom = 0.1;
    everything.centreX = -12.345678901234567;
    everything.centreY = 1.0 / 3.0;
    everything.range = QStringLiteral("auto");
    everything.changeWindowS = 300;
    ViewState row;
    row.place = QStringLiteral("row:0");
    row.metric = QStringLiteral("gpu_util");
    row.range = QStringLiteral("auto");
    row.changeWindowS = 60;
    return { ViewState {}, incident, everything, row };
}

void viewStringSeeds()
{
    const char *names[] = { "defaults", "incident", "every-field", "live-row" };
    const auto views = sampleViews();
    for (size_t i = 0; i < views.size(); ++i) {
        write("viewstring", names[i], views[i].toString().toStdString());
    }
    // Pasted: blanks around it, keys in another order, t=live.
    write("viewstring", "pasted", "  fs1;a=compact;t=live;z=2@100.5,-3e2;p=gpu:12\n");
}

// --- playlist: the file, as docs/wall-playlist-example.json shows it, and pages written by Qt's JSON writer.

std::string playlistJson(const std::vector<fleetscope::WallPage> &pages)
{
    using fleetscope::WallPage;
    const WallPage defaults;
    QJsonArray array;
    for (const WallPage &page : pages) {
        QJsonObject o;
        o.insert(QStringLiteral("show"), WallPage::kindName(page.kind));
        o.insert(QStringLiteral("seconds"), page.seconds);
        if (!page.metric.isEmpty()) {
            o.insert(QStringLiteral("metric"), page.metric);
        }
        if (page.kind == WallPage::Kind::Replay) {
            o.insert(QStringLiteral("minutes"), page.replayMinutes);
            o.insert(QStringLiteral("speed"), page.replaySpeed);
        }
        if (page.kind == WallPage::Kind::View) {
            o.insert(QStringLiteral("view"), page.view);
        }
        array.append(o);
    }
    QJsonObject root;
    root.insert(QStringLiteral("pages"), array);
    return QJsonDocument(root).toJson(QJsonDocument::Indented).toStdString();
}

void playlistSeeds()
{
    using fleetscope::WallPage;
    write("playlist", "example", readText(sourceDir() / "docs" / "wall-playlist-example.json"));
    write("playlist", "defaults", playlistJson(fleetscope::WallPlaylist::defaultPages()));
    std::vector<WallPage> every(7);
    const WallPage::Kind kinds[] = { WallPage::Kind::Fleet, WallPage::Kind::HottestRow, WallPage::Kind::Summary,
        WallPage::Kind::Events, WallPage::Kind::Problems, WallPage::Kind::Replay, WallPage::Kind::View };
    for (size_t i = 0; i < every.size(); ++i) {
        every[i].kind = kinds[i];
        every[i].seconds = 3 + static_cast<int>(i) * 7;
    }
    every[0].metric = QStringLiteral("power_usage");
    every[1].metric = QStringLiteral("gpu_temp");
    every[5].metric = QStringLiteral("gpu_util");
    every[5].replayMinutes = 5;
    every[5].replaySpeed = 60;
    every[6].view = sampleViews()[1].toString();
    write("playlist", "every-kind", playlistJson(every));
    std::vector<WallPage> views(2);
    for (size_t i = 0; i < views.size(); ++i) {
        views[i].kind = WallPage::Kind::View;
        views[i].view = sampleViews()[i + 2].toString();
    }
    write("playlist", "views", playlistJson(views));
}

} // namespace

namespace fleetscope::fuzz::seeds {

void textSeeds()
{
    viewStringSeeds();
    playlistSeeds();
}

} // namespace fleetscope::fuzz::seeds
