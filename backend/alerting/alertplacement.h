// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/alerts.h"
#include "core/fleetshape.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fleetscope::backend {

// Where an Alertmanager alert is on the fleet, read from its labels (docs/ALERTS.md):
// - a node by the first of `Hostname`, `hostname`, `host`, `node` that names one (else an alert with none of them by
//   `instance`, its host part without port, brackets or scheme), matched without case and by the short name (before
//   the first '.') where the full one is not the topology's;
// - on that node, a GPU by `gpu` (its index in the node, as dcgm-exporter labels it), else `UUID` / `uuid`, else
//   `pci_bus_id` (a simulated fleet's); without a node, a `UUID` alone places its GPU;
// - else the smallest of what `rack`, `row` and a domain's name (`domain`, `pdu`, `cooling_unit`, `cdu`, `leaf`,
//   `switch` and the other kinds' keys: any domain of that name, its GPUs those it serves, parents included) name.
// A label that names nothing in the fleet (an unknown host, an index out of range, a UUID on another node) places
// nothing and the next one is tried; an alert none places is fleet-wide. Nothing a label says is used to index before
// it is checked.
//
// The indices are built once per shape: names (hosts, racks, rows, domains) at construction, the UUIDs and the
// domains' GPUs the first time an alert needs them. Each is a sorted array of name hashes verified against the shape
// on a hit, so that at 1,048,576 GPUs the UUIDs take 8 MiB and no copy of a string. place() may be called from any
// number of threads; the shape must outlive this and not change.
class AlertPlacement
{
public:
    // The most runs an alert carries (the contract's): a spine plane's GPUs are every eighth of the fleet.
    static constexpr size_t maxRuns = 4096;
    // Values longer than this name nothing (a DNS name is at most 253 bytes).
    static constexpr size_t maxNameLength = 1024;

    explicit AlertPlacement(const FleetShape &shape);
    AlertPlacement(const AlertPlacement &) = delete;
    AlertPlacement &operator=(const AlertPlacement &) = delete;

    // Sets the alert's gpuCount, gpuRuns (ascending, at most maxRuns), node, domain and placedBy from its labels; a
    // fleet-wide alert gets none.
    void place(AlertmanagerAlert *alert) const;

    // The pieces, -1 when the fleet has no such thing.
    int64_t nodeOf(std::string_view host) const;
    int64_t gpuOfUuid(std::string_view uuid) const;
    int64_t gpuOfPciBusId(uint32_t node, std::string_view busId) const;
    int64_t rackOf(std::string_view name) const;
    int64_t rowOf(std::string_view name) const;
    int64_t domainOf(std::string_view name) const;
    // The GPUs a domain serves: their count and their runs (at most maxRuns; empty for an index out of range).
    uint32_t domainGpuCount(uint32_t domain) const;
    const std::vector<std::pair<uint32_t, uint32_t>> &domainRuns(uint32_t domain) const;

    // "r01-k01-n01" of "r01-k01-n01:9400", "::1" of "[::1]:9400", "host" of "http://host:9100/metrics".
    static std::string_view hostOfInstance(std::string_view instance);

    const FleetShape &shape() const { return m_shape; }

private:
    // Hashes (upper 32 bits) and indices (lower 32), sorted; a name is looked up by hash and verified.
    using Index = std::vector<uint64_t>;

    void buildUuids() const;
    void buildDomainRuns() const;

    const FleetShape &m_shape;
    Index m_hosts; // full hostnames
    Index m_shortHosts; // the part before the first '.' of those that have one
    Index m_racks;
    Index m_rows;
    Index m_domains;

    // Built at first need, once (call_once); read-only after.
    mutable std::once_flag m_uuidsBuilt;
    mutable Index m_uuids;
    mutable std::once_flag m_domainRunsBuilt;
    mutable std::vector<std::vector<std::pair<uint32_t, uint32_t>>> m_domainRuns;
    mutable std::vector<uint32_t> m_domainGpus;
};

} // namespace fleetscope::backend
