// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/framesource.h"

#include <string>
#include <vector>

namespace fleetscope::backend {

// The simulated fleet as NVIDIA dcgm-exporter's /metrics page (Prometheus text format 0.0.4): one family per
// catalogue metric that has a DCGM field, HELP/TYPE as dcgm-exporter's default counters, one series per GPU with
// dcgm-exporter's labels, and the Kubernetes labels it adds for GPUs given to a pod. Offline GPUs are absent, as a
// down node's exporter is. No timestamps are written: Prometheus stamps samples with its scrape time. The error
// fields are dcgm-exporter's too: the counters are totals since the simulation's start, which never fall (so that
// rate() and increase() on them are right), and DCGM_FI_DEV_XID_ERRORS is the last XID (0 while none), from the
// frame's rawErrors; the frames' own planes carry 5-minute counts for the console instead.
class ExporterPage
{
public:
    struct Options
    {
        // As the topology the gRPC API serves (frameencoder.cpp).
        std::string modelName = "NVIDIA H100 80GB HBM3";
        std::string driverVersion = "550.54.15";
        // Simulator-only `row` and `rack` labels; real dcgm-exporter has none, so they are off unless asked for.
        bool topologyLabels = false;
    };

    struct Family
    {
        MetricId metric;
        std::string name; // DCGM_FI_DEV_*
        std::string type; // "gauge" or "counter"
        std::string help;
        bool isDouble; // a DCGM_FT_DOUBLE field, printed with %f; the rest are DCGM_FT_INT64, printed as integers
    };
    // The families on the page, in catalogue order.
    static const std::vector<Family> &families();

    // dcgm-exporter's other NVLink error counters, on the page after the catalogue's families, for the same GPUs as
    // the flow-control CRC errors (DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, the frame's raw NVLink count). The
    // simulator's NVLink errors are all flow-control CRC errors, each replayed by the link: the replay counter counts
    // them again, and the data CRC and recovery counters stay 0.
    struct NvlinkFamily
    {
        const char *name;
        const char *help;
        bool replays; // the replay counter: the CRC errors' total; else 0
    };
    static const std::vector<NvlinkFamily> &nvlinkFamilies();

    // The PCI bus id dcgm-exporter reports for the GPU at this position in its node: the eight bus numbers of an
    // HGX H100 baseboard, the same in every node.
    static std::string pciBusId(uint32_t gpuInNode);

    // How a running job shows on its GPUs, as dcgm-exporter's Kubernetes mapping would: namespace = the job's owner
    // (team), one pod per node named <job name>-<node ordinal in the job>, container = the job's kind (its name
    // without the id).
    struct PodLabels
    {
        std::string container;
        std::string nameSpace;
        std::string pod;
    };
    static PodLabels podLabels(const JobInfo &job, uint32_t nodeOrdinal);

    // Whether a metric's lines come from the frame's raw error fields, and which (null: the frame has none).
    static bool isRawErrorField(MetricId id);
    static const std::vector<uint32_t> *rawField(const Frame &frame, MetricId id);

    // Escapes a label value as the text format wants: backslash, double quote and newline.
    static void appendEscaped(std::string *out, const std::string &value);

    // A frame's page and where each node's series lie in it. A real fleet runs one dcgm-exporter per node, whose
    // page has every family's HELP and TYPE and its own GPUs' series; in dense order those are one run of lines per
    // family, so a node's page is cut from the fleet's instead of rendered again. The cuts are offsets, not copies:
    // (nodes + 1) x families x 8 bytes, 15.7 MB at 1,048,576 GPUs (131,072 nodes, 15 families), beside a fleet page
    // of some 4 GB.
    struct Rendered
    {
        std::string text; // the whole fleet's page
        uint32_t nodeCount = 0;
        // Family f's HELP and TYPE lines are text[headerStart[f], series(f, 0)); node k's series of it are
        // text[series(f, k), series(f, k + 1)).
        std::vector<size_t> headerStart;
        std::vector<size_t> seriesStart; // families x (nodeCount + 1)

        size_t series(size_t family, uint32_t node) const
        {
            return seriesStart[family * (static_cast<size_t>(nodeCount) + 1) + node];
        }
        // The page node's own exporter would serve: every family's HELP and TYPE, then that node's series of it. A
        // node whose GPUs are all offline has the HELP and TYPE lines only.
        std::string nodePage(uint32_t node) const;
    };

    // Renders the page for one frame; jobs are those running at that frame (ended ones are skipped).
    static Rendered render(
        const FleetShape &shape, const Frame &frame, const std::vector<JobInfo> &jobs, const Options &options);

    // The same frame as each node's Prometheus node_exporter would show its rail NICs (the InfiniBand collector,
    // collector/infiniband_linux.go: one series per device and port, labels device and port only; the scrape adds
    // the instance): device mlx5_<k> is GPU k's rail NIC, port 1. node_infiniband_state_id is 4 (ACTIVE) while the
    // link is up, 1 (DOWN) otherwise, and node_infiniband_physical_state_id 5 (LinkUp) or 2 (Polling, as a port
    // whose switch is gone); the counters are totals since the start that never fall (Frame::railTotals; a frame
    // without them has no counter lines), transmit wait in ticks (railTransmitWaitTicksPerSecond (core/metriccatalog.h)
    // a second of full stall). An offline GPU's NIC is absent, as is a node's whose GPUs are all offline.
    struct NodeFamily
    {
        const char *name;
        const char *type;
        const char *help;
    };
    static const std::vector<NodeFamily> &nodeFamilies();
    static std::string nicDevice(uint32_t gpuInNode) { return "mlx5_" + std::to_string(gpuInNode); }
    // After node_exporter's families, each node's page carries its rail NICs' uplinks as treydock/infiniband_exporter's
    // HCA collector writes them (a site runs it with --exporter.runonce into node_exporter's textfile directory):
    // infiniband_hca_uplink_info 1 with labels guid, hca ("<hostname> mlx5_<k>"), port 1, uplink (the GPU's leaf
    // switch, FleetShape::gpuLinks), uplink_guid, uplink_lid, uplink_port (the leaf's port) and uplink_type SW, for
    // each online GPU with a link.
    static constexpr const char *uplinkFamily = "infiniband_hca_uplink_info";
    static Rendered renderNodeExporter(const FleetShape &shape, const Frame &frame);

    // The site's facility series, as a site maps them from its CDUs' and racks' BMC (Redfish) exporter: per
    // liquid-cooled rack fleetscope_coolant_supply_celsius, fleetscope_coolant_return_celsius and
    // fleetscope_coolant_flow_lpm (the rack's secondary loop at its manifold) and fleetscope_leak_detected (1 while a
    // tray's leak sensor is tripped), each with the label rack. The catalogue's dcgmField names them; a rack
    // without a value (an air-cooled one) has no lines.
    static std::string renderFacility(const FleetShape &shape, const Frame &frame);

    // The running jobs as soperator's Slurm exporter shows them (one exporter for the whole cluster; its metrics are
    // listed in nebius/soperator's docs/slurm-exporter.md): slurm_node_job 1 with job_id and node_name for each node
    // of each running job, and slurm_job_info 1 for each running job with job_id, job_name, user_name (the job's
    // owner), job_state RUNNING, slurm_partition and start_time (Unix seconds). The simulator's Slurm nodes are its
    // hosts, so node_name is the hostname. Jobs that ended, or that name GPUs outside the fleet, are left out.
    static constexpr const char *slurmPartition = "main";
    static std::string renderSlurm(const FleetShape &shape, const std::vector<JobInfo> &jobs);

private:
    static void appendUplinks(const FleetShape &shape, const Frame &frame, Rendered *rendered, size_t family);
};

} // namespace fleetscope::backend
