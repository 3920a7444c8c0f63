// SPDX-License-Identifier: Apache-2.0
#include "dcgm/prometheustopology.h"

#include "dcgm/uplinklabels.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fleetscope::backend {

namespace {

struct NaturalLess
{
    bool operator()(const std::string &a, const std::string &b) const { return PrometheusTopology::naturalLess(a, b); }
};

uint64_t fnv(uint64_t h, std::string_view text)
{
    for (const char c : text) {
        h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    }
    return (h ^ 0xffU) * 0x100000001b3ULL; // a separator, so ("ab","c") and ("a","bc") differ
}

} // namespace

bool PrometheusTopology::naturalLess(std::string_view a, std::string_view b)
{
    size_t i = 0;
    size_t j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
        const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
        if (da && db) {
            size_t ei = i;
            size_t ej = j;
            while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) {
                ++ei;
            }
            while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) {
                ++ej;
            }
            // Compare the numbers by value: skip leading zeros, then length, then digits.
            size_t si = i;
            size_t sj = j;
            while (si + 1 < ei && a[si] == '0') {
                ++si;
            }
            while (sj + 1 < ej && b[sj] == '0') {
                ++sj;
            }
            if (ei - si != ej - sj) {
                return ei - si < ej - sj;
            }
            if (const int c = a.substr(si, ei - si).compare(b.substr(sj, ej - sj)); c != 0) {
                return c < 0;
            }
            if (ei - i != ej - j) {
                return ei - i < ej - j;
            }
            i = ei;
            j = ej;
        } else {
            if (a[i] != b[j]) {
                return a[i] < b[j];
            }
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

void PrometheusTopology::addNode(std::string hostname, uint32_t rack, std::vector<std::string> gpuLabels)
{
    FleetShape::Node node;
    node.hostname = std::move(hostname);
    node.rack = rack;
    node.firstGpu = m_shape.gpuCount;
    node.gpuCount = static_cast<uint32_t>(gpuLabels.size());
    m_shape.gpuCount += node.gpuCount;
    m_nodeByHost.emplace(node.hostname, static_cast<uint32_t>(m_shape.nodes.size()));
    m_shape.nodes.push_back(std::move(node));
    m_gpuLabels.push_back(std::move(gpuLabels));
}

void PrometheusTopology::finish()
{
    m_shape.simulated = false;
    m_rackByName.clear();
    for (uint32_t k = 0; k < m_shape.racks.size(); ++k) {
        m_rackByName.emplace(m_shape.racks[k].name, k);
    }
    m_shape.uuids.assign(m_shape.gpuCount, std::string());
    m_shape.nodeOfGpu.resize(m_shape.gpuCount);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const auto &row : m_shape.rows) {
        h = fnv(fnv(h, row.hall), row.name);
    }
    for (const auto &rack : m_shape.racks) {
        h = fnv(fnv(h, rack.name), std::to_string(rack.row));
    }
    for (uint32_t n = 0; n < m_shape.nodes.size(); ++n) {
        const auto &node = m_shape.nodes[n];
        h = fnv(fnv(h, node.hostname), std::to_string(node.rack));
        for (const auto &label : m_gpuLabels[n]) {
            h = fnv(h, label);
        }
        std::fill_n(m_shape.nodeOfGpu.begin() + node.firstGpu, node.gpuCount, n);
    }
    m_generation = h == 0 ? 1 : h;
    m_layoutGeneration = m_generation;
}

PrometheusTopology PrometheusTopology::fromFile(const TopologyFile &file)
{
    PrometheusTopology t;
    t.m_shape.site = file.site.empty() ? std::string("fleet") : file.site;
    for (const auto &row : file.rows) {
        FleetShape::Row r;
        r.name = row.name;
        r.hall = row.hall;
        r.firstRack = static_cast<uint32_t>(t.m_shape.racks.size());
        r.rackCount = static_cast<uint32_t>(row.racks.size());
        for (const auto &rack : row.racks) {
            FleetShape::Rack k;
            k.name = rack.name;
            k.row = static_cast<uint32_t>(t.m_shape.rows.size());
            k.position = static_cast<uint32_t>(t.m_shape.racks.size()) - r.firstRack;
            k.firstNode = static_cast<uint32_t>(t.m_shape.nodes.size());
            k.nodeCount = static_cast<uint32_t>(rack.hosts.size());
            k.nvlinkDomain = rack.nvlinkDomain; // an NVL72 rack: the console names and rolls it up as one domain
            const auto rackIndex = static_cast<uint32_t>(t.m_shape.racks.size());
            t.m_shape.racks.push_back(std::move(k));
            for (const auto &host : rack.hosts) {
                std::vector<std::string> labels;
                for (uint32_t g = 0; g < host.gpus; ++g) {
                    labels.push_back(std::to_string(g));
                }
                t.addNode(host.hostname, rackIndex, std::move(labels));
            }
        }
        t.m_shape.rows.push_back(std::move(r));
    }
    t.m_nics = file.nics;
    t.finish();
    t.applyDomains(file);
    return t;
}

void PrometheusTopology::applyDomains(const TopologyFile &file)
{
    // The file's domains are resolved and parents-first (TopologyFile::load); here names become indices.
    std::unordered_map<std::string, uint32_t> byName;
    for (const auto &d : file.domains) {
        Domain domain;
        domainKindFromKey(d.kind, &domain.kind);
        domain.name = d.name;
        domain.rail = d.rail;
        if (const auto it = byName.find(d.parent); !d.parent.empty() && it != byName.end()) {
            domain.parent = static_cast<int32_t>(it->second);
        }
        byName.emplace(d.name, static_cast<uint32_t>(m_shape.domains.size()));
        m_shape.domains.push_back(std::move(domain));
    }
    auto indexOf = [&](const std::string &name, std::vector<uint32_t> *into) {
        const auto it = byName.find(name);
        if (it != byName.end() && std::find(into->begin(), into->end(), it->second) == into->end()) {
            into->push_back(it->second);
        }
    };
    bool anyLink = false;
    uint32_t k = 0;
    uint32_t n = 0;
    std::vector<GpuLink> links(m_shape.gpuCount);
    for (const auto &row : file.rows) {
        for (const auto &rack : row.racks) {
            auto &shapeRack = m_shape.racks[k++];
            for (const auto &pdu : rack.power) {
                indexOf(pdu, &shapeRack.domains);
            }
            if (!rack.cooling.empty()) {
                indexOf(rack.cooling, &shapeRack.domains);
            }
            if (rack.nvlinkDomain) {
                indexOf(rack.name + "-nvl", &shapeRack.domains);
            }
            for (const auto &host : rack.hosts) {
                auto &node = m_shape.nodes[n++];
                if (!host.scalableUnit.empty()) {
                    indexOf(host.scalableUnit, &node.domains);
                }
                for (const auto &pdu : host.power) {
                    indexOf(pdu, &node.domains); // corded to these alone (FleetShape::cordsOf)
                }
                for (size_t g = 0; g < host.links.size() && g < node.gpuCount; ++g) {
                    const auto it = byName.find(host.links[g].leaf);
                    if (it != byName.end()) {
                        links[node.firstGpu + g] = { it->second, host.links[g].port };
                        anyLink = true;
                    }
                }
            }
        }
    }
    if (anyLink) {
        m_shape.gpuLinks = std::move(links);
    }
    hashDomains();
}

void PrometheusTopology::hashDomains()
{
    // A file whose domains changed, or links the labels gave, is another generation: consoles fetch the topology
    // again.
    if (m_shape.domains.empty()) {
        m_generation = m_layoutGeneration;
        return;
    }
    uint64_t h = m_layoutGeneration;
    for (const auto &d : m_shape.domains) {
        h = fnv(fnv(h, d.name), fmt::format("{}/{}/{}", static_cast<int>(d.kind), d.parent, d.rail));
    }
    for (const auto &rack : m_shape.racks) {
        h = fnv(h, fmt::format("{}", fmt::join(rack.domains, ",")));
    }
    for (const auto &node : m_shape.nodes) {
        h = fnv(h, fmt::format("{}", fmt::join(node.domains, ",")));
    }
    for (const auto &link : m_shape.gpuLinks) {
        h = fnv(h, fmt::format("{}:{}", link.leaf, link.port));
    }
    m_generation = h == 0 ? 1 : h;
}

bool PrometheusTopology::fromLabels(const std::vector<PromSample> &series, PrometheusTopology *out, std::string *error)
{
    // host -> its GPU labels, and its placement when labelled.
    struct Host
    {
        std::set<std::string, NaturalLess> gpus;
        std::string hall;
        std::string row;
        std::string rack;
    };
    std::map<std::string, Host, NaturalLess> hosts;
    bool placed = false;
    for (const auto &s : series) {
        if (s.hostname.empty() || s.gpu.empty()) {
            continue;
        }
        auto &host = hosts[s.hostname];
        host.gpus.insert(s.gpu);
        if (!s.row.empty() && !s.rack.empty()) {
            placed = true;
            host.hall = s.hall;
            host.row = s.row;
            host.rack = s.rack;
        }
    }
    if (hosts.empty()) {
        *error = "no series with both a node label (hostname, or Hostname before dcgm-exporter 4.8.3) and a gpu "
                 "label; is dcgm-exporter being scraped, and are its labels kept by relabelling?";
        return false;
    }
    PrometheusTopology t;
    t.m_shape.site = "fleet";
    auto labelsOf = [](const Host &h) { return std::vector<std::string>(h.gpus.begin(), h.gpus.end()); };
    if (placed) {
        // row -> rack -> hosts, all in natural order.
        const std::string unlabelled = "unlabelled";
        std::map<std::string, std::map<std::string, std::vector<const std::string *>, NaturalLess>, NaturalLess> plan;
        std::map<std::string, std::string> hallOfRow;
        for (const auto &[name, host] : hosts) {
            const std::string &row = host.row.empty() ? unlabelled : host.row;
            const std::string &rack = host.rack.empty() ? unlabelled : host.rack;
            plan[row][rack].push_back(&name);
            auto &hall = hallOfRow[row];
            if (hall.empty()) {
                hall = host.hall.empty() ? std::string("hall") : host.hall;
            }
        }
        for (const auto &[rowName, racks] : plan) {
            FleetShape::Row r;
            r.name = rowName;
            r.hall = hallOfRow[rowName];
            r.firstRack = static_cast<uint32_t>(t.m_shape.racks.size());
            r.rackCount = static_cast<uint32_t>(racks.size());
            for (const auto &[rackName, names] : racks) {
                FleetShape::Rack k;
                k.name = rackName;
                k.row = static_cast<uint32_t>(t.m_shape.rows.size());
                k.position = static_cast<uint32_t>(t.m_shape.racks.size()) - r.firstRack;
                k.firstNode = static_cast<uint32_t>(t.m_shape.nodes.size());
                k.nodeCount = static_cast<uint32_t>(names.size());
                const auto rackIndex = static_cast<uint32_t>(t.m_shape.racks.size());
                t.m_shape.racks.push_back(std::move(k));
                for (const auto *name : names) {
                    t.addNode(*name, rackIndex, labelsOf(hosts.at(*name)));
                }
            }
            t.m_shape.rows.push_back(std::move(r));
        }
    } else {
        const auto nodeCount = static_cast<uint32_t>(hosts.size());
        const uint32_t rackCount = (nodeCount + FleetShape::nodesPerRack - 1) / FleetShape::nodesPerRack;
        const auto racksPerRow = std::max<uint32_t>(1, static_cast<uint32_t>(std::ceil(std::sqrt(rackCount * 1.6))));
        auto it = hosts.begin();
        for (uint32_t k = 0; k < rackCount; ++k) {
            if (k % racksPerRow == 0) {
                FleetShape::Row r;
                r.name = fmt::format("auto-r{:02}", k / racksPerRow + 1);
                r.hall = "hall";
                r.firstRack = k;
                t.m_shape.rows.push_back(std::move(r));
            }
            auto &row = t.m_shape.rows.back();
            FleetShape::Rack rack;
            rack.name = fmt::format("{}-k{:02}", row.name, k % racksPerRow + 1);
            rack.row = static_cast<uint32_t>(t.m_shape.rows.size() - 1);
            rack.position = k % racksPerRow;
            rack.firstNode = static_cast<uint32_t>(t.m_shape.nodes.size());
            ++row.rackCount;
            for (uint32_t n = 0; n < FleetShape::nodesPerRack && it != hosts.end(); ++n, ++it) {
                t.addNode(it->first, k, labelsOf(it->second));
            }
            rack.nodeCount = static_cast<uint32_t>(t.m_shape.nodes.size()) - rack.firstNode;
            t.m_shape.racks.push_back(std::move(rack));
        }
    }
    if (t.m_shape.gpuCount > FleetShape::maxGpus) {
        *error = fmt::format(
            "the server knows {} GPUs; Fleetscope serves at most {}", t.m_shape.gpuCount, FleetShape::maxGpus);
        return false;
    }
    t.finish();
    *out = std::move(t);
    return true;
}

int64_t PrometheusTopology::indexOf(std::string_view hostname, std::string_view gpu) const
{
    const int64_t node = nodeOf(hostname);
    return node < 0 ? -1 : indexOn(static_cast<uint32_t>(node), gpu);
}

int64_t PrometheusTopology::nodeOf(std::string_view hostname) const
{
    // A lookup by string_view without a temporary needs C++20's heterogeneous lookup; the copy is small.
    const auto it = m_nodeByHost.find(std::string(hostname));
    return it == m_nodeByHost.end() ? -1 : static_cast<int64_t>(it->second);
}

int64_t PrometheusTopology::indexOn(uint32_t node, std::string_view gpu) const
{
    if (node >= m_gpuLabels.size()) {
        return -1;
    }
    const auto &labels = m_gpuLabels[node];
    for (size_t i = 0; i < labels.size(); ++i) {
        if (labels[i] == gpu) {
            return m_shape.nodes[node].firstGpu + static_cast<int64_t>(i);
        }
    }
    return -1;
}

int64_t PrometheusTopology::railOfNic(std::string_view device) const
{
    uint32_t k = 0;
    if (!m_nics.empty()) {
        const auto it = std::find(m_nics.begin(), m_nics.end(), device);
        if (it == m_nics.end()) {
            return -1;
        }
        k = static_cast<uint32_t>(it - m_nics.begin());
    } else {
        static constexpr std::string_view prefix = "mlx5_";
        if (device.substr(0, prefix.size()) != prefix) {
            return -1;
        }
        const std::string_view digits = device.substr(prefix.size());
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
        if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
            return -1;
        }
    }
    return k < TopologyFile::maxGpusPerNode ? static_cast<int64_t>(k) : -1;
}

int64_t PrometheusTopology::indexOfNic(uint32_t node, std::string_view device) const
{
    if (node >= m_shape.nodes.size()) {
        return -1;
    }
    // The rail (GPU position) of the NIC, then the GPU whose gpu label is that position: a layout from the series'
    // labels leaves out a GPU that has none, so the position in the node is not the label.
    const int64_t k = railOfNic(device);
    return k < 0 ? -1 : indexOn(node, std::to_string(k));
}

std::vector<std::string> PrometheusTopology::applyUplinks(const std::vector<PromSample> &series)
{
    std::vector<UplinkLabels::Series> labels;
    labels.reserve(series.size());
    for (const auto &s : series) {
        labels.push_back(UplinkLabels::Series::of(s));
    }
    return applyUplinks(labels);
}

std::vector<std::string> PrometheusTopology::applyUplinks(const std::vector<UplinkLabels::Series> &series)
{
    using Refusal = UplinkLabels::Refusal;
    // Why a series did not give its GPU a link, beyond UplinkLabels' reasons.
    enum Other : uint8_t { UnknownHost, UnknownNic, SecondUplink, FileGivesIt, NotALeaf, TooManyLeaves, OtherCount };
    static constexpr const char *otherWhy[] = {
        "hca's host is not a node of the topology",
        "hca's device is no GPU's rail NIC (a storage NIC, or one past the node's GPUs)",
        "its NIC has an uplink on a lower HCA port already (one leaf per NIC)",
        "the topology file cables its GPU otherwise (the file wins)",
        "uplink names a domain of the topology that is not a leaf switch",
        "uplink names a new leaf past the bound of one new leaf per node (or rail)",
    };
    constexpr size_t refusals = static_cast<size_t>(Refusal::Count);
    std::array<size_t, refusals + OtherCount> ignored {};
    std::array<std::string, refusals + OtherCount> example;
    auto ignore = [&](size_t why, const UplinkLabels::Series &s) {
        if (ignored[why]++ == 0) {
            example[why] = UplinkLabels::example(s);
        }
    };

    // Each usable uplink with its GPU, then one per GPU: the lowest HCA port, then the smallest leaf and port, so
    // that the same series give the same links whatever order the answer or the pushes had.
    struct Candidate
    {
        uint32_t gpu;
        uint32_t hcaPort;
        uint32_t rail;
        std::string_view leaf;
        uint32_t port;
        const UplinkLabels::Series *series;
    };
    std::vector<Candidate> candidates;
    for (const auto &s : series) {
        UplinkLabels::Uplink uplink;
        if (const auto refusal = UplinkLabels::read(s, &uplink); refusal != Refusal::None) {
            ignore(static_cast<size_t>(refusal), s);
            continue;
        }
        const int64_t node = nodeOf(uplink.host);
        if (node < 0) {
            ignore(refusals + UnknownHost, s);
            continue;
        }
        const int64_t rail = railOfNic(uplink.nic);
        const int64_t g = rail < 0 ? -1 : indexOfNic(static_cast<uint32_t>(node), uplink.nic);
        if (g < 0) {
            ignore(refusals + UnknownNic, s);
            continue;
        }
        candidates.push_back(
            { static_cast<uint32_t>(g), uplink.hcaPort, static_cast<uint32_t>(rail), uplink.leaf, uplink.port, &s });
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate &a, const Candidate &b) {
        return std::tie(a.gpu, a.hcaPort, a.leaf, a.port) < std::tie(b.gpu, b.hcaPort, b.leaf, b.port);
    });

    std::unordered_map<std::string, uint32_t> byName;
    for (uint32_t d = 0; d < m_shape.domains.size(); ++d) {
        byName.emplace(m_shape.domains[d].name, d);
    }
    // The file's spine plane of each rail, when it lists exactly one: a new leaf's parent.
    std::unordered_map<int32_t, int32_t> spineOfRail;
    for (uint32_t d = 0; d < m_shape.domains.size(); ++d) {
        const auto &domain = m_shape.domains[d];
        if (domain.kind == DomainKind::SpinePlane && domain.rail >= 0) {
            const auto [it, inserted] = spineOfRail.emplace(domain.rail, static_cast<int32_t>(d));
            if (!inserted) {
                it->second = -1;
            }
        }
    }
    // New leaves: one per node, or per rail in a fleet of fewer nodes than rails (two nodes of eight rails reach
    // eight leaves), within the file's bound on domains.
    size_t rails = 0;
    for (const auto &node : m_shape.nodes) {
        rails = std::max<size_t>(rails, node.gpuCount);
    }
    const size_t maxNewLeaves = std::min(std::max(m_shape.nodes.size(), rails),
        TopologyFile::maxDomains - std::min<size_t>(TopologyFile::maxDomains, m_shape.domains.size()));
    const bool hadLinks = !m_shape.gpuLinks.empty();
    std::vector<GpuLink> links = hadLinks ? m_shape.gpuLinks : std::vector<GpuLink>(m_shape.gpuCount);
    size_t linked = 0;
    size_t added = 0;
    const Candidate *kept = nullptr;
    for (const auto &c : candidates) {
        if (kept != nullptr && kept->gpu == c.gpu) {
            // The same uplink twice (two exporters pushing it) is one; another is refused.
            if (std::tie(kept->hcaPort, kept->leaf, kept->port) != std::tie(c.hcaPort, c.leaf, c.port)) {
                ignore(refusals + SecondUplink, *c.series);
            }
            continue;
        }
        kept = &c;
        if (hadLinks && m_shape.gpuLinks[c.gpu].leaf != GpuLink::none) {
            const auto &fileLink = m_shape.gpuLinks[c.gpu];
            if (fileLink.leaf >= m_shape.domains.size() || m_shape.domains[fileLink.leaf].name != c.leaf
                || fileLink.port != c.port) {
                ignore(refusals + FileGivesIt, *c.series);
            }
            continue;
        }
        uint32_t leaf = 0;
        if (const auto it = byName.find(std::string(c.leaf)); it != byName.end()) {
            if (m_shape.domains[it->second].kind != DomainKind::LeafSwitch) {
                ignore(refusals + NotALeaf, *c.series);
                continue;
            }
            leaf = it->second;
        } else {
            if (added == maxNewLeaves) {
                ignore(refusals + TooManyLeaves, *c.series);
                continue;
            }
            Domain domain;
            domain.kind = DomainKind::LeafSwitch;
            domain.name = std::string(c.leaf);
            domain.rail = static_cast<int32_t>(c.rail);
            if (const auto spine = spineOfRail.find(domain.rail); spine != spineOfRail.end()) {
                domain.parent = spine->second;
            }
            leaf = static_cast<uint32_t>(m_shape.domains.size());
            m_shape.domains.push_back(std::move(domain));
            byName.emplace(m_shape.domains.back().name, leaf);
            ++added;
        }
        links[c.gpu] = { leaf, c.port };
        ++linked;
    }

    std::vector<std::string> lines;
    if (linked > 0) {
        m_shape.gpuLinks = std::move(links);
        hashDomains();
        lines.push_back(fmt::format("{} GPUs' leaf switch and port from {} ({} leaf switches not in the topology "
                                    "file added)",
            linked, UplinkLabels::seriesName, added));
    }
    for (size_t why = 0; why < ignored.size(); ++why) {
        if (ignored[why] > 0) {
            lines.push_back(
                fmt::format("{} {} series ignored: {}; the first: {}", ignored[why], UplinkLabels::seriesName,
                    why < refusals ? UplinkLabels::why(static_cast<Refusal>(why)) : otherWhy[why - refusals],
                    example[why]));
        }
    }
    return lines;
}

int64_t PrometheusTopology::rackOf(std::string_view name) const
{
    const auto it = m_rackByName.find(std::string(name));
    return it == m_rackByName.end() ? -1 : static_cast<int64_t>(it->second);
}

PrometheusTopology::Span PrometheusTopology::gpusOf(MetricMap::Scope scope, std::string_view hostname,
    std::string_view instance, std::string_view gpu, std::string_view nic, std::string_view rack) const
{
    switch (scope) {
    case MetricMap::Scope::Gpu: {
        const int64_t g = indexOf(hostname, gpu);
        return g < 0 ? Span {} : Span { static_cast<uint32_t>(g), 1 };
    }
    case MetricMap::Scope::Nic: {
        const int64_t node = nodeOf(MetricMap::hostOf(hostname, instance));
        const int64_t g = node < 0 ? -1 : indexOfNic(static_cast<uint32_t>(node), nic);
        return g < 0 ? Span {} : Span { static_cast<uint32_t>(g), 1 };
    }
    case MetricMap::Scope::Rack: {
        const int64_t k = rackOf(rack);
        if (k < 0) {
            return {};
        }
        const auto &r = m_shape.racks[static_cast<size_t>(k)];
        if (r.nodeCount == 0) {
            return {};
        }
        const auto &first = m_shape.nodes[r.firstNode];
        const auto &last = m_shape.nodes[r.firstNode + r.nodeCount - 1];
        return { first.firstGpu, last.firstGpu + last.gpuCount - first.firstGpu };
    }
    }
    return {};
}

size_t PrometheusTopology::applyIdentity(const std::vector<PromSample> &series)
{
    size_t unknown = 0;
    for (const auto &s : series) {
        const int64_t g = indexOf(s.hostname, s.gpu);
        if (g < 0) {
            ++unknown;
            continue;
        }
        m_shape.uuids[static_cast<size_t>(g)] = s.uuid;
        auto &node = m_shape.nodes[m_shape.nodeOfGpu[static_cast<size_t>(g)]];
        if (!s.model.empty()) {
            node.model = s.model;
        }
        if (!s.driver.empty()) {
            node.driverVersion = s.driver;
        }
        if (!s.vbios.empty()) {
            node.firmwareVersion = s.vbios;
        }
    }
    return unknown;
}

} // namespace fleetscope::backend
