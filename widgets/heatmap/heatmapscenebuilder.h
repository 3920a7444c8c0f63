// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/heatmap/heatmapcamera.h"
#include "widgets/heatmap/heatmapmapstate.h"
#include "widgets/heatmap/heatmapoverlay.h"
#include "widgets/heatmap/heatmapsurface.h"

namespace fleetscope {

// The scene a surface pulls, put together from the map's state, the camera that places its layout and the text over
// the map (redrawn only when it changes). HeatmapView owns it over its own state and camera.
class HeatmapSceneBuilder final : public HeatmapSceneSource
{
public:
    HeatmapSceneBuilder(HeatmapMapState &state, HeatmapCamera &camera);

    bool hasMap() const override { return m_state.topology() != nullptr; }
    void upload(HeatmapInputs &inputs) override { m_state.upload(inputs); }
    void uploadAgain() override { m_state.uploadAgain(); }
    HeatmapScene scene(QSize size, double devicePixelRatio, const QFont &font) override;

    // The text over the map's image memory (HeatmapImageBuffer::adopt).
    HeatmapOverlayCache &overlay() { return m_overlay; }

private:
    HeatmapMapState &m_state;
    HeatmapCamera &m_camera;
    HeatmapOverlayCache m_overlay;
};

} // namespace fleetscope
