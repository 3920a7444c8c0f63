// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <optional>
#include <vector>

namespace fleetscope {

// One page of the wall's playlist: what it shows and for how long.
struct WallPage
{
    enum class Kind {
        Fleet, // the whole fleet's map
        HottestRow, // the row whose GPUs run hottest (by the 99th percentile of the page's metric) right now
        Summary, // the executive summary
        Events, // the current warnings and failures, newest first
        Problems, // the open problems, ranked by severity and by the GPUs of the jobs they hit
        Replay, // the last minutes again from the flight recorder, fast: heat fronts moving across racks
        View, // any view string (Copy view)
    };

    Kind kind = Kind::Fleet;
    int seconds = 30; // how long the page shows
    QString metric; // Fleet, HottestRow, Replay: metric id (ViewState::isIdentifier); empty = GPU temperature
    QString view; // View: the view string, one ViewState::parse reads
    int replayMinutes = 15; // Replay: how far back it starts
    double replaySpeed = 30; // Replay: times real time

    static QString kindName(Kind kind); // as in the file: "fleet", "hottest-row", ...
    friend bool operator==(const WallPage &a, const WallPage &b);
};

// The wall's pages in turn, each for its dwell time, forever. The pages come from a small JSON file
// (--playlist FILE, docs/wall-playlist-example.json):
//     { "pages": [ { "show": "fleet", "seconds": 30, "metric": "gpu_temp" },
//                  { "show": "hottest-row", "seconds": 20 }, { "show": "summary", "seconds": 20 },
//                  { "show": "events", "seconds": 15 }, { "show": "replay", "seconds": 30, "minutes": 15 } ] }
// The time comes from a clock given to it (monotonic milliseconds), so tests drive it with a clock of their own
// and tick() by hand; the console's clock is a QElapsedTimer and a timer ticks it four times a second.
//
// GUI thread only.
class WallPlaylist : public QObject
{
    Q_OBJECT
public:
    static constexpr int minSeconds = 3;
    static constexpr int maxSeconds = 3600;
    static constexpr int maxPages = 64;

    using Clock = std::function<qint64()>;

    // Clock empty: a monotonic clock of its own, ticked by a timer while running.
    explicit WallPlaylist(Clock clock = {}, QObject *parent = nullptr);

    // The pages a wall shows without --playlist: the fleet, the hottest row, the summary, the events, a replay.
    static std::vector<WallPage> defaultPages();
    // Checks everything; nullopt and *error (with the page's number and the field) for anything wrong.
    static std::optional<std::vector<WallPage>> parse(const QByteArray &json, QString *error);
    static std::optional<std::vector<WallPage>> load(const QString &file, QString *error);

    // Replaces the pages and starts again from the first (shown at once: pageChanged).
    void setPages(std::vector<WallPage> pages);
    const std::vector<WallPage> &pages() const { return m_pages; }
    int current() const { return m_current; }
    const WallPage &currentPage() const { return m_pages[static_cast<size_t>(m_current)]; }
    // How far the current page is through its dwell, 0 to 1.
    double progress() const;
    qint64 remainingMs() const;
    bool isPaused() const { return m_paused; }

public Q_SLOTS:
    // Moves on when the current page's time is up. Called by the timer, or by tests after moving their clock.
    void tick();
    void next();
    void previous();
    // Paused, the current page stays until resumed; resuming gives it its whole dwell again.
    void setPaused(bool paused);

Q_SIGNALS:
    void pageChanged(int index);

private:
    void show(int index);

    Clock m_clock;
    QTimer m_timer;
    std::vector<WallPage> m_pages;
    int m_current = 0;
    qint64 m_shownAtMs = 0;
    bool m_paused = false;
};

} // namespace fleetscope
