// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "app/healthstrip.h"
#include "model/fleetmodel.h"
#include "model/wallplaylist.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <vector>

class QStackedWidget;

namespace fleetscope {

class ConsoleSession;
class EventsBoard;
class ProblemsBoard;
class ProblemsPage;
class HeatmapView;
class JobPage;
class MapPage;
class Navigation;
class SummaryPage;
class SummaryView;
class WallHeader;
struct ViewState;

// `fleetscope --wall`: the console as a NOC wall display, a window of its own over a ConsoleSession. Frameless full
// screen on one screen, no cursor, type sized for reading across a room, a playlist of pages (the fleet, the
// hottest row, the executive summary, the events, a fast replay, a job's own page) cycling on its own, and a header
// with the clock and the age of the data that turns red when the data is stale. Nothing opens a dialog: every problem
// is a banner in the header. While the backend is away the last known state stays drawn with the stale pattern, the
// playlist keeps cycling and replays come from the flight recorder; when it returns everything resumes on its own.
class WallWindow : public QWidget
{
    Q_OBJECT
public:
    // clock: monotonic ms for the playlist (tests drive it); wallClock: epoch ms for the clock and data ages.
    WallWindow(ConsoleSession *session, std::vector<WallPage> pages, bool animated, WallPlaylist::Clock clock = {},
        std::function<qint64()> wallClock = {}, QWidget *parent = nullptr);

    // Frameless and full screen on screen `screen` (0 = the first); a screen that does not exist is reported in the
    // banner and the primary one used. Returns false in that case.
    bool showOnScreen(int screen);

    ConsoleSession *session() const { return m_session; }
    WallPlaylist *playlist() { return &m_playlist; }
    WallHeader *header() const { return m_header; }
    EventsBoard *events() const { return m_events; }
    ProblemsBoard *problems() const { return m_problems; }
    ProblemsPage *problemsPage() const { return m_problemsPage; }
    QStackedWidget *stack() const { return m_stack; }
    MapPage *mapPage() const { return m_map; }
    HeatmapView *heatmap() const;
    Navigation *navigation() const;
    SummaryView *summary() const { return m_summary; }
    SummaryPage *summaryPage() const { return m_summaryPage; }
    // The job page kind's page, in wall mode.
    JobPage *jobPage() const { return m_jobPage; }
    // Updates the header, banner, map notes and events now (also done every second and on each new frame).
    void refresh();
    // A problem for the banner, shown for half a minute unless a newer one replaces it.
    void report(const QString &message);
    // The window as on screen, the map's labels included.
    QPixmap grabWithMap();

private:
    // The problems page, as of the wall clock.
    void onPageChanged(int index);
    void showPage(int index);
    void applyFonts(int screenHeight);
    void showMapPage(const WallPage &page, bool hottest);
    void showReplay(const WallPage &page);
    void showJobPage(const WallPage &page);
    void openMapView(const ViewState &view);
    QString metricLabel(const QString &id) const;
    QString metricOrDefault(const WallPage &page, int index);
    void refreshMapNotes(bool stale);
    void refreshHealth();

    ConsoleSession *m_session;
    WallPlaylist m_playlist;
    std::function<qint64()> m_wallClock;
    WallHeader *m_header = nullptr;
    QStackedWidget *m_stack = nullptr;
    MapPage *m_map = nullptr;
    SummaryPage *m_summaryPage = nullptr;
    SummaryView *m_summary = nullptr; // its view
    EventsBoard *m_events = nullptr;
    ProblemsPage *m_problemsPage = nullptr;
    ProblemsBoard *m_problems = nullptr; // its board
    JobPage *m_jobPage = nullptr;
    QTimer m_refreshTimer;
    QString m_problem;
    QElapsedTimer m_problemClock; // since m_problem was reported
    bool m_refreshQueued = false;
    bool m_reshowing = false; // showPage called again for a page that was waiting
    int m_screenIndex = 0;
    bool m_screensFollowed = false;
    bool m_cursorHidden = false;
    QString m_title; // the page's title, without what refresh() adds
    bool m_waiting = false; // the page lacks what it needs (metrics, a frame, recorded frames): shown again
    FramePtr m_healthFrame; // the frame the health counts below are of
    HealthStrip::Counts m_healthCounts {};
};

} // namespace fleetscope
