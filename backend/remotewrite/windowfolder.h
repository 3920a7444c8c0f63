// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/fleetshape.h"
#include "core/frame.h"
#include "core/framepoller.h"
#include "core/metriccatalog.h"
#include "dcgm/metricmap.h"
#include "dcgm/prometheusevents.h"
#include "dcgm/prometheusjobs.h"
#include "dcgm/promsample.h"
#include "dcgm/slurmjobs.h"
#include "remotewrite/pushedslurm.h"

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace fleetscope::backend {

// One pushed sample, mapped to its GPU (dense index) and catalogue field.
struct MappedSample
{
    uint32_t gpu = 0;
    MetricId metric = MetricId::GpuTemp;
    int64_t timeMs = 0;
    double value = 0;
    uint8_t part = 0; // of a metric summed from two counters (MetricMap::Mapped::part)
};

// A GPU's job labels as one series showed them, at that series' sample time.
// A GPU's job as a push labels it: the job's labels joined (jobKey), not the series' whole label set, so that a push
// holds a few dozen bytes per GPU series instead of a copy of every label (about half a kilobyte).
struct MappedJob
{
    uint32_t gpu = 0;
    int64_t timeMs = 0;
    std::string key; // jobKey(nameSpace, pod, container, hpcJob, hpcUser)

    // The labels of a job joined with a separator no label value holds here (0x1f), in that order.
    static std::string jobKey(const PromSample &labels);
};

// Turns pushed samples into frames: one per window of sample time (the scrape interval), published once the window
// has closed, that is once the backend's clock is past its end by the delay senders need to deliver (their batching
// and the network). Windows are aligned to multiples of their length, so each target's scrape falls into exactly one.
//
// Per window and GPU the newest sample of each field wins; an older one is out of order and a repeated one (a
// sender's retry) a duplicate, both dropped and counted; so are samples for a window already published or from
// before 1970 (too old) and samples more than a window ahead of the clock (from the future). A sample's time is any
// int64 a sender wrote; it is placed in its window without overflow and refused before any other arithmetic. A GPU
// keeps its values from window to window and turns to no data once it has sent nothing for the grace period. The
// counters (ECC, NVLink, PCIe, remapped rows, the rail NICs' downs and errors) become their increase over the last
// five minutes and the XID gauge its number of changes, as the Prometheus source's increase(...[5m]) and
// changes(...[5m]); a counter that falls was reset and counts from zero. NVLink's errors add up the increases of its
// two CRC counters (MetricMap::summedMetrics), each with its own total and resets (MappedSample::part). Transmit wait
// (ticks, scaled to %-seconds by the map) becomes its rate between a NIC's last two samples. A GPU's fields come from
// up to three exporters (its own dcgm-exporter, its node's node-exporter, its rack's facility exporter), each at its
// own scrape time: a window keeps each one's newest scrape, and each one's fields turn to no data on their own; the GPU
// is one with data by its own. Events and jobs as the Prometheus source finds them (PrometheusEvents, PrometheusJobs).
//
// Memory: an open window holds, per GPU, a float per gauge and a double per raw counter that was pushed, a time per
// source and a mask: 96 bytes for dcgm-exporter's 15 fields (8 more with NVLink's data CRC counter), 156 with
// node-exporter's and the facility's; the folded state about the same; at most maxOpenWindows are open.
//
// Threads: add() from any thread (the receiver's); closeNext() and nextCloseMs() from one thread (the frame source's
// ticker). They share only the open windows, under m_mutex.
class WindowFolder
{
public:
    // The longest window and delay taken; longer ones are cut to it. A window length may come from the senders'
    // timestamps (the interval they show, when none is given), and nothing bounds those; past a day it is not a
    // scrape interval. Within it a sample's offset in its window fits the int32 kept per GPU, and a window's end plus
    // the delay stays far inside int64 for every window a sample may open (from 1970 to the clock's next window).
    static constexpr int64_t maxWindowMs = 24 * 3600 * 1000;
    // The exporters a GPU's fields come from, each scraped at its own time (MetricMap::Scope).
    static constexpr size_t sources = 3;
    // A window's fields: the catalogue's, then the second counter of each metric summed from two
    // (MetricMap::summedMetrics), whose raw totals and resets are their own; their increases add up in the metric.
    static constexpr size_t slots = static_cast<size_t>(MetricId::Count) + MetricMap::summedMetrics.size();

    struct Options
    {
        int64_t windowMs = 1000; // 1 .. maxWindowMs
        int64_t delayMs = 2000; // 0 .. maxWindowMs
        int64_t graceMs = 0; // 0: three windows
        size_t maxOpenWindows = 8;
        // The receiver's start: samples from before it are ignored (not counted as dropped) and the window it falls in
        // is not published, for it would miss what was pushed while the layout was being learnt.
        int64_t startMs = 0;
    };

    // What add() did with the samples it was given.
    struct Counts
    {
        uint64_t accepted = 0;
        uint64_t tooOld = 0;
        uint64_t future = 0;
        uint64_t outOfOrder = 0;
        uint64_t duplicate = 0;
        uint64_t windowsFull = 0; // more windows open than allowed: the frames are not keeping up
        uint64_t beforeStart = 0; // samples of windows from before the start (a sender's backlog)
        uint64_t sentinelValues = 0; // DCGM's blanks, taken as no data
        uint64_t nanValues = 0; // NaN and +-Inf (a Prometheus staleness marker among them), taken as no data
        void add(const Counts &other);
        uint64_t dropped() const { return tooOld + future + outOfOrder + duplicate + windowsFull; }
    };

    // What folding found in the values, per closed window.
    struct Closed
    {
        std::shared_ptr<Frame> frame;
        std::vector<FleetEvent> events;
        size_t gpusReporting = 0; // sent something in this window
        size_t gpusWithoutData = 0; // nothing within the grace period
    };

    WindowFolder(const FleetShape &shape, const Options &options);
    ~WindowFolder();
    WindowFolder(const WindowFolder &) = delete;
    WindowFolder &operator=(const WindowFolder &) = delete;

    // Folds a batch into its windows; nowMs is the backend's clock (Unix ms).
    void add(
        const std::vector<MappedSample> &samples, const std::vector<MappedJob> &jobs, int64_t nowMs, Counts *counts);

    // Closes the oldest window whose end + delay is at or before nowMs (and publishes a frame for it). False when none
    // is due. Windows that never received a sample are not published.
    bool closeNext(int64_t nowMs, Closed *closed);
    // When the oldest open window is due (Unix ms); the next window boundary + delay when none is open.
    int64_t nextCloseMs(int64_t nowMs) const;
    size_t openWindows() const;

    // The frame before any window closed: every GPU without data.
    std::shared_ptr<Frame> emptyFrame() const;
    // A Slurm exporter's series pushed with a request (any thread): joined at each window's close, as the Prometheus
    // source joins them; a GPU a Slurm job claims is that job's, not its pod labels' (see SlurmJobs).
    void addSlurm(std::vector<PushedSlurm::Pushed> batch, int64_t nowMs) { m_pushedSlurm.add(std::move(batch), nowMs); }
    const PushedSlurm &pushedSlurm() const { return m_pushedSlurm; }
    std::vector<JobInfo> jobs() const { return SlurmJobs::merged(m_slurm.jobs(), m_jobs.jobs()); }
    const Options &options() const { return m_options; }

    static int64_t windowOf(int64_t timeMs, int64_t windowMs);

private:
    struct Window;
    Window *windowFor(int64_t index, int64_t nowMs, Counts *counts);
    uint32_t internJob(const std::string &key, int64_t window);
    void forgetJobs(int64_t closedWindow);
    void fold(Window &window, Closed *closed);

    const FleetShape &m_shape;
    Options m_options;
    const uint32_t m_gpus;

    mutable std::mutex m_mutex; // the open windows, the closed index and the job table
    std::map<int64_t, std::unique_ptr<Window>> m_open;
    int64_t m_closedThrough; // the newest window published (or skipped)
    int64_t m_firstWindow = std::numeric_limits<int64_t>::min(); // the first that may be published
    // The job label sets pushed, by id - 1, and the window each was last pushed for. A set not pushed for
    // jobForgetWindows windows, and held by no GPU, is forgotten and its id reused: pods come and go by the million
    // over weeks, and the table would otherwise grow for ever (past its bound, new jobs would get no id).
    std::unordered_map<std::string, uint32_t> m_jobIds;
    std::vector<PromSample> m_jobLabels;
    std::vector<int64_t> m_jobLastWindow;
    std::vector<uint32_t> m_freeJobIds;

public:
    // Windows after its last push that a job's labels are kept for when no GPU holds them any more.
    static constexpr int64_t jobForgetWindows = 10;
    // Job label sets held now (for the tests and the log).
    size_t jobLabelSets() const;

private:
    // Folded state: the ticker's only.
    std::array<std::vector<float>, static_cast<size_t>(MetricId::Count)> m_values;
    std::array<std::vector<double>, slots> m_raw; // counters' last raw values, by slot
    std::array<std::unordered_map<uint32_t, std::deque<std::pair<int64_t, double>>>,
        static_cast<size_t>(MetricId::Count)>
        m_increases; // non-zero increases in the last five minutes, by GPU
    // Per source (MetricMap::Scope: a GPU's dcgm-exporter, its node-exporter, its rack's facility exporter) and GPU,
    // the newest sample time, 0 when never: each source's fields turn to no data on their own.
    std::array<std::vector<int64_t>, sources> m_lastSeenMs;
    std::vector<int64_t> m_transmitWaitMs; // per GPU, the time of the transmit-wait total in m_raw
    // (GPU, job label set id), ascending: each GPU's jobs as of its last window (a GPU may serve several).
    std::vector<std::pair<uint32_t, uint32_t>> m_gpuJobs;
    PrometheusJobs m_jobs;
    PushedSlurm m_pushedSlurm; // its own lock: the HTTP threads add, the ticker joins
    SlurmJobs m_slurm;
    std::vector<uint64_t> m_jobOfGpu; // Slurm's jobs, else the pod labels'
    PrometheusEvents m_events;
};

} // namespace fleetscope::backend
