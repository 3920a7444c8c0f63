// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

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
        Job, // one job's own page (docs/JOBS.md): its stragglers, timeline and goodput
    };

    Kind kind = Kind::Fleet;
    int seconds = 30; // how long the page shows
    QString metric; // Fleet, HottestRow, Replay: metric id (ViewState::isIdentifier); empty = GPU temperature
    QString view; // View: the view string, one ViewState::parse reads
    int replayMinutes = 15; // Replay: how far back it starts
    double replaySpeed = 30; // Replay: times real time
    // Job: the job by name ("train-llm-192") or id ("4711"); empty = the running job with the lowest goodput.
    QString job;

    static QString kindName(Kind kind); // as in the file: "fleet", "hottest-row", ...
    friend bool operator==(const WallPage &a, const WallPage &b);
};

// The wall's pages in turn, each for its dwell time, forever. The pages come from a small JSON file
// (--playlist FILE, docs/wall-playlist-example.json):
//     { "pages": [ { "show": "fleet", "seconds": 30, "metric": "gpu_temp" },
//                  { "show": "hottest-row", "seconds": 20 }, { "show": "summary", "seconds": 20 },
//                  { "show": "events", "seconds": 15 }, { "show": "replay", "seconds": 30, "minutes": 15 },
//                  { "show": "job", "seconds": 30, "job": "train-llm-192" } ] }
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
    // A job page's "job": a name of at most this many characters, or an id up to 2^53 - 1 (exact in JSON's numbers).
    static constexpr int maxJobText = 256;
    static constexpr qint64 maxJobId = (qint64(1) << 53) - 1;

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

// The job a job page shows among those listed: the one its "job" names (an id's digits, else a name; a running one
// before an ended one, then the latest started, as a name is reused when a job is submitted again), or without one
// the running job with the lowest goodput, ties to the one with the most stragglers (jobs the backend gives no goodput
// for come after those it does, by their stragglers, then their GPUs). Null when none fits.
const Job *jobForWallPage(const WallPage &page, const JobList &jobs);

} // namespace fleetscope
