// SPDX-License-Identifier: Apache-2.0
#include "widgets/heatmap/heatmaprenderer.h"

#include <QColor>
#include <QFile>
#include <QImage>
#include <QLoggingCategory>
#include <QOpenGLContext>
#include <QOpenGLShaderProgram>
#include <QOpenGLVertexArrayObject>
#include <QVector2D>

#include <cmath>

Q_LOGGING_CATEGORY(lcHeatmapGl, "fleetscope.heatmap.gl")

namespace fleetscope {

namespace {
constexpr QRgb backgroundColour = 0xff15171c;
constexpr QRgb aisleColour = 0xff22252c;

// Integer texels are exact: pass 1 and 2 keep float values as their bits, and integer colour buffers can be drawn
// into on every OpenGL 3.3 and ES 3.0 (float ones need an extension on ES).
constexpr GLenum passInternal = GL_RGBA32UI;
} // namespace

HeatmapRenderer::HeatmapRenderer() = default;
HeatmapRenderer::~HeatmapRenderer() = default;

std::unique_ptr<QOpenGLShaderProgram> HeatmapRenderer::program(
    QOpenGLContext *context, const char *fragment, const QByteArray &defines)
{
    const QByteArray header
        = (context->isOpenGLES() ? QByteArrayLiteral("#version 300 es\nprecision highp float;\nprecision highp int;\n")
                                 : QByteArrayLiteral("#version 330 core\n"))
        + defines;
    const auto source = [&header](const QString &path) -> QByteArray {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            qCCritical(lcHeatmapGl, "missing shader resource %s", qPrintable(path));
            return QByteArray();
        }
        return header + file.readAll();
    };
    auto p = std::make_unique<QOpenGLShaderProgram>();
    const bool ok = p->addShaderFromSourceCode(QOpenGLShader::Vertex, source(QStringLiteral(":/shaders/heatmap.vert")))
        && p->addShaderFromSourceCode(
            QOpenGLShader::Fragment, source(QStringLiteral(":/shaders/%1").arg(QLatin1String(fragment))))
        && p->link();
    if (!ok) {
        qCCritical(lcHeatmapGl, "heatmap shader %s failed: %s", fragment, qPrintable(p->log()));
        return nullptr;
    }
    return p;
}

bool HeatmapRenderer::initialize(QOpenGLContext *context)
{
    initializeOpenGLFunctions();
    m_openGlEs = context->isOpenGLES();
    m_resolve = program(context, "heatmapresolve.frag");
    m_screen[0] = program(context, "heatmapscreen.frag", QByteArrayLiteral("#define AGGREGATE 0\n"));
    m_screen[1] = program(context, "heatmapscreen.frag", QByteArrayLiteral("#define AGGREGATE 1\n"));
    auto present = program(context, "heatmap.frag");
    if (!m_resolve || !m_screen[0] || !m_screen[1] || !present) {
        m_resolve.reset();
        m_screen = {};
        return false;
    }
    m_resolve->bind();
    m_resolve->setUniformValue("uLayout", 0);
    m_resolve->setUniformValue("uData", 1);
    m_resolve->setUniformValue("uPrevious", 2);
    m_resolve->setUniformValue("uHealth", 3);
    m_resolve->setUniformValue("uMarks", 4);
    m_resolve->setUniformValue("uDataWidth", dataTextureWidth);
    m_resolveUniforms = { m_resolve->uniformLocation("uHasData"), m_resolve->uniformLocation("uHasPrevious"),
        m_resolve->uniformLocation("uHasMarks"), m_resolve->uniformLocation("uFocusFirst"),
        m_resolve->uniformLocation("uFocusCount") };
    for (size_t i = 0; i < m_screen.size(); ++i) {
        QOpenGLShaderProgram &p = *m_screen[i];
        p.bind();
        p.setUniformValue("uResolved", 0);
        p.setUniformValue("uOverlay", 1);
        p.setUniformValue("uBackground", QColor::fromRgb(backgroundColour));
        p.setUniformValue("uAisle", QColor::fromRgb(aisleColour));
        p.setUniformValue("uNoData", QColor::fromRgb(noDataColour));
        p.setUniformValue("uDomain", QColor::fromRgb(domainColour));
        m_screenUniforms[i] = { p.uniformLocation("uViewport"), p.uniformLocation("uOrigin"),
            p.uniformLocation("uCellSize"), p.uniformLocation("uLayoutSize"), p.uniformLocation("uRange"),
            p.uniformLocation("uAggregate"), p.uniformLocation("uStale"), p.uniformLocation("uSelectedCentre"),
            p.uniformLocation("uSelectedRadius"), p.uniformLocation("uHasOverlay") };
    }
    present->bind();
    present->setUniformValue("uScreen", 0);
    present->setUniformValue("uColorMap", 1);
    m_presentUniforms = { present->uniformLocation("uMix"), present->uniformLocation("uRange") };
    present->release();
    m_present = std::move(present);

    m_vao = std::make_unique<QOpenGLVertexArrayObject>();
    m_vao->create();
    glGenFramebuffers(1, &m_framebuffer);
    std::array<GLuint, 9> textures {};
    glGenTextures(static_cast<GLsizei>(textures.size()), textures.data());
    m_layoutTexture = textures[0];
    m_dataTextures = { textures[1], textures[2] };
    m_healthTexture = textures[3];
    m_colorMapTexture = textures[4];
    m_markTexture = textures[5];
    m_resolvedTexture = textures[6];
    m_screenTexture = textures[7];
    m_overlayTexture = textures[8];
    m_overlayRevision = 0;
    for (GLuint t : textures) {
        glBindTexture(GL_TEXTURE_2D, t);
        // Every lookup is a texelFetch of an exact texel: no filtering, no mipmaps.
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    m_description = QString::fromLatin1(reinterpret_cast<const char *>(glGetString(GL_RENDERER)))
        + QStringLiteral(", OpenGL ") + QString::fromLatin1(reinterpret_cast<const char *>(glGetString(GL_VERSION)));
    m_resolvedSize = m_screenSize = QSize();
    m_schedule.invalidate();
    return true;
}

void HeatmapRenderer::release()
{
    if (m_layoutTexture != 0) {
        const std::array<GLuint, 9> textures = { m_layoutTexture, m_dataTextures[0], m_dataTextures[1], m_healthTexture,
            m_colorMapTexture, m_markTexture, m_resolvedTexture, m_screenTexture, m_overlayTexture };
        glDeleteTextures(static_cast<GLsizei>(textures.size()), textures.data());
        glDeleteFramebuffers(1, &m_framebuffer);
        m_layoutTexture = m_healthTexture = m_colorMapTexture = m_markTexture = 0;
        m_resolvedTexture = m_screenTexture = m_overlayTexture = m_framebuffer = 0;
        m_dataTextures = {};
    }
    m_vao.reset();
    m_resolve.reset();
    m_screen = {};
    m_present.reset();
}

void HeatmapRenderer::upload(
    GLuint texture, const Format &format, int rowLength, const void *data, size_t count, bool allocate)
{
    rowLength = std::max(1, rowLength);
    const auto width = static_cast<size_t>(rowLength);
    const int fullRows = static_cast<int>(count / width);
    const int rest = static_cast<int>(count % width);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glBindTexture(GL_TEXTURE_2D, texture);
    if (allocate) {
        glTexImage2D(GL_TEXTURE_2D, 0, static_cast<GLint>(format.internal), rowLength,
            std::max(1, fullRows + (rest > 0 ? 1 : 0)), 0, format.format, format.type, nullptr);
    }
    // Straight from the caller's memory: the full rows in one call, the partial last row in a second.
    if (data != nullptr && fullRows > 0) {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, rowLength, fullRows, format.format, format.type, data);
    }
    if (data != nullptr && rest > 0) {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, fullRows, rest, 1, format.format, format.type,
            static_cast<const char *>(data)
                + static_cast<size_t>(fullRows) * width * static_cast<size_t>(format.bytes));
    }
    // Back to GL's default: QPainter's glyph cache uploads with it and draws garbled text otherwise.
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
}

void HeatmapRenderer::allocate(size_t gpuCount)
{
    const size_t n = std::max<size_t>(1, gpuCount);
    for (GLuint t : m_dataTextures) {
        upload(t, { GL_R32F, GL_RED, GL_FLOAT, 4 }, dataTextureWidth, nullptr, n, true);
    }
    upload(m_healthTexture, { GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE, 1 }, dataTextureWidth, nullptr, n, true);
    upload(m_markTexture, { GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE, 1 }, dataTextureWidth, nullptr, n, true);
    m_schedule.resolveAgain();
}

void HeatmapRenderer::uploadLayout(const std::shared_ptr<const HeatmapLayout> &shared)
{
    const HeatmapLayout &layout = *shared; // uploaded at once
    static const int32_t none = HeatmapLayout::gap;
    const bool empty = layout.cells.empty();
    upload(m_layoutTexture, { GL_R32I, GL_RED_INTEGER, GL_INT, 4 }, empty ? 1 : layout.width,
        empty ? &none : layout.cells.data(), empty ? 1 : layout.cells.size(), true);
    const QSize size(std::max(1, layout.width), std::max(1, layout.height));
    if (size != m_resolvedSize) {
        upload(m_resolvedTexture, { passInternal, GL_RGBA_INTEGER, GL_UNSIGNED_INT, 16 }, size.width(), nullptr,
            static_cast<size_t>(size.width()) * static_cast<size_t>(size.height()), true);
        m_resolvedSize = size;
    }
    m_schedule.resolveAgain();
}

void HeatmapRenderer::uploadFrame(const std::shared_ptr<const void> & /*owner: uploaded at once*/,
    const std::vector<float> &values, const std::vector<uint8_t> &health, bool shift)
{
    if (shift) {
        m_current = 1 - m_current;
    }
    upload(m_dataTextures[static_cast<size_t>(m_current)], { GL_R32F, GL_RED, GL_FLOAT, 4 }, dataTextureWidth,
        values.data(), values.size(), false);
    upload(m_healthTexture, { GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE, 1 }, dataTextureWidth, health.data(),
        std::min(health.size(), values.size()), false);
    m_schedule.resolveAgain();
}

void HeatmapRenderer::uploadColorMap(const ColorMap &map)
{
    std::array<uint8_t, ColorMap::size * 4> rgba {};
    for (int i = 0; i < ColorMap::size; ++i) {
        const QRgb c = map.at(i);
        rgba[static_cast<size_t>(i) * 4 + 0] = static_cast<uint8_t>(qRed(c));
        rgba[static_cast<size_t>(i) * 4 + 1] = static_cast<uint8_t>(qGreen(c));
        rgba[static_cast<size_t>(i) * 4 + 2] = static_cast<uint8_t>(qBlue(c));
        rgba[static_cast<size_t>(i) * 4 + 3] = 255;
    }
    upload(m_colorMapTexture, { GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, 4 }, ColorMap::size, rgba.data(), ColorMap::size,
        true);
}

void HeatmapRenderer::uploadMarks(const std::vector<uint8_t> &marks)
{
    upload(m_markTexture, { GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE, 1 }, dataTextureWidth, marks.data(),
        marks.size(), false);
    m_schedule.resolveAgain();
}

void HeatmapRenderer::drawInto(GLuint texture, int width, int height)
{
    glBindFramebuffer(GL_FRAMEBUFFER, m_framebuffer);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, texture, 0);
    glViewport(0, 0, width, height);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

QRect HeatmapRenderer::drawnRect(const Scene &scene)
{
    // The layout's pixels and the selection ring's; the rest of the framebuffer is the background the caller
    // cleared to. In GL's coordinates (from the bottom).
    const QRectF map(scene.originX, scene.originY, scene.layoutSize.width() * scene.cellSize,
        scene.layoutSize.height() * scene.cellSize);
    QRectF drawn = map;
    if (scene.ringRadius > 0) {
        const double r = scene.ringRadius + 4.0;
        drawn |= QRectF(scene.ringCentre - QPointF(r, r), QSizeF(2 * r, 2 * r));
    }
    if (scene.overlay != nullptr) {
        drawn |= QRectF(scene.overlayUsed);
    }
    const QRect pixels = drawn.toAlignedRect().adjusted(-1, -1, 1, 1) & QRect(QPoint(0, 0), scene.framebuffer);
    return { pixels.x(), scene.framebuffer.height() - pixels.bottom() - 1, pixels.width(), pixels.height() };
}

void HeatmapRenderer::resolve(const Scene &scene, const QRect &visible)
{
    m_resolve->bind();
    glUniform1i(m_resolveUniforms.hasData, scene.hasData ? 1 : 0);
    glUniform1i(m_resolveUniforms.hasPrevious, scene.hasPrevious ? 1 : 0);
    glUniform1i(m_resolveUniforms.hasMarks, scene.hasMarks ? 1 : 0);
    glUniform1i(m_resolveUniforms.focusFirst, static_cast<GLint>(scene.focusFirst));
    glUniform1i(m_resolveUniforms.focusCount, static_cast<GLint>(scene.focusCount));
    const std::array<GLuint, 5> inputs = { m_layoutTexture, m_dataTextures[static_cast<size_t>(m_current)],
        m_dataTextures[static_cast<size_t>(1 - m_current)], m_healthTexture, m_markTexture };
    for (size_t i = 0; i < inputs.size(); ++i) {
        glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(i));
        glBindTexture(GL_TEXTURE_2D, inputs[i]);
    }
    // Texture rows are layout rows from the top, as the fragments' y: no flip.
    glEnable(GL_SCISSOR_TEST);
    glScissor(visible.x(), visible.y(), visible.width(), visible.height());
    drawInto(m_resolvedTexture, m_resolvedSize.width(), m_resolvedSize.height());
    glDisable(GL_SCISSOR_TEST);
}

void HeatmapRenderer::screen(const Scene &scene)
{
    const bool overlay
        = scene.overlay != nullptr && !scene.overlayUsed.isEmpty() && scene.overlay->size() == scene.framebuffer;
    if (overlay && m_overlayRevision != scene.overlayRevision) {
        // Premultiplied ARGB32 words (QPainter's own format, the CPU's side draws the same image): desktop OpenGL
        // reads them as they are, ES wants bytes in RGBA order.
        const QImage &image = *scene.overlay;
        const size_t texels = static_cast<size_t>(image.width()) * static_cast<size_t>(image.height());
        if (image.format() == QImage::Format_ARGB32_Premultiplied && !m_openGlEs) {
            upload(m_overlayTexture, { GL_RGBA8, GL_BGRA, GL_UNSIGNED_INT_8_8_8_8_REV, 4 }, image.width(),
                image.constBits(), texels, true);
        } else {
            const QImage bytes = image.convertToFormat(QImage::Format_RGBA8888_Premultiplied);
            upload(m_overlayTexture, { GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, 4 }, bytes.width(), bytes.constBits(),
                texels, true);
        }
        m_overlayRevision = scene.overlayRevision;
    }
    if (m_screenSize != scene.framebuffer) {
        upload(m_screenTexture, { passInternal, GL_RGBA_INTEGER, GL_UNSIGNED_INT, 16 }, scene.framebuffer.width(),
            nullptr, static_cast<size_t>(scene.framebuffer.width()) * static_cast<size_t>(scene.framebuffer.height()),
            true);
        m_screenSize = scene.framebuffer;
    }
    const size_t variant = scene.cellSize < 1.0 ? 1 : 0;
    const ScreenUniforms &u = m_screenUniforms[variant];
    m_screen[variant]->bind();
    glUniform2f(
        u.viewport, static_cast<float>(scene.framebuffer.width()), static_cast<float>(scene.framebuffer.height()));
    glUniform2f(u.origin, static_cast<float>(scene.originX), static_cast<float>(scene.originY));
    glUniform1f(u.cellSize, static_cast<float>(scene.cellSize));
    glUniform2i(u.layoutSize, scene.layoutSize.width(), scene.layoutSize.height());
    glUniform2f(u.range, scene.rangeMin, scene.rangeMax);
    glUniform1i(u.aggregate, scene.worst ? 0 : 1);
    glUniform1i(u.stale, scene.stale ? 1 : 0);
    glUniform2f(u.selectedCentre, static_cast<float>(scene.ringCentre.x()), static_cast<float>(scene.ringCentre.y()));
    glUniform1f(u.selectedRadius, scene.ringRadius);
    glUniform1i(u.hasOverlay, overlay ? 1 : 0);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, m_overlayTexture);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, m_resolvedTexture);
    drawInto(m_screenTexture, scene.framebuffer.width(), scene.framebuffer.height());
}

void HeatmapRenderer::paint(const Scene &scene)
{
    if (!isReady()) {
        return;
    }
    GLint target = 0; // the widget's framebuffer
    glGetIntegerv(GL_FRAMEBUFFER_BINDING, &target);
    glDisable(GL_BLEND);
    glDisable(GL_SCISSOR_TEST);
    glDisable(GL_DEPTH_TEST);
    glViewport(0, 0, scene.framebuffer.width(), scene.framebuffer.height());
    glClearColor(static_cast<float>(qRed(backgroundColour)) / 255.0F,
        static_cast<float>(qGreen(backgroundColour)) / 255.0F, static_cast<float>(qBlue(backgroundColour)) / 255.0F,
        1.0F);
    glClear(GL_COLOR_BUFFER_BIT);
    m_vao->bind();
    const QRect cells = m_schedule.resolveCells(scene, m_resolvedSize);
    if (!cells.isEmpty()) {
        resolve(scene, cells);
    }
    // Passes 2 and 3 only where there is something but background: a software renderer pays for every pixel.
    const QRect drawn = drawnRect(scene);
    if (drawn.isEmpty()) {
        m_vao->release();
        glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(target));
        return;
    }
    glEnable(GL_SCISSOR_TEST);
    glScissor(drawn.x(), drawn.y(), drawn.width(), drawn.height());
    if (m_schedule.screenNow(scene)) {
        screen(scene);
    }
    glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(target));
    glViewport(0, 0, scene.framebuffer.width(), scene.framebuffer.height());
    m_present->bind();
    glUniform1f(m_presentUniforms.mix, scene.hasPrevious ? scene.mix : 1.0F);
    glUniform2f(m_presentUniforms.range, scene.rangeMin, scene.rangeMax);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, m_screenTexture);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, m_colorMapTexture);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    glDisable(GL_SCISSOR_TEST);
    m_vao->release();
    m_present->release();
    glActiveTexture(GL_TEXTURE0);
}

} // namespace fleetscope
