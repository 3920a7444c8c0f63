// SPDX-License-Identifier: Apache-2.0
#include "app/desksearch.h"

#include "app/consolesession.h"
#include "app/pages/mappage.h"
#include "model/navigation.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/search/searchbox.h"

#include <algorithm>

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
    // A job's blast radius: its GPUs outlined wherever they are, and the view fitted around them.
    const JobsPtr jobs = m_session->jobs();
    const Job *job = nullptr;
    if (jobs) {
        const auto found
            = std::find_if(jobs->jobs.begin(), jobs->jobs.end(), [&result](const Job &j) { return j.id == result.id; });
        job = found != jobs->jobs.end() ? &*found : nullptr;
    }
    if (job == nullptr || job->gpus.empty()) {
        Q_EMIT message(tr("Job %1 is no longer listed by the backend").arg(result.id), 10000);
    } else {
        map->setMarkedGpus(job->gpus);
        QRect cells;
        for (uint32_t gpu : job->gpus) {
            cells |= map->cellsOf(gpu, 1);
        }
        map->zoomToCells(cells);
        Q_EMIT message(tr("Job %1 #%2 (%3): %L4 GPUs outlined%5")
                           .arg(job->name)
                           .arg(job->id)
                           .arg(job->owner)
                           .arg(job->gpus.size())
                           .arg(job->isRunning() ? QString() : tr(", ended")),
            15000);
    }
    map->setFocus();
}

} // namespace fleetscope
