// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/heatmap/heatmaprenderer.h"
#include "widgets/heatmap/heatmapsurface.h"

#include <QOpenGLWidget>

namespace fleetscope {

// The map's OpenGL surface, used where OpenGL runs on a graphics card: a QOpenGLWidget that pulls each paint's scene
// from its source and draws it with the shaders. It owns the GL objects (HeatmapRenderer) for its context's life, and
// has the source hand everything over again when a context is made.
class HeatmapGlSurface final : public QOpenGLWidget, public HeatmapSurface
{
    Q_OBJECT
public:
    HeatmapGlSurface(HeatmapSceneSource &source, QWidget *parent);
    ~HeatmapGlSurface() override;

    Kind kind() const override { return Kind::Gpu; }
    QWidget *widget() override { return this; }
    void requestPaint() override { update(); }
    void uploadPending() override;
    QImage grabMap() override { return grabFramebuffer(); }
    QString description() const override;
    quint64 resolveCount() const override { return m_renderer.resolveCount(); }
    quint64 screenCount() const override { return m_renderer.screenCount(); }
    // The shaders compiled and the textures exist.
    bool isReady() const { return m_ready; }

    // What OpenGL this process gets for the map (GL_RENDERER, GL_VERSION), tried once on an offscreen surface and
    // remembered; empty where there is no OpenGL 3.3 or ES 3.0.
    static QString probe();
    // Whether that OpenGL rasterises on the CPU (Mesa's llvmpipe, softpipe, swrast) or is missing.
    static bool probeIsSoftware();

Q_SIGNALS:
    // After each paint; map: the fleet was drawn (not a placeholder), morphing: at a point of a morph before its end.
    void painted(bool map, bool morphing);
    // The shaders failed to build in a new context: nothing but a placeholder can be drawn here.
    void shadersFailed();

protected:
    void initializeGL() override;
    void paintGL() override;

private:
    void release();

    HeatmapSceneSource &m_source;
    HeatmapRenderer m_renderer;
    bool m_ready = false;
    QMetaObject::Connection m_contextDestroyed;
};

} // namespace fleetscope
