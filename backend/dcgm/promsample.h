// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "dcgm/metricmap.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace fleetscope::backend {

// One series of dcgm-exporter's, as a query answers it or a push carries it: the labels Fleetscope reads
// (dcgm-exporter's, under the names a MetricMap gives, plus optional hall/row/rack placement labels), the value and its
// timestamp.
struct PromSample
{
    std::string hostname; // hostname or Hostname (MetricMap::Labels::hostname: the first one present)
    int hostnameRank = -1; // which of those names it came from; -1: none
    std::string gpu; // gpu: the device index on its node
    std::string uuid; // UUID
    std::string model; // modelName
    std::string driver; // DCGM_FI_DRIVER_VERSION (DCGM_FI_SYSTEM_DRIVER_VERSION since dcgm-exporter 4.9)
    std::string vbios; // DCGM_FI_DEV_VBIOS_VERSION, where the exporter's collector CSV has it as a "label" row
    std::string hall;
    std::string row;
    std::string rack; // also a facility series' rack
    std::string nic; // node-exporter's device label (mlx5_0 ...): a rail series' NIC
    std::string instance; // the scrape target, host:port: a node-exporter series' node
    // infiniband_exporter's infiniband_hca_uplink_info (read with Placement): the HCA's node description ("node01
    // mlx5_3"), its port, and the switch, port and node type at the other end of the cable (UplinkLabels).
    std::string hca;
    std::string hcaPort; // port
    std::string uplink;
    std::string uplinkPort;
    std::string uplinkType;
    // The job the GPU serves, as dcgm-exporter labels it: Kubernetes namespace/pod/container (the exported_* names a
    // scrape without honor_labels gives them win, then the pod_* names of --use-old-namespace), or the HPC job of
    // --hpc-job-mapping-dir (hpc_job, hpc_user). Read only when asked for (withJobs).
    std::string nameSpace;
    std::string pod;
    std::string container;
    std::string hpcJob;
    std::string hpcUser;
    std::string name; // __name__, for a query over several metrics
    double value = 0;
    int64_t timeMs = 0;
};

// Reads a series' labels, one at a time, into the PromSample fields Fleetscope knows: the node and gpu labels (under
// the names of a MetricMap) and __name__ always, the identity, placement and job labels when asked for. Of a field's
// several names (hostname and Hostname; exported_pod, pod, pod_name) the best one of the series wins whatever their
// order. One reader per series.
class PromLabelReader
{
public:
    enum Set : unsigned { Always = 0U, Placement = 1U, Jobs = 2U };
    // The best name seen so far of the fields that have several: higher is better.
    struct Ranks
    {
        int nameSpace = 0;
        int pod = 0;
        int container = 0;
        int driver = 0;
        int hostname = 0;
    };

    PromLabelReader(unsigned wanted, const MetricMap::Labels &names)
        : m_wanted(wanted)
        , m_names(names)
    { }
    void read(std::string_view name, std::string_view value, PromSample *s);

private:
    unsigned m_wanted;
    const MetricMap::Labels &m_names;
    Ranks m_ranks;
};

} // namespace fleetscope::backend
