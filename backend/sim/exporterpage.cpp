// SPDX-License-Identifier: Apache-2.0
#include "sim/exporterpage.h"

#include <array>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace fleetscope::backend {

const std::vector<ExporterPage::Family> &ExporterPage::families()
{
    // Types and help texts are dcgm-exporter's default-counters.csv; DCGM_FI_DEV_CLOCKS_EVENT_REASONS is not in it
    // and takes its text from dcgm-exporter's full field list. Only power is a DCGM double.
    static const std::vector<Family> list = [] {
        struct Text
        {
            const char *type;
            const char *help;
            bool isDouble;
        };
        auto text = [](MetricId id) -> Text {
            switch (id) {
            case MetricId::GpuTemp:
                return { "gauge", "GPU temperature (in C).", false };
            case MetricId::MemTemp:
                return { "gauge", "Memory temperature (in C).", false };
            case MetricId::Power:
                return { "gauge", "Power draw (in W).", true };
            case MetricId::GpuUtil:
                return { "gauge", "GPU utilization (in %).", false };
            case MetricId::MemCopyUtil:
                return { "gauge", "Memory utilization (in %).", false };
            case MetricId::SmClock:
                return { "gauge", "SM clock frequency (in MHz).", false };
            case MetricId::FbUsed:
                return { "gauge", "Framebuffer memory used (in MiB).", false };
            case MetricId::XidErrors:
                return { "gauge", "Value of the last XID error encountered.", false };
            case MetricId::EccSbe:
                return { "counter", "Total number of single-bit volatile ECC errors.", false };
            case MetricId::EccDbe:
                return { "counter", "Total number of double-bit volatile ECC errors.", false };
            case MetricId::NvlinkErrors:
                return { "counter", "Total number of NVLink flow-control CRC errors.", false };
            case MetricId::PcieReplays:
                return { "counter", "Total number of PCIe retries.", false };
            case MetricId::ThrottleReasons:
                return { "gauge", "Current clock event reasons (bitmask).", false };
            case MetricId::RemappedRows:
                return { "counter", "Number of remapped rows for uncorrectable errors", false };
            case MetricId::RemappedRowsCorrectable:
                return { "counter", "Number of remapped rows for correctable errors", false };
            default:
                return { "gauge", "", false };
            }
        };
        std::vector<Family> out;
        for (const auto &m : metricCatalog()) {
            if (m.dcgmField.rfind("DCGM_FI_", 0) != 0) {
                continue; // Fleetscope's own (the health state), or another exporter's (the fabric, the facility)
            }
            const Text t = text(m.id);
            out.push_back({ m.id, m.dcgmField, t.type, t.help, t.isDouble });
        }
        return out;
    }();
    return list;
}

bool ExporterPage::isRawErrorField(MetricId id)
{
    return id == MetricId::XidErrors || id == MetricId::EccSbe || id == MetricId::EccDbe || id == MetricId::NvlinkErrors
        || id == MetricId::PcieReplays || id == MetricId::RemappedRows || id == MetricId::RemappedRowsCorrectable;
}

const std::vector<uint32_t> *ExporterPage::rawField(const Frame &frame, MetricId id)
{
    if (!frame.rawErrors) {
        return nullptr;
    }
    switch (id) {
    case MetricId::XidErrors:
        return &frame.rawErrors->lastXid;
    case MetricId::EccSbe:
        return &frame.rawErrors->totals[ErrorCounter::EccSbeCount];
    case MetricId::EccDbe:
        return &frame.rawErrors->totals[ErrorCounter::EccDbeCount];
    case MetricId::NvlinkErrors:
        return &frame.rawErrors->totals[ErrorCounter::NvlinkCount];
    case MetricId::PcieReplays:
        return &frame.rawErrors->totals[ErrorCounter::PcieReplayCount];
    case MetricId::RemappedRows:
        return &frame.rawErrors->totals[ErrorCounter::RemappedUncorrectableCount];
    case MetricId::RemappedRowsCorrectable:
        return &frame.rawErrors->totals[ErrorCounter::RemappedCorrectableCount];
    default:
        return nullptr;
    }
}

std::string ExporterPage::pciBusId(uint32_t gpuInNode)
{
    return FleetShape::simulatedPciBusId(gpuInNode);
}

ExporterPage::PodLabels ExporterPage::podLabels(const JobInfo &job, uint32_t nodeOrdinal)
{
    PodLabels labels;
    // Job names are "<kind>-<id>" (FrameSource::describeJob).
    const auto dash = job.name.rfind('-');
    labels.container = dash == std::string::npos ? job.name : job.name.substr(0, dash);
    labels.nameSpace = job.owner;
    labels.pod = fmt::format("{}-{}", job.name, nodeOrdinal);
    return labels;
}

void ExporterPage::appendEscaped(std::string *out, const std::string &value)
{
    for (const char c : value) {
        switch (c) {
        case '\\':
            out->append("\\\\");
            break;
        case '"':
            out->append("\\\"");
            break;
        case '\n':
            out->append("\\n");
            break;
        default:
            out->push_back(c);
        }
    }
}

std::string ExporterPage::Rendered::nodePage(uint32_t node) const
{
    std::string page;
    if (node >= nodeCount) {
        return page;
    }
    const size_t families = headerStart.size();
    size_t size = 0;
    for (size_t f = 0; f < families; ++f) {
        size += series(f, 0) - headerStart[f] + series(f, node + 1) - series(f, node);
    }
    page.reserve(size);
    for (size_t f = 0; f < families; ++f) {
        page.append(text, headerStart[f], series(f, 0) - headerStart[f]);
        page.append(text, series(f, node), series(f, node + 1) - series(f, node));
    }
    return page;
}

ExporterPage::Rendered ExporterPage::render(
    const FleetShape &shape, const Frame &frame, const std::vector<JobInfo> &jobs, const Options &options)
{
    const uint32_t n = shape.gpuCount;
    auto online = [&](uint32_t g) { return g < frame.health.size() && (frame.health[g] & 0x07U) != health::Offline; };

    // The running job on each node, by index into jobs (-1: none).
    std::vector<int32_t> jobOfNode(shape.nodes.size(), -1);
    for (size_t j = 0; j < jobs.size(); ++j) {
        const auto &job = jobs[j];
        if (job.endMs != 0 || job.gpuCount == 0 || job.firstGpu + job.gpuCount > n) {
            continue;
        }
        for (uint32_t k = shape.nodeOfGpu[job.firstGpu]; k <= shape.nodeOfGpu[job.firstGpu + job.gpuCount - 1]; ++k) {
            jobOfNode[k] = static_cast<int32_t>(j);
        }
    }

    // Each online GPU's label set, "{...} ", built once and shared by every family.
    std::string labels;
    labels.reserve(static_cast<size_t>(n) * 260);
    std::vector<size_t> labelStart(static_cast<size_t>(n) + 1, 0);
    std::string escapedModel;
    appendEscaped(&escapedModel, options.modelName);
    std::string escapedDriver;
    appendEscaped(&escapedDriver, options.driverVersion);
    for (uint32_t g = 0; g < n; ++g) {
        labelStart[g] = labels.size();
        if (!online(g)) {
            continue;
        }
        const uint32_t k = shape.nodeOfGpu[g];
        const auto &node = shape.nodes[k];
        const uint32_t local = g - node.firstGpu;
        auto out = std::back_inserter(labels);
        fmt::format_to(out, "{{gpu=\"{}\",UUID=\"{}\",pci_bus_id=\"{}\",device=\"nvidia{}\",modelName=\"", local,
            shape.gpuUuid(g), pciBusId(local), local);
        // A fleet that reports its own model keeps it; a node the simulated rollout reached or missed, its driver.
        if (node.model.empty()) {
            labels.append(escapedModel);
        } else {
            appendEscaped(&labels, node.model);
        }
        labels.append("\",Hostname=\"");
        appendEscaped(&labels, node.hostname);
        labels.append("\",DCGM_FI_DRIVER_VERSION=\"");
        if (node.driverVersion.empty()) {
            labels.append(escapedDriver);
        } else {
            appendEscaped(&labels, node.driverVersion);
        }
        labels.push_back('"');
        if (jobOfNode[k] >= 0) {
            const auto &job = jobs[static_cast<size_t>(jobOfNode[k])];
            const auto pod = podLabels(job, k - shape.nodeOfGpu[job.firstGpu]);
            // dcgm-exporter prints its pod attributes in key order.
            labels.append(",container=\"");
            appendEscaped(&labels, pod.container);
            labels.append("\",namespace=\"");
            appendEscaped(&labels, pod.nameSpace);
            labels.append("\",pod=\"");
            appendEscaped(&labels, pod.pod);
            labels.push_back('"');
        }
        if (options.topologyLabels) {
            const auto &rack = shape.racks[node.rack];
            labels.append(",row=\"");
            appendEscaped(&labels, shape.rows[rack.row].name);
            labels.append("\",rack=\"");
            appendEscaped(&labels, rack.name);
            labels.push_back('"');
        }
        labels.append("} ");
    }
    labelStart[n] = labels.size();

    Rendered rendered;
    std::string &page = rendered.text;
    const auto &list = families();
    const auto &nvlink = nvlinkFamilies();
    const auto nodes = static_cast<uint32_t>(shape.nodes.size());
    rendered.nodeCount = nodes;
    rendered.headerStart.resize(list.size() + nvlink.size());
    rendered.seriesStart.resize((list.size() + nvlink.size()) * (static_cast<size_t>(nodes) + 1));
    page.reserve(list.size() * (labels.size() + static_cast<size_t>(n) * 64));
    for (size_t f = 0; f < list.size(); ++f) {
        const auto &family = list[f];
        rendered.headerStart[f] = page.size();
        fmt::format_to(std::back_inserter(page), "# HELP {} {}\n# TYPE {} {}\n", family.name, family.help, family.name,
            family.type);
        // Where each node's run of lines starts: nodes are contiguous in dense order, so node k's run ends where
        // node k + 1's starts. Nodes without lines get an empty run.
        size_t *nodeStart = &rendered.seriesStart[f * (static_cast<size_t>(nodes) + 1)];
        uint32_t nextNode = 0;
        auto startNodesUpTo = [&](uint32_t last) {
            for (; nextNode <= last; ++nextNode) {
                nodeStart[nextNode] = page.size();
            }
        };
        // The error fields as dcgm-exporter has them: counters that only grow and the last XID, not the frames'
        // 5-minute counts. A frame without them (not simulated) has no lines for them.
        const std::vector<uint32_t> *raw = rawField(frame, family.metric);
        if (isRawErrorField(family.metric) && raw == nullptr) {
            startNodesUpTo(nodes);
            continue;
        }
        const auto &plane = frame.plane(family.metric);
        for (uint32_t g = 0; g < n && g < plane.size(); ++g) {
            startNodesUpTo(shape.nodeOfGpu[g]);
            const float v = raw != nullptr && g < raw->size() ? static_cast<float>((*raw)[g]) : plane[g];
            // A GPU that has no value for a field has no line for it, as dcgm-exporter skips DCGM's blanks.
            if (!online(g) || !std::isfinite(v)) {
                continue;
            }
            page.append(family.name);
            page.append(labels, labelStart[g], labelStart[g + 1] - labelStart[g]);
            if (family.isDouble) {
                // DCGM's doubles are printed with %f. The simulator keeps power to the milliwatt, as a float: print
                // the milliwatt reading it stands for (654.321000, not 654.320984), as DCGM would have it.
                const double reading = std::round(static_cast<double>(v) * 1000.0) / 1000.0;
                fmt::format_to(std::back_inserter(page), "{:.6f}\n", reading);
            } else {
                page.append(fmt::format_int(std::llround(v)).c_str());
                page.push_back('\n');
            }
        }
        startNodesUpTo(nodes);
    }
    // The other NVLink error counters, after the catalogue's families.
    const std::vector<uint32_t> *crc = rawField(frame, MetricId::NvlinkErrors);
    for (size_t e = 0; e < nvlink.size(); ++e) {
        const size_t f = list.size() + e;
        rendered.headerStart[f] = page.size();
        fmt::format_to(std::back_inserter(page), "# HELP {} {}\n# TYPE {} counter\n", nvlink[e].name, nvlink[e].help,
            nvlink[e].name);
        size_t *nodeStart = &rendered.seriesStart[f * (static_cast<size_t>(nodes) + 1)];
        for (uint32_t k = 0; k < nodes; ++k) {
            nodeStart[k] = page.size();
            const auto &node = shape.nodes[k];
            for (uint32_t g = node.firstGpu; crc != nullptr && g < node.firstGpu + node.gpuCount; ++g) {
                if (g >= n || g >= crc->size() || !online(g)) {
                    continue;
                }
                page.append(nvlink[e].name);
                page.append(labels, labelStart[g], labelStart[g + 1] - labelStart[g]);
                page.append(fmt::format_int(nvlink[e].replays ? (*crc)[g] : 0U).c_str());
                page.push_back('\n');
            }
        }
        nodeStart[nodes] = page.size();
    }
    return rendered;
}

const std::vector<ExporterPage::NvlinkFamily> &ExporterPage::nvlinkFamilies()
{
    // Names and help texts: dcgm-exporter's default-counters.csv (where they are commented out: a site enables them).
    static const std::vector<NvlinkFamily> list = {
        { "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "Total number of NVLink data CRC errors.", false },
        { "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "Total number of NVLink retries.", true },
        { "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "Total number of NVLink recovery errors.", false },
    };
    return list;
}

const std::vector<ExporterPage::NodeFamily> &ExporterPage::nodeFamilies()
{
    // node_exporter's names and help texts (collector/infiniband_linux.go).
    static const std::vector<NodeFamily> list = {
        { "node_infiniband_link_downed_total", "counter",
            "Number of times the link failed to recover from an error state and went down" },
        { "node_infiniband_physical_state_id", "gauge",
            "Physical state of the InfiniBand port (0: no change, 1: sleep, 2: polling, 3: disable, 4: shift, 5: link "
            "up, 6: link error recover, 7: phytest)" },
        { "node_infiniband_port_errors_received_total", "counter",
            "Number of packets containing an error that were received on this port" },
        { "node_infiniband_port_transmit_wait_total", "counter",
            "Number of ticks during which the port had data to transmit but no data was sent during the entire tick" },
        { "node_infiniband_state_id", "gauge",
            "State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, 4: active, 5: act defer)" },
        { "node_infiniband_symbol_error_total", "counter",
            "Number of minor link errors detected on one or more physical lanes." },
    };
    return list;
}

ExporterPage::Rendered ExporterPage::renderNodeExporter(const FleetShape &shape, const Frame &frame)
{
    const uint32_t n = shape.gpuCount;
    auto online = [&](uint32_t g) { return g < frame.health.size() && (frame.health[g] & 0x07U) != health::Offline; };
    const auto &state = frame.plane(MetricId::RailLinkState);
    const RailCounterTotals *totals = frame.railTotals.get();
    auto sized = [n](const auto &v) { return v.size() >= n; };
    const bool counters = totals != nullptr && sized(totals->linkDowns) && sized(totals->symbolErrors)
        && sized(totals->receiveErrors) && sized(totals->transmitWaitMicroseconds);
    // A family's value of GPU g's port; false: no line.
    auto value = [&](size_t family, uint32_t g, uint64_t *out) {
        const bool known = g < state.size() && std::isfinite(state[g]);
        const bool up = known && state[g] > 0.5F;
        switch (family) {
        case 0:
            *out = counters ? totals->linkDowns[g] : 0;
            return counters;
        case 1:
            *out = up ? 5 : 2;
            return known;
        case 2:
            *out = counters ? totals->receiveErrors[g] : 0;
            return counters;
        case 3:
            *out = counters ? static_cast<uint64_t>(static_cast<double>(totals->transmitWaitMicroseconds[g])
                       * (railTransmitWaitTicksPerSecond / 1e6))
                            : 0;
            return counters;
        case 4:
            *out = up ? 4 : 1;
            return known;
        default:
            *out = counters ? totals->symbolErrors[g] : 0;
            return counters;
        }
    };

    Rendered rendered;
    std::string &page = rendered.text;
    const auto &list = nodeFamilies();
    const auto nodes = static_cast<uint32_t>(shape.nodes.size());
    // node_exporter's families, then infiniband_exporter's uplinks.
    const size_t families = list.size() + 1;
    rendered.nodeCount = nodes;
    rendered.headerStart.resize(families);
    rendered.seriesStart.resize(families * (static_cast<size_t>(nodes) + 1));
    page.reserve(list.size() * (static_cast<size_t>(n) * 72 + 256) + static_cast<size_t>(n) * 200);
    for (size_t f = 0; f < list.size(); ++f) {
        const auto &family = list[f];
        rendered.headerStart[f] = page.size();
        fmt::format_to(std::back_inserter(page), "# HELP {} {}\n# TYPE {} {}\n", family.name, family.help, family.name,
            family.type);
        size_t *nodeStart = &rendered.seriesStart[f * (static_cast<size_t>(nodes) + 1)];
        for (uint32_t k = 0; k < nodes; ++k) {
            nodeStart[k] = page.size();
            const auto &node = shape.nodes[k];
            for (uint32_t local = 0; local < node.gpuCount; ++local) {
                const uint32_t g = node.firstGpu + local;
                uint64_t v = 0;
                if (g >= n || !online(g) || !value(f, g, &v)) {
                    continue;
                }
                fmt::format_to(
                    std::back_inserter(page), "{}{{device=\"mlx5_{}\",port=\"1\"}} {}\n", family.name, local, v);
            }
        }
        nodeStart[nodes] = page.size();
    }
    appendUplinks(shape, frame, &rendered, list.size());
    return rendered;
}

void ExporterPage::appendUplinks(const FleetShape &shape, const Frame &frame, Rendered *rendered, size_t f)
{
    auto online = [&](uint32_t g) { return g < frame.health.size() && (frame.health[g] & 0x07U) != health::Offline; };
    std::string &page = rendered->text;
    const uint32_t nodes = rendered->nodeCount;
    rendered->headerStart[f] = page.size();
    fmt::format_to(std::back_inserter(page), "# HELP {} {}\n# TYPE {} gauge\n", uplinkFamily,
        "Constant 1 describing the switch port this HCA port is connected to.", uplinkFamily);
    size_t *nodeStart = &rendered->seriesStart[f * (static_cast<size_t>(nodes) + 1)];
    for (uint32_t k = 0; k < nodes; ++k) {
        nodeStart[k] = page.size();
        const auto &node = shape.nodes[k];
        for (uint32_t local = 0; local < node.gpuCount; ++local) {
            const uint32_t g = node.firstGpu + local;
            if (g >= shape.gpuLinks.size() || shape.gpuLinks[g].leaf >= shape.domains.size() || !online(g)) {
                continue;
            }
            const auto &link = shape.gpuLinks[g];
            // GUIDs and LIDs the fabric would assign, stable per HCA and switch: Mellanox's OUI and the index.
            fmt::format_to(std::back_inserter(page), "{}{{guid=\"0x1070fd03{:08x}\",hca=\"", uplinkFamily, g);
            appendEscaped(&page, node.hostname);
            fmt::format_to(std::back_inserter(page), " {}\",port=\"1\",uplink=\"", nicDevice(local));
            appendEscaped(&page, shape.domains[link.leaf].name);
            fmt::format_to(std::back_inserter(page),
                "\",uplink_guid=\"0xfc6a1c03{:08x}\",uplink_lid=\"{}\",uplink_port=\"{}\",uplink_type=\"SW\"}} 1\n",
                link.leaf, link.leaf % 0xbfff + 1, link.port);
        }
    }
    nodeStart[nodes] = page.size();
}

std::string ExporterPage::renderFacility(const FleetShape &shape, const Frame &frame)
{
    struct Series
    {
        MetricId metric;
        const char *help;
        bool integer;
    };
    static constexpr Series series[] = {
        { MetricId::CoolantSupplyTemp, "Coolant supply temperature at the rack's manifold (in C).", false },
        { MetricId::CoolantReturnTemp, "Coolant return temperature at the rack's manifold (in C).", false },
        { MetricId::CoolantFlow, "Coolant flow through the rack's secondary loop (in L/min).", false },
        { MetricId::LeakDetected, "1 while a leak sensor of the rack's trays is tripped, else 0.", true },
    };
    std::string page;
    for (const auto &s : series) {
        const auto &name = metricCatalog()[static_cast<size_t>(s.metric)].dcgmField;
        fmt::format_to(std::back_inserter(page), "# HELP {} {}\n# TYPE {} gauge\n", name, s.help, name);
        const auto &plane = frame.plane(s.metric);
        for (const auto &rack : shape.racks) {
            if (rack.nodeCount == 0) {
                continue;
            }
            // A rack's loop is one value for all its GPUs: its first GPU's.
            const uint32_t g = shape.nodes[rack.firstNode].firstGpu;
            if (g >= plane.size() || !std::isfinite(plane[g])) {
                continue;
            }
            page.append(name);
            page.append("{rack=\"");
            appendEscaped(&page, rack.name);
            page.append("\"} ");
            if (s.integer) {
                page.append(fmt::format_int(std::llround(plane[g])).c_str());
                page.push_back('\n');
            } else {
                fmt::format_to(std::back_inserter(page), "{:.2f}\n", plane[g]);
            }
        }
    }
    return page;
}

std::string ExporterPage::renderSlurm(const FleetShape &shape, const std::vector<JobInfo> &jobs)
{
    const uint32_t n = shape.gpuCount;
    auto running = [&](const JobInfo &job) {
        const auto gpus = job.gpuList();
        return job.endMs == 0 && !gpus.empty() && gpus.back() < n;
    };
    std::string page = "# HELP slurm_node_job Which node each running Slurm job runs on.\n"
                       "# TYPE slurm_node_job gauge\n";
    auto out = std::back_inserter(page);
    for (const auto &job : jobs) {
        if (!running(job)) {
            continue;
        }
        int64_t lastNode = -1;
        for (const uint32_t g : job.gpuList()) {
            const uint32_t k = shape.nodeOfGpu[g];
            if (static_cast<int64_t>(k) == lastNode) {
                continue;
            }
            lastNode = k;
            page.append("slurm_node_job{job_id=\"");
            fmt::format_to(out, "{}", job.id);
            page.append("\",node_name=\"");
            appendEscaped(&page, shape.nodes[k].hostname);
            page.append("\"} 1\n");
        }
    }
    page.append("# HELP slurm_job_info A Slurm job's details.\n"
                "# TYPE slurm_job_info gauge\n");
    for (const auto &job : jobs) {
        if (!running(job)) {
            continue;
        }
        fmt::format_to(out, "slurm_job_info{{job_id=\"{}\",job_name=\"", job.id);
        appendEscaped(&page, job.name);
        page.append("\",job_state=\"RUNNING\",slurm_partition=\"");
        page.append(slurmPartition);
        page.append("\",start_time=\"");
        fmt::format_to(out, "{}", job.startMs > 0 ? job.startMs / 1000 : 0);
        page.append("\",user_name=\"");
        appendEscaped(&page, job.owner);
        page.append("\"} 1\n");
    }
    return page;
}

} // namespace fleetscope::backend
