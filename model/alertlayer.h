// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/alerts.h"
#include "model/fleetmodel.h"

#include <QStringList>

#include <array>
#include <cstdint>
#include <vector>

namespace fleetscope {

// The NOC's alerts as a layer of the map: per GPU the most severe alert on it, firing or quiet (silenced or
// inhibited), from the GPUs the backend placed each alert on (AlertBoard's gpuRuns). An alert that names nothing in
// the fleet (fleet-wide, no runs) colours no GPU: the Problems dock lists it. Every run is checked against the
// topology: a run past the fleet is cut at its end.
struct AlertLayer
{
    // The console's own layer, served beside the backend's metrics while the backend reads an Alertmanager.
    static constexpr const char *metricId = "alerts";

    // Value order: a firing alert outranks a quiet one whatever its severity (a silenced critical is being handled;
    // a firing info is not).
    enum Category : uint8_t { NoAlert, Quiet, Info, Warning, Critical };
    static constexpr int categoryCount = 5;
    static QStringList categoryNames(); // "no alert", "silenced / inhibited", "info", "warning", "critical"
    static Category categoryOf(const FleetAlert &alert);

    uint64_t topologyGeneration = 0;
    uint64_t boardGeneration = 0;
    std::vector<uint8_t> categoryOfGpu; // per GPU of the topology
    std::vector<uint32_t> firingGpus; // ascending: a firing (not suppressed) alert is on them, the map outlines them
    std::array<uint32_t, categoryCount> gpusIn {}; // GPUs per category

    // The layer's plane: per GPU its category (NaN for a GPU outside every node, and for every GPU when the layer
    // was computed for another topology).
    std::vector<float> plane(const Topology &topology) const;
    // The layer as a metric (MetricInfo.categories set, colour map "alerts").
    static MetricInfo metric();
};

// What the layer is made from: each category's runs (Quiet .. Critical, index category - 1), copied out of the board
// on the thread that holds it (O(runs), no labels or text) so that the layer can be computed on another.
struct AlertRuns
{
    uint64_t boardGeneration = 0;
    std::array<std::vector<std::pair<uint32_t, uint32_t>>, AlertLayer::categoryCount - 1> ofCategory;
};
AlertRuns alertRunsOf(const AlertBoard &board);

// O(runs + GPUs) whatever the board: alerts piled on the same GPUs (a thousand on the same rows) are counted through a
// difference array rather than painted one over another. Any thread; the runs and topology are only read.
AlertLayer computeAlertLayer(const AlertRuns &runs, const Topology &topology);
AlertLayer computeAlertLayer(const AlertBoard &board, const Topology &topology);

} // namespace fleetscope
