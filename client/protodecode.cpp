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

JobsPtr decodeJobs(const pb::ListJobsResponse &response, const Topology &topology, QString *error)
{
    auto list = std::make_shared<JobList>();
    list->topologyGeneration = topology.generation;
    list->runningJobOfGpu.assign(topology.gpuCount, -1);
    QStringList problems;
    for (const auto &j : response.jobs()) {
        Job job;
        job.id = j.id();
        job.name = wireText(j.name(), maxJobText);
        job.owner = wireText(j.owner(), maxJobText);
        job.startTimeMs = j.start_time_ms();
        job.lastCheckpointMs = j.last_checkpoint_ms();
        job.endTimeMs = j.end_time_ms();
        QString problem;
        // Takes the next GPU of the job; false (with the problem said) when it cannot be.
        const auto take = [&](uint32_t gpu) {
            if (gpu >= topology.gpuCount) {
                problem = QStringLiteral("names GPU %1 of a fleet of %2").arg(gpu).arg(topology.gpuCount);
                return false;
            }
            if (!job.gpus.empty() && gpu <= job.gpus.back()) {
                problem = QStringLiteral("lists its GPUs out of order or twice");
                return false;
            }
            if (job.isRunning() && list->runningJobOfGpu[gpu] >= 0) {
                problem = QStringLiteral("holds GPU %1, which running job %2 holds too")
                              .arg(gpu)
                              .arg(list->jobs[static_cast<size_t>(list->runningJobOfGpu[gpu])].id);
                return false;
            }
            job.gpus.push_back(gpu);
            return true;
        };
        if (!j.gpus().empty() && !j.gpu_runs().empty()) {
            problem = QStringLiteral("lists its GPUs both one by one and as runs");
        } else if (!j.gpu_runs().empty()) {
            for (const auto &run : j.gpu_runs()) {
                // Each run checked against the fleet before it is expanded: a run never names more GPUs than there are.
                if (run.count() == 0 || run.first() >= topology.gpuCount
                    || run.count() > topology.gpuCount - run.first()) {
                    problem = QStringLiteral("names GPUs %1 to %2 of a fleet of %3")
                                  .arg(run.first())
                                  .arg(uint64_t { run.first() } + run.count())
                                  .arg(topology.gpuCount);
                    break;
                }
                if (!job.gpus.empty() && run.first() <= job.gpus.back()) {
                    problem = QStringLiteral("lists its GPUs out of order or twice");
                    break;
                }
                bool taken = true;
                for (uint32_t g = run.first(); g < run.first() + run.count() && taken; ++g) {
                    taken = take(g);
                }
                if (!taken) {
                    break;
                }
            }
        } else {
            job.gpus.reserve(static_cast<size_t>(j.gpus_size()));
            for (const uint32_t gpu : j.gpus()) {
                if (!take(gpu)) {
                    break;
                }
            }
        }
        if (!problem.isEmpty()) {
            problems << QStringLiteral("job %1 (%2) %3").arg(job.id).arg(job.name, problem);
            continue;
        }
        if (job.isRunning()) {
            for (const uint32_t gpu : job.gpus) {
                list->runningJobOfGpu[gpu] = static_cast<int32_t>(list->jobs.size());
            }
        }
        list->jobs.push_back(std::move(job));
    }
    list->runningJobsLeftOut = response.running_jobs_left_out();
    list->endedJobsLeftOut = response.ended_jobs_left_out();
    if (!problems.isEmpty()) {
        *error = QStringLiteral("dropped %1 job(s): %2").arg(problems.size()).arg(problems.join(QStringLiteral("; ")));
    }
    return list;
}

FrameAssembler::FrameAssembler(TopologyPtr topology)
    : m_topology(std::move(topology))
{ }

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
    if (part.part_index() != m_nextPart || part.part_index() >= part.part_count() || part.first_gpu() != m_covered
        || part.gpu_count() > n - m_covered) {
        return QStringLiteral("frame %1: part %2 of %3 (GPUs %4+%5) is out of order")
            .arg(part.sequence())
            .arg(part.part_index())
            .arg(part.part_count())
            .arg(part.first_gpu())
            .arg(part.gpu_count());
    }
    if (m_building
        && (part.sequence() != m_building->sequence
            || part.planes_size() != static_cast<int>(m_building->planes.size()))) {
        return QStringLiteral("frame %1: a part of frame %2 is mixed in")
            .arg(m_building->sequence)
            .arg(part.sequence());
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
        if (m_building && m_building->planes[i].metricId != qs(plane.metric_id())) {
            return QStringLiteral("frame %1: plane %2 changed between parts").arg(part.sequence()).arg(i);
        }
    }
    return {};
}

FrameAssembler::Result FrameAssembler::add(const pb::FramePart &part)
{
    if (part.part_index() == 0) {
        // A new frame starts; whatever was half built is abandoned (the server moved on).
        m_building.reset();
        m_nextPart = 0;
        m_covered = 0;
    }
    Result result;
    result.error = check(part);
    if (!result.error.isEmpty()) {
        m_building.reset();
        m_nextPart = 0;
        m_covered = 0;
        return result;
    }
    const uint32_t n = m_topology->gpuCount;
    if (!m_building) {
        m_building = std::make_shared<Frame>();
        m_building->sequence = part.sequence();
        m_building->sampleTimeMs = part.sample_time_ms();
        m_building->topologyGeneration = part.topology_generation();
        m_building->health.resize(n);
        m_building->planes.resize(static_cast<size_t>(part.planes_size()));
        for (int i = 0; i < part.planes_size(); ++i) {
            m_building->planes[i].metricId = qs(part.planes(i).metric_id());
            m_building->planes[i].values.resize(n);
        }
    }
    const uint32_t first = part.first_gpu();
    const uint32_t count = part.gpu_count();
    for (int i = 0; i < part.planes_size(); ++i) {
        const auto &plane = part.planes(i);
        float *out = m_building->planes[i].values.data() + first;
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
    std::memcpy(m_building->health.data() + first, part.health().data(), count);
    m_covered += count;
    ++m_nextPart;
    if (m_nextPart == part.part_count()) {
        if (m_covered != n) {
            result.error
                = QStringLiteral("frame %1 ended after %2 of %3 GPUs").arg(part.sequence()).arg(m_covered).arg(n);
            m_building.reset();
        } else {
            result.frame = std::move(m_building);
        }
        m_nextPart = 0;
        m_covered = 0;
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
    for (const auto &r : answer.rows()) {
        summary->rows.push_back(decodeRollup(r));
    }
    for (const auto &r : answer.racks()) {
        summary->racks.push_back(decodeRollup(r));
    }
    for (const auto &r : answer.jobs()) {
        summary->jobs.push_back(decodeRollup(r));
    }
    for (const auto &o : answer.offenders()) {
        summary->offenders.push_back({ o.gpu(), o.failures() });
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
