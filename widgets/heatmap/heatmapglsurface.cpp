// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmapglsurface.h"

#include <QLoggingCategory>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QPainter>

#include <utility>

Q_DECLARE_LOGGING_CATEGORY(lcHeatmap)

namespace fleetscope {

HeatmapGlSurface::HeatmapGlSurface(HeatmapSceneSource &source, QWidget *parent)
    : QOpenGLWidget(parent)
    , m_source(source)
{
    // The view under it takes the mouse, the keyboard and the tooltips.
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setFocusPolicy(Qt::NoFocus);
}

HeatmapGlSurface::~HeatmapGlSurface()
{
    // QOpenGLWidget's own destructor emits aboutToBeDestroyed after this object is gone: release here instead.
    disconnect(m_contextDestroyed);
    if (context() != nullptr) {
        makeCurrent();
        release();
        doneCurrent();
    }
}

QString HeatmapGlSurface::probe()
{
    static const QString found = [] {
        QOpenGLContext context; // QSurfaceFormat's default: what HeatmapView::requestSurfaceFormat asked for
        QOffscreenSurface surface;
        surface.setFormat(context.format());
        surface.create();
        if (!context.create() || !surface.isValid() || !context.makeCurrent(&surface)) {
            return QString();
        }
        const QSurfaceFormat format = context.format();
        const bool enough = context.isOpenGLES() ? format.majorVersion() >= 3 : format.version() >= qMakePair(3, 3);
        QOpenGLFunctions *f = context.functions();
        const auto text = [f](GLenum name) {
            const auto *s = reinterpret_cast<const char *>(f->glGetString(name));
            return s != nullptr ? QString::fromLatin1(s) : QString();
        };
        const QString description = text(GL_RENDERER) + QStringLiteral(", OpenGL ") + text(GL_VERSION);
        context.doneCurrent();
        return enough ? description : QString();
    }();
    return found;
}

QString HeatmapGlSurface::description() const
{
    return m_ready ? tr("shaders on %1").arg(m_renderer.description()) : tr("shaders (OpenGL not ready)");
}

void HeatmapGlSurface::uploadPending()
{
    if (!m_source.hasMap() || !m_ready) {
        return;
    }
    makeCurrent();
    m_source.upload(m_renderer);
    context()->functions()->glFinish();
    doneCurrent();
}

bool HeatmapGlSurface::probeIsSoftware()
{
    const QString r = probe().toLower();
    return r.isEmpty() || r.contains(QLatin1String("llvmpipe")) || r.contains(QLatin1String("softpipe"))
        || r.contains(QLatin1String("swrast"));
}

void HeatmapGlSurface::initializeGL()
{
    disconnect(m_contextDestroyed);
    m_contextDestroyed = connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, [this] {
        makeCurrent();
        release();
        doneCurrent();
    });
    m_ready = m_renderer.initialize(context());
    static bool said = false; // once a process
    if (m_ready && !std::exchange(said, true)) {
        qCInfo(lcHeatmap, "heatmap drawn by shaders on %s", qPrintable(m_renderer.description()));
    }
    m_source.uploadAgain();
    if (!m_ready) {
        Q_EMIT shadersFailed();
    }
}

void HeatmapGlSurface::paintGL()
{
    if (!m_ready || !m_source.hasMap()) {
        QPainter painter(this);
        paintPlaceholder(painter, rect(), font(),
            m_ready ? tr("Waiting for the fleet's topology…") : tr("OpenGL 3.3 or ES 3.0 is needed"));
        painter.end();
        Q_EMIT painted(false, false);
        return;
    }
    m_source.upload(m_renderer);
    const HeatmapScene scene = m_source.scene(size(), devicePixelRatioF(), font());
    m_renderer.paint(scene);
    Q_EMIT painted(true, scene.morphing);
}

void HeatmapGlSurface::release()
{
    m_renderer.release();
    m_ready = false;
}

} // namespace fleetscope
