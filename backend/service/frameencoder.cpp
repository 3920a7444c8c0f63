// SPDX-License-Identifier: Apache-2.0
#include "service/frameencoder.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

static_assert(sizeof(float) == 4, "planes are float32");

namespace fleetscope::backend {

namespace {
// Planes are little-endian on the wire; on a big-endian host the bytes would need swapping here.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "float32 planes are sent in host order");
// The planes of every metric, the health bytes and the headers of a part of the most GPUs.
static_assert(size_t { maxGpusPerFramePart } * (static_cast<size_t>(MetricId::Count) * sizeof(float) + 1)
            + static_cast<size_t>(MetricId::Count) * 64 + 128
        < maxMessageBytes,
    "a frame part of every metric fits a message");
constexpr size_t rangePartTarget = 2U << 20U;
} // namespace

std::vector<pb::FramePart> encodeFrame(
    const Frame &frame, const std::vector<MetricId> &metrics, uint64_t topologyGeneration, uint32_t maxGpusPerPart)
{
    const auto n = static_cast<uint32_t>(frame.health.size());
    const uint32_t partCount = std::max<uint32_t>(1, (n + maxGpusPerPart - 1) / maxGpusPerPart);
    std::vector<pb::FramePart> parts(partCount);
    const auto &catalog = metricCatalog();
    for (uint32_t p = 0; p < partCount; ++p) {
        auto &part = parts[p];
        const uint32_t first = p * maxGpusPerPart;
        const uint32_t count = std::min(maxGpusPerPart, n - first);
        part.set_sequence(frame.sequence);
        part.set_sample_time_ms(frame.sampleTimeMs);
        part.set_topology_generation(topologyGeneration);
        part.set_first_gpu(first);
        part.set_gpu_count(count);
        part.set_part_index(p);
        part.set_part_count(partCount);
        part.set_fleet_gpu_count(n);
        for (const MetricId id : metrics) {
            auto *plane = part.add_planes();
            plane->set_metric_id(catalog[static_cast<size_t>(id)].key);
            plane->set_encoding(pb::PLANE_ENCODING_FLOAT32);
            const auto &values = frame.plane(id);
            if (values.size() < size_t { first } + count) {
                // A producer's frame without this plane (none should leave one out): no data, never a read past it.
                const std::vector<float> none(count, std::numeric_limits<float>::quiet_NaN());
                plane->mutable_values()->assign(reinterpret_cast<const char *>(none.data()), count * sizeof(float));
                continue;
            }
            plane->mutable_values()->assign(
                reinterpret_cast<const char *>(values.data() + first), count * sizeof(float));
        }
        part.mutable_health()->assign(reinterpret_cast<const char *>(frame.health.data() + first), count);
    }
    return parts;
}

size_t rangeRowsPerPart(size_t columns)
{
    const size_t header = rangePartBytesAtMost(0, columns);
    const size_t row = rangePartBytesAtMost(1, columns) - header;
    return header >= rangePartTarget ? 1 : std::max<size_t>(1, (rangePartTarget - header) / row);
}

pb::QueryRangePart rangePartHeader(MetricId metric, const std::vector<uint32_t> &gpus)
{
    pb::QueryRangePart part;
    part.set_metric_id(metricCatalog()[static_cast<size_t>(metric)].key);
    *part.mutable_gpus() = { gpus.begin(), gpus.end() };
    return part;
}

std::vector<pb::TopologyPart> encodeTopology(const FleetShape &shape, uint64_t generation, uint32_t maxNodesPerPart)
{
    const auto nodeCount = static_cast<uint32_t>(shape.nodes.size());
    const uint32_t partCount = std::max<uint32_t>(1, (nodeCount + maxNodesPerPart - 1) / maxNodesPerPart);
    std::vector<pb::TopologyPart> parts(partCount);
    for (uint32_t p = 0; p < partCount; ++p) {
        parts[p].set_generation(generation);
        parts[p].set_part_index(p);
        parts[p].set_part_count(partCount);
    }
    auto &head = parts.front();
    head.set_gpu_count(shape.gpuCount);
    // The domains spread over the parts in order, so that no part holds them all at a million GPUs.
    const auto domainCount = static_cast<uint32_t>(shape.domains.size());
    head.set_domain_count(domainCount);
    for (uint32_t d = 0; d < domainCount; ++d) {
        const Domain &domain = shape.domains[d];
        auto *out = parts[static_cast<uint64_t>(d) * partCount / domainCount].add_domains();
        out->set_kind(static_cast<pb::DomainKind>(static_cast<int>(domain.kind) + 1));
        out->set_name(domain.name);
        if (domain.parent >= 0) {
            out->set_parent(static_cast<uint32_t>(domain.parent));
        }
        if (domain.rail >= 0) {
            out->set_rail(static_cast<uint32_t>(domain.rail));
        }
    }
    head.set_backend_version(FLEETSCOPE_VERSION);
    for (const auto &row : shape.rows) {
        auto *r = head.add_rows();
        r->set_name(row.name);
        r->set_hall(row.hall);
        r->set_site(shape.site);
    }
    for (const auto &rack : shape.racks) {
        auto *k = head.add_racks();
        k->set_name(rack.name);
        k->set_row(rack.row);
        k->set_position(rack.position);
        k->set_first_node(rack.firstNode);
        k->set_node_count(rack.nodeCount);
        k->set_nvlink_domain(rack.nvlinkDomain);
        *k->mutable_domains() = { rack.domains.begin(), rack.domains.end() };
    }
    for (uint32_t i = 0; i < nodeCount; ++i) {
        const auto &node = shape.nodes[i];
        auto *out = parts[i / maxNodesPerPart].add_nodes();
        out->set_hostname(node.hostname);
        out->set_rack(node.rack);
        out->set_first_gpu(node.firstGpu);
        out->set_gpu_count(node.gpuCount);
        *out->mutable_domains() = { node.domains.begin(), node.domains.end() };
        bool anyLink = false;
        for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount && g < shape.gpuLinks.size(); ++g) {
            anyLink = anyLink || shape.gpuLinks[g].leaf != GpuLink::none;
        }
        for (uint32_t g = node.firstGpu; anyLink && g < node.firstGpu + node.gpuCount; ++g) {
            out->add_gpu_leaves(shape.gpuLinks[g].leaf);
            out->add_gpu_ports(shape.gpuLinks[g].port);
        }
        if (shape.simulated) {
            const HardwareSpec &spec = HardwareSpec::of(shape.hardware);
            out->set_model(spec.model);
            out->set_driver_version(std::string(shape.driverVersionOf(i)));
            out->set_firmware_version(std::string(shape.firmwareVersionOf(i)));
            for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
                out->add_gpu_uuids(shape.gpuUuid(g));
                out->add_gpu_serials(shape.gpuSerial(g));
            }
            continue;
        }
        // A real fleet: what its telemetry reported; a node none of whose GPUs was seen sends no UUIDs.
        out->set_model(node.model);
        out->set_driver_version(node.driverVersion);
        out->set_firmware_version(node.firmwareVersion);
        bool anyUuid = false;
        for (uint32_t g = node.firstGpu; g < node.firstGpu + node.gpuCount; ++g) {
            anyUuid = anyUuid || !shape.gpuUuid(g).empty();
        }
        for (uint32_t g = node.firstGpu; anyUuid && g < node.firstGpu + node.gpuCount; ++g) {
            out->add_gpu_uuids(shape.gpuUuid(g));
        }
    }
    return parts;
}

namespace {
using google::protobuf::io::CodedOutputStream;

// A job's GPUs on the wire: the packed list or the runs, whichever takes fewer bytes.
void setJobGpus(const JobInfo &job, pb::Job *out)
{
    const std::vector<uint32_t> gpus = job.gpuList();
    std::vector<std::pair<uint32_t, uint32_t>> runs; // first, count
    size_t listBytes = 0;
    size_t runBytes = 0;
    for (const uint32_t g : gpus) {
        listBytes += CodedOutputStream::VarintSize32(g);
        if (!runs.empty() && runs.back().first + runs.back().second == g) {
            ++runs.back().second;
        } else {
            runs.emplace_back(g, 1);
        }
    }
    for (const auto &[first, count] : runs) {
        // The run's tag and length, and its two fields with their tags.
        runBytes += 2 + 1 + CodedOutputStream::VarintSize32(first) + 1 + CodedOutputStream::VarintSize32(count);
    }
    // The packed list's tag and length.
    listBytes += 1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(listBytes));
    if (runBytes < listBytes) {
        out->mutable_gpu_runs()->Reserve(static_cast<int>(runs.size()));
        for (const auto &[first, count] : runs) {
            auto *run = out->add_gpu_runs();
            run->set_first(first);
            run->set_count(count);
        }
    } else {
        out->mutable_gpus()->Reserve(static_cast<int>(gpus.size()));
        for (const uint32_t g : gpus) {
            out->add_gpus(g);
        }
    }
}
} // namespace

void encodeJob(const JobInfo &job, pb::Job *out)
{
    out->set_id(job.id);
    out->set_name(job.name);
    out->set_owner(job.owner);
    setJobGpus(job, out);
    out->set_start_time_ms(job.startMs);
    out->set_last_checkpoint_ms(job.lastCheckpointMs);
    out->set_end_time_ms(job.endMs);
}

pb::ListJobsResponse encodeJobs(
    const std::vector<JobInfo> &jobs, size_t maxBytes, const std::function<void(const JobInfo &, pb::Job *)> &account)
{
    std::vector<pb::Job> encoded(jobs.size());
    std::vector<size_t> bytes(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
        pb::Job &out = encoded[i];
        encodeJob(jobs[i], &out);
        if (account) {
            account(jobs[i], &out);
        }
        const size_t size = out.ByteSizeLong();
        // The job's field tag and length in the answer; the two counts at its end take at most 12 bytes.
        bytes[i] = 1 + CodedOutputStream::VarintSize64(size) + size;
    }
    std::vector<size_t> running;
    std::vector<size_t> ended;
    for (size_t i = 0; i < jobs.size(); ++i) {
        (jobs[i].endMs == 0 ? running : ended).push_back(i);
    }
    const auto byStart = [&jobs](size_t a, size_t b) { return jobs[a].startMs < jobs[b].startMs; };
    std::stable_sort(running.begin(), running.end(), byStart);
    std::stable_sort(ended.begin(), ended.end(), byStart);

    std::vector<bool> kept(jobs.size(), false);
    size_t total = 12;
    uint32_t runningLeftOut = 0;
    for (const size_t i : running) { // the oldest first: the newest are left out
        if (runningLeftOut == 0 && total + bytes[i] <= maxBytes) {
            total += bytes[i];
            kept[i] = true;
        } else {
            ++runningLeftOut;
        }
    }
    uint32_t endedLeftOut = 0;
    for (auto it = ended.rbegin(); it != ended.rend(); ++it) { // the newest first: the oldest are left out
        if (endedLeftOut == 0 && total + bytes[*it] <= maxBytes) {
            total += bytes[*it];
            kept[*it] = true;
        } else {
            ++endedLeftOut;
        }
    }
    pb::ListJobsResponse response;
    response.mutable_jobs()->Reserve(static_cast<int>(jobs.size() - runningLeftOut - endedLeftOut));
    for (size_t i = 0; i < jobs.size(); ++i) {
        if (kept[i]) {
            *response.add_jobs() = std::move(encoded[i]);
        }
    }
    response.set_running_jobs_left_out(runningLeftOut);
    response.set_ended_jobs_left_out(endedLeftOut);
    return response;
}

void fillMetricCatalog(pb::ListMetricsResponse *response, const FleetShape *shape)
{
    const float powerMax = shape != nullptr && shape->simulated ? HardwareSpec::of(shape->hardware).powerRangeMaxW : 0;
    // A simulated air-cooled fleet has no coolant loops: their metrics would be a map of "no data". A real fleet's
    // cooling is whatever its site maps, so it lists them all.
    const bool noCoolant
        = shape != nullptr && shape->simulated && !HardwareSpec::of(shape->hardware).rackIsNvlinkDomain;
    for (const auto &m : metricCatalog()) {
        if (noCoolant
            && (m.id == MetricId::CoolantSupplyTemp || m.id == MetricId::CoolantReturnTemp
                || m.id == MetricId::CoolantFlow || m.id == MetricId::LeakDetected)) {
            continue;
        }
        auto *info = response->add_metrics();
        info->set_id(m.key);
        info->set_name(m.name);
        info->set_unit(m.unit);
        info->set_dcgm_field(m.dcgmField);
        info->set_range_min(m.rangeMin);
        info->set_range_max(m.id == MetricId::Power && powerMax > 0 ? powerMax : m.rangeMax);
        info->set_kind(m.isRate ? pb::METRIC_KIND_RATE : pb::METRIC_KIND_GAUGE);
        info->set_colour_map(m.colourMap);
    }
}

void encodeIncident(const Incident &incident, pb::Incident *out)
{
    out->set_id(incident.id);
    out->set_start_ms(static_cast<int64_t>(std::llround(incident.startSeconds * 1000.0)));
    if (incident.domain >= 0) {
        out->set_domain(static_cast<uint32_t>(incident.domain));
    }
    out->set_cause(incident.cause);
    out->set_evidence(incident.evidence);
    out->set_gpu_count(incident.gpuCount);
    const size_t runs = std::min(incident.gpuRuns.size(), maxIncidentRuns);
    for (size_t i = 0; i < runs; ++i) {
        auto *run = out->add_gpu_runs();
        run->set_first(incident.gpuRuns[i].first);
        run->set_count(incident.gpuRuns[i].second);
    }
    const size_t jobs = std::min(incident.jobs.size(), maxIncidentJobs);
    for (size_t i = 0; i < jobs; ++i) {
        out->add_job_ids(incident.jobs[i]);
    }
    out->set_job_count(static_cast<uint32_t>(incident.jobs.size()));
}

} // namespace fleetscope::backend
