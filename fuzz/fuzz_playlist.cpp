// SPDX-License-Identifier: Apache-2.0
// The wall's playlist file (--playlist FILE): WallPlaylist::parse on the file's bytes, what WallPlaylist::load reads
// the file with (at most 1 MiB, which load checks before). A refused file says why; an accepted one has 1 to maxPages
// pages, each with its fields in the ranges the parser promises and only the fields its kind uses, a metric the wall
// can put in a view (it opens each map page as a ViewState with the page's metric) and, on a view page, a view string
// that reads. The pages are then shown by a WallPlaylist on a clock the input moves: the current page stays one of
// them and its progress within its dwell.
#include "model/viewstate.h"
#include "model/wallplaylist.h"

#include "fuzz/fuzzinput.h"

#include <QByteArray>
#include <QString>

#include <cmath>

namespace {

using fleetscope::ViewState;
using fleetscope::WallPage;
using fleetscope::WallPlaylist;

void checkPage(const WallPage &page)
{
    if (WallPage::kindName(page.kind).isEmpty()) {
        __builtin_trap();
    }
    if (page.seconds < WallPlaylist::minSeconds || page.seconds > WallPlaylist::maxSeconds) {
        __builtin_trap();
    }
    if (page.replayMinutes < 1 || page.replayMinutes > 1440 || !(page.replaySpeed >= 1 && page.replaySpeed <= 600)) {
        __builtin_trap();
    }
    const bool takesMetric = page.kind == WallPage::Kind::Fleet || page.kind == WallPage::Kind::HottestRow
        || page.kind == WallPage::Kind::Replay;
    if (!page.metric.isEmpty()) {
        if (!takesMetric) {
            __builtin_trap();
        }
        ViewState view; // as WallWindow opens a fleet, hottest-row or replay page
        view.metric = page.metric;
        if (!view.validate().isEmpty()) {
            __builtin_trap(); // a metric no view can carry
        }
    }
    if ((page.kind == WallPage::Kind::View) == page.view.isEmpty()) {
        __builtin_trap(); // a view page without its view, or a view on a page of another kind
    }
    if (page.kind == WallPage::Kind::View && !ViewState::parse(page.view)) {
        __builtin_trap(); // accepted, but the wall cannot show it
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray json = QByteArray::fromRawData(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    QString error;
    const auto pages = WallPlaylist::parse(json, &error);
    if (pages.has_value() != error.isEmpty()) {
        __builtin_trap(); // refused without a reason, or accepted with one
    }
    if (!pages) {
        return 0;
    }
    if (pages->empty() || pages->size() > static_cast<size_t>(WallPlaylist::maxPages)) {
        __builtin_trap();
    }
    for (const WallPage &page : *pages) {
        checkPage(page);
    }

    // Shown in turn on a clock the input's bytes move, with next, previous and pause as the wall's keys call them.
    qint64 now = 0;
    WallPlaylist playlist([&now] { return now; });
    playlist.setPages(*pages);
    const int count = static_cast<int>(pages->size());
    for (size_t i = 0; i < size && i < 256; ++i) {
        now += static_cast<qint64>(data[i]) * 997;
        switch (data[i] & 7U) {
        case 0:
            playlist.next();
            break;
        case 1:
            playlist.previous();
            break;
        case 2:
            playlist.setPaused(!playlist.isPaused());
            break;
        default:
            playlist.tick();
            break;
        }
        const double progress = playlist.progress();
        const qint64 remaining = playlist.remainingMs();
        if (playlist.current() < 0 || playlist.current() >= count || !(progress >= 0 && progress <= 1) || remaining < 0
            || remaining > playlist.currentPage().seconds * qint64(1000)) {
            __builtin_trap();
        }
    }
    fleetscope::fuzz::sink = static_cast<size_t>(playlist.current());
    return 0;
}
