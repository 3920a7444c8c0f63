// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/worker.h"
#include "widgets/heatmap/heatmapcpupasses.h"
#include "widgets/heatmap/heatmapimagebuffer.h"
#include "widgets/heatmap/heatmappassschedule.h"

#include <QImage>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

namespace fleetscope {

// The heatmap drawn without OpenGL: the three passes on the CPU's threads (HeatmapCpuPasses) into an image that
// HeatmapCpuSurface paints with QPainter. Chosen where OpenGL is a software renderer or missing: there the window is
// composed by Qt's raster engine instead of through OpenGL, and no paint waits for a software rasteriser.
//
// What a new frame, layout or view costs (the inputs handed over, pass 1, pass 2: HeatmapPassSchedule runs them on
// HeatmapCpuPasses) runs on a Worker of its own, so that the GUI thread never waits for it: meanwhile a paint shows
// the image as it was, and `ready` is called (on the thread that made this object) when the new one can be shown, the
// preparation's one result handed back through the Worker. Pass 3, the colours at the paint's point of the morph,
// runs in the paint itself: a few ms, so an animation repaint or a hover costs only that. Inputs are copied when
// handed over, so the caller's may change at once.
class HeatmapCpuRenderer final : public HeatmapInputs
{
public:
    explicit HeatmapCpuRenderer(std::function<void()> ready);
    ~HeatmapCpuRenderer() override;
    HeatmapCpuRenderer(const HeatmapCpuRenderer &) = delete;
    HeatmapCpuRenderer &operator=(const HeatmapCpuRenderer &) = delete;

    // Recorded in order and applied by the next preparation: a layout's cells and marks are copied, a frame's values
    // are not (the worker reads them from the frame, which owner keeps).
    void allocate(size_t gpuCount) override;
    void uploadLayout(const std::shared_ptr<const HeatmapLayout> &layout) override;
    void uploadFrame(const std::shared_ptr<const void> &owner, const std::vector<float> &values,
        const std::vector<uint8_t> &health, bool shift) override;
    void uploadMarks(const std::vector<uint8_t> &marks) override;
    void uploadColorMap(const ColorMap &map) override;
    // As of the last preparation that ended.
    quint64 resolveCount() const override { return m_resolveCount; }
    quint64 screenCount() const override { return m_screenCount; }

    // Off: the work runs in paint itself, as the shaders' would (benchmarks measure it so). On by default.
    void setAsynchronous(bool asynchronous) { m_asynchronous = asynchronous; }

    // The image for this scene, at the framebuffer's size (physical pixels at this ratio, Format_RGB32, background
    // included) but the text over the map (scene.overlay), which the caller paints over it; valid until the next
    // call. While the worker prepares it, the image shown last (see isCurrent); a null image before the first, or for
    // an empty framebuffer.
    const QImage &paint(const HeatmapScene &scene, double devicePixelRatio);
    // The memory of the copy shown while the worker prepares an image (HeatmapImageBuffer::adopt).
    HeatmapImageBuffer &shownBuffer() { return m_shown; }
    // The last paint returned the scene asked for, not an earlier image while the worker prepared it.
    bool isCurrent() const { return m_current; }
    // Waits for the worker, then applies the inputs handed over (the copies the passes keep), no pass.
    void applyInputs();
    // Waits for the worker, then prepares what this scene still needs at once: the next paint is current.
    void finish(const HeatmapScene &scene);

private:
    using Input = std::function<void(HeatmapCpuPasses &)>;
    struct Handed
    {
        Input apply;
        bool resolves; // pass 1 reads what it changes
    };
    void hand(Input input, bool resolves);
    void apply(const std::vector<Handed> &inputs);
    void waitForWorker(); // until no preparation runs there
    // Applies the inputs, runs passes 1 and 2 as the schedule says; on the worker, or in finish or a synchronous
    // paint. layoutSize: the layout's once the inputs are applied.
    void prepare(std::vector<Handed> inputs, const HeatmapScene &scene, QSize layoutSize);
    static HeatmapScene withoutText(const HeatmapScene &scene);
    void copyShown(double devicePixelRatio); // m_image into m_shown

    std::function<void()> m_ready;
    bool m_asynchronous = true;
    // Owned by the worker while a preparation runs (m_preparing), else by the GUI thread; handed over through the
    // Worker's mutex one way and m_mutex the other.
    HeatmapCpuPasses m_passes;
    HeatmapPassSchedule m_schedule;
    std::mutex m_mutex;
    std::condition_variable m_prepared;
    bool m_preparing = false; // guarded by m_mutex
    // The GUI thread's.
    QSize m_layoutSize { 1, 1 }; // once the inputs handed over are applied
    std::vector<Handed> m_inputs; // handed over since the last preparation, in order
    bool m_running = false; // a preparation's result is still to come
    quint64 m_preparation = 0; // the latest one started
    bool m_current = false;
    QImage m_image; // over m_passes' pixels
    HeatmapImageBuffer m_shown; // a copy of it, shown while a preparation runs if m_showingCopy
    bool m_showingCopy = false;
    const QImage m_none; // shown while a preparation runs and there is no copy: the map's background
    quint64 m_resolveCount = 0;
    quint64 m_screenCount = 0;
    Worker m_worker; // last: goes first, waiting for the preparation under way
};

} // namespace fleetscope
