// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "widgets/heatmap/heatmapscene.h"

#include <QFont>
#include <QImage>
#include <QSize>
#include <QString>

class QPainter;
class QWidget;

namespace fleetscope {

class HeatmapImageBuffer;
class HeatmapInputs;

// Where a surface gets what it draws, each time it paints: the inputs a renderer has not had yet, then the scene of
// that moment (the morph's point, the surface's size and the text over the map are the paint's own).
class HeatmapSceneSource
{
public:
    virtual ~HeatmapSceneSource() = default;
    // Whether there is a fleet to draw; else the surface shows that it waits for one.
    virtual bool hasMap() const = 0;
    // Hands inputs what changed since the last call (everything after uploadAgain).
    virtual void upload(HeatmapInputs &inputs) = 0;
    // A new renderer, or one whose context was lost: everything to be handed over again.
    virtual void uploadAgain() = 0;
    // The scene to draw now on a surface of this size (logical pixels) and pixel ratio; font: the surface's.
    virtual HeatmapScene scene(QSize size, double devicePixelRatio, const QFont &font) = 0;
};

// What draws the map: a child widget filling HeatmapView, transparent for input, that pulls its scene from a
// HeatmapSceneSource whenever it paints (HeatmapGlSurface: the shaders on OpenGL; HeatmapCpuSurface: the same passes
// on the CPU's threads). A surface knows nothing of the view above it; it says what it did through its signals
// (painted, presented; see each class).
class HeatmapSurface
{
public:
    enum class Kind { Gpu, Cpu };
    virtual ~HeatmapSurface() = default;

    virtual Kind kind() const = 0;
    virtual QWidget *widget() = 0;
    // A paint soon (QWidget::update).
    virtual void requestPaint() = 0;
    // Hands over, and waits for, the uploads the next paint would do (benchmarks).
    virtual void uploadPending() = 0;
    // The map as drawn now, text included, in physical pixels (a fresh paint of the state as it is now).
    virtual QImage grabMap() = 0;
    // What draws, for people.
    virtual QString description() const = 0;
    // Runs of the per-frame passes (1 and 2) so far.
    virtual quint64 resolveCount() const = 0;
    virtual quint64 screenCount() const = 0;
    // The memory of an image the surface keeps at the map's size, if any (HeatmapImageBuffer::adopt).
    virtual HeatmapImageBuffer *imageBuffer() { return nullptr; }

    // The map's background, and what a surface with no fleet to draw (or no way to draw it) shows.
    static constexpr QRgb backgroundColour = 0xff15171c;
    static void paintPlaceholder(QPainter &painter, const QRect &rect, const QFont &font, const QString &text);
};

} // namespace fleetscope
