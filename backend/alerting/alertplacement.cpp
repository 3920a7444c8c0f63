// SPDX-License-Identifier: Apache-2.0
#include "alerting/alertplacement.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

namespace fleetscope::backend {

namespace {
char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equalNoCase(std::string_view a, std::string_view b)
{
    return a.size() == b.size()
        && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

// FNV-1a over the lower-cased bytes, mixed, its upper 32 bits: names are matched without case.
uint32_t hashOf(std::string_view name)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : name) {
        h ^= static_cast<unsigned char>(lower(c));
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 33U;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33U;
    return static_cast<uint32_t>(h >> 32U);
}

template <typename NameOf> std::vector<uint64_t> buildIndex(size_t count, NameOf nameOf)
{
    std::vector<uint64_t> index;
    index.reserve(count);
    for (size_t i = 0; i < count && i <= std::numeric_limits<uint32_t>::max(); ++i) {
        auto &&name = nameOf(static_cast<uint32_t>(i));
        if (!std::string_view(name).empty()) {
            index.push_back((static_cast<uint64_t>(hashOf(name)) << 32U) | i);
        }
    }
    std::sort(index.begin(), index.end());
    return index;
}

// The one index whose name is key (without case); -1 for none, or for two (an ambiguous short hostname).
template <typename NameOf> int64_t findIn(const std::vector<uint64_t> &index, std::string_view key, NameOf nameOf)
{
    if (key.empty() || key.size() > AlertPlacement::maxNameLength) {
        return -1;
    }
    const uint64_t h = static_cast<uint64_t>(hashOf(key)) << 32U;
    int64_t found = -1;
    for (auto it = std::lower_bound(index.begin(), index.end(), h); it != index.end() && (*it & ~0xffffffffULL) == h;
         ++it) {
        const auto i = static_cast<uint32_t>(*it & 0xffffffffULL);
        auto &&name = nameOf(i);
        if (equalNoCase(name, key)) {
            if (found >= 0 && found != i) {
                return -1;
            }
            found = i;
        }
    }
    return found;
}

std::string_view shortName(std::string_view host)
{
    return host.substr(0, host.find('.'));
}

// An IPv4 address's first part is not a short hostname.
bool looksNumeric(std::string_view host)
{
    return std::all_of(host.begin(), host.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

std::optional<uint32_t> decimal(std::string_view text)
{
    if (text.empty() || text.size() > 9) {
        return std::nullopt;
    }
    uint32_t v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    return v;
}

std::optional<uint32_t> hex(std::string_view text, size_t maxDigits)
{
    if (text.empty() || text.size() > maxDigits) {
        return std::nullopt;
    }
    uint32_t v = 0;
    for (const char c : text) {
        const char l = lower(c);
        const int d = l >= '0' && l <= '9' ? l - '0' : l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;
        if (d < 0) {
            return std::nullopt;
        }
        v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
}

// "00000000:18:00.0", "0000:18:00.0" or "18:00.0" as (domain, bus, device, function), packed: DCGM writes the domain
// with 8 digits, the kernel with 4.
std::optional<uint64_t> pciAddress(std::string_view text)
{
    const size_t dot = text.rfind('.');
    const size_t lastColon = text.rfind(':');
    if (dot == std::string_view::npos || lastColon == std::string_view::npos || dot < lastColon) {
        return std::nullopt;
    }
    const auto function = hex(text.substr(dot + 1), 1);
    const auto device = hex(text.substr(lastColon + 1, dot - lastColon - 1), 2);
    const std::string_view head = text.substr(0, lastColon);
    const size_t firstColon = head.rfind(':');
    const auto bus = hex(firstColon == std::string_view::npos ? head : head.substr(firstColon + 1), 2);
    const auto domain
        = firstColon == std::string_view::npos ? std::optional<uint32_t>(0) : hex(head.substr(0, firstColon), 8);
    if (!function || !device || !bus || !domain || *function > 7 || *device > 31) {
        return std::nullopt;
    }
    return (static_cast<uint64_t>(*domain) << 32U) | (*bus << 16U) | (*device << 8U) | *function;
}

// The labels placement reads, each by its first occurrence.
enum Slot : uint8_t {
    HostnameDcgm,
    Hostname,
    Host,
    NodeLabel,
    Instance,
    Gpu,
    UuidDcgm,
    Uuid,
    PciBusId,
    RackLabel,
    RowLabel,
    FirstDomainLabel,
};
constexpr std::array<std::string_view, 23> slotNames = { "Hostname", "hostname", "host", "node", "instance", "gpu",
    "UUID", "uuid", "pci_bus_id", "rack", "row",
    // A domain by its name, whatever the label's word for it: the issue's, and each kind's key (common/domains.h).
    "domain", "switch", "pdu", "cooling_unit", "cdu", "leaf", "feed", "busway", "loop", "nvlink", "scalable_unit",
    "spine" };
constexpr size_t hostSlots = 4; // Hostname, hostname, host, node: a host the alert is about

struct Read
{
    std::array<const AlertLabel *, slotNames.size()> at {};
};

Read readLabels(const std::vector<AlertLabel> &labels)
{
    Read read;
    for (const auto &l : labels) {
        for (size_t s = 0; s < slotNames.size(); ++s) {
            if (read.at[s] == nullptr && l.name == slotNames[s]) {
                read.at[s] = &l;
                break;
            }
        }
    }
    return read;
}

void appendPlacedBy(std::string *out, const AlertLabel &label)
{
    // A value as the alert says it, cut for people (at a UTF-8 boundary: it goes on the wire).
    constexpr size_t cut = 64;
    std::string_view value = label.value;
    if (value.size() > cut) {
        size_t n = cut;
        while (n > 0 && (static_cast<unsigned char>(value[n]) & 0xC0U) == 0x80U) {
            --n;
        }
        value = value.substr(0, n);
    }
    if (!out->empty()) {
        out->append(", ");
    }
    out->append(label.name).append("=").append(value);
    if (value.size() < label.value.size()) {
        out->append("…");
    }
}

struct Span
{
    uint32_t first = 0;
    uint32_t count = 0;
};

// The GPUs of the nodes [firstNode, firstNode + nodeCount), which dense order keeps contiguous.
Span gpusOfNodes(const FleetShape &shape, uint32_t firstNode, uint32_t nodeCount)
{
    if (nodeCount == 0 || firstNode >= shape.nodes.size() || nodeCount > shape.nodes.size() - firstNode) {
        return {};
    }
    const auto &first = shape.nodes[firstNode];
    const auto &last = shape.nodes[firstNode + nodeCount - 1];
    const uint64_t end = static_cast<uint64_t>(last.firstGpu) + last.gpuCount;
    if (end <= first.firstGpu || end > shape.gpuCount) {
        return {};
    }
    return { first.firstGpu, static_cast<uint32_t>(end - first.firstGpu) };
}

Span gpusOfRack(const FleetShape &shape, uint32_t rack)
{
    return rack < shape.racks.size() ? gpusOfNodes(shape, shape.racks[rack].firstNode, shape.racks[rack].nodeCount)
                                     : Span {};
}

Span gpusOfRow(const FleetShape &shape, uint32_t row)
{
    if (row >= shape.rows.size() || shape.rows[row].rackCount == 0) {
        return {};
    }
    const auto &r = shape.rows[row];
    if (r.firstRack >= shape.racks.size() || r.rackCount > shape.racks.size() - r.firstRack) {
        return {};
    }
    const Span first = gpusOfRack(shape, r.firstRack);
    const Span last = gpusOfRack(shape, r.firstRack + r.rackCount - 1);
    if (first.count == 0 || last.count == 0 || last.first + last.count <= first.first) {
        return {};
    }
    return { first.first, last.first + last.count - first.first };
}
} // namespace

AlertPlacement::AlertPlacement(const FleetShape &shape)
    : m_shape(shape)
{
    const auto &nodes = shape.nodes;
    m_hosts = buildIndex(nodes.size(), [&](uint32_t n) -> const std::string & { return nodes[n].hostname; });
    m_shortHosts = buildIndex(nodes.size(), [&](uint32_t n) {
        const std::string_view host = nodes[n].hostname;
        return host.find('.') == std::string_view::npos || looksNumeric(host) ? std::string_view() : shortName(host);
    });
    m_racks = buildIndex(shape.racks.size(), [&](uint32_t r) -> const std::string & { return shape.racks[r].name; });
    m_rows = buildIndex(shape.rows.size(), [&](uint32_t r) -> const std::string & { return shape.rows[r].name; });
    m_domains
        = buildIndex(shape.domains.size(), [&](uint32_t d) -> const std::string & { return shape.domains[d].name; });
}

std::string_view AlertPlacement::hostOfInstance(std::string_view instance)
{
    if (const size_t scheme = instance.find("://"); scheme != std::string_view::npos) {
        instance.remove_prefix(scheme + 3);
    }
    instance = instance.substr(0, instance.find('/'));
    if (!instance.empty() && instance.front() == '[') {
        const size_t close = instance.find(']');
        return close == std::string_view::npos ? std::string_view() : instance.substr(1, close - 1);
    }
    // One colon: host:port; more: a bare IPv6 address.
    const size_t colon = instance.find(':');
    if (colon != std::string_view::npos && instance.find(':', colon + 1) == std::string_view::npos) {
        return instance.substr(0, colon);
    }
    return instance;
}

int64_t AlertPlacement::nodeOf(std::string_view host) const
{
    const auto &nodes = m_shape.nodes;
    const auto hostname = [&](uint32_t n) -> const std::string & { return nodes[n].hostname; };
    if (const int64_t n = findIn(m_hosts, host, hostname); n >= 0) {
        return n;
    }
    if (host.empty() || looksNumeric(host)) {
        return -1;
    }
    // r01-k01-n01.dc1.example against a topology of short names, or the other way round.
    const std::string_view brief = shortName(host);
    if (brief.size() < host.size()) {
        if (const int64_t n = findIn(m_hosts, brief, hostname); n >= 0) {
            return n;
        }
    }
    return findIn(m_shortHosts, brief, [&](uint32_t n) { return shortName(nodes[n].hostname); });
}

void AlertPlacement::buildUuids() const
{
    std::call_once(m_uuidsBuilt, [this] {
        if (m_shape.simulated) {
            m_uuids = buildIndex(m_shape.gpuCount, [this](uint32_t g) { return m_shape.gpuUuid(g); });
        } else {
            const size_t count = std::min<size_t>(m_shape.uuids.size(), m_shape.gpuCount);
            m_uuids = buildIndex(count, [this](uint32_t g) -> const std::string & { return m_shape.uuids[g]; });
        }
    });
}

int64_t AlertPlacement::gpuOfUuid(std::string_view uuid) const
{
    if (uuid.empty() || uuid.size() > maxNameLength) {
        return -1;
    }
    buildUuids();
    return findIn(m_uuids, uuid, [this](uint32_t g) { return m_shape.gpuUuid(g); });
}

int64_t AlertPlacement::gpuOfPciBusId(uint32_t node, std::string_view busId) const
{
    // A real fleet's bus ids are not kept (FleetShape::simulatedPciBusId).
    if (!m_shape.simulated || node >= m_shape.nodes.size() || busId.size() > 64) {
        return -1;
    }
    const auto wanted = pciAddress(busId);
    if (!wanted) {
        return -1;
    }
    const auto &n = m_shape.nodes[node];
    for (uint32_t i = 0; i < n.gpuCount; ++i) {
        if (pciAddress(FleetShape::simulatedPciBusId(i)) == wanted) {
            return static_cast<int64_t>(n.firstGpu) + i;
        }
    }
    return -1;
}

int64_t AlertPlacement::rackOf(std::string_view name) const
{
    return findIn(m_racks, name, [this](uint32_t r) -> const std::string & { return m_shape.racks[r].name; });
}

int64_t AlertPlacement::rowOf(std::string_view name) const
{
    return findIn(m_rows, name, [this](uint32_t r) -> const std::string & { return m_shape.rows[r].name; });
}

int64_t AlertPlacement::domainOf(std::string_view name) const
{
    return findIn(m_domains, name, [this](uint32_t d) -> const std::string & { return m_shape.domains[d].name; });
}

void AlertPlacement::buildDomainRuns() const
{
    std::call_once(m_domainRunsBuilt, [this] {
        const auto &shape = m_shape;
        const auto &domains = shape.domains;
        m_domainRuns.assign(domains.size(), {});
        m_domainGpus.assign(domains.size(), 0);
        // The GPU a domain last counted: a domain reached twice from one GPU (a rack's PDU that a single-corded node
        // names too, a parent of two) counts it once, with no set per GPU.
        std::vector<uint32_t> lastGpu(domains.size(), std::numeric_limits<uint32_t>::max());
        const auto visit = [&](uint32_t g, uint32_t d) {
            // Parents up to a depth a file cannot exceed by much; a cycle, were one let through, ends there too.
            for (int depth = 0; d < domains.size() && depth < 16 && lastGpu[d] != g; ++depth) {
                lastGpu[d] = g;
                ++m_domainGpus[d];
                auto &runs = m_domainRuns[d];
                if (!runs.empty() && runs.back().first + runs.back().second == g) {
                    ++runs.back().second;
                } else if (runs.size() < maxRuns) {
                    runs.emplace_back(g, 1);
                }
                if (domains[d].parent < 0) {
                    return;
                }
                d = static_cast<uint32_t>(domains[d].parent);
            }
        };
        if (domains.empty()) {
            return;
        }
        const auto gpus = std::min<size_t>(shape.gpuCount, shape.nodeOfGpu.size());
        for (uint32_t g = 0; g < gpus; ++g) {
            if (g < shape.gpuLinks.size() && shape.gpuLinks[g].leaf != GpuLink::none) {
                visit(g, shape.gpuLinks[g].leaf);
            }
            const uint32_t n = shape.nodeOfGpu[g];
            if (n >= shape.nodes.size()) {
                continue;
            }
            const auto &node = shape.nodes[n];
            if (node.rack < shape.racks.size()) {
                for (const uint32_t d : shape.racks[node.rack].domains) {
                    visit(g, d);
                }
            }
            for (const uint32_t d : node.domains) {
                visit(g, d);
            }
        }
    });
}

uint32_t AlertPlacement::domainGpuCount(uint32_t domain) const
{
    buildDomainRuns();
    return domain < m_domainGpus.size() ? m_domainGpus[domain] : 0;
}

const std::vector<std::pair<uint32_t, uint32_t>> &AlertPlacement::domainRuns(uint32_t domain) const
{
    static const std::vector<std::pair<uint32_t, uint32_t>> none;
    buildDomainRuns();
    return domain < m_domainRuns.size() ? m_domainRuns[domain] : none;
}

void AlertPlacement::place(AlertmanagerAlert *alert) const
{
    alert->gpuCount = 0;
    alert->gpuRuns.clear();
    alert->node = -1;
    alert->domain = -1;
    alert->placedBy.clear();
    const Read read = readLabels(alert->labels);
    const auto &shape = m_shape;

    // The node: the first host label that names one; instance only where the alert names no host (it is often the
    // exporter's address, not a name).
    int64_t node = -1;
    const AlertLabel *byHost = nullptr;
    bool namesHost = false;
    for (size_t s = 0; s < hostSlots && node < 0; ++s) {
        if (read.at[s] != nullptr) {
            namesHost = true;
            node = nodeOf(read.at[s]->value);
            byHost = node >= 0 ? read.at[s] : nullptr;
        }
    }
    if (!namesHost && read.at[Instance] != nullptr) {
        node = nodeOf(hostOfInstance(read.at[Instance]->value));
        byHost = node >= 0 ? read.at[Instance] : nullptr;
    }

    // The GPU on it, or a UUID's alone.
    int64_t gpu = -1;
    const AlertLabel *byGpu = nullptr;
    const AlertLabel *uuid = read.at[UuidDcgm] != nullptr ? read.at[UuidDcgm] : read.at[Uuid];
    if (node >= 0) {
        const auto &n = shape.nodes[static_cast<size_t>(node)];
        if (read.at[Gpu] != nullptr) {
            if (const auto local = decimal(read.at[Gpu]->value); local && *local < n.gpuCount) {
                gpu = static_cast<int64_t>(n.firstGpu) + *local;
                byGpu = read.at[Gpu];
            }
        }
        if (gpu < 0 && uuid != nullptr) {
            const int64_t g = gpuOfUuid(uuid->value);
            if (g >= 0 && static_cast<uint64_t>(g) >= n.firstGpu
                && static_cast<uint64_t>(g) < n.firstGpu + n.gpuCount) {
                gpu = g;
                byGpu = uuid;
            }
        }
        if (gpu < 0 && read.at[PciBusId] != nullptr) {
            gpu = gpuOfPciBusId(static_cast<uint32_t>(node), read.at[PciBusId]->value);
            byGpu = gpu >= 0 ? read.at[PciBusId] : nullptr;
        }
    } else if (uuid != nullptr) {
        gpu = gpuOfUuid(uuid->value);
        if (gpu >= 0 && static_cast<uint64_t>(gpu) < shape.nodeOfGpu.size()) {
            node = shape.nodeOfGpu[static_cast<size_t>(gpu)];
            byGpu = uuid;
        } else {
            gpu = -1;
        }
    }

    if (gpu >= 0) {
        alert->gpuCount = 1;
        alert->gpuRuns.emplace_back(static_cast<uint32_t>(gpu), 1);
        alert->node = node;
        if (byHost != nullptr) {
            appendPlacedBy(&alert->placedBy, *byHost);
        }
        appendPlacedBy(&alert->placedBy, *byGpu);
        return;
    }
    if (node >= 0) {
        const Span span = gpusOfNodes(shape, static_cast<uint32_t>(node), 1);
        if (span.count > 0) {
            alert->gpuCount = span.count;
            alert->gpuRuns.emplace_back(span.first, span.count);
            alert->node = node;
            appendPlacedBy(&alert->placedBy, *byHost);
        }
        return;
    }

    // The smallest of what the rack, row and domain labels name (a PDU within its rack, a rack within its row).
    const AlertLabel *by = nullptr;
    Span best;
    int64_t bestDomain = -1;
    const auto consider = [&](const AlertLabel *label, Span span, int64_t domain) {
        if (span.count > 0 && (by == nullptr || span.count < best.count)) {
            by = label;
            best = span;
            bestDomain = domain;
        }
    };
    for (size_t s = FirstDomainLabel; s < slotNames.size(); ++s) {
        if (read.at[s] != nullptr) {
            if (const int64_t d = domainOf(read.at[s]->value); d >= 0) {
                consider(read.at[s], Span { 0, domainGpuCount(static_cast<uint32_t>(d)) }, d);
            }
        }
    }
    if (read.at[RackLabel] != nullptr) {
        if (const int64_t r = rackOf(read.at[RackLabel]->value); r >= 0) {
            consider(read.at[RackLabel], gpusOfRack(shape, static_cast<uint32_t>(r)), -1);
        }
    }
    if (read.at[RowLabel] != nullptr) {
        if (const int64_t r = rowOf(read.at[RowLabel]->value); r >= 0) {
            consider(read.at[RowLabel], gpusOfRow(shape, static_cast<uint32_t>(r)), -1);
        }
    }
    if (by == nullptr) {
        return;
    }
    alert->gpuCount = best.count;
    if (bestDomain >= 0) {
        alert->gpuRuns = domainRuns(static_cast<uint32_t>(bestDomain));
        alert->domain = bestDomain;
    } else {
        alert->gpuRuns.emplace_back(best.first, best.count);
    }
    appendPlacedBy(&alert->placedBy, *by);
}

} // namespace fleetscope::backend
