// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "jobs/worker.h"
#include "model/fleetmodel.h"
#include "model/heatmaplayout.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapcamera.h"
#include "widgets/heatmap/heatmaplayoutjob.h"
#include "widgets/heatmap/heatmapmapstate.h"
#include "widgets/heatmap/heatmappacer.h"
#include "widgets/heatmap/heatmapscenebuilder.h"

#include <QImage>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <memory>

namespace fleetscope {

class HeatmapSurface;

// The fleet heatmap: every GPU one cell. This widget is the glue: input and tooltip, the camera (HeatmapCamera places
// the layout in the window), the text over the map, repaints while it moves (HeatmapPacer), and which surface draws:
// the shaders on a QOpenGLWidget child (HeatmapGlSurface) where OpenGL runs on a graphics card, else the same passes on
// the CPU's threads (HeatmapCpuSurface), so that the window holds no OpenGL at all and Qt composes it without a
// software rasteriser. What is shown is HeatmapMapState; its layout is built by HeatmapLayoutJob (on a worker thread
// for big fleets); a surface pulls its scene from HeatmapSceneBuilder when it paints.
class HeatmapView : public QWidget
{
    Q_OBJECT
public:
    static constexpr double minCellSize = HeatmapCamera::minCellSize;
    static constexpr double maxCellSize = HeatmapCamera::maxCellSize;
    // Fleets up to this size are laid out at once, on the GUI thread (a few ms); bigger ones on a worker thread,
    // the old layout drawn meanwhile (see isLayoutPending).
    static constexpr uint32_t syncLayoutGpus = HeatmapLayoutJob::syncGpus;

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
    using Arrangement = HeatmapArrangement;
    void setArrangement(Arrangement arrangement);
    Arrangement arrangement() const { return m_state.arrangement(); }
    // The jobs running on the fleet: the tooltip names a GPU's job, and the by-job arrangement groups by them.
    void setJobs(const JobsPtr &jobs);
    JobsPtr jobs() const { return m_state.jobs(); }

    TopologyPtr topology() const { return m_state.topology(); }
    FramePtr frame() const { return m_state.frame(); }
    const MetricInfo &metric() const { return m_state.metric(); }
    const ColorMap &colorMap() const { return m_state.colorMap(); }
    const HeatmapLayout &layout() const { return m_state.layout(); }
    // A layout for the current topology, arrangement, jobs and window shape is being built on a worker thread; the
    // one shown until now stays until layoutReady. Never true for fleets up to syncLayoutGpus.
    bool isLayoutPending() const { return m_layoutJob.isPending(); }

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
    // GPUs outlined on the map wherever they are (a job's blast radius); empty for none. Takes a domain's highlight
    // away too: what is outlined now is something else.
    void setMarkedGpus(const std::vector<uint32_t> &gpus);
    // The GPUs of the shared domain behind an incident (model/domainhighlight.h), as runs [first, count): each framed
    // in the domain's cyan where it is not outlined (tinted when too small for a frame), and the domain's racks
    // outlined around in it; empty for none. Set after the incident's GPUs are outlined (setMarkedGpus clears it).
    void setDomainGpus(const std::vector<std::pair<uint32_t, uint32_t>> &runs);
    size_t domainGpuCount() const { return m_state.domainGpuCount(); }
    // GPUs [first, first + count) in focus (a drill-down's place), the others dimmed; count 0 = all in focus.
    void setFocusRange(uint32_t first, uint32_t count);
    size_t markedGpuCount() const { return m_state.markedGpuCount(); }
    using Aggregation = HeatmapAggregation;
    // Between two frames the map morphs from one to the other at the display's rate (thermal waves move instead of
    // jumping); off for weak wall-display machines.
    void setAnimated(bool animated);
    bool isAnimated() const { return m_state.isAnimated(); }
    // How far the displayed state is from the previous frame to the current one, 0..1 (1 when not animating).
    double interpolation() const;
    // Text over the map (row, rack and job names, values) up to this many times its usual size: a wall display is
    // read from across a room. 1 by default.
    void setLabelScale(double scale);
    double labelScale() const { return m_state.labelScale(); }
    // Marks the data shown as old (a dot pattern over the map and a banner with the note); empty = fresh.
    void setStaleNote(const QString &note);
    QString staleNote() const { return m_state.staleNote(); }
    // Marks the data shown as a replay or a comparison on purpose (a blue banner, no pattern); empty = none.
    void setReplayNote(const QString &note);
    QString replayNote() const { return m_state.replayNote(); }
    // The selected GPU (-1 for none), drawn with a ring; a click selects, and emits gpuSelected.
    void setSelectedGpu(int gpu);
    int selectedGpu() const { return m_state.selectedGpu(); }
    // Monotonic milliseconds used for the interpolation; tests drive it.
    void setClock(std::function<qint64()> clock);
    // Wall-clock milliseconds since the epoch, for the data's age in the tooltip; tests drive it.
    void setWallClock(std::function<qint64()> clock);
    // Between two animation repaints, in ms: 16 (the display's rate) where a frame costs little CPU, longer where it
    // does (a software renderer), so that animating costs at most about a third of a core.
    int animationInterval() const { return m_pacer.interval(); }
    void setAggregation(Aggregation aggregation);
    Aggregation aggregation() const { return m_state.aggregation(); }
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
    // J on a GPU in a running job (the one under the cursor, else the selected one), or by job a double-click on a
    // job's block: that job's own page.
    void jobPageRequested(quint64 jobId);
    // A shared domain's highlight was set (count: its GPUs) or taken away (0), by setDomainGpus or a new outline.
    void domainGpusChanged(size_t count);
    // A layout built on a worker thread is now shown (see isLayoutPending).
    void layoutReady();
    // A paint of the map has reached the window (after the swap on OpenGL, after the paint event on the CPU).
    void framePresented();
    // The map has been drawn on its surface, in that surface's paint (before it reaches the window; with OpenGL's
    // context current): benchmarks time the paint up to here.
    void mapPainted();

protected:
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
    const HeatmapCamera &camera() const; // m_camera, told the window's size and the layout's first
    HeatmapCamera &camera();
    void redraw(); // a paint of the surface
    template <typename Surface> void adopt(Surface *surface); // the new surface, filling the view
    void surfacePainted(bool map, bool morphing); // after each paint of the surface: counts, the pacer
    QSize framebufferSize() const; // physical pixels
    void relayout(); // the layout from the topology, the arrangement, the jobs and (compact, by job) the window shape
    void applyLayout(std::shared_ptr<const HeatmapLayout> layout, bool builtOffThread);
    double layoutAspect() const;

    HeatmapMapState m_state; // what is shown
    mutable HeatmapCamera m_camera;
    HeatmapSceneBuilder m_scenes { m_state, m_camera }; // what the surface pulls, the text over the map with it
    QTimer m_relayoutTimer; // coalesces the relayouts a window resize asks for
    QTimer m_reserveTimer; // coalesces growing the image buffers to the map's new size (reserveBuffers)
    bool m_hasPendingPosition = false; // setViewPosition while a layout is pending: applied with it
    ViewPosition m_pendingPosition;
    int m_hoveredGpu = -1;
    QPointF m_pressedAt;
    QPointF m_dragFrom;
    bool m_dragging = false;
    quint64 m_paintCount = 0;

    // What draws: a child filling the view, the shaders' or the CPU's.
    Passes m_requestedPasses = Passes::Auto;
    HeatmapSurface *m_surface = nullptr;
    bool m_backgroundPreparation = true;

    HeatmapPacer m_pacer { [this] { redraw(); } }; // repaints while something moves
    HeatmapLayoutJob m_layoutJob; // calls applyLayout; goes before the state it writes
    Worker m_bufferWorker; // allocates and touches the image buffers' memory (reserveBuffers); last, so first to go
};

} // namespace fleetscope
