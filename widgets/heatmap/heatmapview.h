// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/heatmaplayout.h"
#include "jobs/worker.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapcamera.h"
#include "widgets/heatmap/heatmapoverlay.h"
#include "widgets/heatmap/heatmapscene.h"

#include <QImage>
#include <QThreadPool>
#include <QTimer>
#include <QWidget>

#include <atomic>
#include <ctime>
#include <functional>
#include <memory>

namespace fleetscope {

class HeatmapCpuRenderer;
class HeatmapGlSurface;
class HeatmapInputs;

// The fleet heatmap: every GPU one cell. This widget is the glue: input, tooltip, animation pacing, the layout
// (built on a worker thread for big fleets); HeatmapCamera places the layout in the window, and one of two renderers
// draws it: the shaders (HeatmapRenderer, on a QOpenGLWidget child, HeatmapGlSurface) where OpenGL runs on a
// graphics card, else the same passes on the CPU's threads (HeatmapCpuRenderer) painted with QPainter, so that the
// window holds no OpenGL at all and Qt composes it without a software rasteriser. A new frame is one contiguous
// copy of the selected metric's plane and the health bytes; the layout is handed over once per topology generation.
class HeatmapView : public QWidget
{
    Q_OBJECT
public:
    static constexpr double minCellSize = HeatmapCamera::minCellSize;
    static constexpr double maxCellSize = HeatmapCamera::maxCellSize;
    // Fleets up to this size are laid out at once, on the GUI thread (a few ms); bigger ones on a worker thread,
    // the old layout drawn meanwhile (see isLayoutPending).
    static constexpr uint32_t syncLayoutGpus = 100'000;

    explicit HeatmapView(QWidget *parent = nullptr);
    // Asks for the OpenGL the shaders need (3.3 core, or ES 3.0 where Qt uses GLES); call before QApplication.
    static void requestSurfaceFormat();
    // Who draws the map: the shaders on OpenGL, or their twin on the CPU's threads. Auto: the CPU where OpenGL is a
    // software renderer (llvmpipe, softpipe, swrast) or missing, unless FLEETSCOPE_HEATMAP_PASSES says gpu or cpu;
    // else the shaders.
    enum class Passes { Auto, Gpu, Cpu };
    ~HeatmapView() override;

    void setTopology(const TopologyPtr &topology);
    void setFrame(const FramePtr &frame);
    void setMetric(const MetricInfo &metric);
    void setColorMap(const ColorMap &map);
    // The range of values mapped onto the colour map, without resetting the transition between frames (auto range
    // moves it while the data streams); setMetric sets it to the metric's own range.
    void setRange(float rangeMin, float rangeMax);
    // Where GPUs sit: the floor plan (rows and racks as on the floor), compact (fleet order, filling the window), or
    // grouped by job (each running job's GPUs together, idle GPUs last). Compact and by-job follow the window's
    // shape; by-job follows the jobs.
    enum class Arrangement { FloorPlan, Compact, ByJob };
    void setArrangement(Arrangement arrangement);
    Arrangement arrangement() const { return m_arrangement; }
    // The jobs running on the fleet: the tooltip names a GPU's job, and the by-job arrangement groups by them.
    void setJobs(const JobsPtr &jobs);
    JobsPtr jobs() const { return m_jobs; }

    TopologyPtr topology() const { return m_topology; }
    FramePtr frame() const { return m_frame; }
    const MetricInfo &metric() const { return m_metric; }
    const ColorMap &colorMap() const { return m_colorMap; }
    const HeatmapLayout &layout() const { return *m_layout; }
    // A layout for the current topology, arrangement, jobs and window shape is being built on a worker thread; the
    // one shown until now stays until layoutReady. Never true for fleets up to syncLayoutGpus.
    bool isLayoutPending() const { return m_layoutPending; }

    // Geometry, in widget (logical) coordinates: the GPU under a point (-1 for none) and a GPU's cell.
    int gpuAt(const QPointF &pos) const;
    QRectF cellRect(int gpu) const;
    // The value of the current metric for a GPU in the frame shown (NaN when none).
    float valueOf(int gpu) const;
    // Tooltip text for a GPU: host, GPU index, value with unit, health, job, data age, UUID.
    QString describeGpu(int gpu) const;
    // Does now, and waits for, the uploads the next paint would do for a new topology, frame or colour map;
    // benchmarks time the path from a received frame to its texture with it. Needs a shown widget.
    void uploadPending();
    // The map as drawn now, text included, in physical pixels (a fresh paint).
    QImage grabMap();
    // What draws the map, for people: the OpenGL renderer and version, or the CPU's passes.
    QString rendererDescription() const;
    // Paints so far, for the frame-rate display and tests.
    quint64 paintCount() const { return m_paintCount; }

    // Zoom and pan. The view starts fitted to the window, and stays fitted (to the fleet, or to the cells given to
    // zoomToCells) across resizes until the user zooms or pans. Positions are in widget coordinates.
    void zoomAt(const QPointF &anchor, double factor); // the point under anchor stays under it
    void panBy(const QPointF &delta);
    void zoomToFit();
    // Zooms so that these layout cells fill most of the view, morphing there in a quarter second (at once without
    // animation); an empty rect fits the whole fleet.
    void zoomToCells(const QRect &cells);
    // The cells of GPUs [first, first + count): their bounding rectangle in the current layout.
    QRect cellsOf(uint32_t first, uint32_t count) const;
    // The view as a position that survives a window of another size: logical pixels per cell and the layout cell
    // at the centre of the view (zoom 0 = fitted).
    using ViewPosition = HeatmapCamera::ViewPosition;
    ViewPosition viewPosition() const;
    void setViewPosition(const ViewPosition &position);
    // GPUs outlined on the map wherever they are (a job's blast radius); empty for none.
    void setMarkedGpus(const std::vector<uint32_t> &gpus);
    // GPUs [first, first + count) in focus (a drill-down's place), the others dimmed; count 0 = all in focus.
    void setFocusRange(uint32_t first, uint32_t count);
    size_t markedGpuCount() const { return m_markCount; }
    // When a pixel covers several GPUs (more GPUs than pixels), it shows the worst of them or their mean.
    enum class Aggregation { Worst, Mean };
    // Between two frames the map morphs from one to the other at the display's rate (thermal waves move instead of
    // jumping); off for weak wall-display machines.
    void setAnimated(bool animated);
    bool isAnimated() const { return m_animated; }
    // How far the displayed state is from the previous frame to the current one, 0..1 (1 when not animating).
    double interpolation() const;
    // Text over the map (row, rack and job names, values) up to this many times its usual size: a wall display is
    // read from across a room. 1 by default.
    void setLabelScale(double scale);
    double labelScale() const { return m_labelScale; }
    // Marks the data shown as old (a dot pattern over the map and a banner with the note); empty = fresh.
    void setStaleNote(const QString &note);
    QString staleNote() const { return m_staleNote; }
    // Marks the data shown as a replay or a comparison on purpose (a blue banner, no pattern); empty = none.
    void setReplayNote(const QString &note);
    QString replayNote() const { return m_replayNote; }
    // The selected GPU (-1 for none), drawn with a ring; a click selects, and emits gpuSelected.
    void setSelectedGpu(int gpu);
    int selectedGpu() const { return m_selectedGpu; }
    // Monotonic milliseconds used for the interpolation; tests drive it.
    void setClock(std::function<qint64()> clock);
    // Wall-clock milliseconds since the epoch, for the data's age in the tooltip; tests drive it.
    void setWallClock(std::function<qint64()> clock);
    // Between two animation repaints, in ms: 16 (the display's rate) where a frame costs little CPU, longer where it
    // does (a software renderer), so that animating costs at most about a third of a core.
    int animationInterval() const { return m_animationTimer.interval(); }
    void setAggregation(Aggregation aggregation);
    Aggregation aggregation() const { return m_aggregation; }
    bool isFitted() const { return camera().isFitted(); }
    // Physical pixels per GPU cell now.
    double cellSize() const { return camera().placement().cellSize; }
    // Switches the renderer (see Passes). The data is handed over again, so a frame's morph starts over.
    void setPasses(Passes passes);
    // On the CPU, what a new frame, layout or view costs is prepared on a worker thread while the map shows what it
    // showed (on by default); off, in the paint itself, as the shaders do it (benchmarks measure it so).
    void setBackgroundPreparation(bool on);
    // Gpu or Cpu: the renderer in use.
    Passes passes() const;
    // Runs of the renderer's per-frame passes so far: an animation or hover repaint runs none.
    quint64 resolveCount() const;
    quint64 screenCount() const;

Q_SIGNALS:
    void hoveredGpuChanged(int gpu);
    void gpuSelected(int gpu);
    // Enter on the map: the selected GPU (or the one under the cursor) is to be opened, one level down.
    void gpuActivated(int gpu);
    // Esc or Backspace on the map: one level up.
    void upRequested();
    // A layout built on a worker thread is now shown (see isLayoutPending).
    void layoutReady();
    // A paint of the map has reached the window (after the swap on OpenGL, after the paint event on the CPU).
    void framePresented();

protected:
    // One paint of the map, on whichever surface draws it (the OpenGL child's paintGL, this widget's paint event);
    // benchmarks time it.
    virtual void paintMap();
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void reserveBuffers();
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void leaveEvent(QEvent *event) override;
    bool event(QEvent *event) override;

private:
    friend class HeatmapGlSurface;
    const HeatmapCamera &camera() const; // m_camera, told the window's size and the layout's first
    HeatmapCamera &camera();
    void redraw(); // a repaint of whichever surface draws
    // The OpenGL surface's context is (re)initialised: everything is to be handed over again; ready false: no
    // shaders there, so the CPU draws unless the shaders were asked for by name.
    void surfaceReset(bool ready);
    HeatmapInputs *inputs(); // the renderer in use, null while OpenGL is not initialised
    void uploadDirty(); // whatever changed since the last upload
    void finishCpuPasses(); // on the CPU, the current state prepared now, for the next paint
    HeatmapScene scene(const HeatmapCamera::Placement &p, QSize framebuffer, double mix) const;
    QSize framebufferSize() const; // physical pixels
    void updateOverlay(const HeatmapCamera::Placement &p); // the text over the map, for the renderer
    void pace(); // after a paint: the animation's rate from its measured cost
    void relayout(); // the layout from the topology, the arrangement, the jobs and (compact, by job) the window shape
    void applyLayout(std::shared_ptr<const HeatmapLayout> layout);
    double layoutAspect() const;

    TopologyPtr m_topology;
    FramePtr m_frame;
    MetricInfo m_metric;
    ColorMap m_colorMap;
    // Shared with the CPU renderer's preparation thread, which reads the cells (never changed once built).
    std::shared_ptr<const HeatmapLayout> m_layout = std::make_shared<const HeatmapLayout>();
    Arrangement m_arrangement = Arrangement::FloorPlan;
    JobsPtr m_jobs;
    QTimer m_relayoutTimer; // coalesces the relayouts a window resize asks for
    QTimer m_reserveTimer; // coalesces growing the image buffers to the map's new size (reserveBuffers)
    // Layouts of big fleets: built one at a time on m_layoutPool; only the latest generation is applied.
    QThreadPool m_layoutPool;
    std::atomic<quint64> m_layoutGeneration { 0 }; // written on the GUI thread, read by the worker to skip stale work
    bool m_layoutPending = false;
    bool m_hasPendingPosition = false; // setViewPosition while a layout is pending: applied with it
    ViewPosition m_pendingPosition;
    mutable HeatmapCamera m_camera;
    int m_hoveredGpu = -1;
    QString m_staleNote;
    double m_labelScale = 1;
    QString m_replayNote;
    int m_selectedGpu = -1;
    QPointF m_pressedAt;
    Aggregation m_aggregation = Aggregation::Worst;
    QPointF m_dragFrom;
    bool m_dragging = false;
    quint64 m_paintCount = 0;

    // One of the two renderers: the OpenGL child (its GL state touched only with its context current), or the CPU.
    Passes m_requestedPasses = Passes::Auto;
    HeatmapGlSurface *m_glSurface = nullptr;
    std::unique_ptr<HeatmapCpuRenderer> m_cpu;
    bool m_backgroundPreparation = true;
    HeatmapOverlayCache m_overlay; // the text over the map, redrawn only when it changes
    std::vector<uint8_t> m_marks; // one byte per GPU in dense order, 1 = outlined
    size_t m_markCount = 0;
    uint32_t m_focusFirst = 0;
    uint32_t m_focusCount = 0;
    bool m_marksDirty = false;
    bool m_topologyDirty = false; // (re)allocate the dense-order textures for the fleet size
    bool m_layoutDirty = false;
    bool m_frameDirty = false;
    bool m_colorMapDirty = true;
    bool m_hasData = false;
    bool m_hasPrevious = false; // the other data texture holds the previous frame of the same metric
    bool m_frameIsNew = false; // the pending upload is a new frame (shift textures), not a new metric

    // Interpolation between the previous and the current frame, over the time between their samples.
    bool m_animated = true;
    std::function<qint64()> m_clock;
    qint64 m_transitionStart = 0;
    qint64 m_transitionMs = 1000;
    QTimer m_animationTimer;
    std::function<qint64()> m_wallClock;
    // Pacing of the animation by its CPU cost (see pace()).
    std::clock_t m_paceStart = 0;
    int m_paceFrames = 0;
    double m_frameCpuMs = 0;
    Worker m_bufferWorker; // allocates and touches the image buffers' memory (reserveBuffers); last, so first to go
};

} // namespace fleetscope
