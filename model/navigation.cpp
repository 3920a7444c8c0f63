// SPDX-License-Identifier: Apache-2.0
#include "model/navigation.h"

#include <QThread>

#include <utility>

namespace fleetscope {

Navigation::Navigation(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<Place>();
}

void Navigation::setTopology(TopologyPtr topology)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (topology == m_topology || (topology && m_topology && topology->generation == m_topology->generation)) {
        return;
    }
    const TopologyPtr old = std::exchange(m_topology, std::move(topology));

    std::vector<Place> history;
    std::size_t position = 0;
    if (old && m_topology) {
        // The current place, or its nearest ancestor that survived, keeps its position among the survivors.
        for (std::size_t i = 0; i < m_history.size(); ++i) {
            Place p = m_history[i];
            std::optional<Place> now = p.remapped(*old, *m_topology);
            while (i == m_position && !now) {
                p = p.parent(*old);
                now = p.remapped(*old, *m_topology);
            }
            if (now && (history.empty() || history.back() != *now)) {
                history.push_back(*now);
            }
            if (i == m_position) {
                position = history.size() - 1;
            }
        }
    }
    if (history.empty()) {
        history.push_back(Place::fleet());
    }
    m_history = std::move(history);
    m_position = position;

    Q_EMIT topologyChanged(m_topology);
    Q_EMIT historyChanged();
    // Always: even the same index may now name something else, and listeners redraw names from the new topology.
    Q_EMIT placeChanged(current());
}

bool Navigation::goTo(Place place)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_topology || !place.isValid(*m_topology)) {
        return false;
    }
    if (place == current()) {
        return true;
    }
    m_history.resize(m_position + 1);
    m_history.push_back(place);
    if (m_history.size() > static_cast<std::size_t>(maxHistory)) {
        m_history.erase(m_history.begin());
    }
    m_position = m_history.size() - 1;
    Q_EMIT historyChanged();
    Q_EMIT placeChanged(place);
    return true;
}

bool Navigation::down(Place child)
{
    if (!m_topology || !child.isValid(*m_topology) || child.level == Place::Level::Fleet
        || child.parent(*m_topology) != current()) {
        return false;
    }
    return goTo(child);
}

bool Navigation::downTowards(uint32_t gpu)
{
    if (!m_topology) {
        return false;
    }
    const auto child = current().childTowards(*m_topology, gpu);
    return child && goTo(*child);
}

bool Navigation::up()
{
    if (!m_topology || !canGoUp()) {
        return false;
    }
    return goTo(current().parent(*m_topology));
}

bool Navigation::back()
{
    if (!canGoBack()) {
        return false;
    }
    moveTo(m_position - 1);
    return true;
}

bool Navigation::forward()
{
    if (!canGoForward()) {
        return false;
    }
    moveTo(m_position + 1);
    return true;
}

void Navigation::moveTo(std::size_t position)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_position = position;
    Q_EMIT historyChanged();
    Q_EMIT placeChanged(current());
}

} // namespace fleetscope
