// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/place.h"

#include <QObject>

#include <vector>

namespace fleetscope {

// Where the console is drilled down to, and the places visited before, like a browser's history: goTo pushes the
// new place and drops anything forward of the current one; back and forward move through the list without changing
// it. up and down are ordinary moves (they push). Moving to the place already current changes nothing.
//
// A new topology generation keeps the engineer where they were if that place still exists: every place in the
// history is looked up by name in the new generation (Place::remapped); the current one falls back to its nearest
// surviving ancestor, and history entries that are gone are dropped. Indices are never trusted across generations,
// since a row added in front renumbers everything after it.
//
// GUI thread only.
class Navigation : public QObject
{
    Q_OBJECT
public:
    // The history keeps this many places; the oldest go first.
    static constexpr int maxHistory = 100;

    explicit Navigation(QObject *parent = nullptr);

    // Emits topologyChanged, then placeChanged, when the generation differs from the one held.
    void setTopology(TopologyPtr topology);
    TopologyPtr topology() const { return m_topology; }

    Place current() const { return m_history[m_position]; }
    bool canGoBack() const { return m_position > 0; }
    bool canGoForward() const { return m_position + 1 < m_history.size(); }
    bool canGoUp() const { return current().level != Place::Level::Fleet; }
    // The whole list and where in it the current place is; for tests and a history menu.
    const std::vector<Place> &history() const { return m_history; }
    std::size_t historyPosition() const { return m_position; }

public Q_SLOTS:
    // Each returns whether it moved or the place was already current; false (and no change) for a place that is not
    // valid in the topology, a child that is not a child of the current place, or no history to go to.
    bool goTo(fleetscope::Place place);
    bool down(fleetscope::Place child);
    // One level down towards a GPU: what a click on the map or Enter on the hovered GPU does.
    bool downTowards(uint32_t gpu);
    bool up();
    bool back();
    bool forward();

Q_SIGNALS:
    void placeChanged(fleetscope::Place place);
    // canGoBack or canGoForward may have changed.
    void historyChanged();
    // Emitted before the placeChanged that follows a new generation, with the place already remapped.
    void topologyChanged(fleetscope::TopologyPtr topology);

private:
    void moveTo(std::size_t position);

    TopologyPtr m_topology;
    std::vector<Place> m_history { Place::fleet() };
    std::size_t m_position = 0;
};

} // namespace fleetscope
