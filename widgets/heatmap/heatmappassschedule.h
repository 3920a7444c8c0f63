// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/heatmaplayout.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapscene.h"

#include <QRect>
#include <QSize>

#include <cstdint>
#include <memory>
#include <vector>

namespace fleetscope {

// What a heatmap renderer is given, on either side: the shaders' textures (HeatmapRenderer) or the CPU's copies
// (HeatmapCpuRenderer). HeatmapView hands over what changed before each paint.
class HeatmapInputs
{
public:
    virtual ~HeatmapInputs() = default;
    // Room for a fleet of this size; frames and marks fill it.
    virtual void allocate(size_t gpuCount) = 0;
    // The layout, which a renderer may keep and read later (never changed once built).
    virtual void uploadLayout(const std::shared_ptr<const HeatmapLayout> &layout) = 0;
    // A frame's plane and health bytes, which owner keeps (the frame: shared and never changed, so a renderer may
    // read them later); shift: the frame shown until now becomes the previous one (a new frame), else the current
    // one is replaced (a new metric).
    virtual void uploadFrame(const std::shared_ptr<const void> &owner, const std::vector<float> &values,
        const std::vector<uint8_t> &health, bool shift)
        = 0;
    virtual void uploadColorMap(const ColorMap &map) = 0;
    virtual void uploadMarks(const std::vector<uint8_t> &marks) = 0;
    // Passes 1 and 2 run so far (benchmarks and tests: an animation repaint runs neither).
    virtual quint64 resolveCount() const = 0;
    virtual quint64 screenCount() const = 0;
};

// The passes as the CPU runs them (HeatmapCpuPasses), for HeatmapPassSchedule::run to drive.
class HeatmapPasses
{
public:
    virtual ~HeatmapPasses() = default;
    // Pass 1 over these layout cells; true when a cell's kind or flags changed.
    virtual bool resolve(const HeatmapScene &scene, const QRect &cells) = 0;
    // Pass 2 over the whole framebuffer, or only over the rows whose cells' kind or flags the last resolve changed.
    virtual void screen(const HeatmapScene &scene, bool changedRowsOnly) = 0;
};

// When the heatmap's passes run, the same for the shaders and the CPU: pass 1 (one result per layout cell) when the
// data, layout, marks or focus changed or cells it has not resolved come on screen; pass 2 (one per pixel) when that,
// the placement, the range, the selection or the text over the map changed; pass 3 on every paint.
class HeatmapPassSchedule
{
public:
    // Everything again, as for a new surface.
    void invalidate()
    {
        m_resolveDirty = true;
        m_screenDirty = true;
        m_screenInvalid = true;
    }
    // Pass 1's inputs changed (data, layout, marks).
    void resolveAgain() { m_resolveDirty = true; }
    // The layout cells pass 1 is to run over for this scene now (those on screen and the few beyond the edge a
    // reduced pixel reads), counted as run; empty when what it left still serves. layout: the cells there are.
    QRect resolveCells(const HeatmapScene &scene, const QSize &layout);
    // Whether pass 2 is to run over the whole framebuffer for this scene now, counted as run. cellsOnly: pass 1 ran
    // for this paint, and the caller redoes pass 2 itself where it changed a cell's kind or flags, which alone pass 2
    // reads of a cell where a GPU covers a pixel or more (the CPU's passes; the shaders run it whole).
    bool screenNow(const HeatmapScene &scene, bool cellsOnly = false);
    // Runs passes 1 and 2 as this scene needs them, pass 2 only over the rows where pass 1 changed a cell's kind or
    // flags when nothing else it reads changed (the CPU's passes; the shaders use resolveCells and screenNow).
    void run(const HeatmapScene &scene, const QSize &layout, HeatmapPasses &passes);
    // Whether resolveCells or screenNow would run anything for this scene now (counting nothing).
    bool wouldRun(const HeatmapScene &scene, const QSize &layout) const;
    quint64 resolveCount() const { return m_resolveCount; }
    quint64 screenCount() const { return m_screenCount; }

private:
    static QRect visibleCells(const HeatmapScene &scene, const QSize &layout);
    bool resolvedFor(const HeatmapScene &scene, const QRect &visible) const;
    bool screenedFor(const HeatmapScene &scene) const;

    bool m_resolveDirty = true;
    QRect m_resolvedCells;
    HeatmapScene m_resolved;
    bool m_screenDirty = true; // pass 1 ran since pass 2
    bool m_screenInvalid = true; // pass 2 has not run since invalidate()
    HeatmapScene m_screened;
    quint64 m_resolveCount = 0;
    quint64 m_screenCount = 0;
};

} // namespace fleetscope
