// SPDX-License-Identifier: Apache-2.0
#include "client/topologydecode.h"

#include "client/wiretext.h"

#include "model/heatmaplayout.h"

#include <QString>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

namespace fleetscope {

namespace {
// Text that many nodes share (a model, a driver or firmware version), read once and the same QString shared (it is
// implicitly shared): at a million GPUs, 131,072 nodes' three such fields were each read afresh, a third of the
// topology's decoding. Up to 256 distinct texts of at most 1 KiB are remembered; the rest are read as they come.
class SharedWireText
{
public:
    explicit SharedWireText(int limit)
        : m_limit(limit)
    { }

    QString operator()(const std::string &raw)
    {
        if (const auto it = m_read.find(raw); it != m_read.end()) {
            return it->second;
        }
        QString text = wireText(raw, m_limit);
        if (m_read.size() < maxRemembered && raw.size() <= maxRememberedBytes) {
            m_read.emplace(raw, text);
        }
        return text;
    }

private:
    static constexpr size_t maxRemembered = 256;
    static constexpr size_t maxRememberedBytes = 1024; // a longer text is cut to m_limit anyway: not kept as a key
    const int m_limit;
    std::unordered_map<std::string, QString> m_read;
};

// What is wrong with a rack's or node's list of domains ("lists domain 99 of a table of 40"), or empty.
QString membershipProblem(const google::protobuf::RepeatedField<uint32_t> &list, uint32_t domainCount)
{
    if (list.size() > maxMemberships) {
        return QStringLiteral("lists %1 domains (at most %2)").arg(list.size()).arg(maxMemberships);
    }
    for (const uint32_t d : list) {
        if (d >= domainCount) {
            return QStringLiteral("lists domain %1 of a table of %2").arg(d).arg(domainCount);
        }
    }
    return {};
}

// A node's GPUs' leaf switches and ports into topology->gpuLinks (made at the first node that has them), its GPU
// range already checked. False with *error saying what is wrong ("has 3 leaf links for 8 GPUs").
bool decodeGpuLinks(const pb::Node &node, uint32_t domainCount, Topology *topology, QString *error)
{
    const int links = node.gpu_leaves_size();
    if (links == 0 && node.gpu_ports_size() == 0) {
        return true;
    }
    if (static_cast<uint64_t>(links) != node.gpu_count() || node.gpu_ports_size() != links) {
        *error = QStringLiteral("has %1 leaf links and %2 ports for %3 GPUs")
                     .arg(links)
                     .arg(node.gpu_ports_size())
                     .arg(node.gpu_count());
        return false;
    }
    for (int g = 0; g < links; ++g) {
        const uint32_t leaf = node.gpu_leaves(g);
        const uint32_t port = node.gpu_ports(g);
        if ((leaf != Topology::GpuLink::none && leaf >= domainCount) || port > maxLeafPort) {
            *error = QStringLiteral("links GPU %1 to leaf %2 port %3 (a table of %4 domains, ports up to %5)")
                         .arg(g)
                         .arg(leaf)
                         .arg(port)
                         .arg(domainCount)
                         .arg(maxLeafPort);
            return false;
        }
    }
    if (topology->gpuLinks.empty()) {
        topology->gpuLinks.resize(topology->gpuCount);
    }
    for (int g = 0; g < links; ++g) {
        topology->gpuLinks[node.first_gpu() + static_cast<uint32_t>(g)] = { node.gpu_leaves(g), node.gpu_ports(g) };
    }
    return true;
}
} // namespace

TopologyPtr decodeTopology(const std::vector<pb::TopologyPart> &parts, QString *error)
{
    if (parts.empty()) {
        *error = QStringLiteral("the topology stream was empty");
        return nullptr;
    }
    const auto &head = parts.front();
    if (head.part_index() != 0 || head.part_count() != parts.size()) {
        *error = QStringLiteral("topology parts missing: got %1 of %2").arg(parts.size()).arg(head.part_count());
        return nullptr;
    }
    auto topology = std::make_shared<Topology>();
    topology->generation = head.generation();
    topology->gpuCount = head.gpu_count();
    // A name for people, nothing more: a few dozen characters of it at most.
    topology->backendVersion = QString::fromStdString(head.backend_version().substr(0, 64)).simplified();
    if (topology->gpuCount > maxGpus) {
        *error = QStringLiteral("the topology claims %1 GPUs, more than the %2 this console handles")
                     .arg(topology->gpuCount)
                     .arg(maxGpus);
        return nullptr;
    }
    // The nodes must hold the GPUs claimed before anything is sized by the claim: a claim of a million GPUs with a
    // handful of nodes made about 50 MB of identity arrays before it was refused (found by fuzzing's profile).
    uint64_t held = 0;
    size_t nodes = 0;
    uint64_t domainsHeld = 0;
    for (const auto &part : parts) {
        nodes += static_cast<size_t>(part.nodes_size());
        domainsHeld += static_cast<uint64_t>(part.domains_size());
        for (const auto &node : part.nodes()) {
            held += node.gpu_count();
        }
    }
    if (held != topology->gpuCount) {
        *error
            = QStringLiteral("the topology's nodes hold %1 GPUs, but it claims %2").arg(held).arg(topology->gpuCount);
        return nullptr;
    }
    // The domain table's size is known before it is read, and bounded by the nodes (so by the GPUs).
    const uint32_t domainCount = head.domain_count();
    if (domainCount > maxDomains(nodes)) {
        *error = QStringLiteral("the topology claims %1 domains for %2 nodes (at most %3)")
                     .arg(domainCount)
                     .arg(nodes)
                     .arg(maxDomains(nodes));
        return nullptr;
    }
    if (domainsHeld != domainCount) {
        *error = QStringLiteral("the topology's parts hold %1 domains, its header says %2")
                     .arg(domainsHeld)
                     .arg(domainCount);
        return nullptr;
    }
    topology->domains.reserve(domainCount);
    topology->gpuUuids.resize(topology->gpuCount);
    topology->gpuSerials.resize(topology->gpuCount);
    topology->nodes.reserve(nodes);
    SharedWireText model(maxNameText);
    SharedWireText driver(maxNameText);
    SharedWireText firmware(maxNameText);
    for (size_t p = 0; p < parts.size(); ++p) {
        const auto &part = parts[p];
        if (part.part_index() != p || part.generation() != head.generation()) {
            *error = QStringLiteral("topology part %1 is out of order or from another generation").arg(p);
            return nullptr;
        }
        for (const auto &domain : part.domains()) {
            const auto index = static_cast<uint32_t>(topology->domains.size());
            if (domain.has_parent() && domain.parent() >= index) {
                *error = QStringLiteral("domain %1 (%2) names domain %3 as its parent, not one before it")
                             .arg(index)
                             .arg(quotedWireText(domain.name()), QString::number(domain.parent()));
                return nullptr;
            }
            if (domain.has_rail() && domain.rail() >= maxRail) {
                *error = QStringLiteral("domain %1 (%2) is on rail %3 (at most %4)")
                             .arg(index)
                             .arg(quotedWireText(domain.name()), QString::number(domain.rail()),
                                 QString::number(maxRail - 1));
                return nullptr;
            }
            // The wire's kinds are DomainKind's plus one; one this console does not know (a newer backend's) is
            // kept as DomainKind::Count, named "domain", rather than refusing the fleet.
            const int kind = static_cast<int>(domain.kind()) - 1;
            topology->domains.push_back({ kind >= 0 && kind < domainKindCount ? static_cast<DomainKind>(kind)
                                                                              : DomainKind::Count,
                wireText(domain.name(), maxNameText), domain.has_parent() ? static_cast<int32_t>(domain.parent()) : -1,
                domain.has_rail() ? static_cast<int32_t>(domain.rail()) : -1 });
        }
        for (const auto &row : part.rows()) {
            topology->rows.push_back({ wireText(row.name(), maxNameText), wireText(row.hall(), maxNameText) });
        }
        for (const auto &rack : part.racks()) {
            if (const QString problem = membershipProblem(rack.domains(), domainCount); !problem.isEmpty()) {
                *error = QStringLiteral("rack %1 (%2) %3")
                             .arg(topology->racks.size())
                             .arg(quotedWireText(rack.name()), problem);
                return nullptr;
            }
            topology->racks.push_back(
                { wireText(rack.name(), maxNameText), rack.row(), rack.position(), rack.first_node(), rack.node_count(),
                    rack.nvlink_domain(), { rack.domains().begin(), rack.domains().end() } });
        }
        for (const auto &node : part.nodes()) {
            const auto index = topology->nodes.size();
            topology->nodes.push_back({ wireText(node.hostname(), maxHostnameText), model(node.model()),
                driver(node.driver_version()), firmware(node.firmware_version()), node.rack(), node.first_gpu(),
                node.gpu_count(), { node.domains().begin(), node.domains().end() } });
            const bool uuidsOk
                = node.gpu_uuids_size() == 0 || node.gpu_uuids_size() == static_cast<int>(node.gpu_count());
            const bool serialsOk
                = node.gpu_serials_size() == 0 || node.gpu_serials_size() == static_cast<int>(node.gpu_count());
            if (!uuidsOk || !serialsOk
                || static_cast<uint64_t>(node.first_gpu()) + node.gpu_count() > topology->gpuCount) {
                *error = QStringLiteral("node %1 (%2) has an inconsistent GPU range or identity list")
                             .arg(index)
                             .arg(quotedWireText(node.hostname()));
                return nullptr;
            }
            if (const QString problem = membershipProblem(node.domains(), domainCount); !problem.isEmpty()) {
                *error = QStringLiteral("node %1 (%2) %3").arg(index).arg(quotedWireText(node.hostname()), problem);
                return nullptr;
            }
            if (!decodeGpuLinks(node, domainCount, topology.get(), error)) {
                *error = QStringLiteral("node %1 (%2) %3").arg(index).arg(quotedWireText(node.hostname()), *error);
                return nullptr;
            }
            for (int g = 0; g < node.gpu_uuids_size(); ++g) {
                const std::string &text = node.gpu_uuids(g);
                const size_t skip = text.rfind("GPU-", 0) == 0 ? 4 : 0; // nvidia-smi's prefix
                topology->gpuUuids[node.first_gpu() + g]
                    = QUuid::fromString(QLatin1String(text.data() + skip, static_cast<qsizetype>(text.size() - skip)));
            }
            for (int g = 0; g < node.gpu_serials_size(); ++g) {
                // A board serial is a dozen or so printable ASCII characters (search indexes them, the detail panel
                // shows them); anything else is not one and is left unknown.
                const std::string &serial = node.gpu_serials(g);
                const bool printable = serial.size() <= maxSerialBytes
                    && std::all_of(serial.begin(), serial.end(), [](char c) { return c > ' ' && c < 0x7f; });
                topology->gpuSerials[node.first_gpu() + g] = printable ? serial : std::string();
            }
        }
    }

    // Check the hierarchy: nodes tile 0..N-1 in order, racks tile the nodes in order, every index is in range.
    const uint32_t n = topology->gpuCount;
    if (n == 0) {
        *error = QStringLiteral("the topology has no GPUs");
        return nullptr;
    }
    uint32_t nextGpu = 0;
    topology->nodeOfGpu.resize(n);
    for (size_t i = 0; i < topology->nodes.size(); ++i) {
        const auto &node = topology->nodes[i];
        if (node.firstGpu != nextGpu || node.gpuCount == 0 || node.gpuCount > n - nextGpu
            || node.rack >= topology->racks.size()) {
            *error = QStringLiteral("node %1 (%2) has an inconsistent GPU range or rack").arg(i).arg(node.hostname);
            return nullptr;
        }
        std::fill_n(topology->nodeOfGpu.begin() + node.firstGpu, node.gpuCount, static_cast<uint32_t>(i));
        nextGpu += node.gpuCount;
    }
    if (nextGpu != n) {
        *error = QStringLiteral("the nodes cover %1 GPUs, the topology says %2").arg(nextGpu).arg(n);
        return nullptr;
    }
    uint32_t nextNode = 0;
    for (size_t k = 0; k < topology->racks.size(); ++k) {
        const auto &rack = topology->racks[k];
        if (rack.firstNode != nextNode || rack.nodeCount > topology->nodes.size() - nextNode
            || rack.row >= topology->rows.size()) {
            *error = QStringLiteral("rack %1 (%2) has an inconsistent node range or row").arg(k).arg(rack.name);
            return nullptr;
        }
        for (uint32_t j = rack.firstNode; j < rack.firstNode + rack.nodeCount; ++j) {
            if (topology->nodes[j].rack != k) {
                *error = QStringLiteral("node %1 does not point back to rack %2").arg(j).arg(k);
                return nullptr;
            }
        }
        nextNode += rack.nodeCount;
    }
    if (nextNode != topology->nodes.size()) {
        *error = QStringLiteral("the racks cover %1 nodes of %2").arg(nextNode).arg(topology->nodes.size());
        return nullptr;
    }
    // The floor plan: one rack per place, and places no farther apart than a map can draw.
    std::vector<std::pair<uint32_t, uint32_t>> places; // (row, position) of each rack
    places.reserve(topology->racks.size());
    for (const auto &rack : topology->racks) {
        places.emplace_back(rack.row, rack.position);
    }
    std::sort(places.begin(), places.end());
    if (const auto twice = std::adjacent_find(places.begin(), places.end()); twice != places.end()) {
        *error = QStringLiteral("two racks stand at position %1 of row %2").arg(twice->second).arg(twice->first);
        return nullptr;
    }
    const auto [width, height] = HeatmapLayout::floorPlanSize(*topology);
    const uint64_t maxCells = maxFloorPlanCellsPerGpu * uint64_t { n } + (uint64_t { 1 } << 20U);
    if (width > maxFloorPlanSide || height > maxFloorPlanSide || width * height > maxCells) {
        *error = QStringLiteral("the racks' positions spread %1 GPUs over a floor plan of %2 x %3 cells (at most %4 "
                                "cells, %5 a side)")
                     .arg(n)
                     .arg(width)
                     .arg(height)
                     .arg(maxCells)
                     .arg(maxFloorPlanSide);
        return nullptr;
    }
    return topology;
}

bool TopologyCollector::add(pb::TopologyPart &&part, QString *error)
{
    if (!m_refused.isEmpty()) {
        *error = m_refused;
        return false;
    }
    // What was gathered goes at once: the stream is cut, and nothing of it will be decoded.
    const auto refuse = [this, error](const QString &why) {
        m_refused = why;
        m_parts.clear();
        m_parts.shrink_to_fit();
        *error = why;
        return false;
    };
    const uint32_t index = static_cast<uint32_t>(m_parts.size());
    if (m_parts.empty()) {
        if (part.part_index() != 0) {
            return refuse(
                QStringLiteral("the topology stream began with part %1, not its header").arg(part.part_index()));
        }
        if (part.gpu_count() == 0 || part.gpu_count() > maxGpus) {
            return refuse(QStringLiteral("the topology claims %1 GPUs (this console handles 1 to %2)")
                              .arg(part.gpu_count())
                              .arg(maxGpus));
        }
        if (part.part_count() == 0 || part.part_count() > uint64_t { part.gpu_count() } + 1) {
            return refuse(QStringLiteral("the topology announces %1 parts for %2 GPUs (at most one more than its GPUs)")
                              .arg(part.part_count())
                              .arg(part.gpu_count()));
        }
        if (part.domain_count() > maxDomains(part.gpu_count())) {
            return refuse(QStringLiteral("the topology claims %1 domains for %2 GPUs (at most %3)")
                              .arg(part.domain_count())
                              .arg(part.gpu_count())
                              .arg(maxDomains(part.gpu_count())));
        }
        m_gpuCount = part.gpu_count();
        m_partCount = part.part_count();
        m_generation = part.generation();
        m_domainCount = part.domain_count();
    } else {
        if (index >= m_partCount) {
            return refuse(
                QStringLiteral("the topology stream goes on past the %1 parts its header announced").arg(m_partCount));
        }
        if (part.part_index() != index || part.generation() != m_generation) {
            return refuse(QStringLiteral("topology part %1 is out of order or from another generation").arg(index));
        }
        if (part.nodes_size() == 0) {
            return refuse(QStringLiteral("topology part %1 holds no node").arg(index));
        }
    }
    m_bytes += part.ByteSizeLong();
    if (m_bytes > maxTopologyBytes(m_gpuCount)) {
        return refuse(QStringLiteral("the topology stream passes %1 bytes, more than its %2 GPUs can need (%3)")
                          .arg(m_bytes)
                          .arg(m_gpuCount)
                          .arg(maxTopologyBytes(m_gpuCount)));
    }
    m_domains += static_cast<uint64_t>(part.domains_size());
    if (m_domains > m_domainCount) {
        return refuse(QStringLiteral("the topology's parts hold more than the %1 domains its header announced")
                          .arg(m_domainCount));
    }
    m_rows += static_cast<uint64_t>(part.rows_size());
    m_racks += static_cast<uint64_t>(part.racks_size());
    m_nodes += static_cast<uint64_t>(part.nodes_size());
    const uint64_t mostRacks = maxFloorPlanCellsPerGpu * m_gpuCount + (uint64_t { 1 } << 20U);
    if (m_rows > maxFloorPlanSide || m_racks > mostRacks || m_nodes > m_gpuCount) {
        return refuse(
            QStringLiteral("the topology lists %1 rows, %2 racks and %3 nodes so far for %4 GPUs (at most %5, "
                           "%6 and %4)")
                .arg(m_rows)
                .arg(m_racks)
                .arg(m_nodes)
                .arg(m_gpuCount)
                .arg(maxFloorPlanSide)
                .arg(mostRacks));
    }
    for (const auto &node : part.nodes()) {
        m_nodeGpus += node.gpu_count();
        if (static_cast<uint64_t>(node.gpu_uuids_size()) > node.gpu_count()
            || static_cast<uint64_t>(node.gpu_serials_size()) > node.gpu_count()
            || static_cast<uint64_t>(node.gpu_leaves_size()) > node.gpu_count()
            || static_cast<uint64_t>(node.gpu_ports_size()) > node.gpu_count()) {
            return refuse(QStringLiteral("node %1 lists more GPU identities or links than its %2 GPUs")
                              .arg(quotedWireText(node.hostname()))
                              .arg(node.gpu_count()));
        }
    }
    if (m_nodeGpus > m_gpuCount) {
        return refuse(QStringLiteral("the topology's nodes hold more than the %1 GPUs it claims").arg(m_gpuCount));
    }
    m_parts.push_back(std::move(part));
    return true;
}

TopologyPtr TopologyCollector::finish(QString *error)
{
    if (!m_refused.isEmpty()) {
        *error = m_refused;
        return nullptr;
    }
    return decodeTopology(m_parts, error);
}

} // namespace fleetscope
