// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/heatmaplayout.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmappassschedule.h"
#include "widgets/heatmap/heatmapscene.h"

#include <QByteArray>
#include <QOpenGLExtraFunctions>
#include <QPointF>
#include <QRect>
#include <QSize>
#include <QString>

#include <array>
#include <memory>

class QImage;
class QOpenGLContext;
class QOpenGLShaderProgram;
class QOpenGLVertexArrayObject;

namespace fleetscope {

// The heatmap's OpenGL side: the textures (layout, two frames of values, health, marks, colour map), the three
// shader passes and their uniforms. Every function needs the context current. Per paint it costs what changed
// (HeatmapPassSchedule): pass 1 reads one texel per layout cell, pass 2 one per pixel (the cell's values, or the
// worst-of or mean under the pixel, and everything drawn over them) and pass 3, every paint, two per pixel. Where
// OpenGL is a software renderer, HeatmapView draws with HeatmapCpuRenderer instead.
class HeatmapRenderer final : public HeatmapInputs, protected QOpenGLExtraFunctions
{
public:
    // Data texture row length: 1,048,576 GPUs make a 1024 x 1024 texture.
    static constexpr int dataTextureWidth = 1024;

    using Scene = HeatmapScene;

    HeatmapRenderer();
    ~HeatmapRenderer();
    HeatmapRenderer(const HeatmapRenderer &) = delete;
    HeatmapRenderer &operator=(const HeatmapRenderer &) = delete;

    // Compiles the shaders and creates the textures; false (and a logged error) when the shaders fail.
    bool initialize(QOpenGLContext *context);
    void release();
    bool isReady() const { return m_present != nullptr; }
    // GL_RENDERER and GL_VERSION, once initialised.
    const QString &description() const { return m_description; }

    // The dense-order textures for a fleet of this size; frames and marks fill them.
    void allocate(size_t gpuCount) override;
    void uploadLayout(const std::shared_ptr<const HeatmapLayout> &layout) override;
    // shift: into the other texture, so the one shown until now becomes the previous frame.
    void uploadFrame(const std::shared_ptr<const void> &owner, const std::vector<float> &values,
        const std::vector<uint8_t> &health, bool shift) override;
    void uploadColorMap(const ColorMap &map) override;
    void uploadMarks(const std::vector<uint8_t> &marks) override;
    quint64 resolveCount() const override { return m_schedule.resolveCount(); }
    quint64 screenCount() const override { return m_schedule.screenCount(); }
    // Draws the scene into the framebuffer bound now, background included.
    void paint(const Scene &scene);

private:
    struct Format
    {
        GLenum internal;
        GLenum format;
        GLenum type;
        int bytes; // per texel
    };
    // The one upload routine for every texture: count texels, rowLength per texture row, the last row partial;
    // allocate (re)creates the texture at that size first; null data only allocates.
    void upload(GLuint texture, const Format &format, int rowLength, const void *data, size_t count, bool allocate);
    std::unique_ptr<QOpenGLShaderProgram> program(
        QOpenGLContext *context, const char *fragment, const QByteArray &defines = {});
    void resolve(const Scene &scene, const QRect &cells);
    void screen(const Scene &scene);
    void drawInto(GLuint texture, int width, int height);
    static QRect drawnRect(const Scene &scene);

    QString m_description;
    bool m_openGlEs = false;
    std::unique_ptr<QOpenGLShaderProgram> m_resolve;
    std::array<std::unique_ptr<QOpenGLShaderProgram>, 2> m_screen; // cells, aggregated (below a pixel per cell)
    std::unique_ptr<QOpenGLShaderProgram> m_present;
    std::unique_ptr<QOpenGLVertexArrayObject> m_vao;
    GLuint m_framebuffer = 0; // passes 1 and 2 draw into textures through it
    GLuint m_layoutTexture = 0;
    std::array<GLuint, 2> m_dataTextures {}; // the current frame's plane and the previous one, alternating
    int m_current = 0; // index of the current frame's texture
    GLuint m_healthTexture = 0;
    GLuint m_colorMapTexture = 0;
    GLuint m_markTexture = 0;
    GLuint m_resolvedTexture = 0; // pass 1's output, layout-sized
    GLuint m_screenTexture = 0; // pass 2's output, framebuffer-sized
    GLuint m_overlayTexture = 0;
    quint64 m_overlayRevision = 0; // uploaded
    QSize m_resolvedSize;
    QSize m_screenSize;

    // Uniform locations, looked up once.
    struct
    {
        int hasData, hasPrevious, hasMarks, focusFirst, focusCount;
    } m_resolveUniforms {};
    struct ScreenUniforms
    {
        int viewport, origin, cellSize, layoutSize, range, aggregate, stale, selectedCentre, selectedRadius, hasOverlay;
    };
    std::array<ScreenUniforms, 2> m_screenUniforms {};
    struct
    {
        int mix, range;
    } m_presentUniforms {};

    HeatmapPassSchedule m_schedule;
};

} // namespace fleetscope
