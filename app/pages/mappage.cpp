// SPDX-License-Identifier: Apache-2.0
#include "app/pages/mappage.h"

#include "app/consolesession.h"
#include "model/navigation.h"
#include "model/replaycontroller.h"
#include "widgets/heatmap/colorlegend.h"
#include "widgets/heatmap/heatmapview.h"

#include <QDateTime>
#include <QVBoxLayout>

#include <utility>

namespace fleetscope {

namespace {
// The arrangements as view strings and the command line name them; the first is the default.
constexpr std::pair<HeatmapView::Arrangement, const char *> arrangementNames[] = {
    { HeatmapView::Arrangement::FloorPlan, "floor" },
    { HeatmapView::Arrangement::Compact, "compact" },
    { HeatmapView::Arrangement::ByJob, "jobs" },
    { HeatmapView::Arrangement::ByFabric, "fabric" },
};

HeatmapView::Arrangement arrangementOf(const QString &text)
{
    for (const auto &[arrangement, name] : arrangementNames) {
        if (text == QLatin1String(name)) {
            return arrangement;
        }
    }
    return arrangementNames[0].first;
}

QString textOf(HeatmapView::Arrangement arrangement)
{
    for (const auto &[candidate, name] : arrangementNames) {
        if (candidate == arrangement) {
            return QString::fromLatin1(name);
        }
    }
    return QString::fromLatin1(arrangementNames[0].second);
}
} // namespace

MapPage::MapPage(ConsoleSession *session, bool animated, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
{
    m_layout = new QVBoxLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_view = new HeatmapView(this);
    m_view->setAnimated(animated);
    m_legend = new ColorLegend(this);
    m_layout->addWidget(m_view, 1);
    m_layout->addWidget(m_legend);
    m_navigation = new Navigation(this);

    connect(session, &ConsoleSession::shownChanged, this, &MapPage::drawShown);
    connect(session, &ConsoleSession::driftChanged, this, &MapPage::markLayer);
    connect(session, &ConsoleSession::alertLayerChanged, this, [this] {
        if (m_session->shownMetric().id == QLatin1String(AlertLayer::metricId)) {
            markLayer();
        }
    });
    connect(session, &ConsoleSession::topologyChanged, this, [this](const TopologyPtr &topology) {
        m_view->setTopology(topology);
        m_navigation->setTopology(topology);
        // What shows places of this map (the desk's rollups and detail) takes the fleet before a view's place and
        // selection go to it.
        Q_EMIT topologyChanged(topology);
        applyPendingView();
    });
    connect(session, &ConsoleSession::jobsChanged, m_view, &HeatmapView::setJobs);
    connect(m_navigation, &Navigation::placeChanged, this, &MapPage::onPlaceChanged);
    // Past 100k GPUs a layout is built on a worker: the place and a pending view are placed on the new one.
    connect(m_view, &HeatmapView::layoutReady, this, [this] {
        if (m_pendingView) {
            applyPendingView();
        } else if (m_navigation->topology()) {
            onPlaceChanged(m_navigation->current());
        }
    });
    connect(m_view, &HeatmapView::upRequested, m_navigation, &Navigation::up);
    connect(m_view, &HeatmapView::gpuActivated, this, [this](int gpu) { openTowards(static_cast<uint32_t>(gpu)); });
    connect(m_view, &HeatmapView::gpuSelected, this, [this](int gpu) {
        Q_EMIT gpuChosen(gpu);
        if (gpu >= 0) {
            openTowards(static_cast<uint32_t>(gpu));
        }
    });
    // A session already running (a second window over it) shows what it has at once.
    if (const TopologyPtr topology = session->topology()) {
        m_view->setTopology(topology);
        m_navigation->setTopology(topology);
        m_view->setJobs(session->jobs());
    }
    if (!session->shownMetric().id.isEmpty()) {
        drawShown(session->shown(), ShownState::Metric | ShownState::Frame);
    }
}

void MapPage::drawShown(const ShownState &shown, ShownState::Changes changes)
{
    if (changes & ShownState::Metric) { // a new metric resets the map's transition
        m_view->setMetric(shown.metric);
        m_legend->setMetric(shown.metric, m_view->colorMap());
        markLayer();
    } else if (changes & ShownState::Range) { // the range alone keeps it
        m_view->setRange(shown.metric.rangeMin, shown.metric.rangeMax);
        m_legend->setMetric(shown.metric, m_view->colorMap());
    }
    if ((changes & ShownState::Frame) && shown.frame) {
        m_view->setFrame(shown.frame);
    }
}

void MapPage::markLayer()
{
    // The version layer outlines the GPUs off their job's or rack's versions, the alert layer those with a firing
    // alert (a silenced one is being handled); leaving a layer takes its outlines away (and only its own: a search's
    // or a problem's stay).
    const QString shown = m_session->shownMetric().id;
    const bool drift = shown == QLatin1String(VersionDrift::metricId);
    const bool alerts = shown == QLatin1String(AlertLayer::metricId);
    if (drift) {
        m_view->setMarkedGpus(m_session->versionDrift().flaggedGpus);
    } else if (alerts) {
        m_view->setMarkedGpus(m_session->alertLayer().firingGpus);
    } else if (m_markingLayer) {
        m_view->setMarkedGpus({});
    }
    m_markingLayer = drift || alerts;
}

void MapPage::openTowards(uint32_t gpu)
{
    const TopologyPtr topology = m_navigation->topology();
    const Place current = m_navigation->current();
    if (!topology || gpu >= topology->gpuCount) {
        return;
    }
    if (current.gpuRange(*topology).contains(gpu)) {
        m_navigation->downTowards(gpu);
    } else {
        m_navigation->goTo(placeOfGpu(*topology, gpu, current.level));
    }
}

void MapPage::onPlaceChanged(Place place)
{
    const TopologyPtr topology = m_navigation->topology();
    if (!topology || m_view->isLayoutPending()) {
        return; // placed once the layout is ready
    }
    const GpuRange range = place.gpuRange(*topology);
    const bool fleet = place.level == Place::Level::Fleet;
    m_view->zoomToCells(fleet ? QRect() : m_view->cellsOf(range.first, range.count));
    // The place in focus; the rest of the fleet dimmed around it.
    m_view->setFocusRange(fleet ? 0 : range.first, fleet ? 0 : range.count);
    if (place.level == Place::Level::Gpu) {
        m_view->setSelectedGpu(static_cast<int>(place.index));
    }
}

bool MapPage::showDataNote(bool stale, const QString &staleNote, const QString &replayHint)
{
    const FramePtr frame = m_view->frame();
    const ReplayController *replay = m_session->replay();
    if (frame && (m_session->isComparing() || replay->mode() != ReplayController::Mode::Live)) {
        m_view->setStaleNote({});
        const QString when
            = QDateTime::fromMSecsSinceEpoch(frame->sampleTimeMs).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        m_view->setReplayNote(m_session->isComparing()
                ? m_session->shownMetric().name
                : tr("Replay · %1 · %2×%3").arg(when).arg(replay->speed()).arg(replayHint));
        return false;
    }
    m_view->setReplayNote({});
    m_view->setStaleNote(stale ? staleNote : QString());
    return true;
}

std::vector<uint32_t> MapPage::gpusOfCurrentPlace() const
{
    const TopologyPtr topology = m_navigation->topology();
    if (!topology) {
        return {};
    }
    const GpuRange range = m_navigation->current().gpuRange(*topology);
    std::vector<uint32_t> gpus(range.count);
    for (uint32_t i = 0; i < range.count; ++i) {
        gpus[i] = range.first + i;
    }
    return gpus;
}

void MapPage::openView(const ViewState &view)
{
    if (!view.metric.isEmpty()) {
        m_session->setMetric(view.metric);
    }
    m_session->setColourMap(view.colourMap);
    m_session->setAutoRange(view.range == QStringLiteral("auto"));
    m_session->setChangeWindow(view.changeWindowS);
    m_view->setArrangement(arrangementOf(view.arrangement));
    m_pendingView = view;
    if (m_navigation->topology()) {
        applyPendingView();
    }
    Q_EMIT viewOpened();
}

void MapPage::applyPendingView()
{
    if (!m_pendingView || m_view->isLayoutPending()) {
        return; // the place and zoom need the layout of this fleet
    }
    const ViewState view = *m_pendingView;
    m_pendingView.reset();
    const TopologyPtr topology = m_navigation->topology();
    // Its place, GPU and zoom are indexes into the fleet it was made on: on another, they would show other GPUs.
    const bool otherFleet = view.fleetGpus != 0 && view.fleetGpus != static_cast<qint64>(topology->gpuCount);
    QString error;
    if (otherFleet) {
        Q_EMIT message(tr("A view of a fleet of %L1 GPUs (this one has %L2): place, GPU and zoom left out")
                           .arg(view.fleetGpus)
                           .arg(topology->gpuCount),
            15000);
    } else if (const auto place = Place::fromText(view.place, *topology, &error)) {
        m_navigation->goTo(*place);
    } else {
        Q_EMIT message(tr("The view's place does not fit this fleet: %1").arg(error), 15000);
    }
    if (!otherFleet && view.selectedGpu >= 0 && static_cast<uint32_t>(view.selectedGpu) < topology->gpuCount) {
        m_view->setSelectedGpu(view.selectedGpu);
        Q_EMIT gpuChosen(view.selectedGpu);
    }
    if (!otherFleet && view.zoom > 0) {
        m_view->setViewPosition({ view.zoom, view.centreX, view.centreY });
    }
    if (!view.live) {
        m_session->goToTime(view.timeMs);
    }
}

ViewState MapPage::currentView() const
{
    ViewState view;
    if (const TopologyPtr topology = m_navigation->topology()) {
        view.fleetGpus = static_cast<qint64>(topology->gpuCount);
    }
    view.place = m_navigation->current().toText();
    view.selectedGpu = m_view->selectedGpu();
    view.metric = m_session->metricId();
    view.colourMap = m_session->colourMap();
    view.arrangement = textOf(m_view->arrangement());
    const auto position = m_view->viewPosition();
    view.zoom = position.zoom;
    view.centreX = position.centreX;
    view.centreY = position.centreY;
    view.range = m_session->autoRange() ? QStringLiteral("auto") : QStringLiteral("fixed");
    view.changeWindowS = m_session->changeWindowS();
    if ((m_session->replay()->mode() != ReplayController::Mode::Live || m_session->isLoadingHistory())
        && m_view->frame()) {
        view.live = false;
        view.timeMs = m_view->frame()->sampleTimeMs;
    }
    return view;
}

} // namespace fleetscope
