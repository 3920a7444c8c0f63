// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QDockWidget>

#include <cstdint>

namespace fleetscope {

class ConsoleSession;
class JobPage;
class MapPage;
class ProblemsPage;
struct Job;

// The job page's place on the desk (docs/JOBS.md): a dock beside the map, opened and raised by every entry point
// (Find "job:4711", the detail panel's "Open job page", J on a GPU, a problem's context menu, a double-click on a
// job's block by job; the window hands the first two in, the map's and the problems' it follows itself). It watches
// the job through the session's JobWatch, outlines the job's GPUs on the map (its blast radius), and hands the page
// the session's report, problem, events, alerts and topology while open. What the page's clicks do: a GPU is selected
// and shown as a search result is, a time is replayed, an incident is shown in the Problems dock with its domain
// outlined. Closing the dock (or the page's own close) stops the watch.
class JobDesk : public QDockWidget
{
    Q_OBJECT
public:
    JobDesk(ConsoleSession *session, MapPage *map, ProblemsPage *problems, QDockWidget *problemsDock,
        QWidget *parent = nullptr);

    JobPage *page() const { return m_page; }
    // Opens the page of the job with that id, or with id 0 the one of that name: watched (asked of the backend at once
    // unless it is already), the dock shown and raised, its GPUs outlined on the map when the backend lists it.
    void openJob(uint64_t jobId, const QString &name = {});
    // The job watched, 0 while none is.
    uint64_t jobId() const;

    // A job's blast radius on the map: its GPUs outlined wherever they are and the view fitted around them. Returns
    // what the status bar says of it.
    static QString outlineJob(MapPage *map, const Job &job);

Q_SIGNALS:
    void message(const QString &text, int timeoutMs);

private:
    void stopWatching();
    void showIncident(quint64 incidentId);
    void closeEvent(QCloseEvent *event) override;

    ConsoleSession *m_session;
    MapPage *m_map;
    ProblemsPage *m_problems;
    QDockWidget *m_problemsDock;
    JobPage *m_page;
};

} // namespace fleetscope
