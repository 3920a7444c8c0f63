// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/heatmaplayout.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapscene.h"

#include <QByteArray>
#include <QOpenGLExtraFunctions>
#include <QPointF>
#include <QRect>
#include <QSize>

#include <array>
#include <memory>

class QImage;
class QOpenGLContext;
class QOpenGLShaderProgram;
class QOpenGLVertexArrayObject;

namespace fleetscope {

class HeatmapCpuPasses;

// The heatmap's OpenGL side: the textures (layout, two frames of values, health, marks, colour map), the three
// shader passes and their uniforms. Every function needs the context current. Per paint it costs what changed:
// pass 1 (one texel per layout cell) runs when the data, layout, marks or focus changed, pass 2 (one texel per
// pixel: the cell's values, or the worst-of or mean under the pixel, and everything drawn over them) when that, the
// zoom, the range or the selection changed, and pass 3, every paint, reads two texels per pixel.
class HeatmapRenderer : protected QOpenGLExtraFunctions
{
public:
    // Data texture row length: 1,048,576 GPUs make a 1024 x 1024 texture.
    static constexpr int dataTextureWidth = 1024;

    using Scene = HeatmapScene;

    // Who runs the passes: the shaders, or their twin on the CPU's threads (HeatmapCpuPasses), which is faster where
    // OpenGL itself runs on the CPU. Auto: the CPU on a software renderer (llvmpipe, softpipe, swrast) unless
    // FLEETSCOPE_HEATMAP_PASSES says gpu or cpu, else the shaders.
    enum class Passes { Auto, Gpu, Cpu };

    HeatmapRenderer();
    ~HeatmapRenderer();
    HeatmapRenderer(const HeatmapRenderer &) = delete;
    HeatmapRenderer &operator=(const HeatmapRenderer &) = delete;

    // Compiles the shaders and creates the textures; false (and a logged error) when the shaders fail.
    bool initialize(QOpenGLContext *context);
    void release();
    bool isReady() const { return m_present != nullptr; }
    // Takes effect at once when initialised (everything is then to be uploaded again), else at initialize.
    void setPasses(Passes passes);
    // The passes in use: Gpu or Cpu once initialised.
    Passes passes() const { return m_cpu ? Passes::Cpu : Passes::Gpu; }

    // The dense-order textures for a fleet of this size; frames and marks fill them.
    void allocate(size_t gpuCount);
    void uploadLayout(const HeatmapLayout &layout);
    // A frame's plane and health bytes; shift: into the other texture, so the one shown until now becomes the
    // previous frame (a new frame), else replacing the current one (a new metric).
    void uploadFrame(const std::vector<float> &values, const std::vector<uint8_t> &health, bool shift);
    void uploadColorMap(const ColorMap &map);
    void uploadMarks(const std::vector<uint8_t> &marks);
    // Draws the scene into the framebuffer bound now, background included.
    void paint(const Scene &scene);
    // Passes 1 and 2 run so far (benchmarks and tests: an animation repaint runs neither).
    quint64 resolveCount() const { return m_resolveCount; }
    quint64 screenCount() const { return m_screenCount; }

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
    void resolve(const Scene &scene);
    void resolveOnGpu(const Scene &scene, const QRect &cells);
    void screen(const Scene &scene);
    void screenOnGpu(const Scene &scene);
    void paintOnCpu(const Scene &scene, GLuint target);
    void choosePasses();
    void drawInto(GLuint texture, int width, int height);
    static QRect drawnRect(const Scene &scene);

    Passes m_requestedPasses = Passes::Auto;
    QByteArray m_glRenderer;
    std::unique_ptr<HeatmapCpuPasses> m_cpu; // set: the CPU runs the passes
    GLuint m_cpuTexture = 0; // the CPU's image, copied to the framebuffer
    QSize m_cpuTextureSize;
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

    // What passes 1 and 2 were last run for.
    bool m_resolveDirty = true;
    QRect m_resolvedCells; // the cells pass 1 last ran for
    Scene m_resolved;
    bool m_screenDirty = true;
    Scene m_screened;
    quint64 m_resolveCount = 0;
    quint64 m_screenCount = 0;
};

} // namespace fleetscope
