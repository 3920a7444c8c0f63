// SPDX-License-Identifier: Apache-2.0
#include "app/desksearch.h"

#include "app/consolesession.h"
#include "app/pages/mappage.h"
#include "model/navigation.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/search/searchbox.h"

namespace fleetscope {

DeskSearch::DeskSearch(ConsoleSession *session, MapPage *map, SearchBox *box)
    : QObject(box)
    , m_session(session)
    , m_map(map)
    , m_box(box)
{
    m_box->setEnabled(false); // until the fleet's index is built
    connect(session, &ConsoleSession::topologyChanged, this, [this] {
        m_box->setEnabled(false);
        rebuild();
    });
    connect(session, &ConsoleSession::jobsChanged, this, [this] {
        if (m_search.topology()) {
            m_search.setJobs(m_session->jobs());
            m_box->setSearch(m_search);
        }
    });
    connect(m_box, &SearchBox::resultChosen, this, &DeskSearch::open);
    if (session->topology()) {
        rebuild();
    }
}

void DeskSearch::rebuild()
{
    const TopologyPtr topology = m_session->topology();
    if (!topology) {
        return;
    }
    // At a million GPUs the index takes about half a second: built on the desk's worker thread, below the GUI thread
    // (it used to take Qt's global pool, whose threads run at the GUI thread's priority and took its core while the
    // fleet's first frame was painted), latest wins.
    const JobsPtr jobs = m_session->jobs();
    m_index.start([topology, jobs](const JobTracker::Ticket &) { return FleetSearch(topology, jobs); },
        [this](FleetSearch search) {
            search.setJobs(m_session->jobs()); // the newest, which may have come meanwhile
            m_search = search;
            m_box->setSearch(std::move(search));
            m_box->setEnabled(true);
        });
}

void DeskSearch::open(const SearchResult &result)
{
    Navigation *nav = m_map->navigation();
    HeatmapView *map = m_map->heatmap();
    map->setMarkedGpus({});
    if (const std::optional<Place> place = result.place()) {
        nav->goTo(*place);
        map->setFocus();
        return;
    }
    // A job: its page, which outlines its GPUs (its blast radius) and fits the view around them.
    Q_EMIT jobChosen(result.id);
    map->setFocus();
}

} // namespace fleetscope
