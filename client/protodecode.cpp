// SPDX-License-Identifier: Apache-2.0
#include "client/protodecode.h"

#include "client/wiretext.h"

#include "model/heatmaplayout.h"
#include "model/viewstate.h"

#include <QStringList>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

namespace fleetscope {

namespace {
QString qs(const std::string &s)
{
    return QString::fromStdString(s);
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
    for (const auto &part : parts) {
        for (const auto &node : part.nodes()) {
            held += node.gpu_count();
        }
    }
    if (held != topology->gpuCount) {
        *error
            = QStringLiteral("the topology's nodes hold %1 GPUs, but it claims %2").arg(held).arg(topology->gpuCount);
        return nullptr;
    }
    topology->gpuUuids.resize(topology->gpuCount);
    topology->gpuSerials.resize(topology->gpuCount);
    for (size_t p = 0; p < parts.size(); ++p) {
        const auto &part = parts[p];
        if (part.part_index() != p || part.generation() != head.generation()) {
            *error = QStringLiteral("topology part %1 is out of order or from another generation").arg(p);
            return nullptr;
        }
        for (const auto &row : part.rows()) {
            topology->rows.push_back({ wireText(row.name(), maxNameText), wireText(row.hall(), maxNameText) });
        }
        for (const auto &rack : part.racks()) {
            topology->racks.push_back({ wireText(rack.name(), maxNameText), rack.row(), rack.position(),
                rack.first_node(), rack.node_count(), rack.nvlink_domain() });
        }
        for (const auto &node : part.nodes()) {
            const auto index = topology->nodes.size();
            topology->nodes.push_back({ wireText(node.hostname(), maxHostnameText), wireText(node.model(), maxNameText),
                wireText(node.driver_version(), maxNameText), wireText(node.firmware_version(), maxNameText),
                node.rack(), node.first_gpu(), node.gpu_count() });
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

MetricInfo decodeMetricInfo(const pb::MetricInfo &info)
{
    MetricInfo m;
    m.id = qs(info.id());
    m.name = qs(info.name());
    m.unit = qs(info.unit());
    m.dcgmField = qs(info.dcgm_field());
    m.colourMap = qs(info.colour_map());
    m.rangeMin = info.range_min();
    m.rangeMax = info.range_max() > info.range_min() ? info.range_max() : info.range_min() + 1;
    m.isRate = info.kind() == pb::METRIC_KIND_RATE;
    return m;
}

std::vector<MetricInfo> decodeMetricCatalogue(const pb::ListMetricsResponse &response, QStringList *problems)
{
    std::vector<MetricInfo> metrics;
    if (response.metrics_size() > maxCatalogueMetrics) {
        *problems << QStringLiteral("the metric catalogue lists %1 metrics: the first %2 kept")
                         .arg(response.metrics_size())
                         .arg(maxCatalogueMetrics);
    }
    const int count = std::min(response.metrics_size(), maxCatalogueMetrics);
    metrics.reserve(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
        const auto &info = response.metrics(i);
        const QString id = info.id().size() <= static_cast<size_t>(ViewState::maxIdLength) ? qs(info.id()) : QString();
        if (!ViewState::isIdentifier(id)) {
            *problems << QStringLiteral("metric %1 dropped: its id %2 is not letters, digits, '_', '-' and '.' (at "
                                        "most %3)")
                             .arg(i)
                             .arg(quotedWireText(info.id()))
                             .arg(ViewState::maxIdLength);
            continue;
        }
        if (std::any_of(metrics.begin(), metrics.end(), [&id](const MetricInfo &m) { return m.id == id; })) {
            *problems << QStringLiteral("metric %1 dropped: %2 is listed before it").arg(i).arg(id);
            continue;
        }
        MetricInfo m = decodeMetricInfo(info); // an empty or reversed range becomes min .. min + 1
        // The colour scale divides by the span: it must be finite and more than nothing in single precision.
        if (!std::isfinite(m.rangeMin) || !std::isfinite(m.rangeMax) || !(m.rangeMax > m.rangeMin)
            || !std::isfinite(m.rangeMax - m.rangeMin)) {
            *problems << QStringLiteral("metric %1 dropped: its range %2 .. %3 is no finite span")
                             .arg(id)
                             .arg(info.range_min())
                             .arg(info.range_max());
            continue;
        }
        m.id = id;
        m.name = wireText(info.name(), maxMetricNameLength);
        if (m.name.isEmpty()) {
            m.name = id;
        }
        m.unit = wireText(info.unit(), maxMetricUnitLength);
        m.dcgmField = wireText(info.dcgm_field(), maxMetricFieldLength);
        if (!m.colourMap.isEmpty() && !ViewState::isIdentifier(m.colourMap)) {
            m.colourMap.clear();
        }
        metrics.push_back(std::move(m));
    }
    return metrics;
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
        m_gpuCount = part.gpu_count();
        m_partCount = part.part_count();
        m_generation = part.generation();
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
            || static_cast<uint64_t>(node.gpu_serials_size()) > node.gpu_count()) {
            return refuse(QStringLiteral("node %1 lists more GPU identities than its %2 GPUs")
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
    TopologyPtr topology = decodeTopology(m_parts, error);
    m_parts.clear();
    return topology;
}

namespace {
// A job's GPUs as the wire gives them, checked without expanding anything: inside the fleet, ascending, none twice;
// runs not empty, each starting past the end of the one before. Returns how many GPUs they are (at most the fleet),
// or sets *problem.
uint64_t claimedGpus(const pb::Job &j, uint32_t n, QString *problem)
{
    // Its times too: views subtract them from the clock (how long a version has run, say), which a time near the int64
    // range's lower end would overflow.
    if (j.start_time_ms() < 0 || j.last_checkpoint_ms() < 0 || j.end_time_ms() < 0
        || (j.end_time_ms() != 0 && j.end_time_ms() < j.start_time_ms())) {
        *problem = QStringLiteral("has a time before the epoch, or ends before it starts");
        return 0;
    }
    if (!j.gpus().empty() && !j.gpu_runs().empty()) {
        *problem = QStringLiteral("lists its GPUs both one by one and as runs");
        return 0;
    }
    uint64_t next = 0; // the least GPU the next one may be
    uint64_t count = 0;
    for (const auto &run : j.gpu_runs()) {
        if (run.count() == 0 || run.first() >= n || run.count() > n - run.first()) {
            *problem = QStringLiteral("names GPUs %1 to %2 of a fleet of %3")
                           .arg(run.first())
                           .arg(uint64_t { run.first() } + run.count())
                           .arg(n);
            return 0;
        }
        if (run.first() < next) {
            *problem = QStringLiteral("lists its GPUs out of order or twice");
            return 0;
        }
        next = uint64_t { run.first() } + run.count();
        count += run.count();
    }
    for (const uint32_t gpu : j.gpus()) {
        if (gpu >= n) {
            *problem = QStringLiteral("names GPU %1 of a fleet of %2").arg(gpu).arg(n);
            return 0;
        }
        if (gpu < next) {
            *problem = QStringLiteral("lists its GPUs out of order or twice");
            return 0;
        }
        next = uint64_t { gpu } + 1;
        ++count;
    }
    return count;
}

// Calls f(gpu) for each GPU of a job whose GPUs claimedGpus accepted, in order, until f returns false.
template <typename F> void forEachGpu(const pb::Job &j, F f)
{
    for (const auto &run : j.gpu_runs()) {
        for (uint32_t g = run.first(); g < run.first() + run.count(); ++g) {
            if (!f(g)) {
                return;
            }
        }
    }
    for (const uint32_t gpu : j.gpus()) {
        if (!f(gpu)) {
            return;
        }
    }
}
} // namespace

JobsPtr decodeJobs(const pb::ListJobsResponse &response, const Topology &topology, QString *error)
{
    const uint32_t n = topology.gpuCount;
    const uint64_t bound = maxJobGpuEntries(n);
    const int count = response.jobs_size();
    auto list = std::make_shared<JobList>();
    list->topologyGeneration = topology.generation;
    list->runningJobOfGpu.assign(n, -1); // while decoding: the wire index of the running job holding the GPU
    std::vector<std::optional<Job>> kept(static_cast<size_t>(count));
    // The first maxJobProblemsSaid dropped jobs' wire indices and reasons, and how many were dropped in all.
    std::vector<std::pair<int, QString>> problems;
    size_t dropped = 0;
    const auto drop = [&](int index, const QString &problem) {
        if (problems.size() < static_cast<size_t>(maxJobProblemsSaid)) {
            problems.emplace_back(index, problem);
        }
        ++dropped;
    };
    uint64_t spent = 0; // GPU entries looked at so far, of jobs kept or dropped
    uint32_t runningPast = 0; // jobs left out past the bound
    uint32_t endedPast = 0;
    size_t keptCount = 0;

    const auto decode = [&](int index) {
        const pb::Job &j = response.jobs(index);
        const bool running = j.end_time_ms() == 0;
        QString problem;
        const uint64_t gpus = claimedGpus(j, n, &problem);
        if (!problem.isEmpty()) {
            drop(index, problem);
            return;
        }
        if (spent + gpus > bound) {
            ++(running ? runningPast : endedPast);
            return;
        }
        Job job;
        job.id = j.id();
        job.name = wireText(j.name(), maxJobText);
        job.owner = wireText(j.owner(), maxJobText);
        job.startTimeMs = j.start_time_ms();
        job.lastCheckpointMs = j.last_checkpoint_ms();
        job.endTimeMs = j.end_time_ms();
        job.gpus.reserve(static_cast<size_t>(gpus));
        forEachGpu(j, [&](uint32_t g) {
            ++spent;
            if (running && list->runningJobOfGpu[g] >= 0) {
                const auto holder = static_cast<size_t>(list->runningJobOfGpu[g]);
                problem = QStringLiteral("holds GPU %1, which running job %2 holds too").arg(g).arg(kept[holder]->id);
                return false;
            }
            job.gpus.push_back(g);
            return true;
        });
        if (!problem.isEmpty()) {
            drop(index, problem);
            return;
        }
        if (running) {
            for (const uint32_t g : job.gpus) {
                list->runningJobOfGpu[g] = index;
            }
        }
        kept[static_cast<size_t>(index)] = std::move(job);
        ++keptCount;
    };
    // Running jobs first, in the wire's order; then the ended ones, newest first, so that the bound leaves out the
    // oldest, as the backend does under its message limit.
    for (int i = 0; i < count; ++i) {
        if (response.jobs(i).end_time_ms() == 0) {
            decode(i);
        }
    }
    for (int i = count - 1; i >= 0; --i) {
        if (response.jobs(i).end_time_ms() != 0) {
            decode(i);
        }
    }

    // The jobs in the wire's order; the GPUs' holders from wire indices to the list's.
    std::vector<int32_t> position(static_cast<size_t>(count), -1);
    list->jobs.reserve(keptCount);
    for (int i = 0; i < count; ++i) {
        if (kept[static_cast<size_t>(i)]) {
            position[static_cast<size_t>(i)] = static_cast<int32_t>(list->jobs.size());
            list->jobs.push_back(std::move(*kept[static_cast<size_t>(i)]));
        }
    }
    for (int32_t &holder : list->runningJobOfGpu) {
        if (holder >= 0) {
            holder = position[static_cast<size_t>(holder)];
        }
    }
    const auto plus = [](uint32_t a, uint32_t b) {
        return static_cast<uint32_t>(std::min<uint64_t>(uint64_t { a } + b, std::numeric_limits<uint32_t>::max()));
    };
    list->runningJobsLeftOut = plus(response.running_jobs_left_out(), runningPast);
    list->endedJobsLeftOut = plus(response.ended_jobs_left_out(), endedPast);

    QStringList said;
    if (dropped > 0) {
        std::sort(problems.begin(), problems.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
        QStringList described;
        for (const auto &[index, problem] : problems) {
            const pb::Job &j = response.jobs(index);
            described << QStringLiteral("job %1 (%2) %3").arg(j.id()).arg(wireText(j.name(), maxJobText), problem);
        }
        const QString more
            = dropped > problems.size() ? QStringLiteral("; and %1 more").arg(dropped - problems.size()) : QString();
        said << QStringLiteral("dropped %1 job(s): %2%3").arg(dropped).arg(described.join(QStringLiteral("; ")), more);
    }
    if (runningPast + endedPast > 0) {
        said << QStringLiteral("left out %1 running and %2 ended job(s) past the %3 GPU entries a job list may hold "
                               "for a fleet of %4 GPUs")
                    .arg(runningPast)
                    .arg(endedPast)
                    .arg(bound)
                    .arg(n);
    }
    if (!said.isEmpty()) {
        *error = said.join(QStringLiteral("; "));
    }
    return list;
}

FrameAssembler::FrameAssembler(TopologyPtr topology, std::vector<std::string> subscribed)
    : m_topology(std::move(topology))
{
    // The backend answers a metric named twice once (TelemetryService::resolveMetrics).
    for (auto &id : subscribed) {
        if (std::find(m_subscribed.begin(), m_subscribed.end(), id) == m_subscribed.end()) {
            m_subscribed.push_back(std::move(id));
        }
    }
}

void FrameAssembler::reset()
{
    m_building.reset();
    m_planeIds.clear();
    m_nextPart = 0;
    m_partCount = 0;
    m_covered = 0;
}

QString FrameAssembler::checkPlanes(const pb::FramePart &part) const
{
    const int planes = part.planes_size();
    if (m_building) {
        // The frame's other parts: the planes of its first, in the same order.
        if (static_cast<size_t>(planes) != m_planeIds.size()) {
            return QStringLiteral("frame %1: a part of %2 planes in a frame of %3")
                .arg(part.sequence())
                .arg(planes)
                .arg(m_planeIds.size());
        }
        for (int i = 0; i < planes; ++i) {
            if (part.planes(i).metric_id() != m_planeIds[static_cast<size_t>(i)]) {
                return QStringLiteral("frame %1: plane %2 changed between parts").arg(part.sequence()).arg(i);
            }
        }
        return {};
    }
    if (!m_subscribed.empty()) {
        // Exactly the subscription: as many planes, each one of it (so each once).
        if (static_cast<size_t>(planes) != m_subscribed.size()) {
            return QStringLiteral("frame %1 carries %2 planes, the subscription %3")
                .arg(part.sequence())
                .arg(planes)
                .arg(m_subscribed.size());
        }
        std::vector<bool> seen(m_subscribed.size(), false);
        for (int i = 0; i < planes; ++i) {
            const std::string &id = part.planes(i).metric_id();
            const auto at = std::find(m_subscribed.begin(), m_subscribed.end(), id);
            const auto k = static_cast<size_t>(at - m_subscribed.begin());
            if (at == m_subscribed.end() || seen[k]) {
                return QStringLiteral("frame %1: plane %2 (%3) was not subscribed to, or comes twice")
                    .arg(part.sequence())
                    .arg(i)
                    .arg(quotedWireText(id));
            }
            seen[k] = true;
        }
        return {};
    }
    // The default set: metric ids a view can carry, each once, no more than a catalogue lists.
    if (planes > maxCatalogueMetrics) {
        return QStringLiteral("frame %1 carries %2 planes, more than the %3 a catalogue may list")
            .arg(part.sequence())
            .arg(planes)
            .arg(maxCatalogueMetrics);
    }
    for (int i = 0; i < planes; ++i) {
        const std::string &id = part.planes(i).metric_id();
        const bool identifier = id.size() <= static_cast<size_t>(ViewState::maxIdLength)
            && ViewState::isIdentifier(QString::fromStdString(id));
        bool repeated = false;
        for (int k = 0; k < i && !repeated; ++k) {
            repeated = part.planes(k).metric_id() == id;
        }
        if (!identifier || repeated) {
            return QStringLiteral("frame %1: plane %2 (%3) is no metric id, or comes twice")
                .arg(part.sequence())
                .arg(i)
                .arg(quotedWireText(id));
        }
    }
    return {};
}

QString FrameAssembler::check(const pb::FramePart &part) const
{
    const uint32_t n = m_topology->gpuCount;
    if (part.fleet_gpu_count() != n) {
        return QStringLiteral("frame %1 is for %2 GPUs, the topology has %3")
            .arg(part.sequence())
            .arg(part.fleet_gpu_count())
            .arg(n);
    }
    if (part.topology_generation() != m_topology->generation) {
        return QStringLiteral("frame %1 is for topology generation %2, ours is %3")
            .arg(part.sequence())
            .arg(part.topology_generation())
            .arg(m_topology->generation);
    }
    // Each part covers at least one GPU, so a frame has at most n parts; all of them say the same count.
    if (part.part_index() != m_nextPart || part.part_index() >= part.part_count() || part.part_count() > n
        || (m_building && part.part_count() != m_partCount) || part.first_gpu() != m_covered || part.gpu_count() == 0
        || part.gpu_count() > n - m_covered) {
        return QStringLiteral("frame %1: part %2 of %3 (GPUs %4+%5) is out of order or covers no GPU")
            .arg(part.sequence())
            .arg(part.part_index())
            .arg(part.part_count())
            .arg(part.first_gpu())
            .arg(part.gpu_count());
    }
    if (m_building && part.sequence() != m_building->sequence) {
        return QStringLiteral("frame %1: a part of frame %2 is mixed in")
            .arg(m_building->sequence)
            .arg(part.sequence());
    }
    if (QString planes = checkPlanes(part); !planes.isEmpty()) {
        return planes;
    }
    if (part.health().size() != part.gpu_count()) {
        return QStringLiteral("frame %1: %2 health bytes for %3 GPUs")
            .arg(part.sequence())
            .arg(part.health().size())
            .arg(part.gpu_count());
    }
    for (int i = 0; i < part.planes_size(); ++i) {
        const auto &plane = part.planes(i);
        size_t width = 0;
        switch (plane.encoding()) {
        case pb::PLANE_ENCODING_FLOAT32:
            width = 4;
            break;
        case pb::PLANE_ENCODING_UINT16:
            width = 2;
            break;
        default:
            return QStringLiteral("frame %1: plane %2 has unknown encoding %3")
                .arg(part.sequence())
                .arg(quotedWireText(plane.metric_id()))
                .arg(plane.encoding());
        }
        if (plane.values().size() != width * part.gpu_count()) {
            return QStringLiteral("frame %1: plane %2 has %3 values, expected %4")
                .arg(part.sequence())
                .arg(quotedWireText(plane.metric_id()))
                .arg(plane.values().size() / width)
                .arg(part.gpu_count());
        }
    }
    return {};
}

namespace {
// Room for `size` elements, allocated as they arrive: at least twice what was there (a frame of k parts reallocates
// about log2(k) times), never more than the fleet.
template <typename T> void growTo(std::vector<T> &v, size_t size, size_t fleet)
{
    if (size > v.capacity()) {
        v.reserve(std::min(fleet, std::max(size, 2 * v.capacity())));
    }
    v.resize(size);
}
} // namespace

FrameAssembler::Result FrameAssembler::add(const pb::FramePart &part)
{
    if (part.part_index() == 0) {
        // A new frame starts; whatever was half built is abandoned (the server moved on).
        reset();
    }
    Result result;
    result.error = check(part);
    if (!result.error.isEmpty()) {
        reset();
        return result;
    }
    const uint32_t n = m_topology->gpuCount;
    const uint32_t first = part.first_gpu();
    const uint32_t count = part.gpu_count();
    if (!m_building) {
        m_building = std::make_shared<Frame>();
        m_building->sequence = part.sequence();
        m_building->sampleTimeMs = part.sample_time_ms();
        m_building->topologyGeneration = part.topology_generation();
        m_partCount = part.part_count();
        // The planes, checked above, are few: the whole fleet's room at once, unless that is more than
        // maxPlaneValuesUpFront (a default set of many metrics at a large fleet), which grows as values come.
        const bool upFront = uint64_t { n } * static_cast<uint64_t>(part.planes_size()) <= maxPlaneValuesUpFront;
        m_building->health.reserve(n);
        m_building->planes.resize(static_cast<size_t>(part.planes_size()));
        m_planeIds.reserve(static_cast<size_t>(part.planes_size()));
        for (int i = 0; i < part.planes_size(); ++i) {
            m_planeIds.push_back(part.planes(i).metric_id());
            m_building->planes[i].metricId = qs(part.planes(i).metric_id());
            m_building->planes[i].values.reserve(upFront ? n : count);
        }
    }
    for (int i = 0; i < part.planes_size(); ++i) {
        const auto &plane = part.planes(i);
        auto &values = m_building->planes[i].values;
        growTo(values, size_t { first } + count, n);
        float *out = values.data() + first;
        const char *bytes = plane.values().data();
        if (plane.encoding() == pb::PLANE_ENCODING_FLOAT32) {
            std::memcpy(out, bytes, count * sizeof(float));
        } else {
            const float scale = plane.scale();
            const float offset = plane.offset();
            for (uint32_t g = 0; g < count; ++g) {
                uint16_t raw = 0;
                std::memcpy(&raw, bytes + 2 * g, 2);
                out[g] = raw == 0xFFFF ? std::numeric_limits<float>::quiet_NaN() : raw * scale + offset;
            }
        }
    }
    growTo(m_building->health, size_t { first } + count, n);
    std::memcpy(m_building->health.data() + first, part.health().data(), count);
    m_covered += count;
    ++m_nextPart;
    if (m_nextPart == m_partCount) {
        if (m_covered != n) {
            result.error
                = QStringLiteral("frame %1 ended after %2 of %3 GPUs").arg(part.sequence()).arg(m_covered).arg(n);
        } else {
            result.frame = std::move(m_building);
        }
        reset();
    }
    return result;
}

namespace {
SummaryRollup decodeRollup(const pb::Rollup &r)
{
    return { wireText(r.name(), maxNameText), r.gpu_count(), r.mean_utilisation(), r.busy_gpu_hours(),
        r.idle_gpu_hours(), r.unhealthy_gpus(), r.availability(), r.failures() };
}
} // namespace

std::shared_ptr<Summary> decodeSummary(const pb::Summary &answer, QString *failure)
{
    auto summary = std::make_shared<Summary>();
    summary->fromMs = answer.from_ms();
    summary->toMs = answer.to_ms();
    summary->frames = answer.frames();
    summary->fleet = decodeRollup(answer.fleet());
    // Copied no further than validateSummary keeps (a list's rollups share the fleet; offenders are the request's top
    // ones), so that a 16 MiB answer of empty entries of two bytes each is not first made a list of millions.
    const int most = static_cast<int>(std::min(answer.fleet().gpu_count(), maxGpus));
    const auto rollups = [&](const auto &list, std::vector<SummaryRollup> *out, const char *kind) {
        const int count = std::min(list.size(), most);
        if (list.size() > count) {
            summary->problems << QStringLiteral("dropped %1 %2 rollups past the fleet's %3 GPUs")
                                     .arg(list.size() - count)
                                     .arg(QLatin1String(kind))
                                     .arg(most);
        }
        out->reserve(static_cast<size_t>(count));
        for (int i = 0; i < count; ++i) {
            out->push_back(decodeRollup(list.Get(i)));
        }
    };
    rollups(answer.rows(), &summary->rows, "row");
    rollups(answer.racks(), &summary->racks, "rack");
    rollups(answer.jobs(), &summary->jobs, "job");
    const int offenders = std::min<int>(answer.offenders_size(), static_cast<int>(maxOffenders));
    if (answer.offenders_size() > offenders) {
        summary->problems << QStringLiteral("dropped %1 offenders past the first %2")
                                 .arg(answer.offenders_size() - offenders)
                                 .arg(maxOffenders);
    }
    summary->offenders.reserve(static_cast<size_t>(offenders));
    for (int i = 0; i < offenders; ++i) {
        summary->offenders.push_back({ answer.offenders(i).gpu(), answer.offenders(i).failures() });
    }
    summary->totalFailures = answer.total_failures();
    const int repeat = std::min<int>(answer.repeat_offenders_size(), static_cast<int>(maxRepeatOffenders));
    if (answer.repeat_offenders_size() > repeat) {
        summary->problems << QStringLiteral("dropped %1 repeat offenders past the first %2")
                                 .arg(answer.repeat_offenders_size() - repeat)
                                 .arg(maxRepeatOffenders);
    }
    summary->repeatOffenders.reserve(static_cast<size_t>(repeat));
    for (int i = 0; i < repeat; ++i) {
        const auto &o = answer.repeat_offenders(i);
        summary->repeatOffenders.push_back({ o.gpu(), o.score(), o.xids(), o.serious_xids(), o.ecc_double_bit(),
            o.remapped_rows(), o.remapped_rows_correctable(), o.pcie_replays(), o.throttle_hours() });
    }
    summary->topPercentFailureShare = answer.top_percent_failure_share();
    summary->unitHours
        = { answer.unit_gpu_hours_lost(), answer.stranded_gpu_hours(), answer.units(), answer.healthy_units_at_end() };
    if (!validateSummary(summary.get())) {
        *failure = summary->problems.join(QStringLiteral("; "));
    }
    return summary;
}

} // namespace fleetscope
