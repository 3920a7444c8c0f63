// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/jobtracker.h"
#include "model/fleetsearch.h"

#include <QObject>

namespace fleetscope {

class ConsoleSession;
class MapPage;
class SearchBox;

// Find on the desk: the fleet's search index (hostnames, serials, UUIDs, jobs, racks, rows), built on a worker for
// each topology (latest wins), and what a chosen result does: open a place, or a job's page (jobChosen; the job desk
// outlines its GPUs wherever they are and fits the view around them, its blast radius).
class DeskSearch : public QObject
{
    Q_OBJECT
public:
    DeskSearch(ConsoleSession *session, MapPage *map, SearchBox *box);

Q_SIGNALS:
    void message(const QString &text, int timeoutMs);
    // A job was found ("job:4711", "job:train-llm-192", its name): its page is to open.
    void jobChosen(quint64 jobId);

private:
    void rebuild();
    void open(const SearchResult &result);

    ConsoleSession *m_session;
    MapPage *m_map;
    SearchBox *m_box;
    FleetSearch m_search;
    JobTracker m_index; // builds the index, latest topology wins; last, so that it goes first
};

} // namespace fleetscope
