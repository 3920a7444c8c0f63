// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"
#include "model/heatmaplayout.h"
#include "widgets/heatmap/colormap.h"
#include "widgets/heatmap/heatmapcamera.h"
#include "widgets/heatmap/heatmapscene.h"

#include <QString>

#include <functional>
#include <memory>
#include <vector>

namespace fleetscope {

class HeatmapInputs;

// Where GPUs sit: the floor plan (rows and racks as on the floor), compact (fleet order, filling the window), or
// grouped by job (each running job's GPUs together, idle GPUs last).
enum class HeatmapArrangement { FloorPlan, Compact, ByJob, ByFabric };
// When a pixel covers several GPUs (more GPUs than pixels), it shows the worst of them or their mean.
enum class HeatmapAggregation { Worst, Mean };

// What the map shows, without a widget: the fleet, its layout, the frame and the metric with its colours and range,
// the jobs, what is selected, marked, in focus or noted, and the morph between two frames; and what of it a renderer
// has not been handed yet (upload). No camera (HeatmapCamera places the layout in a window) and no painting.
//
// Threads: the GUI thread's alone. The layout and the frame are shared, never changed, so a renderer's worker may read
// them.
class HeatmapMapState
{
public:
    HeatmapMapState();

    // A new fleet: no frame, no selection, marks or focus, and jobs of another topology dropped.
    void setTopology(const TopologyPtr &topology);
    // The jobs if they belong to the fleet shown (else none); true when the by-job layout is to follow them (the set of
    // running jobs changed, not just a poll).
    bool setJobs(const JobsPtr &jobs);
    // False for a frame that does not match the fleet shown (left out).
    bool setFrame(const FramePtr &frame);
    void setMetric(const MetricInfo &metric);
    // True when the range changed.
    bool setRange(float rangeMin, float rangeMax);
    void setColorMap(const ColorMap &map);
    // True when it changed.
    bool setArrangement(HeatmapArrangement arrangement);
    void setLayout(std::shared_ptr<const HeatmapLayout> layout);
    // GPUs outlined (a job's blast radius, an incident's GPUs); a new outline takes a domain's highlight away too.
    void setMarkedGpus(const std::vector<uint32_t> &gpus);
    // The GPUs of a shared domain (an incident's leaf switch, PDU, cooling unit), as runs [first, count): framed in
    // the domain's colour where not outlined, their racks outlined around; empty for none.
    void setDomainGpus(const std::vector<std::pair<uint32_t, uint32_t>> &runs);
    void setFocusRange(uint32_t first, uint32_t count);
    // Each true when it changed.
    bool setSelectedGpu(int gpu);
    bool setStaleNote(const QString &note);
    bool setReplayNote(const QString &note);
    bool setLabelScale(double scale);
    void setAggregation(HeatmapAggregation aggregation) { m_aggregation = aggregation; }
    void setAnimated(bool animated) { m_animated = animated; }
    void setClock(std::function<qint64()> clock) { m_clock = std::move(clock); }
    void setWallClock(std::function<qint64()> clock) { m_wallClock = std::move(clock); }

    const TopologyPtr &topology() const { return m_topology; }
    const FramePtr &frame() const { return m_frame; }
    const MetricInfo &metric() const { return m_metric; }
    const ColorMap &colorMap() const { return m_colorMap; }
    const HeatmapLayout &layout() const { return *m_layout; }
    const std::shared_ptr<const HeatmapLayout> &sharedLayout() const { return m_layout; }
    const JobsPtr &jobs() const { return m_jobs; }
    HeatmapArrangement arrangement() const { return m_arrangement; }
    HeatmapAggregation aggregation() const { return m_aggregation; }
    int selectedGpu() const { return m_selectedGpu; }
    size_t markedGpuCount() const { return m_markCount; }
    size_t domainGpuCount() const { return m_domainCount; }
    // Around the domain's GPUs, rack by rack, in layout cells (those of one rack on a line joined with the next
    // rack's where they touch); bumped revision on every change, for the text over the map.
    const std::vector<QRect> &domainCells() const { return m_domainCells; }
    quint64 domainRevision() const { return m_domainRevision; }
    const QString &staleNote() const { return m_staleNote; }
    const QString &replayNote() const { return m_replayNote; }
    double labelScale() const { return m_labelScale; }
    bool isAnimated() const { return m_animated; }
    qint64 now() const { return m_clock(); }
    // The plane of the metric shown in the frame shown, once handed to a renderer; else null.
    const MetricPlane *shownPlane() const;

    // How far the morph is from the previous frame to the current one, 0..1 (1 when not animating).
    double interpolation() const;
    // The value of the metric for a GPU in the frame shown (NaN when none).
    float valueOf(int gpu) const;
    // Tooltip text for a GPU: host, GPU index, value with unit, health, job, data age, UUID.
    QString describeGpu(int gpu) const;
    // The bounding rectangle of GPUs [first, first + count) in the layout.
    QRect cellsOf(uint32_t first, uint32_t count) const;
    // The camera told the layout's size and the margins the floor plan's names need when fitted.
    void fitCamera(HeatmapCamera &camera) const;

    // Hands the renderer what changed since the last call (all of it after uploadAgain).
    void upload(HeatmapInputs &inputs);
    // Another renderer, or its context lost: everything is to be handed over again.
    void uploadAgain();
    // The scene's part this state decides, for a layout placed so and a morph at mix (the text over the map aside).
    HeatmapScene scene(const HeatmapCamera::Placement &p, QSize framebuffer, double mix) const;

private:
    TopologyPtr m_topology;
    FramePtr m_frame;
    MetricInfo m_metric;
    ColorMap m_colorMap;
    std::shared_ptr<const HeatmapLayout> m_layout = std::make_shared<const HeatmapLayout>();
    HeatmapArrangement m_arrangement = HeatmapArrangement::FloorPlan;
    HeatmapAggregation m_aggregation = HeatmapAggregation::Worst;
    JobsPtr m_jobs;
    int m_selectedGpu = -1;
    QString m_staleNote;
    QString m_replayNote;
    double m_labelScale = 1;
    std::vector<uint8_t> m_marks; // one byte per GPU in dense order: 1 outlined, 2 in the domain highlighted
    size_t m_markCount = 0;
    std::vector<std::pair<uint32_t, uint32_t>> m_domainRuns;
    size_t m_domainCount = 0;
    std::vector<QRect> m_domainCells;
    quint64 m_domainRevision = 0;
    void placeDomain(); // m_domainCells from the runs and the layout
    uint32_t m_focusFirst = 0;
    uint32_t m_focusCount = 0;

    // What the renderer has not been handed yet, and what it holds.
    bool m_topologyDirty = false; // (re)allocate the dense-order inputs for the fleet size
    bool m_layoutDirty = false;
    bool m_frameDirty = false;
    bool m_colorMapDirty = true;
    bool m_marksDirty = false;
    bool m_frameIsNew = false; // the pending upload is a new frame (shift), not a new metric
    bool m_hasData = false;
    bool m_hasPrevious = false; // the renderer's other frame is the previous frame of the same metric

    // The morph between the previous and the current frame, over the time between their samples.
    bool m_animated = true;
    std::function<qint64()> m_clock;
    std::function<qint64()> m_wallClock;
    qint64 m_transitionStart = 0;
    qint64 m_transitionMs = 1000;
};

} // namespace fleetscope
