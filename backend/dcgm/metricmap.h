// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/metriccatalog.h"

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fleetscope::backend {

// How an exporter names what the catalogue knows: which series holds each metric (and in which unit), and which labels
// name a series' node, GPU, UUID, model and driver. dcgm-exporter has renamed both over its releases, so a source
// reads series through a map: one of the built-in profiles, chosen from the series a server holds, or a site's own
// (--metric-map FILE).
//
// For any source, polled or pushed (a remote-write receiver gets a series' name and labels and needs the GPU and
// value): metric(name) says which catalogue metric a series is and how to convert its value; identify() (or
// readLabel(), one label at a time) gives its hostname and gpu from a label set holding either spelling of the node
// label. A map is a value: copy it, share it between threads read-only.
class MetricMap
{
public:
    // value in the catalogue's unit = series value * scale + offset
    struct Conversion
    {
        double scale = 1.0;
        double offset = 0.0;
        double apply(double value) const { return value * scale + offset; }
        // For a count over a window (an increase, a number of changes): an offset cancels out of a difference.
        double applyToDifference(double value) const { return value * scale; }
        bool isIdentity() const { return scale == 1.0 && offset == 0.0; }
    };
    struct Mapped
    {
        MetricId id;
        Conversion conversion;
        uint8_t part = 0; // which of a summed metric's series (summedMetrics): 0 the first
    };
    // The metrics a map may read from two counters, summed: nvlink_errors, NVLink's CRC errors, which DCGM counts
    // apart for flow-control units (DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL) and data
    // (DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL); their increases over the window add up. Replays
    // (..._REPLAY_ERROR_COUNT_TOTAL) are not added: the link replays each flit that failed its CRC, so a replay is a
    // CRC error counted again; nor recoveries (..._RECOVERY_ERROR_COUNT_TOTAL): a link retrained is an outage of the
    // link, not one more corrupted flit, as node_exporter's link downs are kept apart from its symbol errors.
    static constexpr std::array summedMetrics { MetricId::NvlinkErrors };
    static constexpr size_t maxParts = 2;
    // The label names; for the node and the driver several names: of those a series carries, the one listed first
    // wins.
    struct Labels
    {
        std::vector<std::string> hostname { "hostname", "Hostname" };
        std::string gpu = "gpu";
        std::string uuid = "UUID";
        std::string model = "modelName";
        std::vector<std::string> driver { "DCGM_FI_DRIVER_VERSION", "DCGM_FI_SYSTEM_DRIVER_VERSION" };
        // node-exporter's: the NIC a rail series is of (mlx5_0 ...), and the scrape target (host:port) that names its
        // node when no node label does. The facility's series name their rack.
        std::string nic = "device";
        std::string instance = "instance";
        std::string rack = "rack";
    };
    // A series' node and GPU, as read from its labels (views into them).
    struct Identity
    {
        std::string_view hostname;
        std::string_view gpu;
        int hostnameRank = -1; // index in labels().hostname of the label the hostname came from; -1: none
        std::string_view nic;
        std::string_view instance;
        std::string_view rack;
    };

    // What a catalogue metric's series is of: a GPU (dcgm-exporter's), a GPU's rail NIC (node-exporter's InfiniBand
    // collector: labels device and port, the node from instance), or a rack (the facility's: label rack; its value
    // goes to every GPU of the rack).
    enum class Scope : uint8_t { Gpu, Nic, Rack };
    static Scope scopeOf(MetricId id);
    // node_infiniband_port_transmit_wait_total counts ticks of a port that had data to send and no credit to send it.
    // As NVIDIA's ibdiagnet reads it (docs.nvidia.com, "Congestion Assessment on InfiniBand Links"), a Quantum-
    // generation port counts a tick per 8 bytes it could not send; at NDR's 400 Gb/s (50 GB/s) a port stalled all
    // the time counts 6.25e9 ticks a second. The share of time stalled, in %, is rate(ticks) * 100 / 6.25e9: the
    // conversion the built-in profiles give (a site with another link rate gives its own in --metric-map).
    static constexpr double transmitWaitTicksPerSecond = railTransmitWaitTicksPerSecond; // core/metriccatalog.h
    static constexpr double transmitWaitScale = 100.0 / transmitWaitTicksPerSecond;
    // A value as the plane holds it, after the conversion: node-exporter's port state ids to 1 for ACTIVE (4) and 0
    // for the rest (down, init, armed, ...); other metrics as they are.
    static double planeValue(MetricId id, double converted)
    {
        if (id == MetricId::RailLinkState && converted == converted) {
            return converted == 4.0 ? 1.0 : 0.0;
        }
        return converted;
    }
    // The node a series names: its node label, else its instance without the port ("gpu-a001:9100" -> "gpu-a001").
    static std::string_view hostOf(std::string_view hostname, std::string_view instance);

    // The built-in profiles of dcgm-exporter's generations, oldest first (the sources are in metricmap.cpp).
    enum class Profile : uint8_t { Compat1x, Gen2x3x, Gen3x482, Gen483 };
    static MetricMap profile(Profile p);
    static constexpr std::array allProfiles { Profile::Compat1x, Profile::Gen2x3x, Profile::Gen3x482, Profile::Gen483 };
    // The profile for a server whose series carry these names (names of any built-in profile, as a query for them
    // found them) and whose GPUs carry mostly this node label ("hostname" or "Hostname"): the newest one whose
    // generation of names matches best, 4.8.3+ for DCGM_FI_* names under "hostname". A metric whose name is missing
    // but that another profile names and is present is read from that name (a site's collector CSV may keep an old
    // field name), and listed in adopted as "KEY from NAME".
    static MetricMap choose(const std::vector<std::string> &namesPresent, std::string_view hostnameLabel,
        std::vector<std::string> *adopted);
    // Every series name of the built-in profiles, and every name any of them reads the node from.
    static std::vector<std::string> allProfileNames();
    static std::vector<std::string> allProfileHostnameLabels();

    // A site's map, from a file of lines (empty lines and '#' comments aside):
    //     SERIES = CATALOGUE-KEY [* SCALE] [+ OFFSET]      e.g. DCGM_FI_DEV_FB_USED_BYTES = fb_used
    //     * 9.5367431640625e-7 label hostname|gpu|uuid|model|driver = NAME [NAME...]
    // Every line is checked; the first bad one fails with "line N: why". A summed metric (nvlink_errors) may be given
    // twice, with the same conversion: its two series are summed. gpu_temp must be mapped (discovery and
    // sample times come from it); labels not given keep the defaults above. rail_transmit_wait without '* SCALE'
    // takes transmitWaitScale (its series counts ticks, its plane is a %). At most maxFileBytes.
    static constexpr size_t maxFileBytes = 64 * 1024;
    static bool load(const std::string &path, MetricMap *out, std::string *error);
    static bool parse(std::string_view text, MetricMap *out, std::string *error);

    // "4.8.3+ (label hostname)", or "FILE" for a site's map.
    const std::string &name() const { return m_name; }
    // The catalogue metric a series of this name holds, and its conversion; nullopt for a series the map does not
    // read.
    std::optional<Mapped> metric(std::string_view seriesName) const;
    // The series a catalogue metric is read from; empty when the map has none (health, or a metric a site left out).
    // A summed metric's first.
    const std::string &seriesName(MetricId id) const { return m_series[static_cast<size_t>(id)]; }
    // Every series a metric is read from, in part order (a summed metric's two; one for the rest; none).
    std::vector<std::string> seriesNames(MetricId id) const;
    // The PromQL for a counter's increase over the catalogue's 5-minute window, of the series under selector
    // ("{hostname=~"..."}" or empty): increase(SERIES{...}[5m]), or for a summed metric the sum of its series'
    // increases, each taken on its own (a counter's reset is its own), keeping every other label.
    std::string increaseQuery(MetricId id, const std::string &selector) const;
    const Conversion &conversion(MetricId id) const { return m_conversions[static_cast<size_t>(id)]; }
    const Labels &labels() const { return m_labels; }
    // The node label this generation writes, the one a selector on hosts uses.
    const std::string &hostnameLabel() const { return m_labels.hostname.front(); }

    // Takes one label of a series into id when it names its node or GPU. Of two node labels the preferred one wins,
    // whatever their order.
    void readLabel(std::string_view name, std::string_view value, Identity *id) const;
    // A whole label set, as (name, value) pairs.
    Identity identify(const std::vector<std::pair<std::string_view, std::string_view>> &labels) const;

private:
    void set(MetricId id, std::string series, Conversion conversion);

    std::string m_name;
    std::array<std::string, static_cast<size_t>(MetricId::Count)> m_series;
    std::array<std::string, static_cast<size_t>(MetricId::Count)> m_secondSeries; // a summed metric's part 1
    std::array<Conversion, static_cast<size_t>(MetricId::Count)> m_conversions {};
    Labels m_labels;
};

} // namespace fleetscope::backend
