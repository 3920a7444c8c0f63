// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/heatmap/heatmaprenderer.h"

#include <QOpenGLWidget>

namespace fleetscope {

class HeatmapView;

// The map's OpenGL surface, used where OpenGL runs on a graphics card: a QOpenGLWidget child filling HeatmapView
// (which keeps the input, the camera and the state) and painting through HeatmapView::paintMap. It owns the GL
// objects (HeatmapRenderer) for its context's life.
class HeatmapGlSurface final : public QOpenGLWidget
{
    Q_OBJECT
public:
    explicit HeatmapGlSurface(HeatmapView *view);
    ~HeatmapGlSurface() override;

    HeatmapRenderer &renderer() { return m_renderer; }
    // The shaders compiled and the textures exist.
    bool isReady() const { return m_ready; }

    // What OpenGL this process gets for the map (GL_RENDERER, GL_VERSION), tried once on an offscreen surface and
    // remembered; empty where there is no OpenGL 3.3 or ES 3.0.
    static QString probe();
    // Whether that OpenGL rasterises on the CPU (Mesa's llvmpipe, softpipe, swrast) or is missing.
    static bool probeIsSoftware();

protected:
    void initializeGL() override;
    void paintGL() override;

private:
    void release();

    HeatmapView *m_view;
    HeatmapRenderer m_renderer;
    bool m_ready = false;
    QMetaObject::Connection m_contextDestroyed;
};

} // namespace fleetscope
