// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/fleetmodel.h"

#include <QString>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace fleetscope {

// A shared domain shown on the map beside the incident that names it: every GPU the domain serves (its children's
// included, Topology::gpuRunsOfDomain: a leaf's by the GPUs' links, a busway's or a feed's by its PDUs' racks) and how
// many of them the incident hits, so that the operator reads "these are the GPUs behind leaf su03-l5; these of them
// are hit".
struct DomainHighlight
{
    uint32_t domain = 0;
    QString name; // "leaf su03-l5"
    std::vector<std::pair<uint32_t, uint32_t>> runs; // [first, count), ascending, apart
    uint32_t gpuCount = 0; // the GPUs of the runs
    uint32_t hitCount = 0; // of them, the incident's

    // For the status line: "leaf su03-l5: 32 GPUs; 31 hit".
    QString text() const;
};

// The domain at index domain of the topology's table, with the incident's GPUs (ascending, within the fleet) counted
// against it. Nothing for an index outside the table (a GPU's or a node's own incident has -1) or a domain that
// serves no GPU.
std::optional<DomainHighlight> highlightDomain(
    const Topology &topology, int64_t domain, const std::vector<uint32_t> &hitGpus);

} // namespace fleetscope
