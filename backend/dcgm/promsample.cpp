// SPDX-License-Identifier: Apache-2.0
#include "dcgm/promsample.h"

#include <algorithm>
#include <vector>

namespace fleetscope::backend {

namespace {

constexpr unsigned Always = PromLabelReader::Always;
constexpr unsigned Placement = PromLabelReader::Placement;
constexpr unsigned Jobs = PromLabelReader::Jobs;
using Ranks = PromLabelReader::Ranks;

// Which labels are read, when, and where they go.
struct LabelField
{
    std::string_view name;
    unsigned set;
    std::string PromSample::*field;
    int rank = 0; // with best: a name of a label that has several
    int Ranks::*best = nullptr;
};
// The node, GPU and identity labels come from the MetricMap (mapLabel).
const LabelField labelFields[] = {
    { "__name__", Always, &PromSample::name },
    { "hall", Placement, &PromSample::hall },
    { "row", Placement, &PromSample::row },

    { "DCGM_FI_DEV_VBIOS_VERSION", Placement, &PromSample::vbios },
    { "hca", Placement, &PromSample::hca },
    { "port", Placement, &PromSample::hcaPort },
    { "uplink", Placement, &PromSample::uplink },
    { "uplink_port", Placement, &PromSample::uplinkPort },
    { "uplink_type", Placement, &PromSample::uplinkType },
    { "exported_namespace", Jobs, &PromSample::nameSpace, 3, &Ranks::nameSpace },
    { "namespace", Jobs, &PromSample::nameSpace, 2, &Ranks::nameSpace },
    { "pod_namespace", Jobs, &PromSample::nameSpace, 1, &Ranks::nameSpace },
    { "exported_pod", Jobs, &PromSample::pod, 3, &Ranks::pod },
    { "pod", Jobs, &PromSample::pod, 2, &Ranks::pod },
    { "pod_name", Jobs, &PromSample::pod, 1, &Ranks::pod },
    { "exported_container", Jobs, &PromSample::container, 3, &Ranks::container },
    { "container", Jobs, &PromSample::container, 2, &Ranks::container },
    { "container_name", Jobs, &PromSample::container, 1, &Ranks::container },
    { "hpc_job", Jobs, &PromSample::hpcJob },
    { "hpc_user", Jobs, &PromSample::hpcUser },
};

// A label the map names: where it goes (nullptr: not one of them, or not wanted, or a better name of it seen).
std::string *mapLabel(
    std::string_view name, unsigned wanted, const MetricMap::Labels &labels, Ranks *ranks, PromSample *s)
{
    // Earlier names of a list rank higher.
    auto rankIn = [name](const std::vector<std::string> &names) {
        const auto it = std::find(names.begin(), names.end(), name);
        return it == names.end() ? 0 : static_cast<int>(names.end() - it);
    };
    if (const int r = rankIn(labels.hostname); r > 0) {
        if (r <= ranks->hostname) {
            return nullptr;
        }
        ranks->hostname = r;
        s->hostnameRank = static_cast<int>(labels.hostname.size()) - r;
        return &s->hostname;
    }
    if (name == labels.gpu) {
        return &s->gpu;
    }
    // Where a fabric or facility series is (MetricMap::Scope), read with every series: cheap beside a GPU's.
    if (name == labels.nic) {
        return &s->nic;
    }
    if (name == labels.instance) {
        return &s->instance;
    }
    if (name == labels.rack) {
        return &s->rack;
    }
    if ((wanted & Placement) == 0U) {
        return nullptr;
    }
    if (name == labels.uuid) {
        return &s->uuid;
    }
    if (name == labels.model) {
        return &s->model;
    }
    if (const int r = rankIn(labels.driver); r > ranks->driver) {
        ranks->driver = r;
        return &s->driver;
    }
    return nullptr;
}

// The other labels Fleetscope reads (labelFields).
std::string *tableLabel(std::string_view name, unsigned wanted, Ranks *ranks, PromSample *s)
{
    for (const auto &f : labelFields) {
        if (f.name != name) {
            continue;
        }
        if ((f.set == Always || (wanted & f.set) != 0U) && (f.best == nullptr || f.rank > ranks->*f.best)) {
            if (f.best != nullptr) {
                ranks->*f.best = f.rank;
            }
            return &(s->*f.field);
        }
        return nullptr;
    }
    return nullptr;
}

} // namespace

void PromLabelReader::read(std::string_view name, std::string_view value, PromSample *s)
{
    std::string *target = mapLabel(name, m_wanted, m_names, &m_ranks, s);
    if (!target) {
        target = tableLabel(name, m_wanted, &m_ranks, s);
    }
    if (target) {
        target->assign(value);
    }
}

} // namespace fleetscope::backend
