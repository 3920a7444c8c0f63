// SPDX-License-Identifier: Apache-2.0
#include "app/pages/jobdesk.h"

#include "app/consolesession.h"
#include "app/pages/mappage.h"
#include "app/pages/problemspage.h"
#include "app/session/jobwatch.h"
#include "model/navigation.h"
#include "widgets/heatmap/heatmapview.h"
#include "widgets/job/jobpage.h"

#include <QAction>
#include <QCloseEvent>
#include <QDateTime>

#include <algorithm>

namespace fleetscope {

namespace {
const Job *listedJob(const JobsPtr &jobs, uint64_t id, const QString &name)
{
    if (!jobs) {
        return nullptr;
    }
    // By id; by name, the running one of that name first (a name is reused when a job is submitted again).
    const Job *found = nullptr;
    for (const Job &job : jobs->jobs) {
        const bool named = id != 0 ? job.id == id : job.name == name;
        if (named && (found == nullptr || (job.isRunning() && !found->isRunning()))) {
            found = &job;
        }
    }
    return found;
}
} // namespace

JobDesk::JobDesk(
    ConsoleSession *session, MapPage *map, ProblemsPage *problems, QDockWidget *problemsDock, QWidget *parent)
    : QDockWidget(tr("Job"), parent)
    , m_session(session)
    , m_map(map)
    , m_problems(problems)
    , m_problemsDock(problemsDock)
    , m_page(new JobPage(this))
{
    setObjectName(QStringLiteral("job"));
    setWidget(m_page);
    JobWatch *watch = session->jobWatch();
    connect(watch, &JobWatch::reportChanged, this, [this](const JobReportPtr &report) {
        m_page->setReport(report);
        if (report) {
            setWindowTitle(tr("Job %1 #%2").arg(report->job.name).arg(report->job.id));
        }
    });
    connect(watch, &JobWatch::problemChanged, m_page, &JobPage::setProblem);
    connect(session, &ConsoleSession::topologyChanged, m_page, &JobPage::setTopology);
    connect(session, &ConsoleSession::fleetEventsChanged, this, [this] {
        if (isVisible() && m_session->jobWatch()->isWatching()) {
            m_page->setEvents(m_session->fleetEvents());
        }
    });
    connect(session->alerts(), &FleetAlerts::boardChanged, this, [this] {
        if (isVisible() && m_session->jobWatch()->isWatching()) {
            m_page->setAlerts(m_session->alerts()->board());
        }
    });

    // The page's clicks.
    connect(m_page, &JobPage::gpuActivated, this, [this](uint32_t gpu) {
        const TopologyPtr topology = m_session->topology();
        if (!topology || gpu >= topology->gpuCount) {
            return;
        }
        // A report checked against another shape of the fleet names a GPU of that shape, not this one's (the page
        // stores none then; checked here too, as the page's signal may outlive a topology change).
        const JobReportPtr report = m_page->report();
        if (report && report->topologyGeneration != 0 && topology->generation != 0
            && report->topologyGeneration != topology->generation) {
            return;
        }
        m_map->navigation()->goTo(Place::gpu(gpu)); // the map selects it, the detail panel shows it
        m_map->heatmap()->setFocus();
    });
    connect(m_page, &JobPage::timeActivated, this, [this](qint64 timeMs) {
        m_session->goToTime(timeMs);
        Q_EMIT message(tr("Replaying the fleet at %1 (Ctrl+L: live)")
                           .arg(QDateTime::fromMSecsSinceEpoch(timeMs).toString(QStringLiteral("HH:mm:ss"))),
            10000);
    });
    connect(m_page, &JobPage::incidentActivated, this, &JobDesk::showIncident);
    connect(m_page, &JobPage::closeRequested, this, &QDockWidget::close);
    // Hidden from the View menu: as good as closed.
    connect(toggleViewAction(), &QAction::triggered, this, [this](bool shown) {
        if (!shown) {
            stopWatching();
        }
    });

    // The entry points this dock follows itself: J on a GPU and a job's block by job (the map), a problem's context
    // menu.
    connect(m_map->heatmap(), &HeatmapView::jobPageRequested, this, [this](quint64 id) { openJob(id); });
    connect(m_problems, &ProblemsPage::jobPageRequested, this, [this](quint64 id) { openJob(id); });
    m_page->setTopology(session->topology());
}

uint64_t JobDesk::jobId() const
{
    const JobWatch *watch = m_session->jobWatch();
    return watch->isWatching() ? watch->jobId() : 0;
}

void JobDesk::openJob(uint64_t jobId, const QString &name)
{
    if (jobId == 0 && name.isEmpty()) {
        return;
    }
    JobWatch *watch = m_session->jobWatch();
    const JobsPtr jobs = m_session->jobs();
    const Job *job = listedJob(jobs, jobId, name);
    // By name, the listing's id: the page then follows that job even if another of the name is submitted later.
    const uint64_t id = jobId != 0 ? jobId : job != nullptr ? job->id : 0;
    const bool same = watch->isWatching() && (id != 0 ? watch->jobId() == id : watch->jobName() == name);
    if (!same) {
        watch->watch(id, job != nullptr ? job->name : name);
    }
    m_page->setTopology(m_session->topology());
    m_page->setReport(watch->report());
    m_page->setProblem(watch->problem());
    m_page->setEvents(m_session->fleetEvents());
    m_page->setAlerts(m_session->alerts()->board());
    setWindowTitle(job != nullptr ? tr("Job %1 #%2").arg(job->name).arg(job->id)
            : id != 0             ? tr("Job #%1").arg(id)
                                  : tr("Job %1").arg(name));
    show();
    raise();
    if (job != nullptr && !job->gpus.empty()) {
        Q_EMIT message(outlineJob(m_map, *job), 15000);
    } else {
        Q_EMIT message(tr("%1 is not among the jobs the backend lists now: asking it for the job's account")
                           .arg(id != 0 ? tr("Job #%1").arg(id) : name),
            10000);
    }
}

QString JobDesk::outlineJob(MapPage *map, const Job &job)
{
    HeatmapView *view = map->heatmap();
    view->setMarkedGpus(job.gpus);
    QRect cells;
    for (uint32_t gpu : job.gpus) {
        cells |= view->cellsOf(gpu, 1);
    }
    view->zoomToCells(cells);
    return tr("Job %1 #%2 (%3): %L4 GPUs outlined%5")
        .arg(job.name)
        .arg(job.id)
        .arg(job.owner)
        .arg(job.gpus.size())
        .arg(job.isRunning() ? QString() : tr(", ended"));
}

void JobDesk::showIncident(quint64 incidentId)
{
    m_problemsDock->show();
    m_problemsDock->raise();
    if (!m_problems->showIncident(incidentId)) {
        Q_EMIT message(
            tr("Incident %1 is no longer open: the job's timeline keeps what it cost").arg(incidentId), 10000);
    }
}

void JobDesk::stopWatching()
{
    m_session->jobWatch()->stop();
}

void JobDesk::closeEvent(QCloseEvent *event)
{
    stopWatching();
    QDockWidget::closeEvent(event);
}

} // namespace fleetscope
