// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapscenebuilder.h"

#include <cmath>

namespace fleetscope {

HeatmapSceneBuilder::HeatmapSceneBuilder(HeatmapMapState &state, HeatmapCamera &camera)
    : m_state(state)
    , m_camera(camera)
{ }

HeatmapScene HeatmapSceneBuilder::scene(QSize size, double dpr, const QFont &font)
{
    m_camera.setViewport(QSizeF(size), dpr);
    m_state.fitCamera(m_camera);
    const HeatmapCamera::Placement p = m_camera.placement();
    const double mix = m_state.interpolation();

    HeatmapOverlay::Scene text;
    text.layout = &m_state.layout();
    text.widget = QSizeF(size);
    text.originX = p.originX / dpr;
    text.originY = p.originY / dpr;
    text.cell = p.cellSize / dpr;
    text.plane = m_state.shownPlane();
    text.metric = &m_state.metric();
    text.colorMap = &m_state.colorMap();
    text.staleNote = m_state.staleNote();
    text.labelScale = m_state.labelScale();
    text.replayNote = m_state.replayNote();
    text.font = font;
    text.domainCells = &m_state.domainCells();
    text.domainRevision = m_state.domainRevision();
    m_overlay.update(text, dpr);

    const QSize framebuffer(
        static_cast<int>(std::lround(size.width() * dpr)), static_cast<int>(std::lround(size.height() * dpr)));
    HeatmapScene scene = m_state.scene(p, framebuffer, mix);
    scene.morphing = mix < 1.0;
    scene.overlay = &m_overlay.image();
    scene.overlayUsed = m_overlay.used();
    scene.overlayRevision = m_overlay.revision();
    return scene;
}

} // namespace fleetscope
