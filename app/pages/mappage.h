// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "app/session/display.h"
#include "model/place.h"
#include "model/viewstate.h"

#include <QWidget>

#include <optional>

class QVBoxLayout;

namespace fleetscope {

class ColorLegend;
class ConsoleSession;
class HeatmapView;
class Navigation;

// The fleet map over a session, as the desk and the wall both show it: the heatmap and its legend, following what
// the session shows, with the place in view (fleet, row, rack, node, GPU) kept by a Navigation of its own. A click
// or Enter on a GPU goes one level down towards it (or beside, outside the current place); Esc or Backspace up.
class MapPage : public QWidget
{
    Q_OBJECT
public:
    MapPage(ConsoleSession *session, bool animated, QWidget *parent = nullptr);

    HeatmapView *heatmap() const { return m_view; }
    ColorLegend *legend() const { return m_legend; }
    Navigation *navigation() const { return m_navigation; }
    // Where the desk puts its timeline: between the map and the legend.
    QVBoxLayout *pageLayout() const { return m_layout; }

    // Opens a view: what is shown (on the session), the arrangement, and the place, selection, zoom and time as soon
    // as the fleet's topology is known.
    void openView(const ViewState &view);
    ViewState currentView() const;
    // A click or Enter on a GPU: one level down towards it, or sideways to its place outside the current one.
    void openTowards(uint32_t gpu);
    // The map's banner for the data it shows: a replay or a comparison says so (and has no stale pattern); live data
    // gets the stale pattern and staleNote while stale. replayHint follows the replay's time and speed. Returns
    // true when the map shows live data.
    bool showDataNote(bool stale, const QString &staleNote, const QString &replayHint = {});
    // The GPUs of a place, for exports.
    std::vector<uint32_t> gpusOfCurrentPlace() const;

Q_SIGNALS:
    // A GPU was clicked (-1: the selection was cleared).
    void gpuChosen(int gpu);
    // openView changed what is shown and the arrangement.
    void viewOpened();
    // The map took another fleet (before it opens a pending view's place on it): views of this map's places follow.
    void topologyChanged(const fleetscope::TopologyPtr &topology);
    void message(const QString &text, int timeoutMs);

private:
    // Draws what the session shows.
    void drawShown(const ShownState &shown, ShownState::Changes changes);
    // Outlines the GPUs a layer flags while it is shown: the version layer's off their job's or rack's versions, the
    // alert layer's with a firing alert.
    void markLayer();
    void onPlaceChanged(Place place);
    void applyPendingView();

    ConsoleSession *m_session;
    QVBoxLayout *m_layout = nullptr;
    HeatmapView *m_view = nullptr;
    ColorLegend *m_legend = nullptr;
    Navigation *m_navigation = nullptr;
    std::optional<ViewState> m_pendingView; // applied once the topology arrives
    bool m_markingLayer = false; // the outlines shown are a layer's
};

} // namespace fleetscope
