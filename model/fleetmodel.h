// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "common/domains.h"
#include "common/health.h"
#include "model/jobphase.h"

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QUuid>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

// The plain C++ fleet model: what the client decodes from the wire and what widgets and app see. No protobuf type
// crosses this line. Everything handed between threads is immutable and shared as shared_ptr<const T>.
namespace fleetscope {

struct MetricInfo
{
    QString id; // e.g. "gpu_temp"
    QString name;
    QString unit;
    QString dcgmField;
    QString colourMap;
    float rangeMin = 0;
    float rangeMax = 1;
    bool isRate = false;
    // A categorical layer's categories, value k for the k-th (the console's own layers; the backend sends none).
    QStringList categories;
};

struct Topology
{
    struct Row
    {
        QString name;
        QString hall;
    };
    struct Rack
    {
        QString name;
        uint32_t row = 0;
        uint32_t position = 0;
        uint32_t firstNode = 0;
        uint32_t nodeCount = 0;
        bool nvlinkDomain = false; // the rack's GPUs are one NVLink domain (NVL72); otherwise NVLink ends at the node
        std::vector<uint32_t> domains {}; // indices into domains: its PDUs, cooling unit or coolant loop, NVLink domain
    };
    struct Node
    {
        QString hostname;
        QString model;
        QString driverVersion;
        QString firmwareVersion;
        uint32_t rack = 0;
        uint32_t firstGpu = 0;
        uint32_t gpuCount = 0;
        std::vector<uint32_t> domains {}; // indices into domains: its scalable unit
    };
    // A shared power, cooling or network domain (common/domains.h, docs/INCIDENTS.md). A kind this console does not
    // know (a newer backend's) is DomainKind::Count, which domainKindName calls "domain".
    struct Domain
    {
        DomainKind kind = DomainKind::Pdu;
        QString name;
        int32_t parent = -1; // index into domains, or -1
        int32_t rail = -1; // leaf switches and spine planes; -1 otherwise
    };
    // A GPU's rail NIC: the leaf switch it is cabled to (an index into domains) and the port.
    struct GpuLink
    {
        static constexpr uint32_t none = 0xFFFFFFFFU;
        uint32_t leaf = none;
        uint32_t port = 0;
    };

    uint64_t generation = 0;
    QString backendVersion; // as the backend names itself; may be empty
    uint32_t gpuCount = 0;
    std::vector<Row> rows;
    std::vector<Rack> racks;
    std::vector<Node> nodes;
    std::vector<uint32_t> nodeOfGpu; // dense GPU index -> node index
    // Per GPU identity, compact (a million GPUs): null / empty where the source does not know it.
    std::vector<QUuid> gpuUuids;
    std::vector<std::string> gpuSerials;
    // Parents before children; empty when the backend knows none. gpuLinks: gpuCount entries, or none.
    std::vector<Domain> domains;
    std::vector<GpuLink> gpuLinks;

    const Node &nodeOf(uint32_t gpu) const { return nodes[nodeOfGpu[gpu]]; }
    // "GPU-xxxxxxxx-…" as nvidia-smi prints it, or empty.
    QString uuidText(uint32_t gpu) const;
    // The domains a GPU belongs to, each once: its leaf switch, its rack's (PDUs, cooling, NVLink domain), its node's
    // (scalable unit), then their parents (a busway serves more than a PDU, a feed more than a busway). Empty when the
    // backend knows none, or gpu is past the fleet. As the backend's FleetShape::domainsOfGpu.
    std::vector<uint32_t> domainsOfGpu(uint32_t gpu) const;
    // A GPU's domains for people, its rack's then its link, as the backend words them (FleetShape::domainLine):
    // "PDU r03-k05-a · PDU r03-k05-b · cooling unit r03-crah1 · leaf su03-l5 port 17, rail 5". Empty when none.
    QString domainLine(uint32_t gpu) const;
    // The same, one entry a domain ("PDU r03-k05-a", …, "leaf su03-l5 port 17, rail 5") with its kind, for a view
    // that lays them out; nodeDomainNames: a node's, its rack's and its own (its scalable unit).
    struct DomainName
    {
        DomainKind kind;
        QString text;
    };
    std::vector<DomainName> domainNames(uint32_t gpu) const;
    std::vector<DomainName> nodeDomainNames(uint32_t node) const;
    // Names one line a cause, as they come ("PDU r03-k05-a · PDU r03-k05-b", "cooling unit r03-crah1", "leaf su03-l5
    // port 17, rail 5"; an NVLink domain on a line of its own): short lines that a narrow view need not break inside a
    // name (Qt breaks after a hyphen).
    static QStringList linesByCause(const std::vector<DomainName> &names);
    // The GPUs of a domain, its children's included (a busway's are those of its PDUs' racks): ascending runs
    // [first, count) that do not touch. Empty for an index past the table. Reads every GPU's memberships once. By
    // membership, a rack's PDUs each hold all its GPUs (as domainsOfGpu says); byCords, a node corded to one PDU alone
    // is that PDU's only: the GPUs the domain powers.
    enum class PowerBy : uint8_t { Membership, Cords };
    std::vector<std::pair<uint32_t, uint32_t>> gpuRunsOfDomain(
        uint32_t domain, PowerBy power = PowerBy::Membership) const;
    // "PDU r03-k05-a", or empty for an index past the table.
    QString domainName(uint32_t domain) const;
};

// The health byte per GPU (common/health.h), for people: "critical, throttled, XID".
namespace health {
QString describe(uint8_t byte);
} // namespace health

// The item of a frame's planes or a range's series that carries metricId, or null: a handful, so a scan.
template <typename Item> const Item *findMetric(const std::vector<Item> &items, const QString &metricId)
{
    const auto it
        = std::find_if(items.begin(), items.end(), [&](const Item &item) { return item.metricId == metricId; });
    return it != items.end() ? &*it : nullptr;
}

struct MetricPlane
{
    QString metricId;
    std::vector<float> values; // gpuCount values in dense order; NaN = no value
};

struct Frame
{
    uint64_t sequence = 0;
    int64_t sampleTimeMs = 0; // the sample's own time, Unix epoch ms
    uint64_t topologyGeneration = 0;
    std::vector<MetricPlane> planes;
    std::vector<uint8_t> health;

    const MetricPlane *plane(const QString &metricId) const { return findMetric(planes, metricId); }
};

// Jobs as ListJobs reports them: running ones, then recently ended ones.
struct Job
{
    uint64_t id = 0;
    QString name;
    QString owner;
    std::vector<uint32_t> gpus; // dense GPU indices, ascending
    int64_t startTimeMs = 0;
    int64_t lastCheckpointMs = 0; // 0 when none yet
    int64_t endTimeMs = 0; // 0 while running
    // Its account in brief (docs/JOBS.md), when the backend gives one: goodput < 0 when it does not.
    double goodput = -1; // productive GPU-time over GPU-time watched, 0..1
    JobPhase phase = JobPhase::Unwatched;
    uint32_t stragglerCount = 0;

    bool isRunning() const { return endTimeMs == 0; }
};

struct JobList
{
    uint64_t topologyGeneration = 0;
    std::vector<Job> jobs;
    std::vector<int32_t> runningJobOfGpu; // dense GPU index -> index into jobs of the running job on it, or -1
    // Jobs the backend left out of its answer to keep it under the message limit (the oldest ended ones first).
    uint32_t runningJobsLeftOut = 0;
    uint32_t endedJobsLeftOut = 0;

    const Job *runningJobOn(uint32_t gpu) const
    {
        if (gpu >= runningJobOfGpu.size() || runningJobOfGpu[gpu] < 0) {
            return nullptr;
        }
        return &jobs[static_cast<size_t>(runningJobOfGpu[gpu])];
    }
};

using TopologyPtr = std::shared_ptr<const Topology>;
using JobsPtr = std::shared_ptr<const JobList>;
using FramePtr = std::shared_ptr<const Frame>;

} // namespace fleetscope

Q_DECLARE_METATYPE(fleetscope::TopologyPtr)
Q_DECLARE_METATYPE(fleetscope::FramePtr)
Q_DECLARE_METATYPE(fleetscope::JobsPtr)
